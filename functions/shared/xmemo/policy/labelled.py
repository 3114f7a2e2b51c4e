"""Secrets known by what is written around them: a label (`DB_PASSWORD=`, `"apiKey":`,
`Passwort:`, "the password is"), a command-line flag (`mysql -p…`, `curl -u user:pw`), a
file format (`.netrc`, `.pgpass`), a URL's user-info, an HTTP header.

The label decides how sure we must be of the value: after a password label any value
mixing two kinds of characters counts; after `token` or `session` only a random-looking
one does. Values end where the value ends (a quote, `&` before the next parameter,
`;`, whitespace, a line break) and never cross a line."""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote

from . import filters as f
from .rules import Rule

# -- what a label is made of -----------------------------------------------------------
PASSWORD_WORDS = frozenset(
    "password passwd pwd pw pass passphrase passcode passwort kennwort contraseña contrasena clave mdp motdepasse "
    "senha parola wachtwoord requirepass masterauth".split()
)
SECRET_WORDS = frozenset("secret apikey privatekey secretkey accesskey appkey clientsecret credential credentials".split())
TOKEN_WORDS = frozenset("token auth authtoken accesstoken refreshtoken bearer jwt".split())
SESSION_WORDS = frozenset("session sessionid sessid sid sess cookie".split())  # ids in logs: random values only
KEY_QUALIFIERS = frozenset(
    "api access secret private app application auth client signing encryption master account service consumer ssh "
    "sas shared storage admin write deploy integration session jwt hmac cipher subscription function license".split()
)
# words in a label that make it name something about a secret rather than the secret
NOT_SECRET_WORDS = frozenset(
    """public publishable pub id ids name names file path paths url uri urls endpoint header type types length len min max
    count policy prefix suffix hint expiry expires expiration expire ttl timeout format env var vars arn ref hash hashed
    digest field label placeholder pattern regex rule rules reset strength input prompt required enabled disabled
    version provider store manager location dir kind size limit page next continuation pagination cursor sync
    cancellation num total bos eos pad unk mask sep cls special output completion new old usage used rotation
    rotated length_min fingerprint algorithm algo alg mode method source sources template schema help description doc
    docs example question policies lifetime age created updated scope scopes audience issuer request requests
    storage_class cache csrf xsrf nonce salt counter index status error errors validator validation check checker
    mgr service_name key_id keyid secretname secretref secret_ref from ref_name secret_name""".split()
)
_SUFFIXES_TO_DROP = frozenset("base value val b64 base64 hex raw plain plaintext data str string".split())
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.lru_cache(maxsize=4096)
def label_strength(label: str, before: str = "") -> str | None:
    """'password', 'secret', 'token' or 'session' when the label names a secret value, else None.
    `before` is the word written before the label (`API key`, `Cloudflare token`)."""
    words = [w for w in re.split(r"[_.\-\s]+", _CAMEL.sub("_", label).lower()) if w]
    if not words:
        return None
    while len(words) > 1 and words[-1] in _SUFFIXES_TO_DROP:
        words.pop()
    if len(words) > 1 and words[-2] + words[-1] in TOKEN_WORDS | SESSION_WORDS:  # session_id, access-token
        words[-2:] = [words[-2] + words[-1]]
    if any(w in NOT_SECRET_WORDS for w in words):
        return None
    last = words[-1]
    prev = words[-2] if len(words) > 1 else before.lower()
    if last in PASSWORD_WORDS or (last.endswith(("password", "passwd")) and len(last) > 8):
        return "password"
    if last in TOKEN_WORDS or (last.endswith("token") and len(last) > 5):
        return "token"
    if last in SESSION_WORDS or last.endswith(("sessionid", "sessid")):  # JSESSIONID, PHPSESSID
        return "session"
    if last in SECRET_WORDS or last.endswith("secret"):
        return "secret"
    if last == "key" and prev in KEY_QUALIFIERS:
        return "secret"
    return None


