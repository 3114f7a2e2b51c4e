"""The deferred tool inputs and results build safely when threads meet them unbuilt (the
local gateway serves from threads; pydantic 2.13's lazy build is not locked, pydantic#13419).
Each round is a fresh interpreter, where nothing is built yet, with 16 threads released
together onto every input model and thread switches forced as often as possible."""

import json
import subprocess
import sys

from tests.imports import ROOT

RACE = r'''
import json, sys, threading
sys.setswitchinterval(1e-6)
from xmemo import models, results
inputs = {models.RecallInput: {"query": "which store"}, models.SearchInput: {"query": "store"},
          models.ContextInput: {"query": "store"}, models.RememberInput: {"content": "we chose SQLite"},
          models.GetInput: {"reference": "abc"}, models.ListInput: {}, models.ForgetInput: {"reference": "abc"}}
order = list(inputs.items())
errors, barrier = [], threading.Barrier(16)
def work(i):
    barrier.wait()
    for model, data in order[i % 7:] + order[:i % 7]:
        try:
            model.model_validate(data)
            model.model_json_schema()
            results.ForgetResult(deleted=1).structured()
        except Exception as exc:
            errors.append(f"{model.__name__}: {type(exc).__name__}: {str(exc)[:200]}")
threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(errors))
'''


def test_threads_meeting_unbuilt_models_all_validate():
    for _ in range(8):
        done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.splitlines()[-1]) == []
