"""Claude Code (npm `@anthropic-ai/claude-code`, pinned in tests/interop/js) connects to
`xmemo serve` on its default path: `claude mcp add --transport http`, then
`claude mcp login NAME --no-browser` in a pseudo-terminal, the person's part (open the URL,
sign in on the login form) done over HTTP, the redirect delivered to Claude Code's own
loopback listener, then `claude mcp list` says Connected. No model key is needed for that.

Twice: as Claude Code identifies itself by default, with a client ID metadata document whose
callbacks are port-less loopback URIs (served here on 127.0.0.1, since this machine has no
DNS; `MCP_OAUTH_CLIENT_METADATA_URL` is Claude Code's own setting for the document's URL,
whose default is https://claude.ai/oauth/claude-code-client-metadata), and with a client
registered beforehand (`--client-id`, `--callback-port`)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import ssl
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.oauth.cimd_server import DocumentServer
from tests.interop.browser import sign_in
from xmemo.local.spawn import free_port, start_gateway

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "tests" / "interop" / "js" / "node_modules" / ".bin" / "claude"
USER, PASSWORD = "tess", "tess-interop-password-3"
ESCAPES = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]")  # OSC 8 links, colours
AUTHORIZE_URL = re.compile(r"(http://127\.0\.0\.1:\d+/oauth2/authorize\?\S+)[ \t]*\r?\n")  # a whole printed line


@pytest.fixture
def gateway(tmp_path):
    with start_gateway(tmp_path / "gateway", cwd=ROOT) as gw:
        gw.add_user(USER, PASSWORD, "acme")
        yield gw


@pytest.fixture
def claude_env(tmp_path):
    assert CLAUDE.exists(), "make test runs npm ci in tests/interop/js"
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    # its own home and config; no update checks or telemetry on a machine without a network
    env.update(HOME=str(home), TERM="xterm", DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    return env


def claude(env, *args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLAUDE), *args], env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=timeout)


def login_in_a_terminal(env, name: str) -> dict[str, list[str]]:
    """`claude mcp login NAME --no-browser` on a pseudo-terminal: read the URL it prints,
    sign in, and wait for it to finish. Returns the authorization request's parameters."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: Claude Code on the terminal
        os.chdir(env["HOME"])
        os.execve(str(CLAUDE), [str(CLAUDE), "mcp", "login", name, "--no-browser"], env)
    screen = b""

    def read(until: float) -> bool:
        nonlocal screen
        ready, _, _ = select.select([fd], [], [], max(0.0, min(0.5, until - time.monotonic())))
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal closed: Claude Code exited
                return False
            if not chunk:
                return False
            screen += chunk
        return True

    try:
        deadline = time.monotonic() + 90
        url = None
        while url is None:
            assert time.monotonic() < deadline and read(deadline), ESCAPES.sub(b"", screen).decode(errors="replace")[-2000:]
            match = AUTHORIZE_URL.search(ESCAPES.sub(b"", screen).decode(errors="replace"))
            url = match and match.group(1)
        sign_in(url, USER, PASSWORD)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and read(deadline):
            pass
        exited, status = os.waitpid(pid, os.WNOHANG)
        while exited == 0 and time.monotonic() < deadline:  # the terminal closes a moment before the process ends
            time.sleep(0.1)
            exited, status = os.waitpid(pid, os.WNOHANG)
        text = ESCAPES.sub(b"", screen).decode(errors="replace")
        assert exited == pid and os.waitstatus_to_exitcode(status) == 0, text[-2000:]
        return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def connected(env, name: str, url: str) -> str:
    listed = claude(env, "mcp", "list")
    line = next((l for l in listed.stdout.splitlines() if l.startswith(f"{name}: {url}")), "")
    assert "Connected" in line, listed.stdout + listed.stderr
    return line


def self_signed_loopback_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that the gateway trusts through SSL_CERT_FILE: Claude Code
    takes only an https document URL, and this machine reaches no public host."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import datetime
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_claude_code_with_its_client_id_metadata_document(tmp_path, claude_env):
    cert_file, key_file = self_signed_loopback_certificate(tmp_path)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert_file, key_file)
    documents = DocumentServer(tls)
    try:
        path = "/oauth/claude-code-client-metadata"
        document_url = documents.url(path)
        documents.serve(path, {  # the shape Claude Code publishes
            "client_id": document_url, "client_name": "Claude Code", "client_uri": "https://claude.com/claude-code",
            "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"})
        with start_gateway(tmp_path / "gateway", {"SSL_CERT_FILE": str(cert_file)}, cwd=ROOT) as gateway:
            gateway.add_user(USER, PASSWORD, "acme")
            env = {**claude_env, "MCP_OAUTH_CLIENT_METADATA_URL": document_url}
            mcp = gateway.url + "/mcp"
            assert claude(env, "mcp", "add", "--transport", "http", "xmemo", mcp).returncode == 0
            asked = login_in_a_terminal(env, "xmemo")
            assert asked["client_id"] == [document_url] and asked["code_challenge_method"] == ["S256"]
            callback = urllib.parse.urlsplit(asked["redirect_uri"][0])
            assert (callback.hostname, callback.path) == ("localhost", "/callback") and callback.port  # an ephemeral port
            assert documents.hits[path] >= 1
            connected(env, "xmemo", mcp)
    finally:
        documents.close()


def test_claude_code_with_a_registered_client(gateway, claude_env):
    port = free_port()
    registered = json.loads(urllib.request.urlopen(urllib.request.Request(
        gateway.url + "/oauth2/register", method="POST", headers={"Content-Type": "application/json"},
        data=json.dumps({"client_name": "Claude Code (registered)", "redirect_uris": [f"http://localhost:{port}/callback"],
                         "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                         "token_endpoint_auth_method": "none"}).encode()), timeout=30).read())
    mcp = gateway.url + "/mcp"
    added = claude(claude_env, "mcp", "add", "--transport", "http", "--client-id", registered["client_id"],
                   "--callback-port", str(port), "xmemo", mcp)
    assert added.returncode == 0, added.stderr
    asked = login_in_a_terminal(claude_env, "xmemo")
    assert asked["client_id"] == [registered["client_id"]]
    assert asked["redirect_uri"] == [f"http://localhost:{port}/callback"]
    connected(claude_env, "xmemo", mcp)
