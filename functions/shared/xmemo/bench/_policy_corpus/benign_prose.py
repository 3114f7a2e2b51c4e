"""Benign prose about passwords, keys and tokens in six languages, and identifiers that
look random but are not secret (hashes, UUIDs, commit ids, ARNs, digests)."""

from __future__ import annotations

import hashlib
import random
import uuid

from .benign_code import split

EN = split(r'''
secret: keep the roadmap internal until the board meeting.
~~~
The password estimator rejects anything under 12 characters.
~~~
Password: must be at least 12 characters and is never stored in plain text.
~~~
The API key is stored in AWS Secrets Manager under prod/api and rotated every 90 days.
~~~
Decision: tokens expire after 15 minutes; refresh tokens after 30 days.
~~~
The password for the staging admin is in 1Password, vault "Platform".
~~~
Rotate the AWS keys every 90 days; see docs/auth.md.
~~~
We stopped sharing passwords over Slack after the audit.
~~~
The token is passed in the Authorization header as a bearer token.
~~~
To reset a password, the user clicks the link in the email; it is valid for one hour.
~~~
Never paste an API key into a ticket. If you did, revoke it at once and open an incident.
~~~
Secret scanning is enabled on every repository; push protection blocks known token formats.
~~~
The password is too short: the policy requires 12 characters, one digit and one symbol.
~~~
Key takeaways: cache hits doubled, p95 latency fell from 420 ms to 180 ms.
~~~
Secret Santa is on Friday; budget 20 euros.
~~~
The session token lives in an HttpOnly cookie, so JavaScript cannot read it.
''')

FR = split(r'''
Le mot de passe doit contenir au moins 12 caractères.
~~~
La clé API est stockée dans le coffre-fort, jamais dans le dépôt.
~~~
Mot de passe : voir le gestionnaire de mots de passe de l'équipe.
~~~
Le jeton expire au bout d'une heure ; il faut le renouveler avec le jeton de rafraîchissement.
~~~
La décision d'authentification est prise : OAuth 2.1 avec PKCE.
~~~
Le mot de passe est trop court, il faut en choisir un autre.
~~~
Ne jamais envoyer de mot de passe par courriel ; utiliser le lien de partage sécurisé.
~~~
Les secrets sont injectés par le pipeline depuis AWS Secrets Manager.
~~~
Le secret professionnel s'applique aux notes de réunion.
~~~
Pour réinitialiser le mot de passe, cliquer sur « Mot de passe oublié ».
~~~
La rotation des clés d'accès AWS est automatique tous les 90 jours.
~~~
Le jeton d'accès est transmis dans l'en-tête Authorization.
~~~
Clé de tri : date de création, puis référence.
~~~
Le mot de passe est stocké haché avec Argon2id.
~~~
Le token GitHub est lu dans la variable d'environnement GITHUB_TOKEN.
~~~
Le secret du webhook Stripe est dans Vault, chemin secret/stripe.
''')

KO = split(r'''
비밀번호는 12자 이상이어야 한다.
~~~
API 키는 AWS Secrets Manager에 저장되어 있고 90일마다 교체된다.
~~~
비밀번호: 팀 비밀번호 관리자에서 확인할 것.
~~~
토큰은 15분 후에 만료되며 갱신 토큰으로 다시 발급받는다.
~~~
작업을 계속하는 방법을 기록한다.
~~~
비밀번호를 슬랙으로 공유하지 않기로 했다.
~~~
액세스 토큰은 Authorization 헤더에 담아 보낸다.
~~~
비밀번호는 Argon2id로 해시하여 저장한다.
~~~
비밀 유지 계약서를 다음 주까지 검토한다.
~~~
암호화 키는 KMS에서 관리하며 애플리케이션은 키를 직접 보지 않는다.
~~~
비밀번호를 잊어버린 경우 이메일의 링크로 재설정한다.
~~~
토큰 예산은 8000으로 정했다.
~~~
GitHub 토큰은 환경 변수 GITHUB_TOKEN에서 읽는다.
~~~
비밀번호는 너무 짧다. 다른 비밀번호를 골라야 한다.
~~~
세션 쿠키는 HttpOnly로 설정한다.
~~~
배포 키는 저장소마다 따로 만든다.
''')

DE = split(r'''
Das Passwort muss mindestens 12 Zeichen lang sein.
~~~
Der API-Schlüssel liegt im Tresor und wird alle 90 Tage rotiert.
~~~
Passwort: siehe Passwortmanager des Teams.
~~~
Das Token läuft nach 15 Minuten ab und wird mit dem Refresh-Token erneuert.
~~~
Das Passwort ist zu kurz, bitte ein anderes wählen.
~~~
Passwörter werden nie per E-Mail verschickt.
~~~
Geheimnisse werden von der Pipeline aus dem AWS Secrets Manager geladen.
~~~
Das Passwort lautet wie im Passwortmanager hinterlegt, nicht wie im alten Wiki.
~~~
Der Zugangsschlüssel wird im Authorization-Header übertragen.
~~~
Zum Zurücksetzen des Passworts auf „Passwort vergessen“ klicken.
~~~
Das Geheimnis des Erfolgs war ein kleineres Team.
~~~
Schlüsselwörter für die Suche: Authentifizierung, Sitzung, Token.
~~~
Das Passwort wird mit Argon2id gehasht gespeichert.
~~~
Kennwort vergessen? Der Link ist eine Stunde gültig.
~~~
Das GitHub-Token wird aus der Umgebungsvariable GITHUB_TOKEN gelesen.
~~~
Der Sitzungs-Cookie ist HttpOnly und Secure.
''')

