"""A real local gateway (`xmemo serve` in a subprocess) on a free 127.0.0.1 port, with its
own data dir, and helpers to mint real signed tokens for it. Shared by tests/e2e and
tests/security (moved here from tests/e2e/conftest.py unchanged but for `quiet`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from xmemo.config import Settings
from xmemo.local.keys import SigningKey
from xmemo.local.tokens import issue_token

ROOT = Path(__file__).resolve().parents[1]
XMEMO = Path(sys.executable).with_name("xmemo")  # the console script of this venv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalGateway:
    url: str
    settings: Settings
    env: dict[str, str]
    process: subprocess.Popen

    @property
    def key(self) -> SigningKey:
        return SigningKey(self.settings.data_dir)

    def token(self, sub: str, *scopes: str, teams=(), **kw) -> str:
        return issue_token(self.settings, self.key, scopes=scopes or ("memory:read", "memory:write"), sub=sub, teams=teams, **kw)

    def logged_errors(self) -> list[str]:
        """The gateway's own record of its 500s and crashes (type and frames, never content),
        for a failing test to show why, since CI keeps no data dir."""
        log = self.settings.data_dir / "gateway.log"
        lines = log.read_text(errors="replace").splitlines() if log.exists() else []
        return [line for line in lines if "unhandled error" in line or "Traceback" in line or "exited (" in line]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(XMEMO), *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=60)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_gateway(
    data_dir: Path, extra_env: dict[str, str] | None = None, *, quiet: bool = True, own_process_group: bool = False
) -> LocalGateway:
    """Start `xmemo serve` on a free port; its stdout and stderr go to `data_dir/gateway.log`.
    `own_process_group`: started as a shell starts a foreground job (a group of its own,
    SIGINT at its default even when this process was started in the background with SIGINT
    ignored), so a test can signal it as a terminal's Ctrl-C does."""
    port = free_port()
    env = {
        **os.environ,
        "XMEMO_DATA_DIR": str(data_dir),
        "XMEMO_PORT": str(port),
        "XMEMO_EMBEDDER": "none",
        "XMEMO_STORE": "sqlite",
        **(extra_env or {}),
    }
    env.pop("XMEMO_ISSUER", None)
    settings = Settings(data_dir=data_dir, port=port, embedder="none")
    SigningKey(data_dir).private_key  # create the key before the server reads it
    log = open(data_dir / "gateway.log", "w")
    process = subprocess.Popen(
        [str(XMEMO), "serve", *(["--quiet"] if quiet else [])], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=own_process_group,
        preexec_fn=_default_sigint if own_process_group else None,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gateway exited: {(data_dir / 'gateway.log').read_text()}")
        try:
            if httpx.get(f"{url}/.well-known/jwks.json", timeout=1).status_code == 200:
                return LocalGateway(url, settings, env, process)
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("gateway did not start within 60 s")


def stop_gateway(gw: LocalGateway) -> None:
    gw.process.terminate()
    try:
        gw.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        gw.process.kill()
