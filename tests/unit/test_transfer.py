"""Export / import round trip: everything but embeddings, idempotent, policy re-applied."""

import io
import json
import subprocess
import sys

from tests.conftest import make_principal
from xmemo import tools
from xmemo.config import Settings
from xmemo.models import RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore
from xmemo.transfer import export_memories, import_memories

ALICE = make_principal("alice", teams=("acme",))


def seed(svc):
    tools.remember(svc, ALICE, RememberInput(content="private fact one", type="fact", tags=["a"]))
    tools.remember(svc, ALICE, RememberInput(content="team decision two", type="decision", team="acme", project="p"))



def test_round_trip_is_complete_and_idempotent(services, tmp_path, clock):
    seed(services)
    buf = io.StringIO()
    assert export_memories(services, ALICE, buf) == 2
    lines = buf.getvalue().splitlines()
    assert all("embedding" not in json.loads(l) for l in lines)
    target = Services(Settings(data_dir=tmp_path / "t", embedder="none"), SQLiteStore(tmp_path / "t.sqlite3"), None, clock)
    first = import_memories(target, lines)
    assert (first.stored, first.duplicates, first.errors) == (2, 0, [])
    again = import_memories(target, lines)
    assert (again.stored, again.duplicates) == (0, 2)
    assert target.store.count() == 2
    exported = {json.loads(l)["reference"]: json.loads(l) for l in lines}
    buf2 = io.StringIO()
    export_memories(target, ALICE, buf2)
    assert {json.loads(l)["reference"]: json.loads(l) for l in buf2.getvalue().splitlines()} == exported


def test_import_reapplies_the_capture_policy_and_reports_bad_lines(services):
    key = "AKIA" + "QWERTYUIOPASDFGH"
    m = tools.remember(services, ALICE, RememberInput(content="clean")).memory.public_dict()
    dirty = {**m, "reference": "mem_01KZZZZZZZZZZZZZZZZZZZZZZZ", "content": f"key {key}", "content_sha256": "0" * 64}
    report = import_memories(services, [json.dumps(dirty), "{not json", json.dumps({"reference": "x"})])
    assert report.stored == 1 and report.redacted == 1
    assert [e.split(":")[0] for e in report.errors] == ["line 2", "line 3"]
    assert report.errors[0] == "line 2: not JSON"
    assert tools.search_memory(services, ALICE, SearchInput(query=key)).results == []


def test_cli_export_import(tmp_path):
    env = {"XMEMO_DATA_DIR": str(tmp_path / "a"), "XMEMO_EMBEDDER": "none", "PATH": ""}
    svc = Services(Settings(data_dir=tmp_path / "a", embedder="none"), SQLiteStore(tmp_path / "a" / "xmemo.sqlite3"), None)
    seed(svc)
    svc.store.close()
    out = tmp_path / "dump.jsonl"
    run = lambda *a, e=env: subprocess.run([sys.executable, "-m", "xmemo", *a], env=e, capture_output=True, text=True)  # noqa: E731
    r = run("export", "--owner", "alice", "--team", "acme", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "exported 2 memories" in r.stderr
    env_b = {**env, "XMEMO_DATA_DIR": str(tmp_path / "b")}
    r = run("import", str(out), e=env_b)
    assert r.returncode == 0, r.stderr
    assert "stored 2, duplicates 0" in r.stderr
    r = run("import", str(out), "--quiet", e=env_b)
    assert "stored 0, duplicates 2" in r.stderr
