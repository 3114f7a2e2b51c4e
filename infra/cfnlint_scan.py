"""cfn-lint over template.yaml and over its SAM translation, every region cfn-lint knows,
as an operator runs it: one process for both files (cfn-lint's start-up and schema loading
dominate), JSON findings, and the few accepted findings in EXCEPTIONS, each with its reason.

cfn-lint is the version SAM CLI pins (pyproject's `aws-sam-cli`, `cfn-lint` pins); its
resource provider schemas are also what infra/changes.py reads createOnlyProperties from.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

ALL_REGIONS = "ALL_REGIONS"


@dataclass(frozen=True)
class Exception_:
    """A finding accepted on purpose: rule id, a pattern its message matches, which file
    ("source" = template.yaml, "translation" = SAM's output, or "both"), and why."""
    rule: str
    message: str
    where: str
    reason: str


EXCEPTIONS: tuple[Exception_, ...] = (
    Exception_("E3006", r"'AWS::Cognito::\w+' does not exist in 'cn-north(west)?-1'", "both",
               "Cognito user pools are not offered in the China regions, and XMemo's identity is a Cognito "
               "user pool (created or existing): the stack cannot run there (docs/deploy.md, regions)"),
)


def run(source: Path, translation: Mapping[str, Any], regions: str | list[str] = ALL_REGIONS) -> list[dict[str, Any]]:
    """cfn-lint's JSON findings for `source` and `translation`, each tagged "source" or
    "translation" under key "where"."""
    with tempfile.TemporaryDirectory() as tmp:
        translated = Path(tmp) / "translation.json"
        translated.write_text(json.dumps(translation, indent=1))
        region_args = [regions] if isinstance(regions, str) else list(regions)
        result = subprocess.run(
            [str(Path(sys.executable).with_name("cfn-lint")), "--format", "json", "--regions", *region_args,
             "--", str(source), str(translated)],
            capture_output=True, text=True, timeout=600)
        if not result.stdout.strip().startswith("["):  # the exit code is a bit mask of the levels found
            raise RuntimeError(f"cfn-lint failed ({result.returncode}): {result.stderr[-2000:]}")
        findings = json.loads(result.stdout)
    for finding in findings:
        finding["where"] = "translation" if Path(finding.get("Filename", "")).name == translated.name else "source"
    return findings


def accepted_by(finding: Mapping[str, Any]) -> Exception_ | None:
    for exception in EXCEPTIONS:
        if finding["Rule"]["Id"] == exception.rule and re.search(exception.message, finding["Message"]) \
                and exception.where in ("both", finding["where"]):
            return exception
    return None


def violations(findings: list[dict[str, Any]], check_unused: bool = True) -> list[str]:
    """Every finding (error, warning or informational) no exception accepts, and every
    exception that accepts nothing any more."""
    out, used = [], set()
    for finding in findings:
        exception = accepted_by(finding)
        if exception is None:
            line = (finding.get("Location") or {}).get("Start", {}).get("LineNumber")
            out.append(f"cfn-lint {finding['Rule']['Id']} ({finding['Level']}) in the {finding['where']}"
                       f" line {line}: {finding['Message']}")
        else:
            used.add(exception)
    if check_unused:
        for exception in EXCEPTIONS:
            if exception not in used:
                out.append(f"cfn-lint exception {exception.rule} /{exception.message}/ no longer matches anything: remove it")
    return out
