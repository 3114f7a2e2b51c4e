"""Local people who can log in at the local gateway's login form (`xmemo user add`), as
Cognito users do on AWS. Passwords are stored only as salted scrypt hashes and checked
in constant time; an unknown name costs the same scrypt as a known one."""

from __future__ import annotations

import hmac
import json
import os
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .clients import hash_secret

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
MIN_PASSWORD = 8
_DUMMY_SALT = b"\0" * 16


@dataclass
class User:
    name: str
    teams: list[str] = field(default_factory=list)
    salt: str = ""
    password_hash: str = ""


class UserRegistry:
    _lock = threading.Lock()

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / "gateway" / "users.json"

    def _load(self) -> dict[str, User]:
        if not self.path.exists():
            return {}
        return {u["name"]: User(**u) for u in json.loads(self.path.read_text())["users"]}

    def _save(self, users: dict[str, User]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"users": [asdict(u) for u in users.values()]}, fh, indent=2)
        os.replace(tmp, self.path)

    def add(self, name: str, password: str, teams: list[str] = ()) -> User:
        """Create or replace `name` (a new password, new teams)."""
        if not NAME.match(name):
            raise ValueError("a user name is 1-128 letters, digits, '.', '_', '@' or '-'")
        if len(password) < MIN_PASSWORD:
            raise ValueError(f"a password has at least {MIN_PASSWORD} characters")
        salt = os.urandom(16)
        user = User(name, sorted(set(teams)), salt.hex(), hash_secret(password, salt))
        with self._lock:
            users = self._load()
            users[name] = user
            self._save(users)
        return user

    def get(self, name: str) -> User | None:
        with self._lock:
            return self._load().get(name)

    def authenticate(self, name: str, password: str) -> User | None:
        user = self.get(name)
        salt = bytes.fromhex(user.salt) if user else _DUMMY_SALT
        computed = hash_secret(password, salt)
        if user is not None and hmac.compare_digest(computed, user.password_hash):
            return user
        return None

    def all(self) -> list[User]:
        with self._lock:
            return list(self._load().values())

    def delete(self, name: str) -> bool:
        with self._lock:
            users = self._load()
            found = users.pop(name, None) is not None
            if found:
                self._save(users)
            return found
