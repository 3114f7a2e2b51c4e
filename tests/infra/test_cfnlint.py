"""cfn-lint over template.yaml and over its SAM translation, every region cfn-lint knows, in
one process (about 7 s): no finding but the explained exceptions of infra/cfnlint_scan.py."""

from __future__ import annotations

import json

import pytest

from infra import cfnlint_scan
from infra import template_rules as rules
from tests.infra.conftest import TEMPLATE


@pytest.fixture(scope="module")
def findings(cfn):
    return cfnlint_scan.run(TEMPLATE, cfn)


def test_no_finding_but_the_explained_exceptions(findings):
    assert cfnlint_scan.violations(findings) == []
    # what is accepted: Cognito in China, in both files
    assert {(f["Rule"]["Id"], f["where"]) for f in findings} == {("E3006", "source"), ("E3006", "translation")}


def test_every_exception_says_why():
    for exception in cfnlint_scan.EXCEPTIONS:
        assert len(exception.reason) > 40 and exception.where in ("source", "translation", "both")


def test_the_translation_is_linted_as_sam_package_would_leave_it(template, tmp_path):
    """A plain function's local `Code` path becomes an S3 location in the translation (cfn-lint's
    W3002 otherwise), and a breakage only the translation shows is reported there."""
    cfn = rules.translate(template)
    assert cfn["Resources"]["PreTokenFunction"]["Properties"]["Code"] == {"S3Bucket": "placeholder-bucket", "S3Key": "PreTokenFunction.zip"}
    cfn["Resources"]["PreTokenFunction"]["Properties"]["Runtime"] = "python2.7"
    source = tmp_path / "template.json"
    source.write_text(json.dumps(template))
    found = rules.cfnlint_violations(source, cfn, regions=["eu-west-1"], check_unused=False)
    assert found and all(" in the translation " in v for v in found)
    assert any("python2.7" in v for v in found)


def test_a_source_finding_outside_the_exceptions_fails(template, tmp_path):
    template["Resources"]["AlarmTopic"]["Properties"]["DisplayNme"] = "typo"
    source = tmp_path / "template.json"
    source.write_text(json.dumps(template))
    found = rules.cfnlint_violations(source, rules.translate(template), regions=["eu-west-1"])
    assert any("in the source" in v and "DisplayNme" in v for v in found)
    # one region only: the China exception matches nothing, and is named as unused
    assert any("E3006" in v and "no longer matches anything" in v for v in found)


def test_the_guide_names_the_regions_without_snapstart():
    regions = rules.snapstart_unsupported_regions()
    assert "cn-north-1" in regions and "us-east-1" not in regions
    assert all(f"`{r}`" in rules.GUIDE.read_text() for r in regions)
