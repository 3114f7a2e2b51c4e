"""No import cycle inside `functions/shared/xmemo`, read from the modules' own import
statements: module-level, lazy (inside functions) and type-only ones alike, since a cycle
hidden in a function or behind `TYPE_CHECKING` is still two modules that need each other.
A package importing its own submodules (re-exports in `__init__`) is not a cycle."""

from __future__ import annotations

from tests.imports import Import, all_imports, modules


def graph(imports: list[Import], known: set[str]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in known}
    for imp in imports:
        if imp.target in known and imp.target != imp.module and not imp.target.startswith(imp.module + "."):
            edges[imp.module].add(imp.target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge of a depth-first walk (empty exactly when the graph is acyclic)."""
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = "open"
        stack.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == "open":
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def test_the_reader_sees_the_package():
    """The check below is not vacuous: the reader finds the modules and their edges."""
    known = set(modules())
    edges = graph(all_imports(), known)
    assert {"xmemo", "xmemo.tools", "xmemo.store.sqlite", "xmemo.mcp.transport", "xmemo.local.server"} <= known
    assert "xmemo.models" in edges["xmemo.tools"]
    assert sum(len(d) for d in edges.values()) > 100


def test_cycles_are_found_when_present():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    found = cycles(graph(all_imports(), set(modules())))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)