JA = split(r'''
パスワードは12文字以上にしてください。
~~~
APIキーはAWS Secrets Managerに保存され、90日ごとにローテーションされます。
~~~
パスワード：チームのパスワードマネージャーを参照。
~~~
トークンは15分で失効し、リフレッシュトークンで再発行します。
~~~
パスワードはVaultに保存されています。Slackで共有しないでください。
~~~
パスワードを忘れた場合は、メールのリンクから再設定してください。
~~~
アクセストークンはAuthorizationヘッダーで送ります。
~~~
パスワードはArgon2idでハッシュ化して保存します。
~~~
秘密保持契約は来週までに確認する。
~~~
暗号鍵はKMSで管理し、アプリケーションは鍵を直接扱わない。
~~~
GitHubトークンは環境変数GITHUB_TOKENから読み込む。
~~~
パスワードが短すぎます。別のパスワードを選んでください。
~~~
セッションクッキーはHttpOnlyに設定する。
~~~
デプロイキーはリポジトリごとに作成する。
~~~
トークン予算は8000に決めた。
~~~
秘密鍵はリポジトリに置かず、1Passwordで共有する。
''')

ES = split(r'''
La contraseña debe tener al menos 12 caracteres.
~~~
La clave de API se guarda en AWS Secrets Manager y se rota cada 90 días.
~~~
Contraseña: ver el gestor de contraseñas del equipo.
~~~
El token caduca a los 15 minutos y se renueva con el token de actualización.
~~~
La contraseña es demasiado corta, elige otra.
~~~
Nunca enviamos contraseñas por correo.
~~~
Los secretos los inyecta el pipeline desde AWS Secrets Manager.
~~~
El token de acceso va en la cabecera Authorization.
~~~
Para restablecer la contraseña, pulsa «¿Olvidaste tu contraseña?».
~~~
El secreto del éxito fue un equipo más pequeño.
~~~
La contraseña se guarda con hash Argon2id.
~~~
Clave de ordenación: fecha de creación y después referencia.
~~~
El token de GitHub se lee de la variable de entorno GITHUB_TOKEN.
~~~
La cookie de sesión es HttpOnly y Secure.
~~~
La contraseña es la misma que en el gestor, no la del wiki antiguo.
~~~
La clave privada nunca sale del HSM.
''')


def identifiers(seed: int = 7) -> list[str]:
    """Random-looking but public identifiers, in the sentences that carry them."""
    rng = random.Random(seed)
    hexs = lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
    acct = lambda: "".join(rng.choice("0123456789") for _ in range(12))  # noqa: E731
    out: list[str] = []
    for i in range(8):
        sha = hashlib.sha256(f"artifact-{i}".encode()).hexdigest()
        out.append(rng.choice(["sha256: {h}", "The tarball's SHA-256 is {h}.", "checksum {h}  dist/app.tar.gz", "La somme SHA-256 est {h}."]).format(h=sha))
    for i in range(8):
        c = hexs(40)
        out.append(rng.choice(["commit {c}\nAuthor: Ana <ana@example.com>", "Reverted in {c} (aws deploy script).", "Fixed by {s} on main.", "aws: pin the SDK, see {c}", "Le correctif est dans le commit {s}."]).format(c=c, s=c[:7]))
    for i in range(8):
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(rng.choice(["request id {u}", "tenant_id = \"{u}\"", "The session id in the log was {u}.", "trace-id: {u}", "secret_id: {u}"]).format(u=u))
    for i in range(8):
        out.append(rng.choice([
            "arn:aws:secretsmanager:eu-west-1:{a}:secret:prod/db-password-{x}",
            "arn:aws:iam::{a}:role/deploy",
            "arn:aws:kms:us-east-1:{a}:key/{u}",
            "Role ARN: arn:aws:iam::{a}:role/github-actions-oidc",
            "arn:aws:ssm:eu-west-1:{a}:parameter/prod/api-key",
        ]).format(a=acct(), x="".join(rng.choice("ABCDEFabcdef0123456789") for _ in range(6)), u=str(uuid.UUID(int=rng.getrandbits(128), version=4))))
    for i in range(4):
        out.append(f"image: ghcr.io/acme/api@sha256:{hexs(64)}")
    for i in range(4):
        out.append(rng.choice(["md5 {m}", "ETag: \"{m}\"", "object {m} was evicted from the cache", "git lfs oid sha256:{h}"]).format(m=hexs(32), h=hexs(64)))
    return out


SNIPPETS = {
    "prose_en": EN,
    "prose_fr": FR,
    "prose_ko": KO,
    "prose_de": DE,
    "prose_ja": JA,
    "prose_es": ES,
    "identifiers": identifiers(),
}
