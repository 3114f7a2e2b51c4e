"""Local users of the login form: scrypt-hashed passwords, owner-only file, no way in
without the right password."""

from __future__ import annotations

import stat
import subprocess

import pytest

from tests.gateway import XMEMO
from xmemo.local.users import UserRegistry


def test_passwords_are_hashed_and_checked(tmp_path):
    users = UserRegistry(tmp_path)
    users.add("alice", "a-long-password", ["ops", "acme", "ops"])
    text = users.path.read_text()
    assert "a-long-password" not in text and stat.S_IMODE(users.path.stat().st_mode) == 0o600
    assert users.authenticate("alice", "a-long-password").teams == ["acme", "ops"]
    assert users.authenticate("alice", "a-long-passwordX") is None
    assert users.authenticate("bob", "a-long-password") is None
    users.add("alice", "another-password")  # replaced: the old password no longer works
    assert users.authenticate("alice", "a-long-password") is None and users.get("alice").teams == []


@pytest.mark.parametrize("name, password", [("alice", "short"), ("", "long-enough-1"), ("a b", "long-enough-1")])
def test_bad_names_and_short_passwords(tmp_path, name, password):
    with pytest.raises(ValueError):
        UserRegistry(tmp_path).add(name, password)


def test_cli_reads_the_password_from_stdin(tmp_path):
    env = {"XMEMO_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    ok = subprocess.run([str(XMEMO), "user", "add", "carol", "--team", "acme"], input="carol-password\n",
                        env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "carol-password" not in ok.stdout + ok.stderr
    assert UserRegistry(tmp_path).authenticate("carol", "carol-password").teams == ["acme"]
    bad = subprocess.run([str(XMEMO), "user", "add", "dave", "--team", "Not A Slug"], input="dave-password\n",
                         env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and UserRegistry(tmp_path).get("dave") is None
