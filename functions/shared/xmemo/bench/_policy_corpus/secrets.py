"""Synthetic secrets of every family the capture policy must catch, each written the way
an agent would store it (code, config, shell history, prose in six languages).

Every value is random but format-valid: prefixes and lengths as the providers publish
them, checksums where the format has one (GitHub / npm CRC32, age bech32), encodings
that decode (JWT, Basic auth, Discord bot id, Azure SAS signature, WireGuard keys).
None is a real credential. `values` are what must not survive redaction."""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from dataclasses import dataclass
from urllib.parse import quote

from ...policy.filters import base62

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


@dataclass(frozen=True)
class SecretSample:
    kind: str
    values: tuple[str, ...]
    text: str


class _Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def b64(self, n_bytes: int, urlsafe: bool = False, pad: bool = True) -> str:
        raw = bytes(self.rng.randrange(256) for _ in range(n_bytes))
        out = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
        return out if pad else out.rstrip("=")

    def crc_token(self, prefix: str) -> str:
        body = self.s(ALNUM, 30)
        return prefix + body + base62(zlib.crc32(body.encode()), 6)

    def password(self) -> str:
        words = ["Summer", "falcon", "Orbit", "maple", "Quartz", "river", "Nimbus", "tango", "Cobalt", "lemon"]
        style = self.rng.randrange(3)
        if style == 0:
            return self.rng.choice(words) + self.s(DIGITS, 3) + self.rng.choice("!#%&*@") + self.s(UPPER, 2)
        if style == 1:
            return self.s(ALNUM, 10) + self.rng.choice("!#%*@^") + self.s(ALNUM, 4)
        return self.s(LOWER, 4) + "-" + self.s(ALNUM, 5) + "-" + self.s(DIGITS, 3) + self.rng.choice("!?$")

    def jwt(self, claims: dict) -> str:
        enc = lambda d: base64.urlsafe_b64encode(json.dumps(d, separators=(",", ":")).encode()).rstrip(b"=").decode()  # noqa: E731
        return f"{enc({'alg': 'HS256', 'typ': 'JWT'})}.{enc(claims)}.{self.b64(32, True, False)}"

    def age_key(self) -> str:
        charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
        data8 = [self.rng.randrange(256) for _ in range(32)]
        acc = bits = 0
        data5 = []
        for b in data8:
            acc, bits = (acc << 8) | b, bits + 8
            while bits >= 5:
                bits -= 5
                data5.append((acc >> bits) & 31)
        if bits:
            data5.append((acc << (5 - bits)) & 31)
        hrp = "age-secret-key-"
        gen = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
        chk = 1
        for d in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + data5 + [0] * 6:
            top = chk >> 25
            chk = (chk & 0x1FFFFFF) << 5 ^ d
            for i in range(5):
                chk ^= gen[i] if (top >> i) & 1 else 0
        polymod = chk ^ 1
        check = [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]
        return (hrp + "1" + "".join(charset[d] for d in data5 + check)).upper()


# Sentences that carry a value, per language (the value goes where {s} is).
PROSE = {
    "en": ["Note for the deploy: {s} — rotate it after the migration.", "Staging uses {s} until Friday."],
    "fr": ["Pour le déploiement, la config contient {s}, à changer après la migration.", "La recette utilise {s} jusqu'à vendredi."],
    "ko": ["배포 설정에 {s} 값이 들어 있다.", "스테이징은 금요일까지 {s} 를 쓴다."],
    "de": ["Für das Deployment steht {s} in der Konfiguration.", "Der Staging-Job nutzt {s} bis Freitag."],
    "ja": ["デプロイ設定には {s} が入っている。", "ステージングは金曜まで {s} を使う。"],
    "es": ["La configuración del despliegue tiene {s}; hay que rotarla.", "Staging usa {s} hasta el viernes."],
}


