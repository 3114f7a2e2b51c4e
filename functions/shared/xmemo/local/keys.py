"""The local gateway's RS256 signing key and its JWKS, kept under `XMEMO_DATA_DIR`.

Created on first use (file mode 0600) and reused, so tokens printed by `xmemo token`
stay valid across gateway restarts, as a Cognito pool's keys do."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _uint(n: int) -> str:
    return _b64u(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class SigningKey:
    """One RSA-2048 key pair; `kid` is its RFC 7638 thumbprint."""

    _create_lock = threading.Lock()

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / "gateway" / "signing-key.pem"

    @cached_property
    def private_key(self) -> rsa.RSAPrivateKey:
        with self._create_lock:
            if not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
                pem = key.private_bytes(
                    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                )
                tmp = self.path.with_suffix(".tmp")
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(pem)
                os.replace(tmp, self.path)
            loaded = serialization.load_pem_private_key(self.path.read_bytes(), password=None)
        assert isinstance(loaded, rsa.RSAPrivateKey)
        return loaded

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self.private_key.public_key()

    @cached_property
    def jwk(self) -> dict[str, Any]:
        numbers = self.public_key.public_numbers()
        base = {"e": _uint(numbers.e), "kty": "RSA", "n": _uint(numbers.n)}
        kid = _b64u(hashlib.sha256(json.dumps(base, separators=(",", ":"), sort_keys=True).encode()).digest())
        return {**base, "alg": "RS256", "kid": kid, "use": "sig"}

    @property
    def kid(self) -> str:
        return self.jwk["kid"]

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.jwk]}
