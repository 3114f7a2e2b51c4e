"""Capture policy: every secret kind is redacted (or refused), ordinary text is untouched."""

import random
import string

import pytest

from xmemo.errors import CapturePolicyRefused
from xmemo.policy import SECRET_PATTERNS, apply_policy

rng = random.Random(7)


def rand(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


AZ09 = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "/+"
URLSAFE = ALNUM + "_-"

# (kind, sentence holding the secret, the secret value that must disappear)
SAMPLES = [
    ("aws_access_key_id", "use key {s} for the deploy", "AKIA" + rand(AZ09, 16)),
    ("aws_secret_access_key", "aws_secret_access_key = {s}", rand(B64, 40)),
    ("github_token", "the CI token is {s}", "ghp_" + rand(ALNUM, 36)),
    ("github_token", "fine-grained: {s}", "github_pat_" + rand(ALNUM + "_", 60)),
    ("gitlab_token", "GitLab PAT {s} expires soon", "glpat-" + rand(URLSAFE, 20)),
    ("slack_token", "bot token {s}", "xoxb-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)),
    ("slack_webhook", "post to {s}", "https://hooks.slack.com/services/T" + rand(AZ09, 8) + "/B" + rand(AZ09, 8) + "/" + rand(ALNUM, 24)),
    ("stripe_key", "Stripe live key {s}", "sk_live_" + rand(ALNUM, 24)),
    ("openai_api_key", "OPENAI key {s}", "sk-proj-" + rand(URLSAFE, 48)),
    ("anthropic_api_key", "Claude key {s}", "sk-ant-api03-" + rand(URLSAFE, 60)),
    ("google_api_key", "maps key {s}", "AIza" + rand(URLSAFE, 35)),
    ("huggingface_token", "hub token {s}", "hf_" + rand(ALNUM, 34)),
    ("npm_token", "publish with {s}", "npm_" + rand(ALNUM, 36)),
    ("sendgrid_api_key", "mail key {s}", "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43)),
    ("azure_storage_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};", rand(B64, 86) + "=="),
    ("jwt", "bearer-less token {s} in a log", "eyJ" + rand(URLSAFE, 30) + ".eyJ" + rand(URLSAFE, 40) + "." + rand(URLSAFE, 43)),
    ("private_key", "key:\n{s}\nend", "-----BEGIN RSA PRIVATE KEY-----\n" + rand(B64, 64) + "\n" + rand(B64, 64) + "\n-----END RSA PRIVATE KEY-----"),
    ("password_in_url", "db at postgres://app:{s}@db.internal:5432/main", rand(ALNUM, 14)),
    ("password", "the admin password={s} do not share", rand(ALNUM + "!#", 12)),
    ("password", "mot de passe: {s}", rand(ALNUM, 10)),
    ("password", "비밀번호: {s}", rand(ALNUM, 10)),
    ("bearer_token", "curl -H 'Authorization: Bearer {s}'", rand(URLSAFE, 40)),
]


def test_at_least_fifteen_kinds_are_covered():
    assert len({k for k, *_ in SAMPLES}) >= 15
    assert {k for k, *_ in SAMPLES} <= {k for k, _, _ in SECRET_PATTERNS}


@pytest.mark.parametrize("kind,sentence,secret", SAMPLES, ids=[f"{k}-{i}" for i, (k, *_) in enumerate(SAMPLES)])
def test_secret_is_redacted_to_its_kind(kind, sentence, secret):
    result = apply_policy(sentence.format(s=secret), "redact")
    assert secret not in result.content
    assert kind in result.redacted
    assert f"[REDACTED:{result.redacted[0]}]" in result.content


@pytest.mark.parametrize("kind,sentence,secret", SAMPLES[:5])
def test_reject_mode_refuses_and_names_the_kinds_not_the_values(kind, sentence, secret):
    with pytest.raises(CapturePolicyRefused) as err:
        apply_policy(sentence.format(s=secret), "reject")
    assert err.value.code == "capture_policy"
    assert kind in err.value.details["kinds"]
    assert secret not in err.value.message and secret not in str(err.value.details)


@pytest.mark.parametrize(
    "text",
    [
        "We decided to use Cognito for MCP authentication.",
        "The password policy requires 12 characters.",
        "Rotate the AWS keys every 90 days; see docs/auth.md.",
        "La décision d'authentification est prise: OAuth 2.1 avec PKCE.",
        "작업을 계속하는 방법을 기록한다.",
        "commit 3f2a9c1 fixed the sk- prefix check",
        "see https://example.com/path?x=1 for details",
    ],
)
def test_ordinary_text_is_untouched(text):
    result = apply_policy(text, "redact")
    assert result.content == text
    assert result.redacted == ()


def test_several_secrets_all_reported_once_each():
    key = "AKIA" + rand(AZ09, 16)
    text = f"key {key} and again {key}, plus password=hunter22"
    result = apply_policy(text, "redact")
    assert result.redacted == ("aws_access_key_id", "password")
    assert result.content.count("[REDACTED:aws_access_key_id]") == 2
