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
import bisect
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ..policy import apply_policy
from ._policy_corpus import SecretSample, at_scale, benign_corpus, secret_corpus
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


def detect_secrets_batch(texts: list[str], batch: int = 5000) -> list[bool] | None:
    """Which texts detect-secrets reports anything in (default plugins and filters), scanned
    `batch` texts to a file and mapped back by line: per-text files would take hours at scale."""
    try:
        from detect_secrets.core.secrets_collection import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="xmemo-bench-policy-scale-"))
    flagged = [False] * len(texts)
    for at in range(0, len(texts), batch):
        chunk = [t.replace("\r", " ") for t in texts[at : at + batch]]
        first_lines, line = [], 1
        for t in chunk:
            first_lines.append(line)
            line += t.count("\n") + 1
        path = folder / "batch.txt"
        path.write_text("\n".join(chunk) + "\n", encoding="utf-8")
        with default_settings():
            found = SecretsCollection()
            found.scan_file(str(path))
        for _, s in found:
            flagged[at + bisect.bisect_right(first_lines, s.line_number) - 1] = True
    return flagged


def per_100k(changed: int, n: int) -> float:
    return round(100_000 * changed / n, 1) if n else 0.0


def measure_at_scale(rows: list[dict], manifest: dict, with_detect_secrets: bool = True) -> dict[str, Any]:
    """The benign corpus at scale: texts changed by the policy (and flagged by detect-secrets),
    in total, per source, and per 100,000; every text the policy changed is listed."""
    texts = [r["text"] for r in rows]
    started = time.process_time()
    changed = [i for i, t in enumerate(texts) if xmemo_flags(t)]
    cpu_s = time.process_time() - started
    sources = sorted({r["source"] for r in rows})
    n_by = {src: sum(1 for r in rows if r["source"] == src) for src in sources}
    report: dict[str, Any] = {
        "texts": len(texts), "parts": manifest.get("parts", n_by), "licences": manifest.get("licences", {}),
        "colliding_texts": manifest.get("colliding_texts"), "corpus_sha256": manifest.get("sha256"),
        "xmemo": {"changed": len(changed), "per_100k": per_100k(len(changed), len(texts)), "cpu_s": round(cpu_s, 1),
                  "by_source": {src: sum(1 for i in changed if rows[i]["source"] == src) for src in sources}},
        "changed_texts": [{"source": rows[i]["source"], "text": texts[i][:300],
                           "after": apply_policy(texts[i], "redact").content[:300]} for i in changed],
    }
    flagged = detect_secrets_batch(texts) if with_detect_secrets else None
    if flagged is not None:
        hits = [i for i, f in enumerate(flagged) if f]
        report["detect-secrets"] = {"changed": len(hits), "per_100k": per_100k(len(hits), len(texts)),
                                    "by_source": {src: sum(1 for i in hits if rows[i]["source"] == src) for src in sources}}
    return report


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
             *_render_at_scale(report),
             "## Time per call of the policy (ms: wall clock, and CPU time of the process)", "",
             markdown_table(["input", "n", "p50", "p95", "p99", "mean", "CPU p50", "CPU p95", "CPU mean"],
                            [[k, v["n"], v["p50_ms"], v["p95_ms"], v["p99_ms"], v["mean_ms"], v["cpu_p50_ms"], v["cpu_p95_ms"], v["cpu_mean_ms"]]
                             for k, v in report["timing"].items()])]
    return "\n".join(lines)


def _render_at_scale(report: dict[str, Any]) -> list[str]:
    scale = report.get("at_scale")
    if not scale:
        return []
    tools = [t for t in ("xmemo", "detect-secrets") if t in scale]
    caught = report["totals"]
    lines = ["## Benign text at scale: texts changed per 100,000", "",
             f"{scale['texts']:,} texts ({', '.join(f'{k} {v:,}' for k, v in scale['parts'].items())}); "
             f"{scale['colliding_texts']:,} of them name pass, key, token, secret, credential, password or auth.", "",
             markdown_table(["tool", "benign changed", "per 100,000", "secrets caught (project corpora)"],
                            [[t, scale[t]["changed"], scale[t]["per_100k"], f"{caught[t]['caught']}/{caught[t]['secrets']}" if t in caught else "-"]
                             for t in tools]),
             "Per source:", "",
             markdown_table(["source", "texts", *tools], [[src, n, *(scale[t]["by_source"].get(src, 0) for t in tools)]
                                                          for src, n in scale["parts"].items()]),
             "Sources and licences:", "", *(f"- `{k}`: {v}" for k, v in scale["licences"].items()), "",
             "Texts the policy changed:", ""]
    lines += [f"- `{c['source']}`: {c['text'][:160]!r} → {c['after'][:160]!r}" for c in scale["changed_texts"]] or ["- none"]
    return [*lines, ""]


def run(args: argparse.Namespace) -> None:
    tools: dict[str, tuple[Callable[[str], bool], Callable[[SecretSample], bool]]] = {"xmemo": (xmemo_flags, xmemo_catches)}
    scan = detect_secrets_scanner()
    if scan is None:
        print("detect-secrets is not installed (pip install -e '.[dev]'): measuring xmemo alone")
    else:
        tools["detect-secrets"] = (lambda t: bool(scan(t)), lambda s: finding_catches(s, scan(s.text)))
    report = measure(tools)
    if args.at_scale:
        parts = tuple(args.at_scale_parts.split(",")) if args.at_scale_parts else at_scale.PARTS
        rows, manifest = at_scale.load(args.at_scale_cache, args.at_scale_locomo, parts=parts)
        if "locomo" in parts and not args.at_scale_locomo.exists():
            print(f"LoCoMo not found at {args.at_scale_locomo}: the corpus has no conversation part (--at-scale-locomo)")
        report["at_scale"] = measure_at_scale(rows, manifest, with_detect_secrets=scan is not None)
        for name in ("xmemo", "detect-secrets"):
            if name in report["at_scale"]:
                v = report["at_scale"][name]
                print(f"{name:15s} benign at scale: {v['changed']} of {report['at_scale']['texts']:,} texts changed ({v['per_100k']} per 100,000)")
    report["timing"] = time_per_call(args.repeat)
    report["command"] = "xmemo bench policy" + (f" --repeat {args.repeat}" if args.repeat != 5 else "") + (" --at-scale" if args.at_scale else "")
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
    p.add_argument("--at-scale", action="store_true",
                   help="also run the benign corpus at scale (over 100,000 texts, built once into --at-scale-cache)")
    p.add_argument("--at-scale-cache", type=Path, default=at_scale.DEFAULT_CACHE, help="where the benign corpus at scale is built")
    p.add_argument("--at-scale-locomo", type=Path, default=at_scale.DEFAULT_LOCOMO,
                   help="LoCoMo-format JSON whose conversations join the corpus (default: ../shared/data/locomo/locomo_dev.json beside the repository)")
    p.add_argument("--at-scale-parts", default="", help=f"comma-separated parts to build (default all: {','.join(at_scale.PARTS)})")
    p.set_defaults(func=run)
