"""Who the caller is (from verified claims only) and what it may read.

`read_filter` is the one place that turns a principal plus request filters into the
visibility filter; every store read takes a `ReadFilter`, so nothing reads unfiltered."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from .errors import InsufficientScope, TeamMismatch, Unauthorized
from .models import SLUG_PATTERN, holder_of

READ, WRITE, TEMPORARY = "memory:read", "memory:write", "memory:temporary"
_SLUG = re.compile(SLUG_PATTERN)


@dataclass(frozen=True)
class Principal:
    """The verified caller. `owner` is `sub` (user tokens) or `client_id` (machine tokens)."""

    owner: str
    teams: frozenset[str]
    scopes: frozenset[str]
    resource_server: str = "xmemo"
    client_id: str | None = None

    def has(self, scope: str) -> bool:
        return f"{self.resource_server}/{scope}" in self.scopes

    def require(self, scope: str) -> None:
        if not self.has(scope):
            raise InsufficientScope(f"{self.resource_server}/{scope}")

    @property
    def holders(self) -> frozenset[str]:
        """Every holder key whose memories this caller may read."""
        return frozenset({holder_of(self.owner, None)} | {holder_of(self.owner, t) for t in self.teams})


def principal_from_claims(claims: Mapping[str, Any] | None, resource_server: str = "xmemo") -> Principal:
    """Build the principal from the claims API Gateway's Cognito authorizer passes on
    (`requestContext.authorizer.claims`: every value a string, `scope` space-separated)."""
    if not claims:
        raise Unauthorized("no verified claims")
    token_use = claims.get("token_use")
    if token_use not in (None, "access"):
        raise Unauthorized("an access token is required")
    owner = _text(claims.get("sub")) or _text(claims.get("client_id"))
    if not owner:
        raise Unauthorized("the token names no subject")
    scopes = frozenset(_text(claims.get("scope")).split())
    return Principal(
        owner=owner,
        teams=frozenset(_teams(claims)),
        scopes=scopes,
        resource_server=resource_server,
        client_id=_text(claims.get("client_id")) or None,
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _teams(claims: Mapping[str, Any]) -> set[str]:
    """Team slugs from `cognito:groups` entries `team:<slug>` and `custom:teams` (a,b)."""
    groups = claims.get("cognito:groups")
    if isinstance(groups, str):
        # API Gateway flattens the list to "[a, b]" or "a,b" or "a b".
        groups = [g for g in re.split(r"[\s,\[\]]+", groups) if g]
    teams = {g[5:] for g in (groups or []) if isinstance(g, str) and g.startswith("team:")}
    teams |= {t.strip() for t in _text(claims.get("custom:teams")).split(",") if t.strip()}
    return {t for t in teams if _SLUG.match(t)}


@dataclass(frozen=True)
class ReadFilter:
    """What a read may return: the caller's holders (narrowed by request filters), never
    wider. Stores translate it into SQL or an OpenSearch `bool.filter`."""

    holders: frozenset[str]
    now: datetime
    include_temporary: bool = False
    live_only: bool = True  # False only for `forget`: superseded/expired copies go too
    bucket: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    project: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


def check_team(principal: Principal, team: str | None) -> None:
    """Naming a team the caller is not in is `403 team_mismatch`."""
    if team is not None and team not in principal.teams:
        raise TeamMismatch(team)


def read_filter(
    principal: Principal,
    now: datetime,
    *,
    team: str | None = None,
    project: str | None = None,
    bucket: str | None = None,
    type: str | None = None,
    tags: tuple[str, ...] | list[str] = (),
    include_temporary: bool = False,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    live_only: bool = True,
) -> ReadFilter:
    """The visibility filter every read uses: the caller's own memories plus its teams',
    narrowed (never widened) by the request's filters."""
    check_team(principal, team)
    if include_temporary:
        principal.require(TEMPORARY)
    holders = frozenset({holder_of(principal.owner, team)}) if team else principal.holders
    return ReadFilter(
        holders=holders,
        now=now,
        include_temporary=include_temporary,
        live_only=live_only,
        bucket=bucket,
        type=type,
        tags=tuple(sorted(set(tags))),
        project=project,
        created_after=created_after,
        created_before=created_before,
    )
