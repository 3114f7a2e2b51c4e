"""Identity from claims, full-scope checks, and the one visibility filter."""

from datetime import datetime, timezone

import pytest

from xmemo.auth import Principal, principal_from_claims, read_filter
from xmemo.errors import InsufficientScope, TeamMismatch, Unauthorized

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_user_token_owner_is_sub_and_teams_from_groups_and_custom_claim():
    p = principal_from_claims(
        {
            "sub": "user-1",
            "client_id": "app-1",
            "token_use": "access",
            "scope": "xmemo/memory:read xmemo/memory:write",
            "cognito:groups": "[team:acme, admins, team:beta]",
            "custom:teams": "gamma, delta ,Bad Slug",
        }
    )
    assert p.owner == "user-1"
    assert p.client_id == "app-1"
    assert p.teams == {"acme", "beta", "gamma", "delta"}
    assert p.holders == {"owner:user-1", "team:acme", "team:beta", "team:gamma", "team:delta"}


def test_client_credentials_owner_is_client_id():
    p = principal_from_claims({"client_id": "machine-7", "token_use": "access", "scope": "xmemo/memory:read"})
    assert p.owner == "machine-7"
    assert p.teams == frozenset()


def test_groups_as_list_are_accepted():
    p = principal_from_claims({"sub": "u", "scope": "", "cognito:groups": ["team:acme", "x"]})
    assert p.teams == {"acme"}


@pytest.mark.parametrize("claims", [None, {}, {"scope": "xmemo/memory:read"}, {"sub": "u", "token_use": "id"}])
def test_no_identity_is_unauthorized(claims):
    with pytest.raises(Unauthorized):
        principal_from_claims(claims)


@pytest.mark.parametrize("scope", ["memory:read", "other/memory:read", "xmemo/memory:readonly", "xxmemo/memory:read"])
def test_scope_is_compared_as_the_full_string(scope):
    p = principal_from_claims({"sub": "u", "scope": scope})
    assert not p.has("memory:read")
    with pytest.raises(InsufficientScope) as err:
        p.require("memory:read")
    assert err.value.details == {"required_scope": "xmemo/memory:read"}


def test_resource_server_id_is_configuration():
    p = principal_from_claims({"sub": "u", "scope": "mem-api/memory:read"}, resource_server="mem-api")
    assert p.has("memory:read")
    assert not principal_from_claims({"sub": "u", "scope": "xmemo/memory:read"}, "mem-api").has("memory:read")


def _p(teams=(), scopes=("memory:read",)):
    return Principal("alice", frozenset(teams), frozenset(f"xmemo/{s}" for s in scopes))


def test_read_filter_is_own_plus_teams():
    rf = read_filter(_p(teams=("acme",)), NOW)
    assert rf.holders == {"owner:alice", "team:acme"}
    assert not rf.include_temporary and rf.live_only


def test_team_filter_narrows_never_widens():
    rf = read_filter(_p(teams=("acme", "beta")), NOW, team="acme", project="p1")
    assert rf.holders == {"team:acme"}
    assert rf.project == "p1"


def test_foreign_team_is_team_mismatch():
    with pytest.raises(TeamMismatch) as err:
        read_filter(_p(teams=("acme",)), NOW, team="other")
    assert err.value.code == "team_mismatch"


def test_include_temporary_needs_the_temporary_scope():
    with pytest.raises(InsufficientScope) as err:
        read_filter(_p(), NOW, include_temporary=True)
    assert "xmemo/memory:temporary" in err.value.message
    assert read_filter(_p(scopes=("memory:read", "memory:temporary")), NOW, include_temporary=True).include_temporary
