"""The login form as the façade serves it (real scrypt-checked users, both state stores,
a hand-moved clock): throttling per account and per address with a growing wait and a
lockout, one log line per wrong password and never the password, the same answer
whether or not the user exists, and no form accepted from another site."""

from __future__ import annotations

import logging
import re
from urllib.parse import urlencode

import pytest

from xmemo.oauth.facade import AUTHORIZE, Facade
from xmemo.oauth.server import s256
from xmemo.oauth.throttle import LoginThrottle, ThrottlePolicy

from .conftest import ISSUER, RESOURCE

REDIRECT = "http://127.0.0.1:33333/callback"
POLICY = ThrottlePolicy(free=2, lockout=4, window=900)  # an address: 10 free, 20 to lock


@pytest.fixture
def form(auth):
    server, store, clock, users = auth
    users.add("bob", "bob-password", [])
    client = server.register({"redirect_uris": [REDIRECT]}, source="10.0.0.1")["client_id"]
    facade = Facade(server, login=server.upstream.login, throttle=LoginThrottle(store, POLICY, clock=clock))
    return facade, client, clock


def open_login(facade, client) -> str:
    query = urlencode({"response_type": "code", "client_id": client, "redirect_uri": REDIRECT,
                       "code_challenge": s256("v" * 43), "code_challenge_method": "S256", "resource": RESOURCE})
    page = facade.handle("GET", AUTHORIZE, query, {}, b"", "10.0.0.1")
    assert page.status == 200
    return re.search(r'name="txn" value="([^"]+)"', page.body.decode()).group(1)


def submit(facade, txn, user, password, address="203.0.113.7", headers=None):
    body = urlencode({"txn": txn, "username": user, "password": password}).encode()
    return facade.handle("POST", AUTHORIZE, "", headers or {}, body, address)


def text(answer) -> str:
    return answer.body.decode()


def test_an_account_waits_longer_after_each_wrong_password_then_is_locked(form, caplog):
    facade, client, clock = form
    caplog.set_level(logging.WARNING, logger="xmemo.oauth")
    txn = open_login(facade, client)
    for _ in range(POLICY.free):  # free failures: answered at once
        assert submit(facade, txn, "alice", "wrong-password").status == 401
    assert submit(facade, txn, "alice", "wrong-password").status == 401  # the third: now a 1 s wait
    refused = submit(facade, txn, "alice", "alice-password")  # even the right password waits
    assert refused.status == 429 and refused.headers["Retry-After"] == "1" and "Try again in 1 seconds" in text(refused)
    assert "Location" not in refused.headers
    clock.now += 1
    txn = open_login(facade, client)  # (the third wrong password above did not end that login; a fresh one)
    assert submit(facade, txn, "alice", "wrong-password").status == 401  # the fourth: locked for the window
    refused = submit(facade, txn, "alice", "alice-password")
    assert refused.status == 429 and refused.headers["Retry-After"] == "900" and "15 minutes" in text(refused)
    clock.now += 899
    txn = open_login(facade, client)  # (the pending login above has expired meanwhile)
    assert submit(facade, txn, "alice", "alice-password").status == 429
    clock.now += 1
    assert submit(facade, txn, "alice", "alice-password").status == 303  # the window is over
    lines = [r.getMessage() for r in caplog.records if r.name == "xmemo.oauth"]
    assert len(lines) == POLICY.lockout and all(line.startswith("login failed: account=") for line in lines)
    assert lines[-1].endswith("wait=900s locked") and "address=203.0.113.7" in lines[-1]
    assert not any(s in line for line in lines for s in ("wrong-password", "alice-password", "alice"))


def test_a_right_password_ends_the_accounts_count(form):
    facade, client, clock = form
    txn = open_login(facade, client)
    for _ in range(POLICY.free):
        submit(facade, txn, "alice", "wrong-password")
    assert submit(facade, txn, "alice", "alice-password").status == 303
    txn = open_login(facade, client)
    for _ in range(POLICY.free):  # free again
        assert submit(facade, txn, "alice", "wrong-password").status == 401


def test_an_address_trying_many_accounts_is_throttled(form):
    facade, client, clock = form
    for i in range(POLICY.free * 5):  # ten accounts, one wrong password each: free for the address
        txn = open_login(facade, client)
        assert submit(facade, txn, f"user{i}", "wrong-password").status == 401
    txn = open_login(facade, client)
    assert submit(facade, txn, "user-x", "wrong-password").status == 401  # the address's 11th: it now waits
    assert submit(facade, txn, "bob", "bob-password").status == 429
    assert submit(facade, txn, "bob", "bob-password", address="198.51.100.1").status == 303  # not another address


def test_the_same_answer_whether_or_not_the_user_exists(form):
    facade, client, clock = form
    answers = {}
    for user in ("alice", "nobody-by-this-name"):
        txn = open_login(facade, client)
        seen = [submit(facade, txn, user, "wrong-password") for _ in range(POLICY.free + 1)]
        seen.append(submit(facade, txn, user, "wrong-password"))
        answers[user] = [(a.status, text(a).replace(txn, "TXN"), sorted(a.headers.items())) for a in seen]
    assert answers["alice"] == answers["nobody-by-this-name"]
    assert [s for s, *_ in answers["alice"]] == [401, 401, 401, 429]


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "https://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Referer": "https://evil.example/page"}, 403),
    ({"Origin": "http://127.0.0.1:9999.evil.example"}, 403),
    ({"Origin": ISSUER}, 303),
    ({"Referer": f"{ISSUER}/oauth2/authorize?client_id=x"}, 303),
    ({}, 303),  # no browser page sent it
])
def test_the_form_is_accepted_only_from_its_own_origin(form, headers, status):
    facade, client, clock = form
    txn = open_login(facade, client)
    answer = submit(facade, txn, "alice", "alice-password", headers=headers)
    assert answer.status == status
    if status == 403:
        assert "Location" not in answer.headers and "access_denied" in text(answer)
        assert submit(facade, txn, "alice", "alice-password").status == 303  # the login itself is untouched
