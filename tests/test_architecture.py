"""Architecture checks that complement the import-linter contracts in `make lint`."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parent.parent / "planshell"


def _cycles(graph: grimp.ImportGraph, prefix: str) -> list[list[str]]:
    """Every import cycle among modules under ``prefix`` (depth-first, each reported once)."""
    modules = sorted(m for m in graph.modules if m == prefix or m.startswith(prefix + "."))
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.find_modules_directly_imported_by(module)):
            if not target.startswith(prefix):
                continue
            if state.get(target) == 1:
                cycle = path[path.index(target) :]
                if frozenset(cycle) not in seen:
                    seen.add(frozenset(cycle))
                    found.append([*cycle, target])
            elif target not in state:
                visit(target, path)
        path.pop()
        state[module] = 2

    for module in modules:
        if module not in state:
            visit(module, [])
    return found


def test_no_import_cycle_inside_the_ui() -> None:
    """Attributes and methods go down, messages up: no module of ui/ imports its importers.

    Imports inside ``if TYPE_CHECKING:`` are left out: they never run, and a
    screen naming its app's class for the type checker is not a dependency.
    """
    graph = grimp.build_graph("planshell", exclude_type_checking_imports=True)
    assert _cycles(graph, "planshell.ui") == []


def test_no_import_cycle_in_the_engine() -> None:
    graph = grimp.build_graph("planshell", exclude_type_checking_imports=True)
    for layer in ("planshell.agent", "planshell.plan", "planshell.tools", "planshell.llm"):
        assert _cycles(graph, layer) == [], layer


def test_views_dispatch_on_event_classes_not_names() -> None:
    """`match event: case ModeChanged():`, never `type(event).__name__` strings."""
    offenders = []
    for path in (PACKAGE / "ui").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            subject = node.subject if isinstance(node, ast.Match) else None
            if isinstance(subject, ast.Attribute) and subject.attr == "__name__":
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
