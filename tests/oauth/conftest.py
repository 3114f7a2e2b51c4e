"""Fixtures of the authorization-server tests: both state stores (SQLite in a temp dir;
DynamoDB as moto's server over HTTP on 127.0.0.1, the same boto3 calls as on AWS, since
DynamoDB Local cannot be obtained here)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import boto3
import httpx
import pytest

from tests.gateway import free_port
from xmemo.oauth.dynamo import TTL_ATTRIBUTE, DynamoState
from xmemo.oauth.state import SqliteState

MOTO = Path(sys.executable).with_name("moto_server")


class Clock:
    """A clock a test moves by hand: expiry is then a fact, not a wait."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="session")
def moto_url(tmp_path_factory):
    port = free_port()
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "w")
    proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url + "/moto-api/", timeout=1)
            break
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("moto_server did not start")
            time.sleep(0.2)
    yield url
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def dynamo_client(url: str):
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def create_table(client, name: str) -> None:
    """The table as template.yaml declares it: key `pk`, on-demand, TTL on `expires_at`."""
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE})


@pytest.fixture(params=["sqlite", "dynamodb"])
def store_and_clock(request, tmp_path):
    clock = Clock()
    if request.param == "sqlite":
        return SqliteState(tmp_path / "oauth.sqlite3", clock=clock), clock
    url = request.getfixturevalue("moto_url")
    client = dynamo_client(url)
    name = f"oauth-{request.node.name.replace('[', '-').replace(']', '')}"[:200]
    create_table(client, name)
    return DynamoState(name, client, clock=clock), clock


# -- an authorization server over either store, the local gateway as its upstream ---------
from xmemo.config import Settings  # noqa: E402
from xmemo.local.clients import ClientRegistry  # noqa: E402
from xmemo.local.keys import SigningKey  # noqa: E402
from xmemo.local.oauth import LocalUpstream  # noqa: E402
from xmemo.local.users import UserRegistry  # noqa: E402
from xmemo.oauth.clients import Clients  # noqa: E402
from xmemo.oauth.fetch import fetch  # noqa: E402
from xmemo.oauth.metadata import Endpoints, xmemo_scopes  # noqa: E402
from xmemo.oauth.server import AuthorizationServer, Policy  # noqa: E402

ISSUER = "http://127.0.0.1:9999"
RESOURCE = f"{ISSUER}/mcp"
ALL = tuple(xmemo_scopes("xmemo"))


def loopback_fetch(url: str):
    return fetch(url, allow_loopback_http=True, timeout=2)


@pytest.fixture(scope="session")
def signing_key(tmp_path_factory):
    key = SigningKey(tmp_path_factory.mktemp("key"))
    key.private_key
    return key


@pytest.fixture
def auth(store_and_clock, tmp_path, signing_key):
    """(server, store, clock, users) with one user `alice` (team acme)."""
    store, clock = store_and_clock
    settings = Settings(data_dir=tmp_path, port=9999, embedder="none", oauth_refresh_ttl_s=3600)
    users = UserRegistry(tmp_path)
    users.add("alice", "alice-password", ["acme"])
    upstream = LocalUpstream(settings, signing_key, users, ClientRegistry(tmp_path), store)
    server = AuthorizationServer(Endpoints(ISSUER), [RESOURCE, f"{ISSUER}/mcp/full"], ALL, store,
                                 Clients(store, ALL, loopback_fetch, allow_loopback_http=True), upstream,
                                 Policy(refresh_ttl=3600, registrations_per_window=3))
    return server, store, clock, users
