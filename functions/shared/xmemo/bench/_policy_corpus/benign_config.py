"""Benign configuration: `.env.example` files with empty or placeholder values, manifests
that point at secrets held elsewhere, schemas that describe secret fields."""

from __future__ import annotations

from .benign_code import split

ENV_EXAMPLE = split(r'''
# .env.example — copy to .env and fill in
DATABASE_URL=postgres://user:password@localhost:5432/app
DB_PASSWORD=
OPENAI_API_KEY=
~~~
STRIPE_SECRET_KEY=sk_test_...
STRIPE_WEBHOOK_SECRET=whsec_...
~~~
API_KEY=your-api-key-here
API_SECRET=<your-secret>
~~~
GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
~~~
AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX
AWS_SECRET_ACCESS_KEY=
~~~
POSTGRES_USER=app
POSTGRES_PASSWORD=changeme
POSTGRES_DB=app
~~~
SECRET_KEY=change-me-in-production
DEBUG=true
ALLOWED_HOSTS=localhost,127.0.0.1
~~~
JWT_SECRET=replace_with_a_long_random_string
JWT_EXPIRES_IN=3600
~~~
SMTP_HOST=smtp.example.com
SMTP_USER=
SMTP_PASSWORD=
~~~
REDIS_URL=redis://localhost:6379/0
REDIS_PASSWORD=${REDIS_PASSWORD}
~~~
SLACK_BOT_TOKEN=xoxb-your-token
SLACK_SIGNING_SECRET=
~~~
NEXTAUTH_URL=http://localhost:3000
NEXTAUTH_SECRET= # openssl rand -base64 32
~~~
APP_KEY=
APP_ENV=local
APP_DEBUG=true
~~~
SENTRY_DSN=
SENTRY_AUTH_TOKEN=<token from sentry.io/settings/auth-tokens>
~~~
# Never commit real values. Ask #platform for access to the vault path secret/app/dev.
VAULT_ADDR=https://vault.internal:8200
VAULT_TOKEN=
~~~
ANTHROPIC_API_KEY="sk-ant-..."
OPENAI_API_KEY="sk-..."
~~~
DB_PASSWORD=********
~~~
MYSQL_ROOT_PASSWORD=${MYSQL_ROOT_PASSWORD:?set it in .env}
~~~
TOKEN_TTL_SECONDS=900
PASSWORD_MIN_LENGTH=12
MAX_TOKENS=4096
~~~
DOCKERHUB_USERNAME=
DOCKERHUB_TOKEN=  # https://hub.docker.com/settings/security
''')

YAML = split(r'''
env:
  - name: DB_PASSWORD
    valueFrom:
      secretKeyRef:
        name: db-credentials
        key: password
~~~
apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
type: Opaque
stringData:
  password: "{{ .Values.db.password }}"
~~~
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - run: ./deploy.sh
        env:
          AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}
          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}
~~~
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD_FILE: /run/secrets/pg_password
    secrets:
      - pg_password
secrets:
  pg_password:
    file: ./secrets/pg_password.txt
~~~
Parameters:
  DbPassword:
    Type: AWS::SSM::Parameter::Value<String>
    NoEcho: true
Resources:
  Db:
    Properties:
      MasterUserPassword: !Ref DbPassword
~~~
MasterUserPassword: '{{resolve:secretsmanager:prod/db:SecretString:password}}'
~~~
db_password: "{{ vault_db_password }}"
api_token: "{{ lookup('env', 'API_TOKEN') }}"
~~~
provider:
  environment:
    STRIPE_KEY: ${ssm:/prod/stripe/secret-key}
    JWT_SECRET: ${env:JWT_SECRET}
~~~
spring:
  datasource:
    password: ${DB_PASSWORD}
    username: ${DB_USER:app}
~~~
auth:
  type: oauth2
  token_endpoint: https://auth.example.com/oauth2/token
  client_secret_ref: prod/oauth/client-secret
~~~
password:
  type: string
  format: password
  minLength: 12
  description: The user's password; never logged.
~~~
security:
  - bearerAuth: []
components:
  securitySchemes:
    bearerAuth:
      type: http
      scheme: bearer
      bearerFormat: JWT
~~~
externalSecrets:
  - secretKey: password
    remoteRef:
      key: prod/db
      property: password
~~~
volumes:
  - name: tls
    secret:
      secretName: api-tls
~~~
max_tokens: 1024
temperature: 0.2
token_budget: 8000
~~~
annotations:
  vault.hashicorp.com/agent-inject-secret-config: "secret/data/app/config"
  vault.hashicorp.com/role: "app"
''')

