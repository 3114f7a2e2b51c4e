"""`xmemo invoke`: a handler run from an event file, as `sam local invoke -e` would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
XMEMO = Path(sys.executable).with_name("xmemo")


def invoke(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XMEMO_DATA_DIR": str(tmp_path), "XMEMO_EMBEDDER": "none", "XMEMO_STORE": "sqlite"}
    return subprocess.run([str(XMEMO), "invoke", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_invoke_prints_the_lambda_response(tmp_path):
    stored = invoke(tmp_path, "RememberFunction", "--event", "events/remember/valid.json")
    assert stored.returncode == 0, stored.stderr
    response = json.loads(stored.stdout)
    assert response["statusCode"] == 201
    reference = json.loads(response["body"])["memory"]["reference"]

    found = invoke(tmp_path, "recall", "-e", "events/recall/valid.json")  # by code folder name
    body = json.loads(json.loads(found.stdout)["body"])
    assert [r["reference"] for r in body["results"]] == [reference]

    refused = json.loads(invoke(tmp_path, "RememberFunction", "--event", "events/remember/missing_scope.json").stdout)
    assert refused["statusCode"] == 403


def test_invoke_unknown_function(tmp_path):
    result = invoke(tmp_path, "NoSuchFunction", "--event", "events/remember/valid.json")
    assert result.returncode == 2 and "RememberFunction" in result.stdout
