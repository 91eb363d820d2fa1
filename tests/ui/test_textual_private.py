"""planshell never overrides, shadows or calls Textual's private API.

A private Textual name reused in a planshell subclass silently replaces
Textual's own: ``PlanView._render(index)`` shadowed ``Widget._render()`` and
copying a selection crashed. Private names also change between Textual
releases without notice. So:

* no planshell class derived from a Textual class defines (in its body or as
  ``self._x = ...``) a single-underscore name that a Textual class in its MRO
  defines;
* nothing in planshell imports a private Textual module (``textual._context``…);
* no new code reads a private Textual attribute that planshell does not define
  itself (the few known uses are listed below, each with its reason, and the
  list may only shrink).
"""

from __future__ import annotations

import ast
import collections
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import textual.app
import textual.screen
import textual.widget
import textual.widgets

import planshell
import planshell.ui

PLANSHELL = Path(planshell.__file__).parent

# Reads of Textual internals still to replace: (file, name) -> why it is there.
KNOWN_PRIVATE_READS: dict[tuple[str, str], str] = {
    ("ui/app.py", "_validate_theme"): "theme set before start-up without the watcher's re-parse",
    ("ui/app.py", "_refresh_truecolor_filter"): "same: the ANSI filter for that early theme",
    ("ui/screens/help.py", "_keymap"): "the user's key remapping; Textual has no public getter",
}

# namedtuple methods are public API despite the underscore (Offset._replace…)
_NAMEDTUPLE_API = {name for name in dir(collections.namedtuple("T", "a")) if name.startswith("_")}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in _NAMEDTUPLE_API