def _makers(g: _Gen):
    pw = g.password
    return {
        # -- provider tokens, bare in prose or in config ----------------------------------
        "stripe_webhook_secret": lambda: (v := "whsec_" + g.s(ALNUM, 32), f"STRIPE_WEBHOOK_SECRET={v}"),
        "stripe_key": lambda: (v := "sk_live_" + g.s(ALNUM, 99), f"stripe.api_key = \"{v}\""),
        "vault_token": lambda: (v := "hvs.CAESI" + g.s(URLSAFE, 86), f"export VAULT_TOKEN={v}"),
        "gitlab_runner_token": lambda: (v := "glrt-" + g.s(URLSAFE, 20), f"gitlab-runner register --token {v}"),
        "gitlab_token": lambda: (v := "glpat-" + g.s(URLSAFE, 20), f"PRIVATE-TOKEN: {v}"),
        "github_token": lambda: (v := g.crc_token(g.rng.choice(["ghp_", "gho_", "ghs_", "ghu_"])), v),
        "github_fine_grained": lambda: (v := "github_pat_11" + g.s(UPPER + DIGITS, 20) + "_" + g.s(ALNUM, 59), v),
        "slack_app_token": lambda: (v := f"xapp-1-A{g.s(UPPER + DIGITS, 10)}-{g.s(DIGITS, 13)}-{g.s(HEX, 64)}", f"SLACK_APP_TOKEN={v}"),
        "slack_token": lambda: (v := f"xoxb-{g.s(DIGITS, 12)}-{g.s(DIGITS, 13)}-{g.s(ALNUM, 24)}", v),
        "slack_webhook": lambda: (v := f"https://hooks.slack.com/services/T{g.s(UPPER + DIGITS, 8)}/B{g.s(UPPER + DIGITS, 10)}/{g.s(ALNUM, 24)}", f"curl -X POST {v} -d @msg.json"),
        "discord_bot_token": lambda: (v := base64.b64encode(str(g.rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=") + "." + g.s(URLSAFE, 6) + "." + g.s(URLSAFE, 38), f"client.login('{v}')"),
        "discord_webhook": lambda: (v := f"https://discord.com/api/webhooks/{g.s(DIGITS, 18)}/{g.s(URLSAFE, 68)}", v),
        "telegram_bot_token": lambda: (v := f"{g.s(DIGITS, 10)}:AA{g.s(URLSAFE, 33)}", f"bot = Bot(token=\"{v}\")"),
        "cloudflare_api_token": lambda: (v := g.s(URLSAFE, 40), g.rng.choice(["CLOUDFLARE_API_TOKEN={v}", "Cloudflare API token: {v}", "cf_api_token = \"{v}\""]).format(v=v)),
        "cloudflare_global_key": lambda: (v := g.s(HEX, 37), f"-H 'X-Auth-Key: {v}'"),
        "cloudflare_origin_ca_key": lambda: (v := f"v1.0-{g.s(HEX, 24)}-{g.s(HEX, 146)}", v),
        "digitalocean_token": lambda: (v := "dop_v1_" + g.s(HEX, 64), f"doctl auth init -t {v}"),
        "docker_hub_token": lambda: (v := "dckr_pat_" + g.s(URLSAFE, 27), f"echo {v} | docker login -u ci --password-stdin"),
        "notion_token": lambda: (v := g.rng.choice(["ntn_" + g.s(DIGITS, 11) + g.s(ALNUM, 35), "secret_" + g.s(ALNUM, 43)]), f"const notion = new Client({{ auth: \"{v}\" }})"),
        "postman_api_key": lambda: (v := f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}", f"x-api-key: {v}"),
        "terraform_cloud_token": lambda: (v := g.s(ALNUM, 14) + ".atlasv1." + g.s(URLSAFE, 67), f'credentials "app.terraform.io" {{ token = "{v}" }}'),
        "grafana_token": lambda: (v := g.rng.choice(["glsa_" + g.s(ALNUM, 32) + "_" + g.s(HEX, 8), "glc_" + base64.b64encode(json.dumps({"o": g.s(DIGITS, 6), "n": "stack-" + g.s(DIGITS, 6), "k": g.s(ALNUM, 32), "m": {"r": "prod-us-east-0"}}).encode()).decode()]), f"GRAFANA_TOKEN: {v}"),
        "supabase_token": lambda: (v := "sbp_" + g.s(HEX, 40), f"supabase login --token {v}"),
        "supabase_service_role": lambda: (v := g.jwt({"iss": "supabase", "ref": g.s(LOWER, 20), "role": "service_role", "iat": 1700000000, "exp": 2000000000}), f"SUPABASE_SERVICE_ROLE_KEY={v}"),
        "onepassword_service_account": lambda: (v := "ops_" + base64.b64encode(json.dumps({"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256", "iterations": 650000, "salt": g.s(URLSAFE, 22)}, "email": g.s(LOWER, 10) + "@1passwordserviceaccounts.com", "srpX": g.s(HEX, 64), "muk": {"alg": "A256GCM", "ext": True, "k": g.s(URLSAFE, 43), "key_ops": ["encrypt", "decrypt"], "kty": "oct", "kid": "mp"}, "secretKey": "A3-" + g.s(UPPER + DIGITS, 6) + "-" + g.s(UPPER + DIGITS, 11), "throttleSecret": {"seed": g.s(HEX, 64), "deviceUuid": g.s(LOWER + DIGITS, 26)}, "deviceUuid": g.s(LOWER + DIGITS, 26)}).encode()).decode(), f"OP_SERVICE_ACCOUNT_TOKEN={v}"),
        "atlassian_api_token": lambda: (v := "ATATT3xFfGF0" + g.s(URLSAFE, 170) + "=" + g.s(HEX.upper(), 8), f"curl -u me@example.com:{v} https://acme.atlassian.net/rest/api/3/myself"),
        "age_secret_key": lambda: (v := g.age_key(), f"# created: 2026-01-02T10:00:00Z\n# public key: age1{g.s('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}\n{v}"),
        "wireguard_key": lambda: (v := g.b64(32), f"[Interface]\nAddress = 10.8.0.2/24\nPrivateKey = {v}\nListenPort = 51820"),
        "putty_private_key": lambda: (
            (priv := "\n".join(g.b64(48) for _ in range(2)), mac := g.s(HEX, 64)),
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@bastion\nPublic-Lines: 2\n"
            f"{g.b64(48)}\n{g.b64(3)}\nPrivate-Lines: 1\n{priv}\nPrivate-MAC: {mac}",
        ),
        "azure_sas_token": lambda: (v := quote(g.b64(32), safe=""), f"https://acct.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig={v}"),
        "azure_storage_key": lambda: (v := g.b64(64), f"DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={v};EndpointSuffix=core.windows.net"),
        "azure_client_secret": lambda: (v := g.s(ALNUM, 3) + g.s(DIGITS, 1) + "Q~" + g.s(URLSAFE + "~.", 34), f"AZURE_CLIENT_SECRET={v}" if g.rng.random() < 0.5 else f"client secret {v} expires in June"),
        "aws_access_key_id": lambda: (v := "AKIA" + g.s("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), v),
        "aws_secret_access_key": lambda: (v := g.s(B64, 40), f"aws_secret_access_key = {v}"),
        "aws_session_token": lambda: (v := "IQoJb3JpZ2luX2VjE" + g.s(B64, 300), f"AWS_SESSION_TOKEN={v}"),
        "google_api_key": lambda: (v := "AIza" + g.s(URLSAFE, 35), v),
        "google_oauth_client_secret": lambda: (v := "GOCSPX-" + g.s(URLSAFE, 28), f'"client_secret": "{v}"'),
        "gcp_service_account_key": lambda: (v := "\\n".join(g.b64(48) for _ in range(4)), json.dumps({"type": "service_account", "project_id": "acme-prod", "private_key_id": g.s(HEX, 40)})[:-1] + f', "private_key": "-----BEGIN PRIVATE KEY-----\\n{v}\\n-----END PRIVATE KEY-----\\n"}}'),
        "private_key": lambda: (v := "\n".join(g.b64(48) for _ in range(5)), f"-----BEGIN {g.rng.choice(['RSA ', 'EC ', 'OPENSSH ', ''])}PRIVATE KEY-----\n{v}\n-----END PRIVATE KEY-----"),
        "kubeconfig_client_key": lambda: (v := base64.b64encode(f"-----BEGIN EC PRIVATE KEY-----\n{g.b64(90)}\n-----END EC PRIVATE KEY-----\n".encode()).decode(), f"users:\n- name: admin\n  user:\n    client-key-data: {v}"),
        "jwt": lambda: (v := g.jwt({"sub": g.s(ALNUM, 12), "iat": g.rng.randrange(10**9, 2 * 10**9)}), v),
        "openai_api_key": lambda: (v := "sk-proj-" + g.s(URLSAFE, 80), v),
        "anthropic_api_key": lambda: (v := "sk-ant-api03-" + g.s(URLSAFE, 93) + "AA", v),
        "huggingface_token": lambda: (v := "hf_" + g.s(ALNUM, 34), v),
        "groq_api_key": lambda: (v := "gsk_" + g.s(ALNUM, 52), f"GROQ_API_KEY={v}"),
        "npm_token": lambda: (v := g.crc_token("npm_"), f"//registry.npmjs.org/:_authToken={v}"),
        "pypi_token": lambda: (v := "pypi-AgEIcHlwaS5vcmc" + g.s(URLSAFE, 140), f"[pypi]\nusername = __token__\npassword = {v}"),
        "sendgrid_api_key": lambda: (v := f"SG.{g.s(URLSAFE, 22)}.{g.s(URLSAFE, 43)}", v),
        "twilio_api_key": lambda: (v := "SK" + g.s(HEX, 32), f"TWILIO_API_KEY={v}"),
        "mailgun_api_key": lambda: (v := "key-" + g.s(HEX, 32), v),
        "shopify_token": lambda: (v := "shpat_" + g.s(HEX, 32), f"X-Shopify-Access-Token: {v}"),
        "databricks_token": lambda: (v := "dapi" + g.s(HEX, 32), f"databricks configure --token {v}"),
        "newrelic_key": lambda: (v := "NRAK-" + g.s(UPPER + DIGITS, 27), v),
        "sentry_token": lambda: (v := "sntrys_" + g.b64(90, True, False), f"SENTRY_AUTH_TOKEN={v}"),
        "heroku_api_key": lambda: (v := "HRKU-" + g.s(URLSAFE, 60), v),
        "datadog_api_key": lambda: (v := g.s(HEX, 32), f"DD_API_KEY={v}"),
        "okta_token": lambda: (v := "00" + g.s(URLSAFE, 40), f"OKTA_API_TOKEN={v}"),
        "unlabelled_high_entropy": lambda: (v := g.s(ALNUM, 40), f"Mistral key for the eval box, {v}, ask Léa before reusing it."),
        # -- framework secret keys ---------------------------------------------------------
        "django_secret_key": lambda: (v := "django-insecure-" + g.s(LOWER + DIGITS + "!@#$%^&*(-_=+)", 50), f"SECRET_KEY = '{v}'"),
        "rails_secret_key_base": lambda: (v := g.s(HEX, 128), f"production:\n  secret_key_base: {v}"),
        "laravel_app_key": lambda: (v := "base64:" + g.b64(32), f"APP_KEY={v}"),
        "flask_secret_key": lambda: (v := g.s(HEX, 48), f"app.config['SECRET_KEY'] = '{v}'"),
        "nextauth_secret": lambda: (v := g.b64(32), f"NEXTAUTH_SECRET=\"{v}\""),
        "express_session_secret": lambda: (v := g.s(ALNUM, 32), f"app.use(session({{ secret: '{v}', resave: false }}))"),
        # -- headers and cookies ------------------------------------------------------------
        "basic_auth": lambda: (v := base64.b64encode(f"deploy:{pw()}".encode()).decode(), f"Authorization: Basic {v}"),
        "bearer_token": lambda: (v := g.s(ALNUM + "-._", 40), f"curl -H \"Authorization: Bearer {v}\" https://api.internal/v1/jobs"),
        "session_cookie": lambda: (v := g.rng.choice([g.s(LOWER + DIGITS, 32), "s%3A" + g.s(URLSAFE, 32) + "." + g.s(URLSAFE, 43)]), g.rng.choice(["Cookie: sessionid={v}; csrftoken=abc", "Set-Cookie: connect.sid={v}; Path=/; HttpOnly", "curl -b 'PHPSESSID={v}' https://shop.internal/cart", "_session_id={v}"]).format(v=v)),
        "query_string_token": lambda: (v := g.s(ALNUM, 32), f"GET https://api.weather.example/v2/forecast?city=Lyon&access_token={v}&units=metric"),
        # -- passwords on command lines, files, URLs ---------------------------------------
        "mysql_password_flag": lambda: (v := pw(), f"mysql -h db.internal -u root -p{v} orders"),
        "sshpass": lambda: (v := pw(), f"sshpass -p '{v}' ssh deploy@10.0.3.7"),
        "curl_user_password": lambda: (v := pw(), f"curl -u admin:{v} https://jenkins.internal/api/json"),
        "redis_cli_password": lambda: (v := pw(), f"redis-cli -h cache.internal -a {v} ping"),
        "docker_login_password": lambda: (v := pw(), f"docker login registry.internal -u ci -p {v}"),
        "netrc": lambda: (v := pw(), f"machine api.heroku.com\n  login ops@example.com\n  password {v}"),
        "pgpass": lambda: (v := pw(), f"db.internal:5432:orders:app:{v}"),
        "password_in_url": lambda: (v := pw().replace("@", "9").replace("/", "x"), g.rng.choice(["postgres://app:{v}@db.internal:5432/app", "redis://:{v}@cache.internal:6379/0", "amqp://worker:{v}@mq.internal:5672/"]).format(v=v)),
        "env_password": lambda: (v := pw(), f"DB_PASSWORD={v}\nDB_HOST=db.internal"),
        "yaml_password": lambda: (v := pw(), f"database:\n  user: app\n  password: \"{v}\"\n  host: db.internal"),
        "connection_string": lambda: (v := pw().replace(";", "9"), f"Server=tcp:sql.internal,1433;Database=orders;User ID=app;Password={v};Encrypt=True"),
        "htpasswd": lambda: (v := "$2y$10$" + g.s("./" + ALNUM, 53), f"admin:{v}"),
        "prose_password_en": lambda: (v := pw(), g.rng.choice(["FYI the password for the staging admin is {v} until we move it to Vault.", "pw: {v}", "the root password was {v}"]).format(v=v)),
        "prose_password_fr": lambda: (v := pw(), g.rng.choice(["Le mot de passe est {v}, ne le partage pas.", "le mdp c'est {v}", "Mot de passe du wifi : {v}"]).format(v=v)),
        "prose_password_de": lambda: (v := pw(), g.rng.choice(["Das Passwort lautet {v} und gilt bis Montag.", "Kennwort für den Router: {v}", "das Passwort ist {v}"]).format(v=v)),
        "prose_password_es": lambda: (v := pw(), g.rng.choice(["La contraseña es {v} para el entorno de pruebas.", "contraseña del admin: {v}", "la clave del wifi es {v}"]).format(v=v)),
        "prose_password_ko": lambda: (v := pw(), g.rng.choice(["관리자 비밀번호는 {v} 입니다.", "비밀번호: {v}", "서버 비밀번호는 {v}야"]).format(v=v)),
        "plain_word_password": lambda: (v := g.rng.choice(["correcthorse", "bluefalcon", "orbitmaple", "quartzriver"]) + g.s(LOWER, 3), f"password={v}"),
        "credential_pair": lambda: (v := pw(), f"requests.get(url, auth=(\"deploy\", \"{v}\"))"),
        "xml_password": lambda: (v := pw().replace("<", "x").replace("&", "x"), f"<server>\n  <id>nexus</id>\n  <password>{v}</password>\n</server>"),
        "jdbc_password": lambda: (v := pw().replace("&", "x"), f"jdbc:mysql://db.internal:3306/app?user=app&password={v}&useSSL=true"),
        "uuid_api_key": lambda: (v := f"{g.s(HEX, 8)}-{g.s(HEX, 4)}-4{g.s(HEX, 3)}-a{g.s(HEX, 3)}-{g.s(HEX, 12)}", f"HEROKU_API_KEY={v}"),
        "redis_requirepass": lambda: (v := g.s(ALNUM, 20), f"# redis.conf\nrequirepass {v}\nmaxmemory 2gb"),
        "docker_config_auth": lambda: (v := base64.b64encode(f"ci:{pw()}".encode()).decode(), f'{{"auths": {{"registry.internal": {{"auth": "{v}"}}}}}}'),
        "prose_password_ja": lambda: (v := pw(), g.rng.choice(["管理画面のパスワードは {v} です。", "パスワード：{v}", "パスワードは「{v}」で入れてください"]).format(v=v)),
        # -- passwords stated in more languages, and as a `login: user / password` pair ------
        "prose_password_it": lambda: (v := pw(), g.rng.choice(["La password del server è {v}, non condividerla.", "password dell'admin: {v}", "la parola d'ordine è {v}"]).format(v=v)),
        "prose_password_pt": lambda: (v := pw(), g.rng.choice(["A senha do roteador é {v} até sexta.", "senha: {v}", "a senha do banco é {v}"]).format(v=v)),
        "prose_password_nl": lambda: (v := pw(), g.rng.choice(["Het wachtwoord is {v} voor de testomgeving.", "wachtwoord: {v}", "het wachtwoord van de router is {v}"]).format(v=v)),
        "prose_password_pl": lambda: (v := pw(), g.rng.choice(["Hasło do serwera to {v}, nie udostępniaj.", "hasło: {v}", "hasło do wifi to {v}"]).format(v=v)),
        "prose_password_ru": lambda: (v := pw(), g.rng.choice(["Пароль от сервера: {v}, никому не давай.", "пароль — {v}", "пароль для администратора: {v}"]).format(v=v)),
        "prose_password_zh": lambda: (v := pw(), g.rng.choice(["服务器的密码是 {v}，不要外传。", "密码：{v}", "管理员密码为{v}"]).format(v=v)),
        "prose_password_tr": lambda: (v := pw(), g.rng.choice(["Sunucu şifresi: {v}, kimseyle paylaşma.", "wifi şifresi {v}", "parola: {v}"]).format(v=v)),
        "prose_password_sv": lambda: (v := pw(), g.rng.choice(["Lösenordet är {v} tills vidare.", "lösenord: {v}", "Lösenordet till routern är {v}"]).format(v=v)),
        "login_user_password": lambda: (v := pw().replace("/", "x"), g.rng.choice(["login: admin / {v}", "Login: ops@example.com / {v}", "login: deploy/{v}", "user/pass: root / {v}"]).format(v=v)),
        # -- tokens embedded in URL paths -----------------------------------------------------
        "url_path_token": lambda: (v := g.s(ALNUM, g.rng.choice([24, 32, 40])), g.rng.choice([
            "POST https://api.pushme.example/v1/token/{v}/notify", "https://hooks.example.net/webhook/{v}",
            "curl https://status.example.org/api/keys/{v}/ping", "https://ingest.example.io/secret/{v}/events"]).format(v=v)),
        # -- credentials passed positionally to well-known client constructors ------------------
        "positional_client_credentials": lambda: (v := pw().replace('"', "x").replace("'", "x"), g.rng.choice([
            'conn = pymysql.connect("db.internal", "app", "{v}", "orders")', "server.login('ops@example.com', '{v}')",
            'ftp = FTP("ftp.internal", "backup", "{v}")', 'conn = DriverManager.getConnection(url, "app", "{v}");',
            "ldap.simple_bind_s('cn=admin,dc=example,dc=org', '{v}')", 'auth = tweepy.OAuthHandler("{k}", "{v}")',
            'client = Client("AC{h}", "{v}")']).format(v=v, k=g.s(ALNUM, 25), h=g.s(HEX, 32))),
        # -- base64 key material in `*_KEY` assignments ---------------------------------------
        "base64_key_material": lambda: (v := g.b64(g.rng.choice([16, 24, 32, 64])), g.rng.choice([
            "ENCRYPTION_KEY={v}", "FERNET_KEY=\"{v}\"", "DATA_KEY: {v}", "export WEBHOOK_KEY='{v}'", "AES_KEY = \"{v}\"",
            "COOKIE_KEY={v}"]).format(v=v)),
    }


_WHOLE_LINE = {"pgpass", "netrc", "htpasswd", "plain_word_password"}  # a line of their own


def secret_corpus(per_kind: int = 3, seed: int = 20261201) -> list[SecretSample]:
    """`per_kind` samples of every kind; provider tokens given bare are put in a sentence of
    a rotating language."""
    g = _Gen(seed)
    langs = list(PROSE)
    out: list[SecretSample] = []
    for k, (kind, make) in enumerate(_makers(g).items()):
        for i in range(per_kind):
            value, written = make()
            values = value if isinstance(value, tuple) else (value,)
            if written == value or (i % 3 == 2 and "\n" not in written and kind not in _WHOLE_LINE):
                lang = langs[(k + i) % len(langs)]
                written = PROSE[lang][i % 2].format(s=written)
            out.append(SecretSample(kind, values, written))
    return out
