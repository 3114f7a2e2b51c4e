"""Who may ask for a login: clients registered here (RFC 7591) and clients that name
themselves by an HTTPS URL whose document says who they are (Client ID Metadata
Documents). Both end as a `Client`: an id, its redirect URIs and the scopes it may ask
for. A redirect URI matches exactly, except that a loopback one matches on any port
(RFC 8252 §7.3), since native apps listen on an ephemeral port."""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Sequence
from urllib.parse import urlsplit

from .errors import OAuthError
from .fetch import Fetcher, is_loopback_http
from .state import StateStore, digest

REGISTRATIONS = "client"
RATE = "rate"
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
CIMD_DEFAULT_TTL = 300  # seconds a document is reused when it says nothing
CIMD_MAX_TTL = 3600
CIMD_CACHE_SIZE = 1024


SECRET_METHODS = ("client_secret_basic", "client_secret_post")
AUTH_METHODS = ("none", *SECRET_METHODS)
SECRET_EXPIRES_AT = 0  # RFC 7591 §3.2.1: 0 = the secret does not expire (it ends with the registration)


@dataclass(frozen=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]  # full scope strings it may be granted
    client_name: str = ""
    secret_hash: str = ""  # confidential clients: SHA-256 of the secret (256 random bits), else ""

    @property
    def confidential(self) -> bool:
        return bool(self.secret_hash)


