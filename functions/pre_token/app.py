"""Cognito pre-token-generation trigger (event version 3, `LambdaVersion: V3_0`): puts a
machine client's teams into its access token as `custom:teams` ("a,b"), the claim
`xmemo.auth` reads next to `cognito:groups`.

Users need nothing from this trigger: their `team:<slug>` groups already reach the access
token as `cognito:groups`. Machine clients (client-credentials) have no groups, so their
teams are looked up by client id in SSM Parameter Store, one StringList parameter per
client under `CLIENT_TEAMS_PREFIX` (`<prefix>/<client_id>` = "team-a,team-b"). Operators
grant or revoke a client's teams by writing that parameter; no redeploy.

Teams are never taken from the request (`clientMetadata` is caller-controlled). On any
lookup failure the token is issued WITHOUT teams (less access, never more) and the
error is logged; a previously cached answer is reused if there is one.

Deliberately stdlib + boto3 (in the Lambda runtime) and no xmemo import: it runs on every
token request, so its cold start stays small."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from typing import Any, Callable, Mapping

logger = logging.getLogger("xmemo.pre_token")
logger.setLevel(os.environ.get("POWERTOOLS_LOG_LEVEL", "INFO"))

CLAIM = "custom:teams"
CLIENT_CREDENTIALS = "TokenGeneration_ClientCredentials"
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")  # = xmemo.models.SLUG_PATTERN
CACHE_SECONDS = 60.0  # a revoked team leaves new tokens within a minute

# client id -> (fetched at, teams); per warm container
_cache: dict[str, tuple[float, tuple[str, ...]]] = {}


def parse_teams(value: str) -> tuple[str, ...]:
    """"a, b,a" -> ("a", "b"); entries that are not slugs are dropped (and logged)."""
    teams: list[str] = []
    for raw in value.split(","):
        team = raw.strip().removeprefix("team:")
        if not team:
            continue
        if not SLUG.match(team):
            logger.warning("ignoring a team that is not a slug", extra={"team_length": len(team)})
            continue
        if team not in teams:
            teams.append(team)
    return tuple(teams)


def _ssm():
    """One SSM client per warm container, created on first use (no I/O at import)."""
    global _ssm_client
    if _ssm_client is None:
        import boto3

        _ssm_client = boto3.client("ssm")
    return _ssm_client


_ssm_client = None


def ssm_lookup(name: str) -> str | None:
    """The parameter's value, or None when it does not exist."""
    client = _ssm()
    try:
        return client.get_parameter(Name=name)["Parameter"]["Value"]
    except client.exceptions.ParameterNotFound:
        return None


def teams_of_client(
    client_id: str,
    prefix: str,
    lookup: Callable[[str], str | None] = ssm_lookup,
    now: Callable[[], float] = time.monotonic,
) -> tuple[str, ...]:
    """The client's teams from `<prefix>/<client_id>`, cached for CACHE_SECONDS."""
    cached = _cache.get(client_id)
    if cached and now() - cached[0] < CACHE_SECONDS:
        return cached[1]
    try:
        value = lookup(f"{prefix.rstrip('/')}/{client_id}")
    except Exception as exc:  # noqa: BLE001 - any failure: no teams (fail narrow), keep serving
        logger.error("client teams lookup failed", extra={"error_type": type(exc).__name__})
        return cached[1] if cached else ()
    teams = parse_teams(value) if value else ()
    _cache[client_id] = (now(), teams)
    return teams


def respond(event: dict[str, Any], teams: tuple[str, ...]) -> dict[str, Any]:
    """The V2/V3 response: add `custom:teams` to the access token, touch nothing else."""
    if teams:
        event["response"] = {
            "claimsAndScopeOverrideDetails": {
                "accessTokenGeneration": {"claimsToAddOrOverride": {CLAIM: ",".join(teams)}},
            }
        }
    return event


def lambda_handler(event: dict[str, Any], context: Any = None, *, env: Mapping[str, str] | None = None,
                   lookup: Callable[[str], str | None] = ssm_lookup) -> dict[str, Any]:
    env = os.environ if env is None else env
    if str(event.get("version")) not in ("2", "3"):
        # A V1_0 event cannot customise access tokens: the pool is misconfigured.
        raise ValueError("configure the pre-token-generation trigger with LambdaVersion V3_0")
    if event.get("triggerSource") != CLIENT_CREDENTIALS:
        return event  # users: cognito:groups already carries team:<slug>
    client_id = (event.get("callerContext") or {}).get("clientId") or ""
    teams = teams_of_client(client_id, env["CLIENT_TEAMS_PREFIX"], lookup) if client_id else ()
    logger.info(json.dumps({"message": "client token", "client_id": client_id, "teams": len(teams)}))
    return respond(event, teams)
