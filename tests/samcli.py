"""The SAM CLI of .venv and the environment it runs in for the tests (no AWS credentials, a
fixed region, no telemetry, the template's Python runtime on PATH for `sam build`)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests import ROOT
from xmemo.local.template import load_template

TEMPLATE = ROOT / "template.yaml"
SAM = Path(sys.executable).with_name("sam")


def template_runtime() -> str:
    return load_template(TEMPLATE)["Globals"]["Function"]["Runtime"]  # e.g. python3.13


def template_architecture() -> str:
    (arch,) = load_template(TEMPLATE)["Globals"]["Function"]["Architectures"]
    return arch


def sam_env() -> dict[str, str]:
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "SAM_CLI_TELEMETRY": "0"}
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(name, None)
    runtime = template_runtime()
    on_path = shutil.which(runtime, path=env.get("PATH"))
    if on_path is None or subprocess.run([on_path, "--version"], capture_output=True).returncode != 0:  # pyenv shims fail
        root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        version = runtime.removeprefix("python")
        found = sorted(glob.glob(f"{root}/versions/{version}*/bin/{runtime}"))
        assert found, f"sam build needs {runtime} on PATH (or under pyenv); none found"
        env["PATH"] = f"{Path(found[-1]).parent}{os.pathsep}{env['PATH']}"
    return env
