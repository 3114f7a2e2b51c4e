"""The import statements of the `xmemo` package, read from its source files (never by
importing it), for the tests that check the package's shape: no import cycle, and every
import covered by the dependencies of the place that runs it (layer, `[local]`, `[bench]`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests import ROOT

PACKAGE = ROOT / "functions" / "shared" / "xmemo"


@dataclass(frozen=True)
class Import:
    """One imported name as written in `module` at `line`. `lazy`: inside a function
    body (runs only when called); `typing`: under `if TYPE_CHECKING:` (never runs)."""

    module: str
    target: str
    line: int
    lazy: bool
    typing: bool

    @property
    def top(self) -> str:
        return self.target.split(".")[0]

    def __str__(self) -> str:
        kind = "typing-only " if self.typing else "lazy " if self.lazy else ""
        return f"{self.module}:{self.line} {kind}import {self.target}"


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name → source file, for every module of the package."""
    out = {}
    for f in sorted(package.rglob("*.py")):
        parts = list(f.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """Every import in the file. `from X import a` yields `X.a` when that is a module of
    the package, else `X` (a name defined in X)."""
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool, typing: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(module, a.name, node.lineno, lazy, typing) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.append(Import(module, sub if sub in known else target, node.lineno, lazy, typing))
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, lazy, True)
            for child in node.orelse:
                visit(child, lazy, typing)
            return
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner, typing)

    visit(ast.parse(path.read_text(), str(path)), False, False)
    return found


def all_imports(package: Path = PACKAGE) -> list[Import]:
    known = modules(package)
    return [imp for name, path in known.items() for imp in imports_of(name, path, known)]
