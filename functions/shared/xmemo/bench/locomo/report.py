"""Turning an evaluation into the saved report: JSON, a markdown table, a coverage plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._embedder import caveat
from .._report import latency_summary, markdown_table
from .metrics import BUDGETS, KS
from .evaluate import Outcome
from .sweep import FLOORS

SYSTEM_ORDER = ("xmemo", "bm25", "dense")


def systems_dict(outcome: Outcome) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SYSTEM_ORDER:
        if name in outcome.systems:
            scores = outcome.systems[name]
            out[name] = {**scores.summary(), "by_category": scores.by_category()}
    if "xmemo" in out:
        out["xmemo"]["latency_ms"] = {
            "recall": latency_summary(outcome.recall_ms),
            "recall_context": latency_summary(outcome.context_ms),
            "remember": latency_summary(outcome.remember_ms),
        }
    return out


def markdown(report: dict[str, Any]) -> str:
    metrics = [f"recall@{k}" for k in KS] + [f"coverage@{b}" for b in BUDGETS]
    parts = [f"## LoCoMo retrieval ({report['questions']} questions, {report['run']['turns']} turns)\n"]
    if "profile" in report:  # the ranking profile the figures were measured with, and what an override moved
        p = report["profile"]
        moved = f"; overridden: {', '.join(p['overridden'])}" if p.get("overridden") else ""
        parts.append(f"Ranking profile: {p['name']} version {p['version']}{moved}\n")
    if warning := caveat(report["run"], "`--sweep` moves them"):
        parts.append(warning + "\n")
    rows = [[name, *(f"{sys.get(m, 0):.3f}" for m in metrics)] for name, sys in report["systems"].items()]
    parts.append(markdown_table(["system", *metrics], rows))
    tokens = [[name, *(sys.get(f"tokens@{b}", "") for b in BUDGETS)] for name, sys in report["systems"].items()]
    parts.append("\nMean tokens used per budget:\n\n" + markdown_table(["system", *map(str, BUDGETS)], tokens))
    cat_rows = []
    for name, sys in report["systems"].items():
        for cat, row in sys["by_category"].items():
            cat_rows.append([name, cat, row["questions"], *(f"{row[f'recall@{k}']:.3f}" for k in KS), f"{row['coverage@1500']:.3f}"])
    parts.append(
        "\nBy category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop):\n\n"
        + markdown_table(["system", "category", "questions", *(f"recall@{k}" for k in KS), "coverage@1500"], cat_rows)
    )
    lat = report["systems"].get("xmemo", {}).get("latency_ms", {})
    if lat:
        parts.append(
            "\nXMemo latency in-process (ms; "
            + ("query vectors from --cache, embedding excluded" if report["run"].get("vector_cache") else "query embedding included")
            + "; recall_context timed at its default budget):\n\n"
            + markdown_table(
                ["tool", "n", "p50", "p95", "p99"],
                [[tool, s["n"], s["p50_ms"], s["p95_ms"], s["p99_ms"]] for tool, s in lat.items()],
            )
        )
    abst = report.get("abstention")
    if abst:
        parts.append(
            "\nAbstention (XMemo `recall` answering nothing; foreign = another conversation's questions asked of this "
            "store, nonsense = random letters):\n\n"
            + markdown_table(["asked", "questions", "empty share"], [[k, v["questions"], f"{v['empty_share']:.3f}"] for k, v in abst.items()])
        )
    sweep = report.get("sweep")
    if sweep:
        parts.append(_sweep_markdown(sweep, report.get("settings", {})))
    multi = report.get("multilingual")
    if multi:
        rows = []
        for name, sys in multi["systems"].items():
            rows.append([name, "all", multi["questions"], *(f"{sys[f'recall@{k}']:.3f}" for k in KS)])
            for cat, row in sys["by_category"].items():
                rows.append([name, cat, row["questions"], *(f"{row[f'recall@{k}']:.3f}" for k in KS)])
        parts.append(
            f"\nMultilingual check ({multi['questions']} questions over {multi['memories']} French/Korean memories):\n\n"
            + markdown_table(["system", "language", "questions", *(f"recall@{k}" for k in KS)], rows)
        )
    parity = report.get("parity")
    if parity:
        rows = [[name, *(f"{figs[m]:.3f}" for m in figs)] for name, figs in parity["metrics"].items()]
        rows.append(["difference", *(f"{d:+.3f}" for d in parity["difference"].values())])
        parts.append(
            f"\nLexical-only parity ({parity['questions']} questions, embedder `none` on both stores; "
            f"target {parity['target']}: {'met' if parity['within_target'] else 'NOT met'}):\n\n"
            + markdown_table(["store", *parity["difference"]], rows)
        )
    run = report["run"]
    parts.append(
        f"\nRun: {run['seconds']:.0f} s, store {run.get('store', 'sqlite (embedded)')}, semantic leg "
        f"{run.get('semantic', 'on')}, embedder `{run['embedder']}`, data `{run['data']}`"
        f"{' with image captions' if run.get('captions') else ''}; "
        "figures from a 2-core machine shared with other work (latency is noisy).\n"
    )
    return "".join(parts)


def _sweep_markdown(sweep: dict[str, Any], settings: dict[str, Any]) -> str:
    """The floors' curve, the row the rule chose and whether it is this run's setting."""
    recalls = [k for k in sweep["rows"][0] if "_recall@" in k]
    rows = [
        [
            *("off" if r[name] < 0 else r[name] for name in FLOORS),
            *(f"{r[k]:.4f}" for k in recalls), f"{r['foreign_empty']:.3f}", f"{r['nonsense_empty']:.3f}",
        ]
        for r in sweep["rows"]
    ]
    chosen = sweep["chosen"]
    current = {name: settings.get(name) for name in FLOORS}
    verdict = (
        "no row qualifies" if chosen is None
        else "chosen: " + ", ".join(f"{name} {value}" for name, value in chosen.items())
        + (" (this run's setting)" if chosen == current else " (this run used " + ", ".join(map(str, current.values())) + ")")
    )
    return (
        f"\nRelevance floors swept (`--sweep`; rule: nonsense empty 1.000, LoCoMo recall@10 at most {sweep['max_recall_loss']} "
        "below floors off and the French/Korean recall@5 and the seeds' recall@3 nothing, then the most foreign "
        "questions empty):\n\n"
        + markdown_table([*(n.replace("_", " ") for n in FLOORS), *(k.replace("_", " ") for k in recalls), "foreign empty", "nonsense empty"], rows)
        + f"\n{verdict}\n"
    )


def plot(report: dict[str, Any], path: Path) -> None:
    """Coverage against mean tokens used, one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for name, sys in report["systems"].items():
        xs = [sys.get(f"tokens@{b}", b) for b in BUDGETS]
        ys = [sys[f"coverage@{b}"] for b in BUDGETS]
        ax.plot(xs, ys, marker="o", label=name)
    ax.set_xlabel("tokens of context used (mean; budgets 500, 1000, 1500, 3000)")
    ax.set_ylabel("evidence coverage")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"LoCoMo: evidence in the packed context ({report['questions']} questions)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