def value_is_secret(value: str, strength: str) -> bool:
    if f.is_reference(value) or f.is_placeholder(value):
        return False
    if strength in ("secret", "token") and f.is_uuid(value):  # Heroku, Snyk, Postmark keys are UUIDs
        return True
    if strength == "password":
        return f.looks_like_password(value)
    if strength == "secret":
        return len(value) >= 8 and f.looks_like_password(value)
    if strength == "session" and f.is_identifier_like(value):  # "Sid": "AllowIAMPassRole…" (a statement id)
        return False
    return f.looks_random(value, 16) or f.is_basic_credentials(value)  # docker config.json "auth"


# -- assignments: `label [:=] value` in code, config, headers, query strings, prose ------------
NATIVE_LABELS = (
    r"mot de passe|mot_de_passe|passwort|kennwort|contraseña|clave de acceso|비밀번호|암호|패스워드|パスワード|暗証番号|"
    r"parola d'ordine|wachtwoord|hasło|haslo|пароль|şifresi|şifre|lösenordet|lösenord|adgangskode|salasana|heslo|jelszó|"
    r"clé d'API|clé API|API-Schlüssel|clave de API|API 키|APIキー|トークン|토큰|シークレット|秘密鍵|密码|令牌"
)
_NATIVE_STRENGTH = {"clé d'api": "secret", "clé api": "secret", "api-schlüssel": "secret", "clave de api": "secret", "api 키": "secret",
                    "apiキー": "secret", "トークン": "token", "토큰": "token", "シークレット": "secret", "秘密鍵": "secret", "令牌": "token"}
_STEMS = r"(?:pass|pwd|pw|secret|token|key|auth|sess|sid|cookie|credential|jwt|bearer|signature|mdp|clave|contrase|kennwort|senha|parola)"
_BARE = r"(?:[^\s\"'`,;&<>(){}\[\]|]|&(?![\w.\-]+=))+"
_VALUE = r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|(?P<bare>" + _BARE + r"))"
ASSIGNMENT = re.compile(
    r"(?P<label>" + NATIVE_LABELS + r"|[A-Za-z_][\w.\-]*)"
    r"[\"'`]?\]?\??[ \t]*(?P<sep>:=|=>|->|==|[:=：]"
    r"|(?:[ \t]+(?:for|of|on|to|in|de|du|des|pour|für|von|vom|del|della|dell'|para|en|do|da|van|till|för|av|от|для|od|dla)[ \t][^\n:=\"'`]{1,40}?)?"  # the password for the admin is
    r"(?:[ \t]*[:：]|[ \t]*[—–][ \t]*|[ \t]+(?:is|was|est|c'est|était|sera|ist|lautet|war|heißt|es|era|será|sind|è|é|to|är|er|jest|это)(?!\w)(?:[ \t]*:)?)|[ \t])[ \t]*" + _VALUE,
    re.I,
)
# one flat lowercase alternation, searched in the lowercased text: much faster than re.I
_LABEL_STEM = re.compile("|".join(sorted({*_STEMS[3:-1].split("|"), *NATIVE_LABELS.lower().split("|")}, key=len, reverse=True)))
_LABEL_STEM_I = re.compile(_LABEL_STEM.pattern, re.I)
_NATIVE = frozenset(NATIVE_LABELS.lower().split("|"))
_IDENT = re.compile(r"[A-Za-z_][\w.\-]*")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]$")


def _label_start(text: str, stem_at: int) -> int | None:
    """Where the identifier holding a stem begins (`DB_PASSWORD`, `--api-key`), or None
    when it is not a label (`${VAR:…}`, `$password`)."""
    start = stem_at
    while start > 0 and text[start - 1].isascii() and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    while start < stem_at and not (text[start].isalpha() or text[start] == "_"):
        start += 1
    if text[max(0, start - 1) : start] == "$" or text[max(0, start - 2) : start] == "${":
        return None
    if start >= 2 and text[start - 1] in ":/" and not text[start - 2].isspace():
        return None  # a segment of an ARN or a path (`…:secret:name`, `/token/…`)
    return start


