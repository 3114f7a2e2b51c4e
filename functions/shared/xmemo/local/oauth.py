"""The local gateway as its own identity provider behind the MCP authorization server:
local users log in at a form, tokens are signed with the gateway's key (as Cognito's
are with the pool's), refresh tokens are opaque and kept only as digests, and the
client-credentials grant checks the locally registered app clients."""

from __future__ import annotations

import base64
import binascii
import secrets
from typing import Any, Mapping, Sequence

from ..config import Settings
from ..oauth.clients import Clients
from ..oauth.errors import OAuthError
from ..oauth.facade import Facade, origin_of
from ..oauth.fetch import Fetched, fetch
from ..oauth.metadata import Endpoints, xmemo_scopes
from ..oauth.server import AuthorizationServer, AuthRequest, Policy
from ..oauth.state import SqliteState, StateStore, digest
from ..oauth.throttle import LoginThrottle, ThrottlePolicy
from .clients import INTERACTIVE_CLIENT_ID, ClientRegistry
from .keys import SigningKey
from .tokens import full_scopes, issue_token, issuer_of, resources_of
from .users import UserRegistry

LOCAL_REFRESH = "local_refresh"


class LocalUpstream:
    def __init__(self, settings: Settings, key: SigningKey, users: UserRegistry, clients: ClientRegistry, store: StateStore):
        self.settings, self.key, self.users, self.clients, self.store = settings, key, users, clients, store

    def login_url(self, txn: str, request: AuthRequest) -> None:
        return None  # the façade shows the login form

    def login(self, username: str, password: str) -> dict[str, Any] | None:
        user = self.users.authenticate(username, password)
        return {"user": user.name} if user else None

    def tokens(self, grant: Mapping[str, Any], request: AuthRequest) -> dict[str, Any]:
        refresh_token = secrets.token_urlsafe(32)
        self.store.put(LOCAL_REFRESH, digest(refresh_token), {"user": grant["user"]}, self.settings.oauth_refresh_ttl_s)
        return {**self._access(grant["user"], request.scopes, request.resource), "refresh_token": refresh_token}

    def refresh(self, refresh_token: str, scopes: Sequence[str], resource: str) -> dict[str, Any]:
        record = self.store.get(LOCAL_REFRESH, digest(refresh_token))
        if record is None:
            raise OAuthError("invalid_grant", "the refresh token is invalid or expired")
        return self._access(record["user"], scopes, resource)

    def _access(self, name: str, scopes: Sequence[str], resource: str) -> dict[str, Any]:
        user = self.users.get(name)
        if user is None:  # removed since: no more tokens
            raise OAuthError("invalid_grant", "the user no longer exists")
        ttl = self.settings.oauth_access_ttl_s
        token = issue_token(self.settings, self.key, scopes=scopes, sub=user.name, teams=user.teams,
                            client_id=INTERACTIVE_CLIENT_ID, ttl=ttl, audience=resource)
        return {"access_token": token, "expires_in": ttl}

    def client_credentials(self, form: Mapping[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        """Client-credentials grant (RFC 6749 §4.4), answered as Cognito's token endpoint."""
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if (authorization or "")[:6].lower() == "basic ":
            try:
                client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")  # type: ignore[index]
            except (binascii.Error, UnicodeDecodeError):
                return 401, {"error": "invalid_client"}
        client = self.clients.authenticate(client_id or "", secret or "")
        if client is None:
            return 401, {"error": "invalid_client"}
        wanted = full_scopes(form["scope"].split(), self.settings.resource_server) if form.get("scope") else client.scopes
        if not set(wanted) <= set(client.scopes):
            return 400, {"error": "invalid_scope"}
        ttl = self.settings.oauth_access_ttl_s
        token = issue_token(self.settings, self.key, scopes=wanted, client_id=client.client_id, teams=client.teams, ttl=ttl)
        return 200, {"access_token": token, "expires_in": ttl, "token_type": "Bearer"}


def local_fetch(url: str) -> Fetched:
    """CIMD fetches of the local gateway: loopback http allowed (the MCP client runs here)."""
    return fetch(url, allow_loopback_http=True)


def local_facade(settings: Settings, key: SigningKey, clients: ClientRegistry, base_url: str, fetcher=local_fetch) -> Facade:
    """The authorization server of `xmemo serve`, its state in `<data_dir>/gateway/oauth.sqlite3`."""
    issuer = issuer_of(settings)
    scopes = xmemo_scopes(settings.resource_server)
    store = SqliteState(settings.data_dir / "gateway" / "oauth.sqlite3")
    upstream = LocalUpstream(settings, key, UserRegistry(settings.data_dir), clients, store)
    resources = resources_of(base_url)
    policy = Policy(refresh_ttl=settings.oauth_refresh_ttl_s, registrations_per_window=settings.oauth_registrations_per_hour)
    server = AuthorizationServer(Endpoints(issuer), resources, scopes, store,
                                 Clients(store, scopes, fetcher, allow_loopback_http=True), upstream, policy)
    throttle = LoginThrottle(store, ThrottlePolicy(free=settings.oauth_login_free_failures,
                                                   lockout=settings.oauth_login_lockout_failures,
                                                   window=settings.oauth_login_lockout_s))
    origins = frozenset(origin_of(r) for r in resources)  # the form is served under 127.0.0.1 and localhost
    return Facade(server, login=upstream.login, extra_metadata={"jwks_uri": f"{issuer}/.well-known/jwks.json"},
                  throttle=throttle, origins=origins)