def redirect_uri_problem(uri: Any, *, allow_custom: bool = False) -> str | None:
    """Why `uri` cannot be a redirect URI here, or None: absolute, no fragment, HTTPS or
    loopback HTTP (RFC 8252 §7.3; with or without a port, see `redirect_matches`)."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        return "a redirect URI must be a non-empty string"
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        return "a redirect URI must not have a fragment"
    if parts.scheme == "https" and parts.hostname:
        return None
    if is_loopback_http(uri):
        return None
    return "redirect URIs must be https, or http on a loopback address"


def redirect_matches(registered: str, given: str) -> bool:
    """`given` is `registered`, character for character; or both are loopback HTTP URIs
    (127.0.0.1, [::1], localhost) with the same host, path and query, any port (RFC 8252
    §7.3: the app picks its port when it runs). Never true across hosts or schemes."""
    if hmac.compare_digest(given.encode(), registered.encode()):
        return True
    if not (is_loopback_http(registered) and is_loopback_http(given)):
        return False
    a, b = urlsplit(registered), urlsplit(given)
    try:
        b.port  # a malformed port is no match
    except ValueError:
        return False
    return (a.hostname, a.path, a.query, a.username, a.password, a.fragment) == \
        (b.hostname, b.path, b.query, b.username, b.password, b.fragment)


def _scopes(requested: Any, supported: Sequence[str], error: str) -> tuple[str, ...]:
    if requested is None or requested == "":
        return tuple(supported)
    if not isinstance(requested, str):
        raise OAuthError(error, "scope must be a space-separated string")
    wanted = requested.split()
    unknown = [s for s in wanted if s not in supported]
    if unknown:
        raise OAuthError(error, f"unknown scope {unknown[0]!r}; supported: {' '.join(supported)}")
    return tuple(dict.fromkeys(wanted))


def register(store: StateStore, body: Any, supported_scopes: Sequence[str], *, source: str,
             limit: int, window: int) -> dict[str, Any]:
    """RFC 7591 §3: validate a client's metadata, store it, and answer it back with a new
    `client_id`; a client asking for `client_secret_basic` or `client_secret_post` also
    gets a `client_secret`, shown this once and stored only as its digest (either method
    is then accepted at the token endpoint). At most `limit` registrations per `source`
    (the caller's address) per `window` seconds."""
    if store.count(RATE, f"register:{source}", window) > limit:
        raise OAuthError("too_many_requests", "too many client registrations; try again later", status=429)
    if not isinstance(body, dict):
        raise OAuthError("invalid_client_metadata", "the body must be a JSON object")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError("invalid_redirect_uri", f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs")
    for uri in uris:
        if (problem := redirect_uri_problem(uri)) is not None:
            raise OAuthError("invalid_redirect_uri", problem)
    method = body.get("token_endpoint_auth_method", "none")
    if method not in AUTH_METHODS:
        raise OAuthError("invalid_client_metadata", f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}")
    grants = body.get("grant_types", ["authorization_code", "refresh_token"])
    if not isinstance(grants, list) or not set(grants) <= {"authorization_code", "refresh_token"}:
        raise OAuthError("invalid_client_metadata", "grant_types may be authorization_code and refresh_token")
    if body.get("response_types", ["code"]) != ["code"]:
        raise OAuthError("invalid_client_metadata", "response_types must be [\"code\"]")
    name = body.get("client_name", "")
    if not isinstance(name, str) or len(name) > 200:
        raise OAuthError("invalid_client_metadata", "client_name must be a string of at most 200 characters")
    secret = secrets.token_urlsafe(32) if method in SECRET_METHODS else None
    client = Client(
        client_id="dcr_" + secrets.token_urlsafe(18),
        redirect_uris=tuple(dict.fromkeys(uris)),
        scopes=_scopes(body.get("scope"), supported_scopes, "invalid_client_metadata"),
        client_name=name,
        secret_hash=digest(secret) if secret else "",
    )
    store.put(REGISTRATIONS, client.client_id, asdict(client), None)
    answer = {
        "client_id": client.client_id,
        "client_id_issued_at": int(time.time()),
        "client_name": client.client_name,
        "redirect_uris": list(client.redirect_uris),
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "scope": " ".join(client.scopes),
    }
    if secret:
        answer |= {"client_secret": secret, "client_secret_expires_at": SECRET_EXPIRES_AT}
    return answer


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith("https://") or is_loopback_http(client_id)


class Clients:
    """Resolves a `client_id` to a `Client`: a registration from the store, or a fetched,
    validated and cached Client ID Metadata Document."""

    def __init__(self, store: StateStore, supported_scopes: Sequence[str], fetcher: Fetcher, *,
                 allow_loopback_http: bool = False, clock=time.monotonic):
        self.store = store
        self.supported_scopes = tuple(supported_scopes)
        self._fetcher = fetcher
        self._allow_loopback_http = allow_loopback_http
        self._clock = clock
        self._cache: dict[str, tuple[float, Client]] = {}
        self._lock = threading.Lock()

    def resolve(self, client_id: Any) -> Client:
        if not isinstance(client_id, str) or not client_id or len(client_id) > MAX_URI_LENGTH:
            raise OAuthError("invalid_client", "client_id is missing", redirect=False)
        if is_metadata_url(client_id):
            return self._metadata_client(client_id)
        item = self.store.get(REGISTRATIONS, client_id)
        if item is None:
            raise OAuthError("invalid_client", "unknown client_id", redirect=False)
        return Client(item["client_id"], tuple(item["redirect_uris"]), tuple(item["scopes"]), item.get("client_name", ""),
                      item.get("secret_hash", ""))

    def authenticate(self, client_id: str, secret: str | None) -> None:
        """The token endpoint's client authentication (RFC 6749 §2.3.1): a confidential
        client must present its secret (HTTP Basic or the form, either), a public one must
        present none. Raises OAuthError(invalid_client, 401)."""
        item = None if not client_id or is_metadata_url(client_id) else self.store.get(REGISTRATIONS, client_id)
        expected = (item or {}).get("secret_hash", "")
        if expected and not (secret and hmac.compare_digest(digest(secret).encode(), expected.encode())):
            raise OAuthError("invalid_client", "client authentication failed", status=401)
        if secret is not None and not expected:
            raise OAuthError("invalid_client", "client authentication failed", status=401)

    def _metadata_client(self, url: str) -> Client:
        with self._lock:
            cached = self._cache.get(url)
        if cached is not None and cached[0] > self._clock():
            return cached[1]
        parts = urlsplit(url)
        if is_loopback_http(url) and not self._allow_loopback_http:
            raise OAuthError("invalid_client", "a client metadata document must be served over https", redirect=False)
        if parts.fragment or parts.username or parts.password or parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path:
            raise OAuthError("invalid_client", "a client_id URL needs a path and no fragment, credentials or dot segments", redirect=False)
        fetched = self._fetcher(url)
        client = self.validate_document(url, fetched.body)
        ttl = CIMD_DEFAULT_TTL if fetched.max_age is None else min(fetched.max_age, CIMD_MAX_TTL)
        if ttl > 0:
            with self._lock:
                if len(self._cache) >= CIMD_CACHE_SIZE:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[url] = (self._clock() + ttl, client)
        return client

    def validate_document(self, url: str, body: bytes) -> Client:
        """The document must name itself, list valid redirect URIs and be a public client."""
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise OAuthError("invalid_client", "the client metadata document is not a JSON object", redirect=False)
        if doc.get("client_id") != url:
            raise OAuthError("invalid_client", "the client metadata document does not name itself as client_id", redirect=False)
        if doc.get("token_endpoint_auth_method", "none") != "none":
            raise OAuthError("invalid_client", "only public clients (token_endpoint_auth_method none) are accepted", redirect=False)
        if "client_secret" in doc or "client_secret_expires_at" in doc:
            raise OAuthError("invalid_client", "a client metadata document must not carry a secret", redirect=False)
        uris = doc.get("redirect_uris")
        if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
            raise OAuthError("invalid_client", "the client metadata document lists no redirect_uris", redirect=False)
        for uri in uris:
            if (problem := redirect_uri_problem(uri)) is not None:
                raise OAuthError("invalid_client", f"client metadata document: {problem}", redirect=False)
        try:
            scopes = _scopes(doc.get("scope"), self.supported_scopes, "invalid_client")
        except OAuthError as exc:
            raise OAuthError("invalid_client", f"client metadata document: {exc.description}", redirect=False) from None
        name = doc.get("client_name")
        return Client(url, tuple(uris), scopes, name if isinstance(name, str) else "")
