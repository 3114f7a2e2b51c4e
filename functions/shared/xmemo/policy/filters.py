"""What a candidate value must look like to be a secret, and what it must not look like:
placeholders, references to a secret held elsewhere (environment, secret manager, a
variable), templated values, type hints, and plain words. Every rule of the policy asks
these same questions, so a fix here fixes them all."""

from __future__ import annotations

import base64
import binascii
import math
import re
import zlib
from collections import Counter

# Values that say "a secret goes here" rather than being one (compared lowercased, with
# surrounding punctuation stripped).
PLACEHOLDER_WORDS = frozenset(
    """
    changeme change_me change-me changeit secret secrets password passwords passwd pass pwd
    token tokens key keys apikey api_key api-key example examples sample test testing dummy
    fake foo bar baz qux none null nil undefined true false yes no empty blank unset notset
    not_set not-set tbd todo fixme redacted hidden masked omitted removed required optional
    default placeholder value values string str text bytes secretstr secretbytes any object
    number int integer bool boolean char varchar mysecret mypassword yourpassword
    your_password your-password your_token your-token your_api_key your-api-key yoursecret
    your_secret your-secret xxx xxxx xxxxx xxxxxx xxxxxxxx admin user username root guest
    env environ environment config settings vault keychain keyring stdin prompt ask
    argon2 argon2i argon2d argon2id bcrypt scrypt pbkdf2 sha1 sha256 sha384 sha512 md5 aes128 aes256 hs256 hs512
    rs256 rs512 es256 es384 eddsa ed25519 x25519 p256 oauth2 oauth1 oidc saml2 x509 base64 base32 utf8 utf-8 tls12
    tls13 http2 ipv4 ipv6 s3 ec2 kms v1 v2 v3
    postgres postgresql mysql mariadb redis mongo mongodb rabbitmq minio minioadmin docker vagrant ubuntu
    raspberry letmein qwerty toor guest demo default secure encrypted hashed disabled enabled plaintext plain
    generated random auto inherit external managed
    """.split()
)
# the word itself with digits stuck on: password123, secret1!, changeme2
_GENERIC = frozenset("password passwd pass pwd secret changeme change_me example test token key apikey sample dummy mypassword yourpassword".split())
# Type names that follow `password:` in a type hint or a schema.
TYPE_NAMES = frozenset(
    "str string String bytes int number boolean bool any Any object Object SecretStr SecretBytes "
    "Secret char[] Vec<u8> &str Option<String> Optional None null undefined".split()
)
_PLACEHOLDER_SHAPES = re.compile(
    r"""(?xi)
    ^(?:
      [<\[{(].*[>\]})]                         # <your-token>, [token], {token}, (secret)
    | .*(?:your|my|insert|enter|replace|put)[-_ ]?(?:own[-_ ]?)?(?:api|secret|token|key|pass|password|value|here|access|client).*
    | .*(?:_here|-here|here_|xxxx|\*\*\*|\.\.\.|…|<|>).*
    | (.)\1{3,}                                # ******** or xxxxxxxx or 00000000
    | .*example.*|.*placeholder.*|.*dummy.*|.*changeme.*|.*redacted.*|.*sample.*|.*fake.*
    )$
    """
)
# A value that names where the secret lives instead of holding it.
_REFERENCE_START = re.compile(
    r"""(?x)
    ^(?: \$ | %\( | %\{ | %\w+% | \#\{ | \{\{ | \{% | @\{ | !(?:Ref|Sub|GetAtt|ImportValue|Secret)\b
       | (?:os|process|System|Environment|ENV|env|Deno|import\.meta|settings|config|cfg|conf|secrets|vars|self|this|ctx|context|app|request|req|params|props|options|opts|args|kwargs|st|vault|ssm|keyring|keychain|boto3|client|sm|getenv|std)\b[.\[(:]
       | (?:vault|ssm|op|sm|secretsmanager|awssecretsmanager|gcp|azurekeyvault|keyvault|secret|ref|env|file|aws-sm|arn:aws:secretsmanager|arn:aws:ssm)[:/]
       | (?:None|null|nil|undefined|true|false)\b
    )""",
)
_CALL_OR_INDEX = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::|->)[A-Za-z_][\w]*)*\s*[(\[]")
_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z_]*)+$|^[A-Za-z_]\w*(?:(?:\.|::|->)[A-Za-z_]\w*){2,}$")
# an address, not a secret: a URL or socket, an IP and port, an e-mail address
_ADDRESS = re.compile(r"(?i)^(?:[a-z][a-z0-9+.\-]*://\S*|unix:/\S*|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|\[[0-9a-f:]+\](?::\d+)?|[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)$")
# a price, a measurement, a percentage, a version: 21.00, £5.20, 12.5, 90%, 1,200
_QUANTITY = re.compile(
    r"^[£$€¥₹]?[+\-]?\d[\d.,]*(?:[£$€¥₹%]|[\- ]?(?:days?|nights?|hours?|h|mins?|minutes?|s|secs?|ms|weeks?|months?|years?"
    r"|km|m|cm|mm|kg|g|lbs?|ft|in|mi|gb|mb|tb|kb|x|pts?|am|pm|people|persons?|pax|zones?|rides?|trips?|entries|entry))?$"
    r"|^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+\-]\d{2}:?\d{2})?)?$|^\d{1,2}:\d{2}(?::\d{2})?$"  # dates, times
)
# the words of an identifier: runs of a capital and lower case, of capitals, of digits
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_RUNS = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENTIFIER = re.compile(r"^[a-z][a-z]*(?:_[a-z]+)+$|^[a-z]+(?:[A-Z][a-z]+)+$|^[A-Z][A-Z]*(?:_[A-Z]+)+$|^(?:[A-Z][a-z]+){2,}$")
# a file path or a secret-manager path: ./password.txt, prod/db-password-AbCdEf, /run/secrets/pg
_PATH = re.compile(r"^(?:\.{1,2}/|~/|/)[\w./\-]+$|^(?=[^+=]*/)(?=(?:.*/)?[a-z]{3,}(?:[/\-_.]|$))[\w.\-]+(?:/[\w.\-]+)+$")
_WORDLIKE = re.compile(r"^[A-Za-z]?[a-z]+(?:[-_. ][A-Za-z]?[a-z]+)*$|^[A-Z]+(?:[-_][A-Z]+)*$")
_DEMO = re.compile(r"(?i)(?:^|[-_.])(?:test|demo|mock|dev|local|sample|dummy)(?:[-_.]|$)")
# a digest written with its algorithm: sha256=…, sha512-…, md5:…
ALGORITHM_PREFIX = re.compile(r"(?i)^(?:sha\d*|md5|sha3-\d+|blake2[bs]?)[-_=:]")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_placeholder(value: str) -> bool:
    """`changeme`, `<your-token>`, `********`, `YOUR_API_KEY_HERE`, an empty value, a marker
    this policy already wrote."""
    v = value.strip().strip("\"'`")
    if not v or v.startswith("[REDACTED"):
        return True
    if v.lower().strip(".;,") in PLACEHOLDER_WORDS or v.lower().rstrip("0123456789!#$%&*@?.") in _GENERIC:
        return True  # changeme, password123, admin1!
    return bool(_PLACEHOLDER_SHAPES.match(v))


