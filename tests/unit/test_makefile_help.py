"""`make help` (the default goal) lists every command a person runs, and says what `make run`
serves by default: the help is the first thing a newcomer reads after the README."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from xmemo.config import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def help_text() -> str:
    if shutil.which("make") is None:
        pytest.fail("make is missing")
    return subprocess.run(["make", "-s", "-C", str(ROOT)], check=True, capture_output=True, text=True).stdout


def test_every_phony_target_is_described(help_text):
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    described = set(re.findall(r"make (\w[\w-]*)", help_text))
    assert set(phony) - {"venvs"} <= described, set(phony) - described


def test_run_help_names_the_default_embedder(help_text):
    default = Settings.model_fields["embedder"].default
    run_help = help_text.split("make run:")[1].split("\n  make ")[0]
    assert default in run_help and "hybrid" in run_help, run_help
