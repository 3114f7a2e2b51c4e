"""events/pre_token/ and events/index_init/ through their handlers in-process, checked as
tests/sam_local checks them in a Lambda container (tests/event_checks.py); the lookups and the
CloudFormation answer are injected here."""

from __future__ import annotations

import pytest

from tests.event_checks import CLIENT_TEAMS, check_index_init_answer, check_pre_token_client_credentials, check_pre_token_version_1, load_event
from tests.infra.conftest import load_handler

PREFIX = "/xmemo/local/client-teams"


def test_pre_token_client_credentials_event():
    asked = []
    event = load_event("pre_token/client_credentials.json")
    answer = load_handler("pre_token").lambda_handler(event, None, env={"CLIENT_TEAMS_PREFIX": PREFIX},
                                                      lookup=lambda name: asked.append(name) or CLIENT_TEAMS)
    assert asked == [f"{PREFIX}/{event['callerContext']['clientId']}"]
    check_pre_token_client_credentials(answer)


def test_pre_token_version_1_event_fails():
    with pytest.raises(ValueError) as raised:
        load_handler("pre_token").lambda_handler(load_event("pre_token/version_1.json"), None, env={"CLIENT_TEAMS_PREFIX": PREFIX})
    check_pre_token_version_1({"errorType": type(raised.value).__name__, "errorMessage": str(raised.value)})


@pytest.mark.parametrize("name", ["create", "unknown_request_type"])
def test_index_init_events(name):
    sent = []
    event = load_event(f"index_init/{name}.json")
    load_handler("index_init").lambda_handler(event, None, run=lambda action, _p: {"action": "created", "alias": "xmemo-memories",
                                                                                  "index": "xmemo-memories-v1"},
                                              put=lambda url, body: sent.append((url, body)))
    assert [url for url, _ in sent] == [event["ResponseURL"]]
    check_index_init_answer(name, sent[0][1])