def is_reference(value: str) -> bool:
    """`os.environ["X"]`, `process.env.X`, `${X}`, `{{ secrets.X }}`, `getSecret()`,
    `cfg.db.password`, `!Ref DbPassword`, `vault:kv/x`, a type hint, a bare identifier."""
    v = value.strip()
    if not v:
        return True
    if _REFERENCE_START.match(v) or _CALL_OR_INDEX.match(v) or _DOTTED_NAME.match(v.rstrip(":;,)")) or _PATH.match(v) or _ADDRESS.match(v):
        return True
    if v in TYPE_NAMES or v.rstrip(";,?") in TYPE_NAMES or v.split("[")[0].split("<")[0] in TYPE_NAMES:
        return True
    return bool(_IDENTIFIER.match(v.strip("\"'`")))


def is_address(value: str) -> bool:
    """A URL, a socket, an IP and port, an e-mail address: where something is, not a secret."""
    return bool(_ADDRESS.match(value.strip().strip("\"'`;,")))


def is_quantity(value: str) -> bool:
    """A price, a measurement, a count: `£21.00`, `12.5`, `90%`, `2,106`."""
    return bool(_QUANTITY.match(value.strip().rstrip(".,;:")))


def is_identifier_like(value: str) -> bool:
    """A name made of words (`Microsoft_Office_2021_LTSC_Standard_64Bit`,
    `GatewayV2AuthorizerToLambdaFunction…`, `AWSSettingsIAMPassRole`): long runs of letters
    between case changes and separators. Random text changes case every character or two."""
    v = value.strip("\"'`")
    if not re.fullmatch(r"[\w.\-]+", v):
        return False
    runs = _RUNS.findall(v)
    letters = [r for r in runs if r.isalpha()]
    spoken = [r for r in letters if not r.isupper() and len(r) >= 2]  # words, not acronyms
    if len(letters) < 2 or not spoken or sum(bool(_VOWEL.search(r)) for r in spoken) < 0.75 * len(spoken):
        return False
    if any(r.isupper() and len(r) > 5 for r in letters):
        return False
    return sum(map(len, runs)) / len(runs) >= 2.8 and sum(map(len, letters)) / len(letters) >= 2.8


