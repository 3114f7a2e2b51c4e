"""template.yaml parsed once (the SAM source) and translated once (the CloudFormation the
AWS::Serverless transform generates, offline), plus a loader for the non-API handlers."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from infra import template_rules as rules

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


@pytest.fixture(scope="session")
def source() -> dict:
    return rules.load(TEMPLATE)


@pytest.fixture
def template(source) -> dict:
    """A private deep copy a test may break."""
    return copy.deepcopy(source)


@pytest.fixture(scope="session")
def cfn(source) -> dict:
    return rules.translate(source)


def load_handler(name: str) -> ModuleType:
    """functions/<name>/app.py as a fresh module (Lambda imports it as `app`)."""
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"xmemo_fn_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
