"""The interpreter `xmemo bench coldstart` starts the functions with: Lambda's Python version
with exactly the layers' requirements, as deployed.

A developer's venv holds more than the layers (test tools, pyOpenSSL, awscrt, moto…), and
some libraries import what they find (botocore imports pyOpenSSL when present), so figures
taken there are not the deployed functions'. So the bench builds, once, a venv from the
template's runtime (`Globals.Function.Runtime`, e.g. python3.13) holding exactly
`functions/shared/requirements*.txt` (the layers' contents), cached under a gitignored
folder by the hash of the interpreter's version and those files. When that Python is not
installed it falls back to the running interpreter and says so; the report always names
the interpreter and the packages it imported from."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..local.template import load_template

SHARED = Path(__file__).resolve().parents[2]  # functions/shared: the layers' requirements and the package
REQUIREMENTS = ("requirements.txt", "requirements-embedder.txt")  # XMemoLayer, EmbedderLayer
CACHE = SHARED.parents[1] / ".bench-venvs"  # in the repository, gitignored

PACKAGES = r'''
import importlib.metadata as m, json, platform, sys
print(json.dumps({"version": platform.python_version(), "packages": sorted(f"{d.metadata['Name']}=={d.version}" for d in m.distributions())}))
'''


@dataclass(frozen=True)
class Interpreter:
    python: str  # the executable the children run
    version: str
    deployed: bool  # Lambda's runtime with exactly the layers' requirements
    note: str
    packages: list[str] = field(default_factory=list)


def runtime_of(template: Path) -> str:
    """The functions' runtime, e.g. `python3.13`."""
    return load_template(template)["Globals"]["Function"]["Runtime"]


def find_python(runtime: str) -> str | None:
    """An installed `python3.X` for `runtime` that runs (on PATH, else under pyenv: pyenv's
    shim on PATH fails when that version is not the selected one)."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    version = runtime.removeprefix("python")
    candidates = [shutil.which(runtime), *sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", runtime)), reverse=True)]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
            return candidate
    return None


def describe(python: str) -> tuple[str, list[str]]:
    """The version of `python` and every distribution it can import (name==version)."""
    done = subprocess.run([python, "-c", PACKAGES], capture_output=True, text=True, check=True, timeout=120)
    info = json.loads(done.stdout)
    return info["version"], info["packages"]


def requirement_files() -> list[Path]:
    return [SHARED / name for name in REQUIREMENTS if (SHARED / name).is_file()]


def venv_key(runtime: str, python: str) -> str:
    """What the cached venv depends on: the interpreter's exact version and the requirements."""
    digest = hashlib.sha256(describe(python)[0].encode())
    for path in requirement_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"{runtime}-{digest.hexdigest()[:12]}"


def build_venv(python: str, target: Path) -> None:
    """Create the venv beside `target` and move it there whole, so a half-built one is never used."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        subprocess.run([python, "-m", "venv", str(scratch)], check=True, timeout=300)
        install = [str(scratch / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        for path in requirement_files():
            install += ["-r", str(path)]
        print(f"building the deployed environment in {target} …", file=sys.stderr)
        subprocess.run(install, check=True, timeout=1800)
        try:
            scratch.rename(target)
        except OSError:  # another bench finished the same venv first
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def choose(choice: str, template: Path, cache: Path = CACHE) -> Interpreter:
    """`deployed` (the default): the runtime's venv, built once; `current`: this interpreter;
    anything else: that executable, as it is."""
    if choice == "current":
        return _as_is(sys.executable, "the running interpreter and its packages (not the deployed set)")
    if choice != "deployed":
        return _as_is(choice, f"{choice} as given, with its own packages")
    runtime = runtime_of(template)
    python = find_python(runtime)
    if python is None:
        return _as_is(sys.executable, f"{runtime} (the template's runtime) is not installed here: measured with the running "
                                      "interpreter and its packages instead, which are not the deployed set")
    venv = cache / venv_key(runtime, python)
    if not venv.is_dir():
        build_venv(python, venv)
    executable = str(venv / "bin" / "python")
    version, packages = describe(executable)
    files = " + ".join(f"functions/shared/{p.name}" for p in requirement_files())
    return Interpreter(executable, version, True, f"{runtime} with exactly {files} (the layers), venv {venv}", packages)


def _as_is(python: str, note: str) -> Interpreter:
    version, packages = describe(python)
    return Interpreter(python, version, False, note, packages)