class _LabelRule(Rule):
    """Tries the assignment pattern only where a label stem occurs: one fast scan for the
    stems instead of the full pattern at every position."""

    def spans(self, text: str, lowered: str):
        tried: set[int] = set()
        covered = 0
        hits = _LABEL_STEM.finditer(lowered) if len(lowered) == len(text) else _LABEL_STEM_I.finditer(text)
        for hit in hits:
            start = hit.start() if not hit.group(0).isascii() else _label_start(text, hit.start())
            if start is None or start in tried or start < covered:
                continue
            tried.add(start)
            if hit.group(0).lower() not in _NATIVE and (ident := _IDENT.match(text, start)) is not None:
                before = _WORD_BEFORE.search(text, max(0, start - 40), start)
                if label_strength(ident.group(0), before.group(1) if before else "") is None and not _names_a_key(ident.group(0)):
                    continue  # `password_policy`, `tokenizer`: not a label, skip the full pattern
            m = self.pattern.match(text, start)
            if m is not None and _assignment_ok(m):
                covered = m.end()
                yield m.span(_value_group(m))


def _value_group(m: re.Match[str]) -> str:
    return next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)


def _label_words(label: str) -> list[str]:
    return [w for w in re.split(r"[_.\-\s]+", _CAMEL.sub("_", label).lower()) if w]


def _names_a_key(label: str) -> bool:
    """`COOKIE_KEY`, `aesKey`: a label whose last word is `key` and that names nothing public."""
    words = _label_words(label)
    return len(words) > 1 and words[-1] == "key" and not any(w in NOT_SECRET_WORDS for w in words)


def _key_material(value: str) -> bool:
    """base64 of 16 bytes or more that are not text: key material, whatever the label's qualifier."""
    v = value.strip()
    if len(v) < 22 or not re.fullmatch(r"[A-Za-z0-9+/_\-]+={0,2}", v):
        return False
    if f.is_identifier_like(v) or not f.looks_random(v, 22) or f.char_classes(v.rstrip("=")) < 3:
        return False
    raw = f.b64decode(v)
    return raw is not None and len(raw) >= 16 and sum(32 <= b < 127 for b in raw) < 0.9 * len(raw)


def _value_names_the_label(label: str, value: str) -> bool:
    """`private_key: Ed25519PrivateKey`, `password = pkcs12_password`, `auth == AuthScenario.NO_AUTH`:
    a value spelled with the label's own words is a name or a type, not a secret."""
    words = {w for w in _label_words(label) if len(w) >= 3}
    return bool(words) and bool(words & set(_label_words(value.strip("\"'`:;,)"))))


def _closes_a_string(m: re.Match[str], g: str) -> bool:
    """`prompt("Password: ")`: the label sits inside a string literal, and the quote after it
    closes that string (an odd number of such quotes before it on the line) rather than
    opening a value. Single quotes count only where no apostrophe in a word muddles them."""
    q = '"' if g == "dq" else "'"
    start = m.start(g) - 1
    line = m.string[m.string.rfind("\n", 0, start) + 1 : start]
    if q == "'" and re.search(r"\w'\w", line):
        return False
    return line.count(q) % 2 == 1


_INNER_ASSIGNMENT = re.compile(r"[A-Za-z_][\w.\-]*=")
# a word alone, stripped of the punctuation a heading or a sentence puts after it
_TRAILING = ".,;:!?*)]\"'`"


