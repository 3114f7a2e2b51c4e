"""`xmemo bench policy`: the capture policy side by side with `detect-secrets` on the
policy corpora (xmemo/bench/_policy_corpus): false-positive rate per benign category,
detection rate per secret kind, and the policy's time per call.

A benign snippet counts as a false positive when the policy changes it (for
detect-secrets: when it reports anything). A secret counts as caught when none of its
values survives redaction (for detect-secrets: when a finding is the value, contains it,
is contained in it, or sits on a line the value occupies). detect-secrets runs with its
default plugins and filters, each snippet scanned as a file of its own."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ..policy import apply_policy
from ._policy_corpus import SecretSample, benign_corpus, secret_corpus
from ._report import latency_summary, markdown_table, save

Finding = tuple[int, str]  # (line number, 1-based; secret value)


def xmemo_flags(text: str) -> bool:
    return apply_policy(text, "redact").content != text


def xmemo_catches(sample: SecretSample) -> bool:
    content = apply_policy(sample.text, "redact").content
    return not any(v in content for v in sample.values)


def detect_secrets_scanner() -> Callable[[str], list[Finding]] | None:
    """A function scanning one snippet with detect-secrets' defaults, or None when the
    package is not installed (it is in the `dev` extra)."""
    try:
        from detect_secrets.core.secrets_collection import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="xmemo-bench-policy-"))

    def scan(text: str) -> list[Finding]:
        path = folder / "snippet.txt"
        path.write_text(text, encoding="utf-8")
        with default_settings():
            found = SecretsCollection()
            found.scan_file(str(path))
        return [(s.line_number, s.secret_value or "") for _, s in found]

    return scan


def _value_lines(text: str, value: str) -> set[int]:
    at = text.find(value)
    first = text.count("\n", 0, at) + 1
    return set(range(first, first + value.count("\n") + 1))


def finding_catches(sample: SecretSample, findings: list[Finding]) -> bool:
    def caught(value: str) -> bool:
        lines = _value_lines(sample.text, value)
        return any(line in lines or (len(s) >= 4 and (s in value or value in s)) for line, s in findings)

    return all(caught(v) for v in sample.values)


def _rate(hits: int, n: int) -> float:
    return round(100 * hits / n, 1) if n else 0.0


def measure(tools: dict[str, tuple[Callable[[str], bool], Callable[[SecretSample], bool]]]) -> dict[str, Any]:
    benign, secrets = benign_corpus(), secret_corpus()
    report: dict[str, Any] = {"benign": {}, "secrets": {}, "totals": {}}
    for name, (flags, catches) in tools.items():
        fp = {c: sum(flags(t) for t in snippets) for c, snippets in benign.items()}
        kinds: dict[str, list[int]] = {}
        for s in secrets:
            kinds.setdefault(s.kind, [0, 0])
            kinds[s.kind][0] += 1
            kinds[s.kind][1] += catches(s)
        n_benign = sum(len(v) for v in benign.values())
        report["benign"][name] = {c: {"n": len(benign[c]), "false_positives": fp[c], "fp_rate_pct": _rate(fp[c], len(benign[c]))} for c in benign}
        report["secrets"][name] = {k: {"n": n, "caught": c, "detection_pct": _rate(c, n)} for k, (n, c) in kinds.items()}
        report["totals"][name] = {
            "benign_snippets": n_benign, "false_positives": sum(fp.values()), "fp_rate_pct": _rate(sum(fp.values()), n_benign),
            "secrets": len(secrets), "caught": sum(c for _, c in kinds.values()),
            "detection_pct": _rate(sum(c for _, c in kinds.values()), len(secrets)),
            "kinds": len(kinds), "kinds_fully_caught": sum(1 for n, c in kinds.values() if n == c),
        }
    return report


# 8,000-character inputs built to make label, flag and URL rules work hardest
ADVERSARIAL = [
    ("password= " * 800)[:8000], ("mysql " * 1400)[:8000], ("curl -u a " * 800)[:8000], ("token " * 1400)[:8000],
    ("https://u:p@h/ " * 600)[:8000], ("pw=ab " * 1400)[:8000], "-----BEGIN PRIVATE KEY-----\n" + "A" * 7972,
    ("Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF" * 250)[:8000], ("--password x " * 620)[:8000], ("パスワードは" * 1400)[:8000],
]


def time_per_call(repeat: int) -> dict[str, Any]:
    """Time of `apply_policy` per call over every corpus text, and on an 8,000-character
    note (the content bound), in milliseconds: wall clock, and this process's CPU time
    (steadier on a shared machine)."""
    texts = [t for snippets in benign_corpus().values() for t in snippets] + [s.text for s in secret_corpus()]
    big = "\n".join(texts)[:8000]

    def timed(inputs: list[str]) -> dict[str, Any]:
        wall, cpu = [], []
        for t in inputs:
            w, c = time.perf_counter(), time.process_time()
            apply_policy(t, "redact")
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
        return {**latency_summary(wall), "mean_ms": round(statistics.fmean(wall), 4),
                "cpu_p50_ms": latency_summary(cpu)["p50_ms"], "cpu_p95_ms": latency_summary(cpu)["p95_ms"],
                "cpu_mean_ms": round(statistics.fmean(cpu), 4)}

    return {"corpus_texts": timed(texts * repeat), "note_8000_chars": timed([big] * max(3, repeat * 3)),
            "adversarial_8000_chars": timed(ADVERSARIAL * repeat)}


def render(report: dict[str, Any]) -> str:
    tools = list(report["totals"])
    lines = ["# Capture policy: xmemo vs detect-secrets", "",
             f"Command: `{report['command']}`", "",
             "## Totals", "",
             markdown_table(["tool", "benign", "false positives", "FP rate %", "secrets", "caught", "detection %", "kinds fully caught"],
                            [[t, v["benign_snippets"], v["false_positives"], v["fp_rate_pct"], v["secrets"], v["caught"], v["detection_pct"],
                              f"{v['kinds_fully_caught']}/{v['kinds']}"] for t, v in report["totals"].items()]),
             "## False-positive rate per benign category (%)", "",
             markdown_table(["category", "n", *tools], [[c, d["n"], *(report["benign"][t][c]["fp_rate_pct"] for t in tools)]
                                                         for c, d in report["benign"][tools[0]].items()]),
             "## Detection rate per secret kind (%)", "",
             markdown_table(["kind", "n", *tools], [[k, d["n"], *(report["secrets"][t][k]["detection_pct"] for t in tools)]
                                                     for k, d in report["secrets"][tools[0]].items()]),
             "## Time per call of the policy (ms: wall clock, and CPU time of the process)", "",
             markdown_table(["input", "n", "p50", "p95", "p99", "mean", "CPU p50", "CPU p95", "CPU mean"],
                            [[k, v["n"], v["p50_ms"], v["p95_ms"], v["p99_ms"], v["mean_ms"], v["cpu_p50_ms"], v["cpu_p95_ms"], v["cpu_mean_ms"]]
                             for k, v in report["timing"].items()])]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> None:
    tools: dict[str, tuple[Callable[[str], bool], Callable[[SecretSample], bool]]] = {"xmemo": (xmemo_flags, xmemo_catches)}
    scan = detect_secrets_scanner()
    if scan is None:
        print("detect-secrets is not installed (pip install -e '.[dev]'): measuring xmemo alone")
    else:
        tools["detect-secrets"] = (lambda t: bool(scan(t)), lambda s: finding_catches(s, scan(s.text)))
    report = measure(tools)
    report["timing"] = time_per_call(args.repeat)
    report["command"] = "xmemo bench policy" + (f" --repeat {args.repeat}" if args.repeat != 5 else "")
    for name, v in report["totals"].items():
        print(f"{name:15s} false positives {v['false_positives']}/{v['benign_snippets']} ({v['fp_rate_pct']} %), "
              f"caught {v['caught']}/{v['secrets']} ({v['detection_pct']} %), kinds fully caught {v['kinds_fully_caught']}/{v['kinds']}")
    t = report["timing"]
    c, n = t["corpus_texts"], t["note_8000_chars"]
    print(f"policy time per call: p50 {c['p50_ms']} ms, p95 {c['p95_ms']} ms (CPU p50 {c['cpu_p50_ms']}, p95 {c['cpu_p95_ms']}); "
          f"8,000-char note p50 {n['p50_ms']} ms (CPU {n['cpu_p50_ms']})")
    save(args.out, "policy", report, render(report))


def register(sub) -> None:
    p = sub.add_parser("policy", help="capture policy vs detect-secrets: false positives per category, detection per kind")
    p.add_argument("--repeat", type=int, default=5, help="passes over the corpora for the per-call timing")
    p.add_argument("--out", type=Path, default=None, help="folder for policy.json and policy.md")
    p.set_defaults(func=run)
