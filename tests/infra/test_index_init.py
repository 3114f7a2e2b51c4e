"""functions/index_init: the CloudFormation custom-resource protocol around
`xmemo.store.opensearch.manage` (injected here; the store has its own tests)."""

from __future__ import annotations

import json
import threading
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


def run(app, event, action):
    sent, ran = [], []

    def fake_run(name):
        ran.append(name)
        return action(name)

    body = app.lambda_handler(event, Context(), run=fake_run, put=lambda url, b: sent.append((url, b)))
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