def _is_textual(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "textual"


def _is_planshell(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "planshell"


def _ui_modules() -> list[object]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(planshell.ui.__path__, "planshell.ui.")
    ]


def _classes_in(namespace: object, seen: set[type]) -> Iterator[type]:
    for value in list(vars(namespace).values()):
        if inspect.isclass(value) and _is_planshell(value) and value not in seen:
            seen.add(value)
            yield value
            yield from _classes_in(value, seen)  # nested classes (messages…)


def planshell_ui_classes() -> list[type]:
    seen: set[type] = set()
    classes: list[type] = []
    for module in _ui_modules():
        classes.extend(_classes_in(module, seen))
    return classes


@cache
def _self_assigned(cls: type) -> frozenset[str]:
    """Private names assigned as ``self._x = ...`` in ``cls``'s own source."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for sub in ast.walk(target):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == "self"
                    and _private(sub.attr)
                ):
                    names.add(sub.attr)
    return frozenset(names)


@cache
def _textual_names(cls: type) -> frozenset[str]:
    """Private names a Textual class defines: class attributes and ``self._x``."""
    return frozenset(name for name in vars(cls) if _private(name)) | _self_assigned(cls)


@cache
def _automatic(base: type) -> frozenset[str]:
    """Private names Textual puts on *every* subclass of ``base`` (bindings, CSS…)."""
    probe = type("Probe", (base,), {"__module__": __name__})
    return frozenset(name for name in vars(probe) if _private(name))


def _own_names(cls: type, first_textual: type) -> frozenset[str]:
    written = {name for name in vars(cls) if _private(name)} - _automatic(first_textual)
    return frozenset(written) | _self_assigned(cls)


def shadowed_textual_names(cls: type) -> dict[str, str]:
    """{name: "PlanshellClass shadows TextualClass"} for ``cls`` and its planshell bases."""
    textual_bases = [base for base in cls.__mro__ if _is_textual(base)]
    if not textual_bases:
        return {}
    theirs: dict[str, type] = {}
    for base in reversed(textual_bases):
        for name in _textual_names(base):
            theirs[name] = base
    clashes: dict[str, str] = {}
    for own in cls.__mro__:
        if not _is_planshell(own):
            continue
        for name in _own_names(own, textual_bases[0]) & theirs.keys():
            clashes[name] = f"{own.__qualname__} shadows {theirs[name].__qualname__}"
    return clashes


def test_no_planshell_class_reuses_a_private_textual_name() -> None:
    classes = planshell_ui_classes()
    assert len(classes) > 30  # the walk found the UI (screens, widgets, apps)
    problems = [
        f"{cls.__module__}.{cls.__qualname__}.{name}: {why}"
        for cls in classes
        for name, why in sorted(shadowed_textual_names(cls).items())
    ]
    assert not problems, "private Textual names reused:\n" + "\n".join(problems)


def test_the_shadowing_check_catches_method_and_attribute_clashes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check itself can fail: the bug it was written for, and an instance clash."""
    from textual.scroll_view import ScrollView
    from textual.widget import Widget

    # posing as planshell code whose source is this file
    monkeypatch.setitem(sys.modules, "planshell.ui.example", sys.modules[__name__])

    class Shadowing(ScrollView):
        __module__ = "planshell.ui.example"

        def _render(self, index: int) -> None:  # the old PlanView bug
            pass

    class Clobbering(Widget):
        __module__ = "planshell.ui.example"

        def __init__(self) -> None:
            super().__init__()
            self._nodes = None  # Widget's children

    assert "_render" in shadowed_textual_names(Shadowing)
    assert "_nodes" in shadowed_textual_names(Clobbering)


# --------------------------------------------------------------------- imports

_PRIVATE_IMPORT = re.compile(
    r"^\s*(from\s+textual(\.\w+)*\._\w*|import\s+textual(\.\w+)*\._\w*)", re.M
)


def _planshell_sources() -> list[Path]:
    return sorted(PLANSHELL.rglob("*.py"))


def private_textual_imports(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [match.group(0).strip() for match in _PRIVATE_IMPORT.finditer(text)]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "textual":
            found += [f"from {node.module} import {a.name}" for a in node.names if _private(a.name)]
    return found


def test_nothing_imports_private_textual_modules() -> None:
    problems = [
        f"{path.relative_to(PLANSHELL)}: {line}"
        for path in _planshell_sources()
        for line in private_textual_imports(path)
    ]
    assert not problems, "\n".join(problems)


def test_the_import_check_catches_the_old_messages_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n    from textual._context import active_app\n"
        "from textual import _compositor\nimport textual._ansi_theme\nfrom textual.app import App\n"
    )
    assert private_textual_imports(sample) == [
        "from textual._context",
        "import textual._ansi_theme",
        "from textual import _compositor",
    ]


# ----------------------------------------------------------------------- reads


@cache
def _textual_private_universe() -> frozenset[str]:
    """Private names of the Textual classes planshell touches (its bases, App, widgets)."""
    classes: set[type] = {textual.app.App, textual.screen.Screen, textual.widget.Widget}
    for name in textual.widgets.__all__:
        value = getattr(textual.widgets, name)
        if inspect.isclass(value):
            classes.add(value)
    for cls in planshell_ui_classes():
        classes.update(base for base in cls.__mro__ if _is_textual(base))
    names: set[str] = set()
    for cls in list(classes):
        for base in cls.__mro__:
            if _is_textual(base):
                names |= _textual_names(base)
    return frozenset(names)


def _planshell_defined_names() -> set[str]:
    """Every name planshell defines itself: functions, classes, assignments, parameters."""
    names: set[str] = set()
    for path in _planshell_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Attribute):
                            names.add(sub.attr)
                        elif isinstance(sub, ast.Name):
                            names.add(sub.id)
    return names


def private_textual_reads() -> set[tuple[str, str]]:
    universe = _textual_private_universe()
    ours = _planshell_defined_names()
    reads: set[tuple[str, str]] = set()
    for path in _planshell_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and node.attr in universe
                and node.attr not in ours
            ):
                reads.add((path.relative_to(PLANSHELL).as_posix(), node.attr))
    return reads


def test_no_new_reads_of_private_textual_attributes() -> None:
    reads = private_textual_reads()
    new = sorted(reads - KNOWN_PRIVATE_READS.keys())
    gone = sorted(KNOWN_PRIVATE_READS.keys() - reads)
    assert not new, f"private Textual attributes read: {new}"
    assert not gone, f"no longer read, drop from KNOWN_PRIVATE_READS: {gone}"


# ------------------------------------------------------- replacements behave


async def test_transcript_takes_code_colours_from_its_own_app() -> None:
    """The transcript reads its app's theme through ``self.app``, not ``textual._context``."""
    from textual.app import App, ComposeResult

    from planshell.ui.widgets.transcript import Transcript

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield Transcript()

    app = Host()
    async with app.run_test() as pilot:
        transcript = app.query_one(Transcript)
        app.theme = "textual-light"
        await pilot.pause()
        light = transcript._get_look().markdown.dark
        app.theme = "textual-dark"
        await pilot.pause()
        dark = transcript._get_look().markdown.dark
    assert (light, dark) == (False, True)
