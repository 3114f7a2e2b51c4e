"""functions/index_init: the CloudFormation custom-resource protocol around
`xmemo.store.opensearch.manage` (injected in the protocol tests; the store has its own
tests), the index settings it applies (on osmem-server), the snapshot repository request it
sends, and its answer before Lambda's deadline."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.infra.conftest import load_handler

EVENT = {
    "RequestType": "Create",
    "ServiceToken": "arn:aws:lambda:eu-west-1:123456789012:function:init",
    "ResponseURL": "https://cloudformation-custom-resource-response.s3.amazonaws.com/x?sig",
    "StackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/xmemo/1",
    "RequestId": "req-1",
    "LogicalResourceId": "OpenSearchIndex",
    "ResourceType": "Custom::OpenSearchIndex",
    "ResourceProperties": {"ServiceToken": "…", "Endpoint": "search-x.es.amazonaws.com", "Dimensions": "1024"},
}


class Context:
    log_stream_name = "2026/01/01/[$LATEST]abc"


@pytest.fixture
def app():
    return load_handler("index_init")


def run(app, event, action, **kwargs):
    sent, ran = [], []

    def fake_run(name, properties):
        assert properties == event["ResourceProperties"]
        ran.append(name)
        return action(name)

    body = app.lambda_handler(event, Context(), run=fake_run, put=lambda url, b: sent.append((url, b)), **kwargs)
    assert sent == [(event["ResponseURL"], body)]  # exactly one answer, always
    return body, ran


def test_create_runs_init_and_answers_success(app):
    body, ran = run(app, dict(EVENT), lambda _a: {"action": "created", "alias": "xmemo-memories", "index": "xmemo-memories-v1"})
    assert ran == ["init"]
    assert body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "OpenSearchIndex-xmemo-memories"
    assert body["Data"] == {"action": "created", "alias": "xmemo-memories", "index": "xmemo-memories-v1"}
    assert {body[k] for k in ("StackId", "RequestId", "LogicalResourceId")} == {EVENT["StackId"], "req-1", "OpenSearchIndex"}


def test_update_runs_migrate_and_keeps_the_physical_id(app):
    event = {**EVENT, "RequestType": "Update", "PhysicalResourceId": "OpenSearchIndex-xmemo-memories"}
    body, ran = run(app, event, lambda _a: {"action": "none", "alias": "xmemo-memories", "reason": "already at v1"})
    assert ran == ["migrate"] and body["Status"] == "SUCCESS"
    assert body["PhysicalResourceId"] == "OpenSearchIndex-xmemo-memories"


def test_delete_never_touches_the_index(app):
    event = {**EVENT, "RequestType": "Delete", "PhysicalResourceId": "OpenSearchIndex-xmemo-memories"}
    body, ran = run(app, event, lambda _a: pytest.fail("Delete must not run anything"))
    assert ran == [] and body["Status"] == "SUCCESS"


def test_a_failure_answers_failed_with_a_short_reason(app):
    def boom(_action):
        raise ConnectionError("domain not reachable " + "x" * 2000)

    body, ran = run(app, dict(EVENT), boom)
    assert body["Status"] == "FAILED" and body["Reason"].startswith("ConnectionError: domain not reachable")
    assert len(body["Reason"]) <= 1000 and body["Data"] == {}


def test_send_puts_the_json_document_to_the_presigned_url(app):
    received = {}

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802
            length = int(self.headers["Content-Length"])
            received.update(method="PUT", path=self.path, content_type=self.headers.get("Content-Type"),
                            body=json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        app.send(f"http://127.0.0.1:{server.server_port}/bucket/key?X-Amz-Signature=s", {"Status": "SUCCESS"})
    finally:
        server.shutdown()
        server.server_close()
    # S3 pre-signed URLs are signed without a content type: it must be sent empty
    assert received == {"method": "PUT", "path": "/bucket/key?X-Amz-Signature=s", "content_type": "",
                        "body": {"Status": "SUCCESS"}}


# -- the deadline ---------------------------------------------------------------------------
class ShortContext:
    log_stream_name = "s"

    def get_remaining_time_in_millis(self):
        return 1500


def test_work_that_outlasts_the_function_still_gets_an_answer(app):
    """A reindex longer than the function: FAILED before Lambda stops it, not an hour of waiting."""
    release = threading.Event()
    sent = []
    started = time.monotonic()
    body = app.lambda_handler({**EVENT, "RequestType": "Update", "PhysicalResourceId": "p"}, ShortContext(),
                              run=lambda _a, _p: release.wait(30) and {}, put=lambda url, b: sent.append(b), margin_s=1.0)
    release.set()
    assert time.monotonic() - started < 5
    assert sent == [body] and body["Status"] == "FAILED"
    assert body["Reason"].startswith("TimeoutError: still running after 0 s; a reindex goes on in the domain")


def test_the_budget_is_the_remaining_time_less_the_margin(app):
    assert app.budget(ShortContext(), 1.0) == 0.5
    assert app.budget(Context(), app.ANSWER_MARGIN_S) == 900.0 - app.ANSWER_MARGIN_S


# -- configure: replicas, slow logs, the snapshot repository ---------------------------------
@pytest.mark.integration
def test_replicas_follow_the_profile_on_the_live_index(app, osmem_clone):
    """A dev index (0 replicas) after the stack moves to production gets the production count."""
    from opensearchpy import OpenSearch

    from xmemo.store.opensearch import manage as ops

    client = OpenSearch(hosts=[osmem_clone.url])
    plan = ops.IndexPlan(alias="xmemo-memories", dimension=None, replicas=0)
    ops.init(client, plan)
    report = app.configure(client, "xmemo-memories", {"Replicas": "2"})
    assert report == {"replicas": 2}
    settings = client.indices.get_settings(index="xmemo-memories")["xmemo-memories-v7"]["settings"]["index"]
    assert settings["number_of_replicas"] == "2"
    assert settings["search"]["slowlog"]["threshold"]["query"]["warn"] == "2s"
    app.configure(client, "xmemo-memories", {"Replicas": "0"})  # and back to dev
    assert client.indices.get_settings(index="xmemo-memories")["xmemo-memories-v7"]["settings"]["index"]["number_of_replicas"] == "0"


@pytest.mark.integration
def test_a_create_event_initialises_and_configures_through_the_real_store(app, osmem_clone, monkeypatch):
    """The whole handler with the default `run` (Settings from the environment, as in Lambda)."""
    from opensearchpy import OpenSearch

    for name, value in {"XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": osmem_clone.url, "XMEMO_EMBEDDER": "none",
                        "XMEMO_OPENSEARCH_AUTH": "none", "XMEMO_OPENSEARCH_AUTO_INIT": "false",
                        "XMEMO_OPENSEARCH_REPLICAS": "0"}.items():
        monkeypatch.setenv(name, value)
    sent = []
    event = {**EVENT, "ResourceProperties": {**EVENT["ResourceProperties"], "Replicas": "2"}}
    body = app.lambda_handler(event, Context(), put=lambda url, b: sent.append(b))
    assert body["Status"] == "SUCCESS", body["Reason"]
    assert body["Data"] == {"action": "created", "alias": "xmemo-memories", "index": "xmemo-memories-v7", "replicas": "2"}
    index = OpenSearch(hosts=[osmem_clone.url]).indices.get_settings(index="xmemo-memories")["xmemo-memories-v7"]
    assert index["settings"]["index"]["number_of_replicas"] == "2"


def test_the_snapshot_repository_is_registered_with_the_stack_bucket_and_role(app):
    """osmem-server has no snapshot API: a recording HTTP server stands in for the domain."""
    from opensearchpy import OpenSearch

    requests = []

    class Domain(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            requests.append((self.path, json.loads(self.rfile.read(length))))
            payload = b'{"acknowledged": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *_args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Domain)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = OpenSearch(hosts=[f"http://127.0.0.1:{server.server_port}"])
        repo = {"Name": "xmemo-s3", "Bucket": "xmemo-snapshots", "Region": "eu-west-1",
                "RoleArn": "arn:aws:iam::123456789012:role/xmemo-SnapshotRole"}
        report = app.configure(client, "xmemo-memories", {"Replicas": "0", "SnapshotRepository": repo})
    finally:
        server.shutdown()
        server.server_close()
    assert report == {"replicas": 0, "repository": "xmemo-s3"}
    assert requests[0][0] == "/xmemo-memories/_settings"
    assert requests[1] == ("/_snapshot/xmemo-s3", {"type": "s3", "settings": {
        "bucket": "xmemo-snapshots", "region": "eu-west-1", "role_arn": repo["RoleArn"]}})
