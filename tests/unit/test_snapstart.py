"""SnapStart: one initialised function restored into many execution environments; nothing
random may repeat across them (template.yaml: AutoPublishAlias + SnapStart; xmemo.startup).

A restore is simulated the way Lambda does it, not the way fork does: fork re-seeds `random`
in the child (`os.register_at_fork`), a snapshot restore does not. So a subprocess imports a
handler as Lambda's initialisation does (AWS_LAMBDA_FUNCTION_NAME set, so it initialises and
registers its hook with the real `snapshot_restore_py`), then forks clones that each put back
the parent's `random` state (the snapshot's memory), run the hooks the runtime runs after a
restore (`get_after_restore()`), and make references and retry jitter draws."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.imports import ROOT

CLONES = 4

SCRIPT = r'''
import importlib.util, json, os, random, sys

spec = importlib.util.spec_from_file_location("app", sys.argv[1])
spec.loader.exec_module(importlib.util.module_from_spec(spec))  # Lambda's initialisation

from snapshot_restore_py import get_after_restore
from xmemo import ids, startup

snapshot = random.getstate()  # what every restored environment starts from
run_hooks = sys.argv[2] == "hooks"
hooks = [f"{f.__module__}.{f.__qualname__}" for f, _, _ in get_after_restore()]
pipes = []
for _ in range(int(sys.argv[3])):
    read, write = os.pipe()
    if os.fork() == 0:
        random.setstate(snapshot)  # undo fork's own re-seed: a restore has none
        if run_hooks:
            for func, args, kwargs in get_after_restore():
                func(*args, **kwargs)
        out = {"references": [ids.new_reference() for _ in range(5)], "jitter": [random.random() for _ in range(3)]}
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    pipes.append(read)
clones = []
for read in pipes:
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    clones.append(json.loads(b"".join(chunks)))
    os.wait()
print(json.dumps({"hooks": hooks, "clones": clones}))
'''


def restore_clones(tmp_path, hooks: bool) -> dict:
    env = {**os.environ, "AWS_LAMBDA_FUNCTION_NAME": "xmemo-remember", "XMEMO_STORE": "sqlite", "XMEMO_DATA_DIR": str(tmp_path),
           "XMEMO_EMBEDDER": "none", "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "functions" / "remember" / "app.py"), "hooks" if hooks else "none", str(CLONES)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_restored_clones_repeat_no_reference_and_no_random_draw(tmp_path):
    report = restore_clones(tmp_path, hooks=True)
    assert report["hooks"] == ["xmemo.startup.reseed"]  # registered once, by the handler's initialisation
    clones = report["clones"]
    references = [r for c in clones for r in c["references"]]
    assert len(clones) == CLONES and len(set(references)) == len(references) == CLONES * 5
    assert all(r.startswith("mem_") and len(r) == 30 for r in references)
    jitter = {tuple(c["jitter"]) for c in clones}
    assert len(jitter) == CLONES, "restored clones drew the same retry jitter"


def test_without_the_hook_the_clones_would_share_their_random_state(tmp_path):
    """The simulation is faithful: without the after-restore hook every clone draws the same
    numbers, which is what `reseed` exists to prevent."""
    clones = restore_clones(tmp_path, hooks=False)["clones"]
    assert len({tuple(c["jitter"]) for c in clones}) == 1
