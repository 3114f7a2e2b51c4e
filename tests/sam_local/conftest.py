"""The real SAM CLI running the functions in Lambda containers: a Docker engine (started here
when none answers, and stopped again), the locally built base image (infra/lambda_base_image.sh),
the `sam build` the integration test checks (tests/samcli.py), and what the containers reach on
the Docker bridge: osmem-server (OpenSearch-compatible, a fresh cluster per invocation, so the
invocations can run side by side), moto's server (SSM, DynamoDB) and an HTTP listener standing in
for CloudFormation's response URL.

An emulated arm64 cold start costs 20-60 s (the layer's imports under qemu), so the invocations
run `XMEMO_SAM_LOCAL_JOBS` (default 2, one per core) at a time."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from osmem_server import OsmemServer

from tests import ROOT
from tests.handlers.conftest import headers_of
from tests.samcli import SAM, resolve_no_value_ifs, sam_build, sam_env, template_architecture, template_runtime
from xmemo.local.spawn import free_port
from xmemo.local.template import load_template

IMAGE_SCRIPT = ROOT / "infra" / "lambda_base_image.sh"
XMEMO = Path(sys.executable).with_name("xmemo")
MOTO = Path(sys.executable).with_name("moto_server")
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example"  # as tests/unit/test_mcp_events.py
# Most invocations run lexical-only; the template's default embedder is tried once (test_sam_local_invoke.py).
LEXICAL = {"Embedder": "none"}
# The template's timeouts (5-29 s) suit Graviton; an emulated cold start takes 20-60 s on a loaded 2-core machine.
EMULATED_TIMEOUT_S = 300
JOBS = int(os.environ.get("XMEMO_SAM_LOCAL_JOBS", "2"))


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
                            env=sam_env(), capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A copy of the `sam build` output (the layer as it is deployed), its Python byte-compiled
    by the runtime's own CPython on the host: every container is fresh and /var/task is
    mounted read-only, so an emulated cold start would otherwise compile the layer's ~1,500
    modules each time (unchecked-hash: valid whatever mtimes the copies get)."""
    out = tmp_path_factory.mktemp("sam") / "build"
    shutil.copytree(sam_build(), out, symlinks=True)
    runtime = shutil.which(template_runtime(), path=sam_env()["PATH"])
    compiled = subprocess.run([runtime, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(out)],
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]
    return out


def local_template(built: Path, overrides: dict[str, str], env: dict[str, dict[str, str]] | None = None,
                   timeout_s: int = EMULATED_TIMEOUT_S) -> Path:
    """The built template as these runs need it (a JSON copy next to it): the `Fn::If`s SAM CLI
    cannot resolve decided for `overrides`, every timeout `timeout_s`, and `env` added to the named
    functions' variables (test-only endpoints: `--env-vars` overrides declared variables only)."""
    template = resolve_no_value_ifs(load_template(built / "template.yaml"), overrides)
    template["Globals"]["Function"]["Timeout"] = timeout_s
    for name, resource in template["Resources"].items():
        if resource["Type"] in ("AWS::Serverless::Function", "AWS::Lambda::Function"):
            resource["Properties"]["Timeout"] = timeout_s
            if env and name in env:
                variables = resource["Properties"].setdefault("Environment", {}).setdefault("Variables", {})
                variables.update(env[name])
    text = json.dumps(template, sort_keys=True)
    path = built / f"template-local-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    if not path.exists():
        partial = path.with_name(f"{path.name}.{threading.get_ident()}.partial")  # two workers may write it at once
        partial.write_text(text)
        partial.replace(path)
    return path


def bridge_gateway() -> str:
    """The host's address on Docker's default bridge: what a container reaches the host by,
    read off the bridge's interface. (The network's IPAM gateway is not always there: on an
    engine's first start, creating `docker0` itself, Debian's dockerd 20.10 lists the subnet alone.)"""
    def inspect(template: str) -> str:
        return subprocess.run(["docker", "network", "inspect", "bridge", "--format", template],
                              capture_output=True, text=True, check=True).stdout.strip()

    interface = inspect('{{index .Options "com.docker.network.bridge.name"}}') or "docker0"
    address = interface_address(interface)
    assert address, f"the bridge's interface {interface} has no IPv4 address: {inspect('{{json .}}')}"
    return address