def _assignment_ok(m: re.Match[str]) -> bool:
    label = m.group("label")
    strength = _NATIVE_STRENGTH.get(label.lower()) or ("password" if re.fullmatch(NATIVE_LABELS, label, re.I) else None)
    before = _WORD_BEFORE.search(m.string, max(0, m.start() - 40), m.start())
    strength = strength or label_strength(label, before.group(1) if before else "")
    g = _value_group(m)
    value = m.group(g)
    if strength is None:
        return _names_a_key(label) and m.group("sep").strip() != "" and _key_material(value)
    after = m.string[m.end(g) : m.end(g) + 1]
    if g == "bare" and after in ("(", "[", "{"):  # getSecret(...), os.environ[...]
        return False
    if g in ("dq", "sq") and _closes_a_string(m, g):
        return False
    if label.endswith("-"):  # `-----END PRIVATE KEY-----`: armour, not a label
        return False
    if g == "bare" and _INNER_ASSIGNMENT.match(value):  # `Cookie: sid=…`: the inner label speaks for its value
        return False
    if _value_names_the_label(label, value) or f.is_address(value) or value.endswith(":"):
        return False
    if label.lower() in ("pass", "pw") and m.group("sep") not in (":", "=", ":=", "=>", "："):
        return False  # "arguments to pass to :py:class:": the verb, not a label
    if not m.group("sep").strip():  # "token a8f5…": no separator, so the value must speak for itself
        if g != "bare" or f.is_reference(value) or f.is_placeholder(value):
            return False
        core = value.rstrip(_TRAILING)
        if strength == "password" and label.lower() not in ("pass", "pw", "pwd") and len(core) >= 8 and f.char_classes(core) >= 3:
            return True  # "the password Zx8!vB3nMq2"; not "Pass Parking**:" nor "Password Managers:**"
        return f.looks_random(value, 20) or (strength in ("secret", "token") and f.is_uuid(value))
    if m.group("sep")[0] in " \t" and (f.char_classes(value) < 2 or len(value) < 6):
        return False  # "the password is X": prose wants a value that cannot be an ordinary word
    if value_is_secret(value, strength):
        return True
    return strength == "password" and re.split(r"[_.\-]", label.lower())[-1] not in ("pass", "pw") and _plain_word_password(m, g, value)


_NEXT_TOKEN = re.compile(r"[ \t]+([^\s]+)")


def _plain_word_password(m: re.Match[str], g: str, value: str) -> bool:
    """`password=correcthorse`, `pwd=abcd`: after an explicit password assignment even a
    plain word is the password, unless it starts a sentence (`Password: must be…`), names
    a variable (`password = data`, spaces around `=` as code writes it) or a placeholder."""
    if len(value) < 4 or not value.isascii() or not f.is_wordlike(value) or f.is_placeholder(value) or f.is_reference(value):
        return False
    sep = m.group("sep")
    if sep not in ("=", ":", "：", ":=", "=>"):
        return False
    if g == "bare":
        if sep == "=" and m.string[m.start("sep") - 1 : m.start("sep")] == " ":
            return False  # code: a variable, not a literal
        nxt = _NEXT_TOKEN.match(m.string, m.end(g))
        if nxt is not None and not any(c in nxt.group(1) for c in "=:#/") and not nxt.group(1).startswith("//"):
            return False  # prose continues after the "value"
    return True


ASSIGNMENT_RULE = _LabelRule("password", ASSIGNMENT)

# Japanese / Korean prose puts the value after a particle: パスワードは X です, 비밀번호는 X
_CJK = re.compile(r"(?:パスワード|暗証番号|비밀번호|암호|패스워드|密码|密碼)(?:は|が|는|은|이|가|是|为|為)[ \t]*[「『\"']?(?P<b>[\x21-\x7e]{4,}?)[」』\"']?(?=[ \t]*(?:です|でした|だ|。|、|，|；|입니다|이에요|예요|이다|이야|야|요|임|이고|고|$)|[ \t\n])"
    r"|(?:パスワード|暗証番号|비밀번호|암호|패스워드|密码|密碼)(?:は|が|는|은|이|가|是|为|為|[:：])?[ \t]*[「『“](?P<q>[^」』”\n]{4,})[」』”]", re.M)


