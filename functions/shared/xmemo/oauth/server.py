"""The authorization server proper: `/authorize` (validation, pending login, single-use
code, RFC 9207 `iss`), `/token` (code + PKCE, refresh, client credentials) and
`/register`, over a `StateStore`, `Clients` and an `Upstream` identity provider.

The access tokens handed to MCP clients are the upstream's own (Cognito's on AWS), so
the API's authorizer is unchanged; what this server adds is who may ask (the client),
where the answer goes (redirect URI), proof the asker is the same party (PKCE S256), and
which resource and scopes the grant is for. Refresh tokens are this server's own: bound
to the client, rotated on every use, revoked as a family on reuse or on a replayed code;
only their digests are stored, and the upstream's refresh token is kept sealed under
them (`seal`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Protocol, Sequence
from urllib.parse import unquote_plus, urlencode, urlsplit

from .clients import Client, Clients, redirect_matches, register
from .errors import OAuthError
from .metadata import Endpoints, server_metadata
from .seal import seal, unseal
from .state import StateStore, digest

PENDING, CODE, REFRESH, ATTEMPTS = "pending", "code", "refresh", "attempts"
# A grant's refresh tokens share a family (revoked together); retired tokens and spent
# codes leave a marker naming it, for reuse detection, as long as the family can live.
FAMILY, ROTATED, USED_CODE = "family", "rotated", "used_code"
_PKCE = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")
MAX_STATE = 1024


@dataclass(frozen=True)
class Policy:
    """Lifetimes (seconds) and limits."""

    code_ttl: int = 60
    pending_ttl: int = 600
    refresh_ttl: int = 30 * 86400  # Cognito's RefreshTokenValidity in template.yaml
    registrations_per_window: int = 30
    registration_window: int = 3600
    login_attempts: int = 5


@dataclass(frozen=True)
class AuthRequest:
    """A validated `/authorize` request, kept while the person logs in."""

    client_id: str
    redirect_uri: str
    state: str
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str


class Upstream(Protocol):
    """The identity provider behind this server (Cognito on AWS; the local gateway)."""

    def login_url(self, txn: str, request: AuthRequest) -> str | None:
        """Where the person logs in; None: this server shows its own form."""

    def tokens(self, grant: Mapping[str, Any], request: AuthRequest) -> dict[str, Any]:
        """The provider's tokens for a completed login (`grant` is what `complete` got)."""

    def refresh(self, refresh_token: str, scopes: Sequence[str], resource: str) -> dict[str, Any]:
        """New tokens for the upstream's refresh token (a new one too if it rotates);
        OAuthError(invalid_grant) if it is refused."""

    def client_credentials(self, form: Mapping[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        """The client-credentials grant, answered by the provider."""


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def with_query(uri: str, params: Mapping[str, str]) -> str:
    return f"{uri}{'&' if urlsplit(uri).query else '?'}{urlencode(params)}"


class AuthorizationServer:
    def __init__(self, endpoints: Endpoints, resources: Sequence[str], scopes: Sequence[str], store: StateStore,
                 clients: Clients, upstream: Upstream, policy: Policy = Policy()):
        self.endpoints = endpoints
        self.resources = frozenset(r.rstrip("/") for r in resources)
        self.scopes = tuple(scopes)
        self.store = store
        self.clients = clients
        self.upstream = upstream
        self.policy = policy

    # -- metadata and registration -------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        return server_metadata(self.endpoints, self.scopes)

    def register(self, body: Any, source: str) -> dict[str, Any]:
        return register(self.store, body, self.scopes, source=source,
                        limit=self.policy.registrations_per_window, window=self.policy.registration_window)

    # -- /authorize ----------------------------------------------------------------------
    def begin(self, params: Mapping[str, str]) -> tuple[str, AuthRequest, str | None]:
        """Validate an authorization request and keep it while the person logs in:
        (login id, the request, the upstream login URL or None for the local form).
        OAuthError with `location` set when the client should get the error."""
        client = self.clients.resolve(params.get("client_id"))
        redirect_uri = params.get("redirect_uri")
        if redirect_uri is None and len(client.redirect_uris) == 1:
            redirect_uri = client.redirect_uris[0]
        if not isinstance(redirect_uri, str) or not any(redirect_matches(u, redirect_uri) for u in client.redirect_uris):
            raise OAuthError("invalid_request", "redirect_uri is not registered for this client", redirect=False)
        state = params.get("state") or ""
        try:
            request = self._validate(client, redirect_uri, state, params)
        except OAuthError as exc:
            exc.location = self._error_location(redirect_uri, state, exc)
            raise
        txn = secrets.token_urlsafe(32)
        self.store.put(PENDING, digest(txn), asdict(request), self.policy.pending_ttl)
        return txn, request, self.upstream.login_url(txn, request)

    def _validate(self, client: Client, redirect_uri: str, state: str, params: Mapping[str, str]) -> AuthRequest:
        if params.get("response_type") != "code":
            raise OAuthError("unsupported_response_type", "response_type must be code")
        if len(state) > MAX_STATE:  # optional (OAuth 2.1 §4.1.1: PKCE carries the CSRF protection)
            raise OAuthError("invalid_request", "state is at most 1024 characters")
        challenge = params.get("code_challenge") or ""
        if params.get("code_challenge_method") != "S256" or not _PKCE.match(challenge):
            raise OAuthError("invalid_request", "PKCE is required: code_challenge with code_challenge_method S256")
        resource = (params.get("resource") or "").rstrip("/")
        if resource not in self.resources:
            raise OAuthError("invalid_target", "resource must name this server's MCP endpoint")
        wanted = (params.get("scope") or "").split() or list(client.scopes)
        beyond = [s for s in wanted if s not in client.scopes]
        if beyond:
            raise OAuthError("invalid_scope", f"scope {beyond[0]!r} is not allowed for this client")
        return AuthRequest(client.client_id, redirect_uri, state, challenge, tuple(dict.fromkeys(wanted)), resource)

    def _error_location(self, redirect_uri: str, state: str, exc: OAuthError) -> str:
        params = {"error": exc.error, "error_description": exc.description, "iss": self.endpoints.issuer}
        if state and len(state) <= MAX_STATE:
            params["state"] = state
        return with_query(redirect_uri, params)

    def pending(self, txn: str) -> AuthRequest | None:
        """The login still waiting under `txn` (read only; `complete` consumes it)."""
        item = self.store.get(PENDING, digest(txn)) if txn else None
        return AuthRequest(**{**item, "scopes": tuple(item["scopes"])}) if item else None

    def failed_login(self, txn: str) -> bool:
        """Count a wrong password; True once there were too many (the caller then `deny`s)."""
        return self.store.count(ATTEMPTS, digest(txn), self.policy.pending_ttl) >= self.policy.login_attempts

    def complete(self, txn: str, grant: Mapping[str, Any]) -> str:
        """The person logged in: consume the pending login, issue a single-use code and
        return where to send the person (the client's redirect URI with `code`, `state`
        and `iss`)."""
        item = self.store.take(PENDING, digest(txn)) if txn else None
        if item is None:
            raise OAuthError("invalid_request", "this login expired or was already used; start again from the app", redirect=False)
        code = secrets.token_urlsafe(32)
        # the grant (on AWS: Cognito's code and verifier) is sealed under our code, so the
        # store alone yields nothing redeemable
        self.store.put(CODE, digest(code), {**item, "grant": seal(code, json.dumps(dict(grant)))}, self.policy.code_ttl)
        answer = {"code": code, "state": item["state"], "iss": self.endpoints.issuer}
        return with_query(item["redirect_uri"], {k: v for k, v in answer.items() if v})  # state only when sent

    def deny(self, txn: str, error: str, description: str) -> str:
        """The upstream login failed or was cancelled: consume it, tell the client."""
        item = self.store.take(PENDING, digest(txn)) if txn else None
        if item is None:
            raise OAuthError("invalid_request", "this login expired or was already used; start again from the app", redirect=False)
        return self._error_location(item["redirect_uri"], item["state"], OAuthError(error, description))

    # -- /token --------------------------------------------------------------------------
    def token(self, form: Mapping[str, str], authorization: str | None = None) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of the token endpoint; never raises OAuthError."""
        grant = form.get("grant_type")
        try:
            if grant == "client_credentials":
                return self.upstream.client_credentials(form, authorization)
            if grant in ("authorization_code", "refresh_token"):
                form = {**form, "client_id": self._client_of(form, authorization)}
            if grant == "authorization_code":
                return 200, self._code_grant(form)
            if grant == "refresh_token":
                return 200, self._refresh_grant(form)
            raise OAuthError("unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials")
        except OAuthError as exc:
            return exc.status, exc.body()

    def _client_of(self, form: Mapping[str, str], authorization: str | None) -> str:
        """The authenticated client's id: from HTTP Basic (RFC 6749 §2.3.1, form-encoded
        parts) or the form; one method only, and a confidential client's secret checked."""
        client_id, secret = form.get("client_id") or "", form.get("client_secret")
        if authorization is not None:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() != "basic" or secret is not None:
                raise OAuthError("invalid_request", "use one client authentication method: HTTP Basic or the form")
            try:
                basic_id, sep, basic_secret = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                raise OAuthError("invalid_client", "malformed HTTP Basic credentials", status=401) from None
            if not sep or (client_id and client_id != unquote_plus(basic_id)):
                raise OAuthError("invalid_client", "malformed HTTP Basic credentials", status=401)
            client_id, secret = unquote_plus(basic_id), unquote_plus(basic_secret)
        self.clients.authenticate(client_id, secret)
        return client_id

    def _code_grant(self, form: Mapping[str, str]) -> dict[str, Any]:
        code = form.get("code") or ""
        key = digest(code)
        record = self.store.take(CODE, key) if code else None  # consumed even if what follows fails
        if record is None:
            spent = self.store.get(USED_CODE, key) if code else None
            if spent is not None:  # RFC 6749 §4.1.2: a replayed code revokes what it produced
                self.store.put(USED_CODE, key, {**spent, "replayed": True}, self.policy.refresh_ttl)
                self._revoke(spent["family"])
                raise OAuthError("invalid_grant", "the authorization code was already used; the grant made from it is revoked")
            raise OAuthError("invalid_grant", "the authorization code is invalid, expired or already used")
        family = secrets.token_urlsafe(16)
        self.store.put(USED_CODE, key, {"family": family}, self.policy.refresh_ttl)
        if not hmac.compare_digest(str(form.get("client_id") or "").encode(), record["client_id"].encode()):
            raise OAuthError("invalid_grant", "the authorization code was issued to another client")
        if not hmac.compare_digest(str(form.get("redirect_uri") or "").encode(), record["redirect_uri"].encode()):
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request")
        verifier = form.get("code_verifier") or ""
        if not _PKCE.match(verifier) or not hmac.compare_digest(s256(verifier).encode(), record["code_challenge"].encode()):
            raise OAuthError("invalid_grant", "the PKCE code_verifier does not match the code_challenge")
        if form.get("resource") and form["resource"].rstrip("/") != record["resource"]:
            raise OAuthError("invalid_target", "resource differs from the authorization request")
        request = AuthRequest(**{k: v for k, v in record.items() if k != "grant"} | {"scopes": tuple(record["scopes"])})
        sealed = record["grant"]  # (a dict: a code issued before grants were sealed)
        tokens = self.upstream.tokens(sealed if isinstance(sealed, dict) else json.loads(unseal(code, sealed) or "{}"), request)
        grant = {"client_id": request.client_id, "scopes": list(request.scopes), "resource": request.resource, "family": family}
        if tokens.get("refresh_token"):
            self.store.put(FAMILY, family, {"client_id": request.client_id}, self.policy.refresh_ttl)
            refresh_token = self._issue_refresh(grant, tokens["refresh_token"])
            if (self.store.get(USED_CODE, key) or {}).get("replayed"):  # replayed while this exchange ran
                self._revoke(family)
                raise OAuthError("invalid_grant", "the authorization code was already used; the grant made from it is revoked")
            tokens = {**tokens, "refresh_token": refresh_token}
        return self._answer(tokens, request.scopes)

    def _refresh_grant(self, form: Mapping[str, str]) -> dict[str, Any]:
        """Rotation with reuse detection (RFC 9700 §4.14.2): every use answers a new refresh
        token and retires the old one; presenting a retired one revokes the whole grant
        (its family), since either the client or a thief now holds a stale copy."""
        old = form.get("refresh_token") or ""
        key = digest(old)
        binding = self.store.get(REFRESH, key) if old else None
        if binding is None:
            retired = self.store.get(ROTATED, key) if old else None
            if retired is not None:
                self._revoke(retired["family"])
                raise OAuthError("invalid_grant", "the refresh token was already used; the grant is revoked")
            raise OAuthError("invalid_grant", "the refresh token is invalid or expired")
        if "family" not in binding:  # bound before rotation existed: the token is the provider's own
            binding = {**binding, "family": secrets.token_urlsafe(16), "sealed": seal(old, old)}
            self.store.put(FAMILY, binding["family"], {"client_id": binding["client_id"]}, self.policy.refresh_ttl)
        if self.store.get(FAMILY, binding["family"]) is None:
            raise OAuthError("invalid_grant", "the grant of this refresh token was revoked or expired")
        if not hmac.compare_digest(str(form.get("client_id") or "").encode(), binding["client_id"].encode()):
            raise OAuthError("invalid_grant", "the refresh token was issued to another client")
        if form.get("resource") and form["resource"].rstrip("/") != binding["resource"]:
            raise OAuthError("invalid_target", "resource differs from the original grant")
        scopes = tuple((form.get("scope") or "").split()) or tuple(binding["scopes"])
        if not set(scopes) <= set(binding["scopes"]):
            raise OAuthError("invalid_scope", "a refresh cannot widen the granted scopes")
        upstream_token = unseal(old, binding["sealed"]) or ""
        tokens = self.upstream.refresh(upstream_token, scopes, binding["resource"])  # nothing spent if this fails
        if self.store.take(REFRESH, key) is None:  # a concurrent use of the same token won the race
            self._revoke(binding["family"])
            raise OAuthError("invalid_grant", "the refresh token was already used; the grant is revoked")
        self.store.put(ROTATED, key, {"family": binding["family"]}, self.policy.refresh_ttl)
        grant = {k: binding[k] for k in ("client_id", "resource", "family")} | {"scopes": binding["scopes"]}
        refresh_token = self._issue_refresh(grant, tokens.get("refresh_token") or upstream_token)
        return self._answer({**tokens, "refresh_token": refresh_token}, scopes)

    def _issue_refresh(self, grant: Mapping[str, Any], upstream_token: str) -> str:
        """A new refresh token of this server for `grant`, the upstream's sealed under it.
        The grant keeps the scopes first granted: a narrower refresh does not shrink it."""
        token = secrets.token_urlsafe(32)
        self.store.put(REFRESH, digest(token), {**grant, "sealed": seal(token, upstream_token)}, self.policy.refresh_ttl)
        return token

    def _revoke(self, family: str) -> None:
        """End a grant: every refresh token of the family stops working at once (each is
        checked against its family's record, which lives `refresh_ttl` from the login)."""
        self.store.take(FAMILY, family)

    @staticmethod
    def _answer(tokens: Mapping[str, Any], scopes: Sequence[str]) -> dict[str, Any]:
        body = {"access_token": tokens["access_token"], "token_type": "Bearer",
                "expires_in": int(tokens.get("expires_in") or 3600), "scope": " ".join(scopes)}
        if tokens.get("refresh_token"):
            body["refresh_token"] = tokens["refresh_token"]
        return body
