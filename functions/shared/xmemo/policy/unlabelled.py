"""The safety net for secrets with neither a known format nor a label: a long run of
base64 / base64url characters that mixes upper case, lower case and digits with the
entropy of random text, where a word naming a secret comes shortly before it. Hex strings (hashes, commit ids), UUIDs, URL path segments, hash
digests written with their algorithm, and the bodies of public keys and certificates are
left alone: they are what code and notes are full of."""

from __future__ import annotations

import re

from . import filters as f
from .rules import Rule

# not followed by "..." / "…" (a truncated example), not base64 JSON (`eyJ…`: a JWT's public
# header; whole JWTs are a format rule of their own)
_CANDIDATE = re.compile(r"(?<![\w/+=.\-:%$@])(?!eyJ)(?P<b>[A-Za-z0-9+/_\-]{32,}={0,2})(?![\w/+=\-]|\.\.\.|…)")
_DIGEST_CONTEXT = re.compile(
    r"(?i)(?:sha\d*|md5|blake\w*|digest|checksum|integrity|hash|etag|fingerprint|nonce|oid|commit|revision|rev|"
    r"object id|request id|trace id|base64,|ssh-\w+|ecdsa-[\w-]+|key id|keyid|id|cid|ipfs|public[\w ]{0,8}key|pubkey|"
    r"cert\w*)[\"'\s:=\-(]*$"
)
# Entropy counts only where something frames a secret: a word naming one shortly before,
# on the same line (`Mistral key for the eval box, …`). Random-looking text elsewhere —
# prose, file names, tracking parameters, public addresses, encoded payloads — is data.
SECRET_CONTEXT = re.compile(
    r"(?i)key|token|secret|passw|pwd|credential|api|auth|bearer|private|session|cookie|signature|"
    r"clé|jeton|schlüssel|clave|chave|chiave|sleutel|klucz|ключ|токен|キー|トークン|키|토큰|密钥|令牌|秘密"
)
_LONG_WORD = re.compile(r"\S{16,}")
_PUBLIC_BLOCK = re.compile(r"-----BEGIN (?![A-Z ]*PRIVATE)[A-Z0-9 ]+-----.*?-----END [A-Z0-9 ]+-----", re.S)


def _random_enough(m: re.Match[str]) -> bool:
    v = m.group("b")
    if f.is_hex(v) or f.ALGORITHM_PREFIX.match(v) or sum((any(c.islower() for c in v), any(c.isupper() for c in v), any(c.isdigit() for c in v))) < 3:
        return False
    if not f.looks_random(v, 32) or f.entropy(v) < 4.2:
        return False
    if _DIGEST_CONTEXT.search(m.string[max(0, m.start() - 32) : m.start()]) or f.is_identifier_like(v):
        return False
    line_start = m.string.rfind("\n", 0, m.start()) + 1
    window = m.string[max(line_start, m.start() - 48) : m.start()]
    window = window[window.rfind("-----") + 5 :] if "-----" in window else window  # PEM armour frames nothing after it
    context = [c.end() for c in SECRET_CONTEXT.finditer(window)]
    # the word frames the next value, not one after it: `TOKEN: glpat-… Drive file 1A2b…`
    if not context or _LONG_WORD.search(window, context[-1]):
        return False
    return not any(b.start() <= m.start() < b.end() for b in _PUBLIC_BLOCK.finditer(m.string))


UNLABELLED_RULE = Rule("high_entropy_string", _CANDIDATE, "b", _random_enough)