def interface_address(name: str) -> str | None:
    """The IPv4 address the host holds on network interface `name` (SIOCGIFADDR), if any."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            answer = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
        except OSError:
            return None
    return socket.inet_ntoa(answer[20:24])


@contextmanager
def store(embedder: str = "none", index: bool = True):
    """A fresh OpenSearch-compatible cluster the containers reach, its index created (unless
    `index` is false) as the stack's custom resource creates it (requests never create it). A
    server of its own, not a clone: osmem-server serves clones on the loopback only."""
    server = OsmemServer.start(japanese=False, addr=f"{bridge_gateway()}:0")
    try:
        if index:
            init = subprocess.run([str(XMEMO), "opensearch", "init", "--url", server.url], env={**sam_env(), "XMEMO_EMBEDDER": embedder},
                                  capture_output=True, text=True, timeout=300)
            assert init.returncode == 0, init.stdout + init.stderr
        yield server.url
    finally:
        server.close()


@pytest.fixture(scope="session")
def moto_url(docker_engine, tmp_path_factory) -> str:
    """moto's server on the bridge: SSM for the token trigger, DynamoDB for the OAuth function."""
    host, port = bridge_gateway(), free_port()
    log = (tmp_path_factory.mktemp("moto") / "moto.log").open("w")
    proc = subprocess.Popen([str(MOTO), "-H", host, "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://{host}:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1).read()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "moto_server did not start"
            time.sleep(0.5)
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


@contextmanager
def response_listener():
    """An HTTP server on the bridge taking the PUT a custom resource sends to its ResponseURL
    (a pre-signed S3 URL on AWS): yields (url, the JSON documents received)."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802 - http.server's naming
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((bridge_gateway(), 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{server.server_address[0]}:{server.server_address[1]}/cloudformation-response", received
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Invoked:
    answer: dict  # what the function returned (or Lambda's error document), as `sam local invoke` prints it
    logs: str  # stderr: SAM CLI's messages and the container's log lines
    seconds: float

    @property
    def rest(self) -> tuple[int, str, dict]:
        """(status, body text, headers) of an API Gateway proxy answer."""
        return self.answer["statusCode"], self.answer.get("body") or "", headers_of(self.answer)


@dataclass
class Sam:
    """`sam local invoke` against the built template, in the locally built image."""

    built: Path
    image: str
    workdir: Path
    moto_url: str

    def invoke(self, function: str, event: dict, overrides: dict[str, str] | None = None,
               env_vars: dict[str, dict[str, str]] | None = None, template_env: dict[str, dict[str, str]] | None = None,
               timeout_s: int = EMULATED_TIMEOUT_S) -> Invoked:
        overrides = LEXICAL if overrides is None else overrides
        template = local_template(self.built, overrides, template_env, timeout_s)
        run = Path(subprocess.check_output(["mktemp", "-d", "-p", str(self.workdir)], text=True).strip())
        (run / "event.json").write_text(json.dumps(event))
        (run / "env.json").write_text(json.dumps(env_vars or {}))
        started = time.monotonic()
        result = subprocess.run(
            [str(SAM), "local", "invoke", function, "-t", str(template), "-e", str(run / "event.json"), "--env-vars", str(run / "env.json"),
             "--skip-pull-image", *(("--parameter-overrides", " ".join(f"{k}={v}" for k, v in overrides.items())) if overrides else ())],
            cwd=ROOT, env=sam_env(), capture_output=True, text=True, timeout=timeout_s + 600)
        seconds = time.monotonic() - started
        assert result.stdout.strip(), result.stderr[-3000:]  # no answer: the function crashed or timed out
        timings = Path(os.environ.get("XMEMO_SAM_LOCAL_TIMINGS") or self.workdir / "timings.jsonl")  # docs/local-service.md's table
        with timings.open("a") as out:
            out.write(json.dumps({"function": function, "seconds": round(seconds, 1)}) + "\n")
        return Invoked(json.loads(result.stdout), result.stderr, seconds)


@pytest.fixture(scope="session")
def sam(lambda_image, built, moto_url, tmp_path_factory) -> Sam:
    return Sam(built, lambda_image, tmp_path_factory.mktemp("invocations"), moto_url)


def store_env(url: str) -> dict[str, str]:
    """What `--env-vars` sets for every function (only variables the template declares can be
    set): the store, a local cluster without SigV4, and the issuer the MCP checks expect."""
    return {"XMEMO_OPENSEARCH_URL": url, "XMEMO_OPENSEARCH_AUTH": "none", "XMEMO_OAUTH_ISSUER": ISSUER}
