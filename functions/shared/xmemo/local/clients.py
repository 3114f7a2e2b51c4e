"""Locally registered OAuth app clients (the client-credentials grant of `POST /oauth2/token`).

Secrets are shown once at creation and stored only as a salted scrypt hash; checks are
constant-time. The registry is a JSON file under `XMEMO_DATA_DIR`."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

# The app client `xmemo token` issues for: always known to the local gateway.
CLI_CLIENT_ID = "xmemo-local-cli"
# The interactive app client (authorization code + PKCE) behind the local authorization
# server, as Cognito's InteractiveClient is on AWS: its tokens carry this client_id.
INTERACTIVE_CLIENT_ID = "xmemo-local-interactive"
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}


def hash_secret(secret: str, salt: bytes) -> str:
    """Salted scrypt: slow on purpose, so a stolen file does not yield secrets cheaply."""
    return hashlib.scrypt(secret.encode(), salt=salt, **_SCRYPT).hex()


@dataclass
class Client:
    client_id: str
    name: str
    scopes: list[str]  # full scope strings this client may be granted
    teams: list[str] = field(default_factory=list)
    salt: str = ""
    secret_hash: str = ""

    def check(self, secret: str) -> bool:
        return hmac.compare_digest(hash_secret(secret, bytes.fromhex(self.salt)), self.secret_hash)


class ClientRegistry:
    _lock = threading.Lock()

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / "gateway" / "clients.json"

    def _load(self) -> dict[str, Client]:
        if not self.path.exists():
            return {}
        return {c["client_id"]: Client(**c) for c in json.loads(self.path.read_text())["clients"]}

    def _save(self, clients: dict[str, Client]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"clients": [asdict(c) for c in clients.values()]}, fh, indent=2)
        os.replace(tmp, self.path)

    def create(self, name: str, scopes: list[str], teams: list[str] = ()) -> tuple[Client, str]:
        """Register a client; returns it and its secret (the only time the secret is seen)."""
        secret = secrets.token_urlsafe(32)
        salt = os.urandom(16)
        client = Client(
            client_id=secrets.token_hex(13),
            name=name,
            scopes=sorted(set(scopes)),
            teams=sorted(set(teams)),
            salt=salt.hex(),
            secret_hash=hash_secret(secret, salt),
        )
        with self._lock:
            clients = self._load()
            clients[client.client_id] = client
            self._save(clients)
        return client, secret

    def get(self, client_id: str) -> Client | None:
        with self._lock:
            return self._load().get(client_id)

    def authenticate(self, client_id: str, secret: str) -> Client | None:
        client = self.get(client_id)
        return client if client is not None and client.check(secret) else None

    def is_known(self, client_id: str) -> bool:
        return client_id in (CLI_CLIENT_ID, INTERACTIVE_CLIENT_ID) or self.get(client_id) is not None

    def all(self) -> list[Client]:
        with self._lock:
            return list(self._load().values())

    def delete(self, client_id: str) -> bool:
        with self._lock:
            clients = self._load()
            found = clients.pop(client_id, None) is not None
            if found:
                self._save(clients)
            return found
