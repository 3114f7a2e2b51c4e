"""A deterministic corpus of realistic-looking secrets (shaped like the real thing, never
real keys), each embedded in a sentence in one of several languages.

`value` is what must never be stored, indexed, logged or returned; `text` is how a user
or an agent would paste it."""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str  # the secret itself
    text: str  # a sentence that carries it


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _pem(rng: random.Random, label: str) -> str:
    lines = "\n".join(_r(rng, B64, 64) for _ in range(6))
    return f"-----BEGIN {label}PRIVATE KEY-----\n{lines}\n-----END {label}PRIVATE KEY-----"


# kind → (makes (value, how it is written around the value))
def _makers(rng: random.Random):
    pw = lambda: _r(rng, ALNUM, 10) + rng.choice("!#%&*") + _r(rng, ALNUM, 5)  # noqa: E731
    return {
        "aws_access_key_id": lambda: ((v := "AKIA" + _r(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)), v),
        "aws_secret_access_key": lambda: ((v := _r(rng, B64, 40)), f"aws_secret_access_key = {v}"),
        "github_token": lambda: ((v := "ghp_" + _r(rng, ALNUM, 36)), v),
        "github_pat": lambda: ((v := "github_pat_" + _r(rng, ALNUM, 22) + "_" + _r(rng, ALNUM, 59)), v),
        "gitlab_token": lambda: ((v := "glpat-" + _r(rng, ALNUM + "_-", 20)), v),
        "slack_token": lambda: ((v := f"xoxb-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}-{_r(rng, ALNUM, 24)}"), v),
        "slack_webhook": lambda: ((v := f"https://hooks.slack.com/services/T{_r(rng, UPPER_DIGITS, 8)}/B{_r(rng, UPPER_DIGITS, 10)}/{_r(rng, ALNUM, 24)}"), v),
        "stripe_key": lambda: ((v := rng.choice(["sk_live_", "rk_live_"]) + _r(rng, ALNUM, 24)), v),
        "openai_api_key": lambda: ((v := "sk-proj-" + _r(rng, ALNUM + "_-", 48)), v),
        "anthropic_api_key": lambda: ((v := "sk-ant-api03-" + _r(rng, ALNUM + "_-", 93)), v),
        "google_api_key": lambda: ((v := "AIza" + _r(rng, ALNUM + "_-", 35)), v),
        "huggingface_token": lambda: ((v := "hf_" + _r(rng, ALNUM, 34)), v),
        "npm_token": lambda: ((v := "npm_" + _r(rng, ALNUM, 36)), v),
        "sendgrid_api_key": lambda: ((v := f"SG.{_r(rng, ALNUM + '_-', 22)}.{_r(rng, ALNUM + '_-', 43)}"), v),
        "azure_storage_key": lambda: ((v := _r(rng, B64, 86) + "=="), f"DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={v};EndpointSuffix=core.windows.net"),
        "jwt": lambda: ((v := f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': _r(rng, ALNUM, 12), 'iat': rng.randrange(10**9)})}.{_r(rng, ALNUM + '_-', 43)}"), v),
        "private_key": lambda: ((v := _pem(rng, rng.choice(["RSA ", "EC ", "OPENSSH ", ""]))), v),
        "bearer_token": lambda: ((v := _r(rng, ALNUM + "-._", 40)), f"Authorization: Bearer {v}"),
        "password_in_url": lambda: ((v := pw()), f"postgres://app_user:{v}@db.internal.example:5432/app"),
        "password": lambda: ((v := pw()), rng.choice(["password={v}", "db_password: {v}", "client_secret={v}", "api_key = \"{v}\""]).format(v=v)),
        # families found missing by a corpus written outside the project (general mechanisms, new examples)
        "password_more_languages": lambda: ((v := pw()), rng.choice([
            "la password è {v}", "a senha é {v}", "het wachtwoord is {v}", "hasło: {v}", "пароль: {v}", "密码是 {v}", "şifre: {v}",
            "lösenordet är {v}"]).format(v=v)),
        "login_pair": lambda: ((v := pw()), rng.choice(["login: admin / {v}", "user/pass: deploy / {v}"]).format(v=v)),
        "url_path_token": lambda: ((v := _r(rng, ALNUM, 32)), rng.choice(["https://hooks.example.net/webhook/{v}", "GET https://api.example.org/v2/token/{v}/status"]).format(v=v)),
        "client_credentials": lambda: ((v := pw()), rng.choice(["smtp.login('alerts@example.com', '{v}')", "pymysql.connect('db.internal', 'app', '{v}', 'orders')"]).format(v=v)),
        "key_material": lambda: ((v := base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode()), rng.choice(["ENCRYPTION_KEY={v}", "COOKIE_KEY=\"{v}\""]).format(v=v)),
    }


SENTENCES = {
    "en": ["Note for the deploy: {s} — rotate it after the migration.", "The staging job uses {s} until Friday."],
    "fr": ["Pour le déploiement, la configuration contient {s}, à changer après la migration.", "Le job de recette utilise {s} jusqu'à vendredi."],
    "ko": ["배포 설정에 {s} 값이 들어 있다. 이전 후 교체할 것.", "스테이징 작업은 금요일까지 {s} 를 사용한다."],
    "de": ["Für das Deployment steht {s} in der Konfiguration, bitte nach der Migration rotieren.", "Der Staging-Job nutzt {s} bis Freitag."],
    "ja": ["デプロイ設定には {s} が入っている。移行後に更新すること。", "ステージングのジョブは金曜まで {s} を使う。"],
    "es": ["La configuración del despliegue tiene {s}; hay que rotarla después de la migración.", "El job de staging usa {s} hasta el viernes."],
}
# passwords written the way each language writes them (the policy knows these words)
NATIVE_PASSWORDS = {
    "fr": "le mot de passe est {v}",
    "ko": "비밀번호는 {v}",
    "de": "Passwort: {v}",
    "ja": "パスワード: {v}",
    "es": "contraseña: {v}",
}


def corpus(per_kind: int = 3, seed: int = 20260101) -> list[Secret]:
    """`per_kind` secrets of every kind (25 kinds), each in a sentence of a rotating language."""
    rng = random.Random(seed)
    makers = _makers(rng)
    langs = list(SENTENCES)
    out: list[Secret] = []
    for k, (kind, make) in enumerate(makers.items()):
        for i in range(per_kind):
            value, written = make()
            lang = langs[(k + i) % len(langs)]
            if kind == "password" and lang in NATIVE_PASSWORDS:
                written = NATIVE_PASSWORDS[lang].format(v=value)
            sentence = SENTENCES[lang][i % 2].format(s=written)
            out.append(Secret(kind, value, sentence))
    return out
