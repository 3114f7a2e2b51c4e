"""The real SAM CLI running the functions in Lambda containers: a Docker engine (started here
when none answers, and stopped again), the locally built base image (infra/lambda_base_image.sh),
`sam build`, and a store the containers reach: osmem-server (OpenSearch-compatible) listening
on the Docker bridge, so every invocation, each in a fresh container, sees the same data."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from osmem_server import OsmemServer

from tests import ROOT
from tests.handlers.conftest import headers_of
from tests.samcli import SAM, TEMPLATE, sam_env, template_architecture, template_runtime
from xmemo.local.template import load_template

IMAGE_SCRIPT = ROOT / "infra" / "lambda_base_image.sh"
XMEMO = Path(sys.executable).with_name("xmemo")
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example"  # as tests/unit/test_mcp_events.py
# Most invocations run lexical-only; the template's default embedder is tried once (test_sam_local_invoke.py).
LEXICAL = ("Embedder=none",)
# The template's 12 s suit Graviton; an emulated cold start takes 30-70 s on a loaded 2-core machine.
EMULATED_TIMEOUT_S = 300


def engine_answers() -> bool:
    return subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0


@pytest.fixture(scope="session")
def docker_engine(tmp_path_factory):
    """A Docker engine: the running one, or dockerd started now (and stopped at the end)."""
    assert shutil.which("docker") and shutil.which("dockerd"), "make test installs Debian's docker.io"
    if engine_answers():
        yield
        return
    log = tmp_path_factory.mktemp("dockerd") / "dockerd.log"
    with log.open("w") as out:
        # Without the userland proxy a published port accepts connections only once the container
        # listens on it; SAM CLI takes an accepted connection as "the emulator is up" and gives up
        # after three quick tries, too soon for an emulated (qemu) emulator to start.
        daemon = subprocess.Popen(["dockerd", "--userland-proxy=false"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60
    while not engine_answers():
        assert daemon.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(1)
    yield
    daemon.terminate()
    daemon.wait(timeout=60)


@pytest.fixture(scope="session")
def lambda_image(docker_engine) -> str:
    """The template runtime's base image, built if missing (cached by the engine)."""
    result = subprocess.run(["bash", str(IMAGE_SCRIPT), template_runtime(), template_architecture()],
                            env={**sam_env(), "PYTHON": sys.executable}, capture_output=True, text=True, timeout=3600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """`sam build` of template.yaml (the layer as it is deployed), returning the template the
    local runs use: the built one with a longer timeout, its Python byte-compiled."""
    out = tmp_path_factory.mktemp("sam")
    env = sam_env()
    result = subprocess.run([str(SAM), "build", "-t", str(TEMPLATE), "--build-dir", str(out / "build"), "--cache-dir", str(out / "cache")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    # Emulated arm64 compiles a cold start's ~1,600 modules for minutes; the runtime's own CPython
    # writes the same .pyc files once here (unchecked-hash: valid whatever the copied mtimes).
    runtime = shutil.which(template_runtime(), path=env["PATH"])
    compiled = subprocess.run([runtime, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(out / "build")],
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]
    template = load_template(out / "build" / "template.yaml")
    template["Globals"]["Function"]["Timeout"] = EMULATED_TIMEOUT_S
    local = out / "build" / "template-local.json"
    local.write_text(json.dumps(template))
    return local


def bridge_gateway() -> str:
    """The host's address on Docker's default bridge: what a container reaches the host by."""
    out = subprocess.run(["docker", "network", "inspect", "bridge", "--format", "{{range .IPAM.Config}}{{.Gateway}}{{end}}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out, "the default bridge network has no gateway"
    return out


@pytest.fixture
def store_url(docker_engine) -> str:
    """A fresh OpenSearch-compatible cluster the containers reach, its index created as the
    stack's OpenSearchIndex custom resource creates it (requests never create it). A server of
    its own, not a clone: osmem-server serves clones on the loopback only."""
    server = OsmemServer.start(japanese=False, addr=f"{bridge_gateway()}:0")
    init = subprocess.run([str(XMEMO), "opensearch", "init", "--url", server.url], env={**sam_env(), "XMEMO_EMBEDDER": "none"},
                          capture_output=True, text=True, timeout=120)
    assert init.returncode == 0, init.stdout + init.stderr
    yield server.url
    server.close()


def env_vars(store_url: str) -> dict:
    """What `--env-vars` overrides (only variables the template declares can be): the store,
    a local cluster without SigV4, and the issuer the MCP checks expect."""
    return {"Parameters": {"XMEMO_OPENSEARCH_URL": store_url, "XMEMO_OPENSEARCH_AUTH": "none", "XMEMO_OAUTH_ISSUER": ISSUER}}


@pytest.fixture
def sam_invoke(lambda_image, built, store_url, tmp_path):
    """sam_invoke(function, event, overrides) → (status, body text, headers, logs): the Lambda
    response that `sam local invoke` prints on stdout, and its stderr (the container's logs)."""
    env_file = tmp_path / "env.json"
    env_file.write_text(json.dumps(env_vars(store_url)))

    def invoke(function: str, event: dict, overrides: tuple[str, ...] = LEXICAL):
        event_file = tmp_path / "event.json"
        event_file.write_text(json.dumps(event))
        result = subprocess.run(
            [str(SAM), "local", "invoke", function, "-t", str(built), "-e", str(event_file), "--env-vars", str(env_file),
             "--skip-pull-image", *(("--parameter-overrides", " ".join(overrides)) if overrides else ())],
            cwd=ROOT, env=sam_env(), capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert result.stdout.strip(), result.stderr[-3000:]  # no answer: the function failed or timed out
        response = json.loads(result.stdout)
        return response["statusCode"], response.get("body") or "", headers_of(response), result.stderr

    return invoke