def is_wordlike(value: str) -> bool:
    """Plain words (`keep`, `not-set`, `Vault`, `kube-system`) are prose or names, not secrets."""
    if bool(_WORDLIKE.match(value)):
        return True
    return value.isalpha() and len(value) > 1 and (value[1:].islower() or value.isupper())  # Lösenordet, ПАРОЛЬ


def char_classes(value: str) -> int:
    """How many of lower, upper, digit, other appear."""
    return sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
         any(not c.isalnum() for c in value))
    )


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def looks_like_password(value: str) -> bool:
    """A value given to a password-like label: not a placeholder, a reference or a word,
    and mixing at least two kinds of characters (`hunter22`, `S3cret!`)."""
    v = value.strip("\"'`")
    if len(v) < 4 or is_placeholder(v) or is_wordlike(v.rstrip(".,;:!?")) or is_quantity(v) or _ADDRESS.match(v):
        return False
    if v != v.strip() or "%s" in v or "{}" in v:  # a piece of a format string, not a value
        return False
    if _DEMO.search(v):  # test_key_123, demo-password-1
        return False
    if _UUID.match(v) and v.count("0") > 20:
        return False
    return char_classes(v) >= 2 and not v.isdigit()


def looks_random(value: str, min_len: int = 16) -> bool:
    """A machine-made token: long, several character kinds, high entropy for its length.
    Hex strings pass only when long enough to be a key rather than a word."""
    v = value.strip("\"'`")
    if len(v) < min_len or not v.isascii() or is_placeholder(v) or is_wordlike(v) or is_reference(v) or ALGORITHM_PREFIX.match(v):
        return False
    if _HEX.match(v):
        return len(v) >= 20 and entropy(v) >= 3.0 and any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
    alnum = sum(c.isalnum() for c in v)
    if alnum < 0.75 * len(v) or char_classes(v) < 2:
        return False
    # random text over ~60 symbols reaches log2(len) quickly; words and repeats do not
    return entropy(v) >= min(4.0, math.log2(len(v)) - 0.8)


def is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


def is_hex(value: str) -> bool:
    return bool(_HEX.match(value))


# -- checksums and decodings that confirm a format ---------------------------------------
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = _B62[r] + out
    return out.rjust(width, "0")


def crc32_base62_ok(body: str, check: str) -> bool:
    """GitHub / npm style: the last 6 characters are the CRC32 of the rest, in base62."""
    return base62(zlib.crc32(body.encode()), 6) == check


def b64decode(value: str) -> bytes | None:
    v = value.strip()
    try:
        return base64.b64decode(v + "=" * (-len(v) % 4), altchars=b"-_" if ("-" in v or "_" in v) else None, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_basic_credentials(value: str) -> bool:
    """`Authorization: Basic <b64>` carries `user:password`; decoding proves it."""
    raw = b64decode(value)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    user, sep, password = text.partition(":")
    return bool(sep and password and text.isprintable() and not is_placeholder(password) and not password.startswith("$"))


def is_encoded_private_key(value: str) -> bool:
    """base64 of a PEM private key (kubeconfig `client-key-data`, env vars)."""
    raw = b64decode(value)
    return raw is not None and b"PRIVATE KEY" in raw[:80]


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32_ok(value: str) -> bool:
    """BIP-173 checksum (age keys): catches typos and placeholders shaped like a key."""
    v = value.lower()
    hrp, _, data = v.rpartition("1")
    if not hrp or len(data) < 6 or any(c not in _BECH32 for c in data):
        return False
    gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
    chk = 1
    for d in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_BECH32.index(c) for c in data]:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ d
        for i in range(5):
            chk ^= gen[i] if (top >> i) & 1 else 0
    return chk == 1
