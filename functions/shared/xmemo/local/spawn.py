"""`xmemo serve` as a child process on a free 127.0.0.1 port, over its own data directory,
ready when its JWKS answers: the one way tests and benchmarks get a real gateway. It lives
in the package (not in tests/) because the benchmarks ship in the package. Only the
standard library and `[local]` are used, so a fresh `.[local]` install can run it too."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..config import Settings
from .keys import SigningKey
from .tokens import issue_token

LOG_NAME = "gateway.log"


def free_port() -> int:
    """A port nobody listens on right now (the child binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def xmemo_command(python: str | Path = sys.executable) -> list[str]:
    """The `xmemo` command of `python`'s environment (no activation or PATH needed)."""
    return [str(python), "-m", "xmemo"]


@dataclass
class SpawnedGateway:
    """A running `xmemo serve`: its URL, environment and process; its stdout and stderr go
    to `data_dir/gateway.log`."""

    url: str
    port: int
    data_dir: Path
    env: dict[str, str]
    process: subprocess.Popen
    command: list[str]
    cwd: Path | None = None

    @cached_property
    def settings(self) -> Settings:
        """The gateway's issuer and resource server, as a token for it needs them."""
        return Settings(data_dir=self.data_dir, port=self.port, embedder=self.env.get("XMEMO_EMBEDDER", "none"))

    @property
    def key(self) -> SigningKey:
        return SigningKey(self.data_dir)

    def token(self, sub: str, *scopes: str, teams: Iterable[str] = (), **kw) -> str:
        """A token signed with the gateway's key (read+write unless scopes are given)."""
        return issue_token(self.settings, self.key, scopes=scopes or ("memory:read", "memory:write"), sub=sub, teams=teams, **kw)

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Another `xmemo` command of the same installation, with the gateway's environment."""
        return subprocess.run([*self.command, *args], cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def add_user(self, name: str, password: str, *teams: str) -> None:
        """`xmemo user add` for the gateway's local login (password on standard input)."""
        args = [arg for team in teams for arg in ("--team", team)]
        added = subprocess.run([*self.command, "user", "add", name, *args], input=password + "\n", cwd=self.cwd, env=self.env,
                               capture_output=True, text=True, timeout=60)
        if added.returncode != 0:
            raise RuntimeError(f"xmemo user add {name} failed: {added.stderr[-2000:]}")

    def log(self) -> str:
        path = self.data_dir / LOG_NAME
        return path.read_text(errors="replace") if path.exists() else ""

    def logged_errors(self) -> list[str]:
        """The gateway's own record of its 500s and crashes (type and frames, never content),
        for a failing test to show why, since CI keeps no data dir."""
        return [line for line in self.log().splitlines() if "unhandled error" in line or "Traceback" in line or "exited (" in line]

    def stop(self) -> None:
        """SIGTERM (the gateway closes its workers and exits 0), SIGKILL after 10 s."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> SpawnedGateway:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_gateway(
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    command: Sequence[str] | None = None,
    cwd: Path | None = None,
    quiet: bool = True,
    own_process_group: bool = False,
    timeout: float = 120,
) -> SpawnedGateway:
    """Start `xmemo serve` (of `command`, default this interpreter's) over `data_dir` on a
    free port: embedded store, no embedder, unless `env` says otherwise; the caller's
    `XMEMO_ISSUER` is dropped (the issuer is the gateway's own URL). `cwd` is where the
    template is looked for. `own_process_group`: started as a shell starts a foreground
    job (a group of its own, SIGINT at its default even when this process ignores it), so
    a test can signal it as a terminal's Ctrl-C does."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    child_env = {**os.environ, "XMEMO_DATA_DIR": str(data_dir), "XMEMO_PORT": str(port), "XMEMO_EMBEDDER": "none",
                 "XMEMO_STORE": "sqlite", **(env or {})}
    child_env.pop("XMEMO_ISSUER", None)
    command = list(command or xmemo_command())
    SigningKey(data_dir).private_key  # created before the gateway and its workers read it: none races another to make it
    with open(data_dir / LOG_NAME, "w") as log:
        process = subprocess.Popen(
            [*command, "serve", *(["--quiet"] if quiet else [])], cwd=cwd, env=child_env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=own_process_group, preexec_fn=_default_sigint if own_process_group else None,
        )
    gw = SpawnedGateway(f"http://127.0.0.1:{port}", port, data_dir, child_env, process, command, cwd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"xmemo serve exited ({process.returncode}): {gw.log()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{gw.url}/.well-known/jwks.json", timeout=5) as answer:
                answer.read()  # the whole answer: hanging up mid-reply would log a broken pipe
                if answer.status == 200:
                    return gw
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    gw.stop()
    raise RuntimeError(f"xmemo serve did not answer within {timeout:g} s: {gw.log()[-3000:]}")