JSON = split(r'''
{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}" }
    }
  }
}
~~~
{
  "type": "object",
  "properties": {
    "password": { "type": "string", "minLength": 12, "writeOnly": true },
    "apiKey": { "type": "string", "description": "API key from the dashboard" }
  },
  "required": ["password"]
}
~~~
{"username": "alice", "password": "string"}
~~~
{"error": {"code": "unauthorized", "message": "token expired"}}
~~~
{"token_type": "Bearer", "expires_in": 3600, "scope": "memory:read memory:write"}
~~~
"scripts": {
  "release": "npm publish --access public",
  "secrets:pull": "doppler secrets download --no-file --format env > .env"
}
~~~
{
  "inputs": [{ "type": "promptString", "id": "api-key", "description": "API key", "password": true }],
  "servers": { "search": { "env": { "API_KEY": "${input:api-key}" } } }
}
~~~
{"auth": {"type": "oauth2", "tokenUrl": "https://auth.example.com/token"}, "passwordPolicy": {"minLength": 12}}
~~~
{"name": "db-password", "ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-password-AbCdEf", "VersionStages": ["AWSCURRENT"]}
~~~
{"integrity": "sha512-9NET910DNaIPngYnLLPeg+Ogzqsi9uM4mSboU5y6p8S5DzMTVEsJZrawi+BoDNUVBa2DhJqQYUFvMMMnIk7nMA==", "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz"}
~~~
{"Authorization": "Bearer <token>", "Accept": "application/json"}
~~~
{ "compilerOptions": { "strict": true, "noImplicitAny": true } }
~~~
{"password": "********", "remember_me": true}
~~~
{"api_key": "YOUR_API_KEY", "endpoint": "https://api.example.com/v1"}
~~~
{"secretsmanager": {"secretId": "prod/app", "versionStage": "AWSCURRENT", "rotationEnabled": true}}
''')

OTHER = split(r'''
[default]
region = eu-west-1
credential_process = aws-vault export --format=json prod
~~~
[database]
host = localhost
port = 5432
password = %(DB_PASSWORD)s
~~~
variable "db_password" {
  type      = string
  sensitive = true
}
resource "aws_db_instance" "main" {
  password = var.db_password
}
~~~
data "aws_secretsmanager_secret_version" "db" {
  secret_id = aws_secretsmanager_secret.db.id
}
password = jsondecode(data.aws_secretsmanager_secret_version.db.secret_string)["password"]
~~~
[tool.poetry.source]
name = "private"
url = "https://pypi.internal/simple/"
# credentials come from POETRY_HTTP_BASIC_PRIVATE_PASSWORD
~~~
FROM python:3.12-slim
ARG PIP_INDEX_URL
RUN --mount=type=secret,id=netrc,target=/root/.netrc pip install -r requirements.txt
~~~
location /api/ {
    proxy_set_header Authorization $http_authorization;
    proxy_pass http://backend;
}
~~~
[client]
user = app
password =
~~~
# ~/.netrc is read by curl -n; the file itself lives in 1Password, not here.
machine api.github.com login octocat password <token>
~~~
app.jwt.secret=${JWT_SECRET}
app.jwt.expiration-ms=3600000
~~~
<add key="ApiKey" value="%API_KEY%" />
<add key="Password" value="" />
~~~
[Interface]
Address = 10.8.0.2/24
PrivateKey = <paste the key from wg genkey>
DNS = 1.1.1.1
~~~
[[secrets]]
name = "STRIPE_KEY"
from = "vault://kv/stripe#secret_key"
~~~
password_hash = "$argon2id$..."  # format only; the hash lives in the users table
~~~
AuthType Basic
AuthName "Restricted"
AuthUserFile /etc/apache2/.htpasswd
Require valid-user
''')

SNIPPETS = {
    "config_env_example": ENV_EXAMPLE,
    "config_yaml": YAML,
    "config_json": JSON,
    "config_other": OTHER,
}
