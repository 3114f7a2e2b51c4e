"""Each script under examples/ runs as its docstring says (one command, `XMEMO_URL` and
`XMEMO_TOKEN` set, as after `make run`) against a real local gateway, and says what it did."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests import ROOT
from xmemo.client import XMemo

pytestmark = pytest.mark.e2e

EXPECTED = {
    "remember_recall.py": ["Stored mem_", "recall: mem_", "context: 1 item(s)", "[1] Releases ship on Tuesdays", "forgot: 1", "after forget: 404 not_found"],
    "langgraph_memory.py": ["[t1] assistant: Noted.", "  known: ['prefers window seats on long flights']", "[t2] assistant: You prefer window seats"],
    "pydantic_ai_memory.py": ["remember → Stored: Reference: mem_", "recall → ### XMemo Recall", "   The user prefers aisle seats on short flights.", "forgot: 1"],
}


def test_every_example_is_tested():
    assert sorted(p.name for p in (ROOT / "examples").glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs_against_the_local_service(gateway, user, script):
    env = {**os.environ, "XMEMO_URL": gateway.url, "XMEMO_TOKEN": gateway.token(user)}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for line in EXPECTED[script]:
        assert line in done.stdout, (line, done.stdout)
    with XMemo(gateway.url, token=gateway.token(user)) as m:
        assert list(m.list()) == []  # each example cleans up after itself