def _cjk_group(m: re.Match[str]) -> str:
    return "b" if m.group("b") is not None else "q"


def _cjk_ok(m: re.Match[str]) -> bool:
    v = m.group(_cjk_group(m)).rstrip(".,;:")
    return f.looks_like_password(v) and not f.is_reference(v)


# -- command lines ------------------------------------------------------------------------
_CLI_VALUE = r"(?:\"(?P<dq>[^\"\n]+)\"|'(?P<sq>[^'\n]+)'|`(?P<bq>[^`\n]+)`|(?P<bare>[^\s\"'`;&|]+))"  # `;`, `&`, `|` end a shell word
_CLI_PATTERNS = [  # (anchors, pattern)
    (("mysql", "mariadb"), r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlcheck|mysqlsh)\b[^\n]{0,200}?[ \t]-p(?=[^\s-])"),
    (("sshpass",), r"\bsshpass\b[^\n]{0,200}?[ \t]-p[ \t]*"),
    (("htpasswd",), r"\bhtpasswd\b[^\n]{0,200}?[ \t]-\w*b\w*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+"),
    (("redis-cli",), r"\bredis-cli\b[^\n]{0,200}?[ \t](?:-a|--pass)[ \t]+"),
    (("login",), r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\b[^\n]{0,200}?\blogin\b[^\n]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)"),
    (("curl", "wget", "http", "xh"), r"\b(?:curl|wget|http|https|xh)\b[^\n]{0,200}?[ \t](?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)[\"']?[^\s:\"']*:"),
    (("sqlcmd", "bcp"), r"\b(?:sqlcmd|bcp)\b[^\n]{0,200}?[ \t]-P[ \t]*"),
    (("ldap",), r"\bldap(?:search|add|modify|delete|passwd)\b[^\n]{0,200}?[ \t]-w[ \t]+"),
    (("mongo",), r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n]{0,200}?[ \t](?:-p|--password)(?:[ \t]+|=)"),
    (("zip", "7z"), r"\b(?:zip|7z|unzip)\b[^\n]{0,200}?[ \t]-(?:P[ \t]+|p)"),
    (("smbclient",), r"\bsmbclient\b[^\n]{0,200}?[ \t](?:-U|--user)[ \t]+[^\s%]+%"),
    (("xfreerdp",), r"\bxfreerdp\b[^\n]{0,200}?[ \t]/p:"),
    (("pass",), r"(?<![\w-])-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)[ \t]+"),
    (("pass:",), r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:"),
    (("--",), r"(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|pwd|token|secret|api-key|apikey|access-key|secret-key|auth-token|client-secret|private-key)(?:[ \t]+|=)"),
]


def _cli_ok(m: re.Match[str]) -> bool:
    v = m.group(_value_group(m)).strip()
    return (len(v) >= 4 and not v.startswith("-") and not f.is_placeholder(v) and not f.is_reference(v) and not f.is_uuid(v)
            and not (f.is_wordlike(v) and m.group("bare") is not None))  # "the --password option": prose


CLI_RULES = [Rule("password", re.compile(p + _CLI_VALUE), _value_group, _cli_ok, anchors) for anchors, p in _CLI_PATTERNS]

# -- files and URLs -----------------------------------------------------------------------
_NETRC = re.compile(r"\b(?:machine[ \t]+\S+|default)(?:\s+(?:login|account)[ \t]+\S+)*\s+password[ \t]+(?P<b>\S+)")
_PGPASS = re.compile(r"(?m)^(?!arn:)[^\s:#\"']+:(?:\d+|\*):[^\s:]+:[^\s:]+:(?P<b>(?:[^\s:\\]|\\.)+)$")  # `:` in a password is escaped
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://(?P<user>[^\s:/@\"'<>]*):(?P<b>[^\s@/\"'<>]+)@", re.I)
_BEARER = re.compile(r"(?i)\bbearer[ \t]+(?P<b>[A-Za-z0-9._~+/\-]{20,}=*)")
_BASIC = re.compile(r"(?i)\bbasic[ \t]+(?P<b>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
_AUTH_OTHER = re.compile(r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:token|apikey|api-key|sso-key|key|digest|hmac|ssws|splunk|dsn|klaviyo-api-key|genieKey)[ \t]+(?P<b>[^\s\"']{12,})")
_CRYPT = re.compile(r"(?m)^[\w.\-]+:(?P<b>\$(?:2[aby]\$\d{2}\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{16,}\$[A-Za-z0-9+/]{32,}))")


def _plain_ok(m: re.Match[str]) -> bool:
    v = m.group("b")
    return len(v) >= 4 and not f.is_placeholder(v) and not f.is_reference(v)


def _url_ok(m: re.Match[str]) -> bool:
    v = m.group("b")
    if " " in unquote(v) and f.is_wordlike(unquote(v)):  # `user:a%20secret@`: words, an example
        return False
    return not f.is_placeholder(v) and not f.is_reference(v) and v != m.group("user") and not v.isdigit()


def _bearer_ok(m: re.Match[str]) -> bool:
    return f.char_classes(m.group("b")) >= 2 and not f.is_placeholder(m.group("b")) and not f.is_reference(m.group("b"))


def _basic_ok(m: re.Match[str]) -> bool:
    return f.is_basic_credentials(m.group("b"))


def _random_ok(m: re.Match[str]) -> bool:
    return f.looks_random(m.group("b"), 12)


# credentials given as a (user, password) pair, and XML elements / attributes named for a secret
_PAIR = re.compile(r"\b(?:auth|basic_auth|http_auth|HTTPBasicAuth|HTTPDigestAuth|BasicAuth|credentials|login)\s*[=(]\s*[(\[]?\s*[\"'][^\"'\n]+[\"']\s*,\s*[\"'](?P<b>[^\"'\n]+)[\"']")
_XML = re.compile(r"<(?P<label>[\w:.\-]+)>(?P<b>[^<\n]{4,})</(?P=label)>|\bkey=\"(?P<label2>[^\"\n]+)\"\s+value=\"(?P<b2>[^\"\n]+)\"")


def _pair_ok(m: re.Match[str]) -> bool:
    return value_is_secret(m.group("b"), "password")


def _xml_group(m: re.Match[str]) -> str:
    return "b" if m.group("b") is not None else "b2"


def _xml_ok(m: re.Match[str]) -> bool:
    label = m.group("label") or m.group("label2")
    strength = label_strength(label.rpartition(":")[2])
    return strength is not None and value_is_secret(m.group(_xml_group(m)), strength)


# `login: admin / S3cret!x`, `user/pass: root / …`: a user and a password side by side
_LOGIN_PAIR = re.compile(
    r"(?i)(?<![/:@\w])(?:login|user(?:name)?(?:[ \t]*/[ \t]*pass(?:word)?)?|benutzer|utilisateur|usuario)[ \t]*[:=][ \t]*"
    r"[^\s/:]+[ \t]*/[ \t]*(?P<b>[^\s,;]+)"
)


def _login_ok(m: re.Match[str]) -> bool:
    v = m.group("b").rstrip(".,;:!?)")
    return f.looks_like_password(m.group("b")) and not f.is_wordlike(v) and not f.is_reference(v)


# a token as a segment of a URL path, after a segment that names it: /token/<t>, /keys/<t>, /webhook/<t>
_URL_PATH_TOKEN = re.compile(
    r"(?i)://[^\s/\"'<>]+(?:/[^\s/?#\"'<>]+)*?/(?:tokens?|keys?|api[-_]?keys?|secrets?|webhooks?|hooks|auth|access[-_]?tokens?)"
    r"/(?P<b>[A-Za-z0-9_\-]{20,})(?=[/?#\s\"'<>)]|$)"
)


def _path_token_ok(m: re.Match[str]) -> bool:
    v = m.group("b")
    return f.looks_random(v, 20) and not f.is_uuid(v) and not f.is_hex(v.replace("-", ""))


# credentials passed by position to well-known clients: (call, index of the password argument)
_POSITIONAL_CALLS = [
    (r"\b(?:pymysql|MySQLdb|mysql\.connector|pg8000|psycopg2?|cx_Oracle|oracledb|pymssql)\.connect", 2),
    (r"\.(?:login|starttls_login)", 1),  # smtplib, ftplib, imaplib, poplib: login(user, password)
    (r"\b(?:FTP|FTP_TLS)", 2),  # FTP(host, user, passwd)
    (r"\bgetConnection", 2),  # JDBC DriverManager.getConnection(url, user, password)
    (r"\.(?:simple_bind_s|simple_bind|bind_s)", 1),  # python-ldap: bind(dn, password)
    (r"\b(?:OAuthHandler|OAuth1UserHandler|OAuth1)", 1),  # tweepy / requests-oauthlib: (key, secret)
    (r"\bClient(?=\(\s*[\"']AC[0-9a-f]{32}[\"'])", 1),  # Twilio Client(account_sid, auth_token)
]
_ARGS = re.compile(r"\s*(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<other>[^,()\n\"']+))\s*(?:,|\))")
_POSITIONAL = re.compile("|".join(f"(?P<c{i}>{call})" + r"\s*\(" for i, (call, _) in enumerate(_POSITIONAL_CALLS)))


class _PositionalRule(Rule):
    """The password argument of a known client call, when it is a literal that looks like one."""

    def spans(self, text: str, lowered: str):
        if not any(a in lowered for a in self.anchors):
            return
        for m in self.pattern.finditer(text):
            index = next(_POSITIONAL_CALLS[int(k[1:])][1] for k, v in m.groupdict().items() if v is not None)
            pos, args = m.end(), []
            while len(args) <= index and (arg := _ARGS.match(text, pos)) is not None:
                args.append(arg)
                pos = arg.end()
                if text[pos - 1] == ")":
                    break
            if len(args) > index:
                arg = args[index]
                g = "dq" if arg.group("dq") is not None else "sq" if arg.group("sq") is not None else None
                if g is not None and value_is_secret(arg.group(g), "password"):
                    yield arg.span(g)


POSITIONAL_RULE = _PositionalRule("password", _POSITIONAL, 0, None, ("connect", "login", "ftp", "getconnection", "bind", "oauth", "client("))

CONTEXT_RULES: list[Rule] = [
    POSITIONAL_RULE,
    Rule("password", _LOGIN_PAIR, "b", _login_ok, ("login", "user", "benutzer", "utilisateur", "usuario")),
    Rule("url_path_token", _URL_PATH_TOKEN, "b", _path_token_ok, ("://",)),
    Rule("password", _PAIR, "b", _pair_ok, ("auth", "credentials", "login")),
    Rule("password", _XML, _xml_group, _xml_ok, ("</", "value=")),
    Rule("password", _NETRC, "b", _plain_ok, ("password",)),
    Rule("password", _PGPASS, "b", _plain_ok, (":",)),
    Rule("password_in_url", _URL, "b", _url_ok, ("://",)),
    Rule("bearer_token", _BEARER, "b", _bearer_ok, ("bearer",)),
    Rule("basic_auth", _BASIC, "b", _basic_ok, ("basic",)),
    Rule("authorization_header", _AUTH_OTHER, "b", _random_ok, ("authorization",)),
    Rule("password_hash", _CRYPT, "b", None, ("$",)),
    Rule("password", _CJK, _cjk_group, _cjk_ok, ("パスワード", "暗証番号", "비밀번호", "암호", "패스워드", "密码", "密碼")),
    *CLI_RULES,
    ASSIGNMENT_RULE,
]
