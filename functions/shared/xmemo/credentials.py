"""A person's stored XMemo login, and access tokens that refresh themselves.

`xmemo login` saves a refresh token per deployment in the user's config directory (file
mode 0600, directory 0700); `xmemo mcp-stdio` and the Python client turn it, or client
credentials (`XMEMO_CLIENT_ID` / `XMEMO_CLIENT_SECRET`), into a fresh access token before
each call. Access tokens are kept in memory only, and no function here prints a token.
Only the standard library: the client needs nothing the Lambda layer lacks."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

TIMEOUT_S = 30
FILE_NAME = "logins.json"


class LoginError(Exception):
    """No usable credential: not logged in, or the authorization server refused a refresh
    (the message says which; it never contains a token)."""


@dataclass(frozen=True)
class StoredLogin:
    """What `xmemo login` keeps for one deployment. `access_token`/`expires_at` live in
    memory only: `save` writes the refresh token and how to use it, never an access token."""

    url: str  # the deployment's base URL, e.g. https://api.example.com/prod or http://127.0.0.1:8787
    token_endpoint: str
    client_id: str
    refresh_token: str
    scope: str = ""
    resource: str = ""  # the MCP endpoint the tokens were asked for (RFC 8707)
    access_token: str | None = field(default=None, repr=False)
    expires_at: float = 0.0

    def __repr__(self) -> str:  # a login printed by mistake shows no secret
        return f"StoredLogin(url={self.url!r}, client_id={self.client_id!r}, scope={self.scope!r})"


def base_url(url: str) -> str:
    """`https://h/prod/mcp/full` → `https://h/prod`: logins are kept per deployment."""
    url = url.rstrip("/")
    for suffix in ("/mcp/full", "/mcp"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def config_dir() -> Path:
    """`$XMEMO_CONFIG_DIR`, else `$XDG_CONFIG_HOME/xmemo`, else `~/.config/xmemo`."""
    explicit = os.environ.get("XMEMO_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "xmemo"


def _path() -> Path:
    return config_dir() / FILE_NAME


def _read_all() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data.get("logins", {}) if isinstance(data, dict) else {}


_write_lock = threading.Lock()


def save(login: StoredLogin) -> Path:
    """Keep `login` (replacing any for the same deployment); owner-only file and folder."""
    record = {k: v for k, v in asdict(login).items() if k not in ("access_token", "expires_at")}
    record["url"] = base_url(login.url)
    path = _path()
    with _write_lock:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        logins = _read_all()
        logins[record["url"]] = record
        _write_all(path, logins)
    return path


def _write_all(path, logins: dict[str, Any]) -> None:
    """Replace the file atomically, owner-only from the moment it exists (caller holds the lock)."""
    tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"logins": logins}, fh, indent=2)
    os.replace(tmp, path)


def load(url: str | None = None) -> StoredLogin | None:
    """The login for `url` (any URL of the deployment), or the only one stored when `url`
    is None; None when there is none."""
    logins = _read_all()
    if url is None:
        record = next(iter(logins.values())) if len(logins) == 1 else None
    else:
        record = logins.get(base_url(url))
    if record is None:
        return None
    known = {f for f in StoredLogin.__dataclass_fields__ if f not in ("access_token", "expires_at")}
    return StoredLogin(**{k: v for k, v in record.items() if k in known})


def forget(url: str) -> bool:
    """Remove the login for `url`'s deployment (`xmemo logout`)."""
    with _write_lock:
        logins = _read_all()
        if logins.pop(base_url(url), None) is None:
            return False
        _write_all(_path(), logins)
    return True


def _send(req: urllib.request.Request, what: str) -> tuple[int, dict[str, Any]]:
    """(status, JSON object answer); network failures raise LoginError naming `what`."""
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            status, body = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        raise LoginError(f"{what} unreachable: {type(exc).__name__}") from None
    try:
        answer = json.loads(body or b"{}")
    except ValueError:
        answer = {}
    return status, answer if isinstance(answer, dict) else {}


