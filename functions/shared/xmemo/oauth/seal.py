"""Keeping the identity provider's refresh token where only the client's own refresh
token opens it.

MCP clients get this server's refresh tokens (rotated on every use); the provider's
refresh token behind them (Cognito's, or the local gateway's) never leaves the server.
It is stored sealed under a key derived from the client's current refresh token, which
the store holds only as a digest: the state store alone cannot yield a usable token,
and a revoked grant's sealed copy is useless to anyone.

Standard library only (the Lambda layer has no cryptography package): HMAC-SHA256 as a
PRF in counter mode for the key stream, and HMAC-SHA256 over the ciphertext as the tag
(encrypt-then-MAC), with separate keys derived from the secret. Each key seals exactly
one value (every refresh token is fresh randomness), so no nonce is needed."""

from __future__ import annotations

import base64
import hashlib
import hmac

TAG_BYTES = 32


def _key(secret: str, label: bytes) -> bytes:
    return hmac.new(secret.encode("utf-8"), b"xmemo-oauth-seal:" + label, hashlib.sha256).digest()


def _stream(key: bytes, length: int) -> bytes:
    blocks = (hmac.new(key, i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range((length + 31) // 32))
    return b"".join(blocks)[:length]


def seal(secret: str, value: str) -> str:
    """`value` encrypted and authenticated under `secret` (URL-safe base64)."""
    data = value.encode("utf-8")
    cipher = bytes(a ^ b for a, b in zip(data, _stream(_key(secret, b"enc"), len(data))))
    tag = hmac.new(_key(secret, b"mac"), cipher, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(cipher + tag).decode("ascii")


def unseal(secret: str, sealed: str) -> str | None:
    """The value `seal(secret, value)` hid, or None if `sealed` was not made with `secret`."""
    try:
        raw = base64.urlsafe_b64decode(sealed.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        return None
    cipher, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
    if len(raw) < TAG_BYTES or not hmac.compare_digest(tag, hmac.new(_key(secret, b"mac"), cipher, hashlib.sha256).digest()):
        return None
    return bytes(a ^ b for a, b in zip(cipher, _stream(_key(secret, b"enc"), len(cipher)))).decode("utf-8", "replace")
