"""Checkov (CloudFormation framework), as operators scan, over template.yaml AND over the
CloudFormation the SAM transform makes of it (offline, `template_rules.translate`, which
calls this through `template_rules.checkov_violations`; issue 14, point 8): the
source shows SAM resources as written, the translation the roles, stage and functions SAM
generates. Every check checkov fails must be in SKIPS with the reason it does not apply;
a skip no check needs any more is reported too, so the list stays short and true.

Checkov runs from its own venv (.venv-checkov, `make install`): it pins boto3 and packaging
versions that conflict with aws-sam-cli's pins in .venv."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parents[1]
CHECKOV = Path(os.environ.get("XMEMO_CHECKOV", ROOT / ".venv-checkov" / "bin" / "checkov"))

SKIPS: dict[str, str] = {
    "CKV_AWS_120": "API caching must stay off: cache keys ignore the bearer token, so a cached answer of one "
                   "tenant would be handed to another.",
    "CKV_AWS_116": "Dead-letter queues catch failed ASYNCHRONOUS invocations: API Gateway and Cognito call "
                   "synchronously and get the error; the scheduled purge, the one asynchronous function, has a "
                   "DLQ; the index custom resource answers CloudFormation on every path, bounded by ServiceTimeout.",
    "CKV_AWS_117": "The functions reach only public AWS endpoints (the domain's public HTTPS endpoint behind its "
                   "IAM policy, Bedrock, SSM) with SigV4; a VPC would add NAT or endpoint cost and no control.",
    "CKV_AWS_115": "Per-function reserved concurrency would take capacity from the account pool and cap the API "
                   "below the stage throttle; WAF and the stage throttle bound the load. The token trigger, whose "
                   "starvation would lock everyone out, has reserved concurrency.",
    "CKV_AWS_173": "The functions' environment holds settings and endpoints, no secret (identity comes from IAM "
                   "roles); Lambda encrypts it at rest with its service key.",
    "CKV_AWS_158": "The log groups hold no memory content and no token (the access-log format has no bodies or "
                   "headers, DataTraceEnabled is off); CloudWatch Logs encrypts them at rest.",
    "CKV_AWS_119": "The MCP authorization server's table holds client registrations, short-lived pending logins "
                   "and SHA-256 digests of codes and refresh tokens, never a usable secret; it is encrypted at rest "
                   "with DynamoDB's AWS-managed key, and a customer-managed key would add a KMS call to every token "
                   "request without protecting anything more.",
    "CKV_AWS_317": "Audit logs exist only with fine-grained access control; this domain admits exactly three "
                   "roles through its IAM policy and denies every other principal (template_rules, point 4).",
    "CKV_AWS_18": "Server access logs of the snapshot bucket would need a second bucket; only OpenSearch's "
                  "snapshot role writes it, and CloudTrail records its API calls.",
    "CKV_AWS_27": "The dead-letter queue is encrypted with SSE-SQS (SqsManagedSseEnabled), which this checkov "
                  "check does not recognise; it holds purge events, never memory content.",
}


def scan(paths: list[Path]) -> list[dict[str, str]]:
    """Every failed check of one checkov run over `paths`, without any skip."""
    if not CHECKOV.exists():
        raise FileNotFoundError(f"{CHECKOV} missing: run `make install` (it creates .venv-checkov)")
    args = [str(CHECKOV), "--framework", "cloudformation", "--compact", "--quiet", "-o", "json"]
    for path in paths:
        args += ["-f", str(path)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, env={**os.environ, "LOG_LEVEL": "ERROR"})
    if result.returncode not in (0, 1):  # 1 = some check failed
        raise RuntimeError(f"checkov exited {result.returncode}: {result.stderr[-2000:]}")
    reports = json.loads(result.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    if any(r.get("summary", {}).get("parsing_errors") for r in reports):
        raise RuntimeError(f"checkov could not parse a template: {result.stdout[-2000:]}")
    return [{"check": f["check_id"], "resource": f["resource"], "file": Path(f["file_path"]).name}
            for r in reports for f in r["results"]["failed_checks"]]


def scan_template(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[dict[str, str]]:
    """`scan` over the SAM source and its translation, both written as JSON files."""
    with tempfile.TemporaryDirectory(prefix="xmemo-checkov-") as tmp:
        paths = [Path(tmp) / "source.json", Path(tmp) / "translated.json"]
        paths[0].write_text(json.dumps(template))
        paths[1].write_text(json.dumps(cfn))
        return scan(paths)


def violations(failed: list[dict[str, str]]) -> list[str]:
    """Failed checks that are not skipped, and skips that no failed check needs."""
    out = [f"{f['check']} {f['resource']} ({f['file']})" for f in failed if f["check"] not in SKIPS]
    needed = {f["check"] for f in failed}
    out += [f"{check}: skipped but no longer failing; drop the skip" for check in SKIPS if check not in needed]
    return out