def post_form(url: str, form: dict[str, str], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """POST an OAuth form (the token endpoint)."""
    return _send(urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(), method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json", **(headers or {})}), "token endpoint")


def post_json(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST a JSON document (client registration, RFC 7591)."""
    return _send(urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json"}), "registration endpoint")


def fresh_access_token(login: StoredLogin, *, leeway: float = 60) -> tuple[str, StoredLogin]:
    """An access token valid for at least `leeway` more seconds, and the login to keep
    using: refreshed at the token endpoint when near expiry, and saved again when the
    server rotated the refresh token. LoginError if the refresh is refused."""
    if login.access_token and time.time() + leeway < login.expires_at:
        return login.access_token, login
    form = {"grant_type": "refresh_token", "refresh_token": login.refresh_token, "client_id": login.client_id}
    if login.resource:
        form["resource"] = login.resource
    status, answer = post_form(login.token_endpoint, form)
    token = answer.get("access_token")
    if status != 200 or not isinstance(token, str):
        reason = answer.get("error") or f"HTTP {status}"
        raise LoginError(f"refresh refused ({reason}); run `xmemo login --url {login.url}` again")
    rotated = answer.get("refresh_token")
    fresh = replace(
        login,
        access_token=token,
        expires_at=time.time() + float(answer.get("expires_in") or 300),
        refresh_token=rotated if isinstance(rotated, str) and rotated else login.refresh_token,
    )
    if fresh.refresh_token != login.refresh_token:
        save(fresh)
    return token, fresh


def client_credentials_token(token_endpoint: str, client_id: str, client_secret: str, scope: str | None = None) -> tuple[str, float]:
    """(access token, expiry time) from the client-credentials grant (HTTP Basic, as
    Cognito wants it). LoginError if refused."""
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    form = {"grant_type": "client_credentials", **({"scope": scope} if scope else {})}
    status, answer = post_form(token_endpoint, form, {"Authorization": f"Basic {basic}"})
    token = answer.get("access_token")
    if status != 200 or not isinstance(token, str):
        raise LoginError(f"client credentials refused ({answer.get('error') or f'HTTP {status}'})")
    return token, time.time() + float(answer.get("expires_in") or 300)


def get_json(url: str) -> dict[str, Any]:
    """GET a JSON document (metadata discovery)."""
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            doc = json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise LoginError(f"cannot read {url}: {type(exc).__name__}") from None
    if not isinstance(doc, dict):
        raise LoginError(f"{url} is not a JSON object")
    return doc


def discover(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(protected-resource metadata of the MCP endpoint, authorization-server metadata),
    as an MCP client finds them (RFC 9728, then RFC 8414 with the OpenID fallback)."""
    base = base_url(url)
    resource = get_json(f"{base}/.well-known/oauth-protected-resource/mcp")
    issuer = str((resource.get("authorization_servers") or [""])[0]).rstrip("/")
    if not issuer:
        raise LoginError("the resource metadata names no authorization server")
    parts = urllib.parse.urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    # RFC 8414 §3.1 inserts the well-known segment before the issuer's path; OpenID appends it
    for candidate in (f"{origin}/.well-known/oauth-authorization-server{parts.path}", f"{issuer}/.well-known/openid-configuration"):
        try:
            server = get_json(candidate)
        except LoginError:
            continue
        if str(server.get("issuer", "")).rstrip("/") == issuer:
            return resource, server
    raise LoginError(f"no authorization-server metadata for {issuer}")


class TokenSource:
    """Bearer tokens for one deployment, from a stored login or client credentials:
    `token()` before each call, `token(force=True)` once after a 401."""

    def __init__(self, *, login: StoredLogin | None = None, token_endpoint: str | None = None,
                 client_id: str | None = None, client_secret: str | None = None, leeway: float = 60):
        if login is None and not (token_endpoint and client_id and client_secret):
            raise LoginError("neither a stored login nor client credentials")
        self._login = login
        self._client = (token_endpoint, client_id, client_secret) if login is None else None
        self._cached: tuple[str, float] | None = None
        self._leeway = leeway
        self._lock = threading.Lock()

    @classmethod
    def for_url(cls, url: str) -> "TokenSource":
        """Client credentials from the environment when both are set, else the stored login."""
        client_id, secret = os.environ.get("XMEMO_CLIENT_ID"), os.environ.get("XMEMO_CLIENT_SECRET")
        if client_id and secret:
            _, server = discover(url)
            return cls(token_endpoint=str(server["token_endpoint"]), client_id=client_id, client_secret=secret)
        login = load(url)
        if login is None:
            raise LoginError(f"not logged in to {base_url(url)}: run `xmemo login --url {base_url(url)}`")
        return cls(login=login)

    def token(self, *, force: bool = False) -> str:
        with self._lock:
            if self._login is not None:
                login = replace(self._login, access_token=None) if force else self._login
                token, self._login = fresh_access_token(login, leeway=self._leeway)
                return token
            if force or self._cached is None or time.time() + self._leeway >= self._cached[1]:
                endpoint, client_id, secret = self._client  # type: ignore[misc]
                self._cached = client_credentials_token(endpoint, client_id, secret)
            return self._cached[0]
