"""Architecture checks that complement the import-linter contracts in `make lint`."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import grimp
import pytest

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
            if target != prefix and not target.startswith(prefix + "."):
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


@functools.cache
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("planshell", exclude_type_checking_imports=True)


# Every package of planshell, found on disk: a new package is checked without being named here.
PACKAGES = sorted(
    ".".join(("planshell", *init.parent.relative_to(PACKAGE).parts))
    for init in PACKAGE.rglob("__init__.py")
    if init.parent != PACKAGE
)


def test_every_package_is_checked_for_cycles() -> None:
    assert {"planshell.ui", "planshell.plan", "planshell.shell", "planshell.sandbox"} <= set(
        PACKAGES
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    """No module of a package imports its importers (between packages, the layers forbid it).

    In ``ui/``, attributes and methods go down, messages up. Imports inside
    ``if TYPE_CHECKING:`` are left out: they never run, and a screen naming its
    app's class for the type checker is not a dependency.
    """
    assert _cycles(_graph(), package) == []


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


# Modules that may open files without the safe reader of fsutil.py
# (read_project_file / read_user_file), and why. Every other module that opens
# a file fails the test below: a file planshell opens by itself from a project
# (AGENTS.md, plans, .planshell/config.toml, ignore files) is repository-chosen
# bytes and goes through the reader, which refuses FIFOs, devices, /proc and
# links out of the project, and stops at a cap.
OPENS_FILES_ITSELF: dict[str, str] = {
    "fsutil.py": "the safe reader itself, and atomic writes",
    "agent/session.py": "planshell's own session logs, in the user data dir",
    "ui/widgets/history.py": "planshell's own prompt history, in the user data dir",
    "ui/screens/review.py": "the temporary copy it wrote for $EDITOR; `.browser.open` is a browser",
    "ui/browser_review.py": "webbrowser.open: a URL, not a file",
    "ui/widgets/checklist.py": "its CSS, shipped inside the package",
    "review_web/server.py": "its assets, shipped inside the package",
    "tools/read.py": "the read tool: ToolContext.resolve containment + require_file",
    "tools/grep_query.py": "grep's binary sniff, of files below a ToolContext.resolve path",
    "tools/grep_python.py": "the Python grep engine: files its walk found below that path",
    "tools/shell.py": "/proc/<pid>/stat of the commands it started",
    "plan/receipt.py": "hashes files its own walk lstat()ed as regular; nothing is shown",
}
_OPENERS = frozenset({"open", "fdopen", "read_bytes", "read_text"})


def _opens_files(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in _OPENERS:
            lines.append(node.lineno)
    return lines


def test_files_are_opened_through_the_safe_reader() -> None:
    """No module opens a file but the allowlisted ones: the rest use ``fsutil``'s reader."""
    opening = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = _opens_files(ast.parse(path.read_text()))
        if lines:
            opening[path.relative_to(PACKAGE).as_posix()] = lines
    unlisted = {name: lines for name, lines in opening.items() if name not in OPENS_FILES_ITSELF}
    assert unlisted == {}, "open project files with planshell.fsutil.read_project_file"
    stale = sorted(set(OPENS_FILES_ITSELF) - set(opening))
    assert stale == [], "these modules no longer open files: drop them from the allowlist"


def test_no_import_cycle_anywhere() -> None:
    """No cycle in the whole package, between packages or top-level modules too.

    The tests above look inside one package each; config.py and trust.py
    imported each other (at call time) between them (issue 23 item 2).
    """
    graph = grimp.build_graph("planshell", exclude_type_checking_imports=True)
    assert _cycles(graph, "planshell") == []


def test_the_old_guard_address_still_scores() -> None:
    """External scorers name planshell.plan.bash_guard:is_read_only; it is the real guard."""
    from planshell.plan import bash_guard
    from planshell.shell import guard

    assert bash_guard.is_read_only is guard.is_read_only
    assert bash_guard.is_read_only("ls -la") and not bash_guard.is_read_only("rm -rf x")
