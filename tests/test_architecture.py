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
    "agent/session_peek.py": "the newest session log's mode, in the user data dir",
    "mcp/client.py": "os.devnull, for a stdio server's stderr",
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


# --- the test suite itself ---------------------------------------------------------------

TESTS = Path(__file__).resolve().parent


def _module_name(path: Path) -> str:
    """``tests/ui/test_x.py`` -> ``tests.ui.test_x``; a package's ``__init__.py`` -> the package."""
    parts = path.relative_to(TESTS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(module: str, is_package: bool, tree: ast.AST) -> list[tuple[int, str]]:
    """Each dotted name an import statement anywhere in ``tree`` may load, with its line.

    ``from a.b import c`` may load ``a.b`` or the submodule ``a.b.c``: both are listed.
    Relative imports are resolved against ``module``.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            if node.module:
                names.append((node.lineno, base))
            names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return names


def _is_test_module(name: str) -> bool:
    parts = name.split(".")
    if parts[0].startswith("test_"):  # as pytest's rootdir-relative sys.path would find it
        return True
    return parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:])


def _test_module_imports(module: str, is_package: bool, source: str) -> list[str]:
    """``line N: module`` for each import of a test module in ``source`` (one per statement)."""
    found: dict[int, str] = {}
    for line, name in _imported_names(module, is_package, ast.parse(source)):
        if _is_test_module(name):
            found.setdefault(line, name)
    return [f"line {line}: {name}" for line, name in sorted(found.items())]


@pytest.mark.parametrize(
    "source",
    [
        "from tests.ui.test_ui_plan import PLAN",
        "import tests.sandbox.test_sandbox",
        "import tests.test_cli_provider as cli",
        "from tests.ui import test_ui_picker",
        "from .test_ui_review import ReviewHost",
        "from . import test_ui_review",
        "from ..plan.test_plan_mode import make",
        "from ..test_cli_provider import _run",
        "def f():\n    from tests.ui.test_ui_review import SHORT",
        "import test_cli_provider",
    ],
)
def test_the_test_import_check_catches(source: str) -> None:
    """Absolute, relative and function-local imports of a test module are all found."""
    assert _test_module_imports("tests.ui.helpers", False, source) != []


@pytest.mark.parametrize(
    "source",
    [
        "from tests.ui.review_helpers import ReviewHost",
        "from tests.engine_helpers import make_runtime",
        "from . import review_helpers",
        "from .picker_helpers import PickerHost",
        "import pytest",
        "from planshell.ui.app import PlanshellApp",
    ],
)
def test_the_test_import_check_passes_helpers(source: str) -> None:
    assert _test_module_imports("tests.ui.helpers", False, source) == []


def test_a_test_module_never_imports_another_test_module() -> None:
    """CONTRIBUTING.md: shared test code lives in helpers modules and fixtures in conftest.py."""
    modules = sorted(TESTS.rglob("*.py"))
    assert TESTS / "ui" / "test_ui_plan.py" in modules  # the walk reaches the folders
    found = {}
    for path in modules:
        bad = _test_module_imports(
            _module_name(path), path.name == "__init__.py", path.read_text(encoding="utf-8")
        )
        if bad:
            found[path.relative_to(TESTS.parent).as_posix()] = bad
    assert found == {}, "move what these share into a *_helpers.py module or a conftest.py"
