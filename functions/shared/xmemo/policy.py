"""Capture policy: find secrets in content before anything is stored, and redact them to
`[REDACTED:<kind>]` (default) or refuse the write (`422 capture_policy`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import CapturePolicyRefused

_NOT_REDACTED = r"(?!\[REDACTED)"

# (kind, pattern, group to redact: 0 = whole match). Order matters: specific before generic.
SECRET_PATTERNS: list[tuple[str, re.Pattern[str], int]] = [
    ("private_key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.S), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b"), 0),
    ("aws_secret_access_key", re.compile(r"(?i)\baws.{0,24}?(?:secret|private)?.{0,24}?[\"'=:\s]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), 1),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]+"), 0),
    ("slack_token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), 0),
    ("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0),
    ("anthropic_api_key", re.compile(r"\bsk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_\-]{20,}"), 0),
    ("openai_api_key", re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), 0),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("sendgrid_api_key", re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), 0),
    ("azure_storage_key", re.compile(r"(?i)AccountKey=([A-Za-z0-9+/=]{40,})"), 1),
    ("bearer_token", re.compile(r"(?i)\bbearer\s+" + _NOT_REDACTED + r"([A-Za-z0-9._~+/\-]{20,}=*)"), 1),
    ("password_in_url", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:" + _NOT_REDACTED + r"([^\s@/]+)@"), 1),
    (
        "password",
        re.compile(
            r"(?i)(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret"
            r"|mot de passe|mot_de_passe|passwort|contraseña|비밀번호|암호|パスワード)"
            r"[\"']?\s*(?:[:=]|=>|est|는|은|:)\s*[\"']?" + _NOT_REDACTED + r"([^\s\"',;]{4,})"
        ),
        1,
    ),
]


@dataclass(frozen=True)
class Captured:
    content: str
    redacted: tuple[str, ...]  # kinds found, in first-seen order


def apply_policy(content: str, mode: str) -> Captured:
    """Redact every secret, or refuse the whole write in `reject` mode."""
    kinds: list[str] = []
    for kind, pattern, group in SECRET_PATTERNS:
        def repl(m: re.Match[str], kind: str = kind, group: int = group) -> str:
            if kind not in kinds:
                kinds.append(kind)
            if group == 0:
                return f"[REDACTED:{kind}]"
            start, end = m.span(group)
            s0 = m.start()
            whole = m.group(0)
            return whole[: start - s0] + f"[REDACTED:{kind}]" + whole[end - s0 :]

        content = pattern.sub(repl, content)
    if kinds and mode == "reject":
        raise CapturePolicyRefused(
            "the content holds secrets and this deployment refuses them: " + ", ".join(kinds), {"kinds": kinds}
        )
    return Captured(content, tuple(kinds))


def apply_policy_fields(content: str, title: str | None, location: str | None, mode: str) -> tuple[Captured, str | None, str | None]:
    """The capture policy over every free-text field that is stored and indexed (content,
    title, location), not the content alone: a secret in a title is as stored as one in
    the body. Returns the captured content (with the kinds of all fields), title, location."""
    kinds: list[str] = []
    out: list[str | None] = []
    for value in (content, title, location):
        if value is None:
            out.append(None)
            continue
        captured = apply_policy(value, mode)
        kinds.extend(k for k in captured.redacted if k not in kinds)
        out.append(captured.content)
    return Captured(out[0] or "", tuple(kinds)), out[1], out[2]
