"""The experiment harness stays out of the product: `python -m research` names every
experiment module, and nothing the layer or the wheel ships imports it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from research.__main__ import EXPERIMENTS

ROOT = Path(__file__).resolve().parents[2]


def test_every_experiment_module_is_named_and_listed():
    modules = {p.stem for p in (ROOT / "research" / "locomo").glob("*.py") if p.stem != "__init__"}
    assert set(EXPERIMENTS.values()) == modules
    out = subprocess.run([sys.executable, "-m", "research"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    assert [line.split()[0] for line in out.splitlines()] == list(EXPERIMENTS)


def test_an_unknown_experiment_is_refused_with_the_list_named():
    run = subprocess.run([sys.executable, "-m", "research", "replica4"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 2 and "python -m research" in run.stderr


def test_the_product_never_imports_the_harness():
    for path in (ROOT / "functions" / "shared" / "xmemo").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "research" or n.startswith("research.") for n in names), path
