"""The plan's declared scope: the files an approved plan says it will touch.

During EXECUTE the approval gate treats this as a fence (docs/plan-mode.md,
"Scope"): in accept-edits an edit or write outside it asks, in auto it runs
and is flagged. The scope is read from the *approved text* only (the
controller's approval record), so editing the plan file cannot widen it.

What counts: backticked code spans in the Context and Steps sections (and any
section titled "Files…", e.g. "Files to change"), including their
subsections, and in the Amendments section (``amend.py``: a person approved
each entry, so the scope follows an approved amendment). Fenced code blocks are commands, not scope. A span is an entry
when it looks like a path: no spaces, no URL, not an option. Three kinds:

* ``src/app.py`` an exact path;
* ``src/app/`` a directory (the trailing slash), covering everything under it;
* ``src/**/*.py`` a glob (``*``, ``?``, ``[...]``, ``{a,b}``, ``**``), as in
  permission rules.

``./`` is dropped; an absolute path or one with a ``..`` component covers
nothing (a plan cannot fence in files outside the project).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planshell.markdown.parse import parse_tokens
from planshell.plan.document import PlanDocument, Section, parse_plan
from planshell.tools.base import ToolError
from planshell.tools.walk import glob_to_regex

__all__ = ["Scope", "normalise_entry", "path_like", "plan_scope", "scope_sections"]

_GLOB_CHARS = frozenset("*?[{")
_MAX_ENTRY = 300  # longer spans are code, not paths
# Characters a path entry may hold. Anything else (spaces, quotes, parentheses,
# "=", "<", "$") marks the span as code, a command or prose.
_PATH_CHARS = re.compile(r"[A-Za-z0-9._\-/*?\[\]{},@+~#%!^]+")
_LINE_SUFFIX = re.compile(r":\d+(?:[-:]\d+)?$")  # src/x.py:42, src/x.py:3-9


@dataclass(frozen=True)
class Scope:
    """The files a plan declares: exact paths, directories (``dir/``) and globs."""

    paths: frozenset[str] = frozenset()
    directories: tuple[str, ...] = ()  # each ends with "/"
    globs: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """A plan that names no files: the gate then has no fence to apply."""
        return not (self.paths or self.directories or self.globs)

    def entries(self) -> list[str]:
        """Every entry, for display (sorted exact paths, then directories, then globs)."""
        return [*sorted(self.paths), *self.directories, *self.globs]

    def covers(self, relative_path: str) -> bool:
        """Whether the project-relative ``relative_path`` is inside the scope.

        The path is normalised like an entry; an absolute or ``..`` path is never covered.
        """
        rel = normalise_entry(relative_path)
        if rel is None or rel.endswith("/"):
            return False
        if rel in self.paths:
            return True
        if any(rel.startswith(directory) for directory in self.directories):
            return True
        return any(_compiled(glob).fullmatch(rel) is not None for glob in self.globs)


def normalise_entry(text: str) -> str | None:
    """``text`` as a project-relative entry, or None when it cannot be one.

    Leading ``./`` and repeated slashes go; ``/abs``, ``~/x``, ``C:\\x`` and any
    ``..`` component are refused. A trailing ``/`` (a directory) is kept.
    """
    raw = text.strip()
    if not raw or raw.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", raw):
        return None
    directory = raw.endswith("/")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    joined = "/".join(parts)
    return joined + "/" if directory else joined


def _path_like(span: str) -> str | None:
    """The entry a code span names, or None when it is code or prose, not a path."""
    span = span.strip()
    if not span or len(span) > _MAX_ENTRY or "://" in span or span.startswith("-"):
        return None
    span = span.split("::", 1)[0]  # tests/test_x.py::test_name
    span = _LINE_SUFFIX.sub("", span)
    if not _PATH_CHARS.fullmatch(span):
        return None
    return normalise_entry(span)


def path_like(span: str) -> str | None:
    """The entry a code span names, or None: the same rule ``plan_scope`` uses (plan lint too)."""
    return _path_like(span)


def _compiled(glob: str) -> re.Pattern[str]:
    return _GLOB_CACHE.get(glob) or _GLOB_CACHE.setdefault(glob, glob_to_regex(glob))


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def _build(entries: list[str]) -> Scope:
    paths: set[str] = set()
    directories: list[str] = []
    globs: list[str] = []
    for text in entries:
        entry = normalise_entry(text)
        if entry is None:
            continue
        if _GLOB_CHARS.intersection(entry):
            try:
                _compiled(entry)
            except ToolError:  # "{a," never closed: not a glob a plan can mean
                continue
            if entry not in globs:
                globs.append(entry)
        elif entry.endswith("/"):
            if entry not in directories:
                directories.append(entry)
        else:
            paths.add(entry)
    return Scope(frozenset(paths), tuple(directories), tuple(globs))


def _normal_title(title: str) -> str:
    return title.strip().strip("*_`").strip().rstrip(":").strip().casefold()


def _is_scope_title(title: str) -> bool:
    normal = _normal_title(title)
    return (
        normal in ("context", "steps", "amendments")
        or normal.endswith(" steps")
        or normal.startswith("files")
        or normal.endswith(" files")
    )


def scope_sections(doc: PlanDocument) -> list[Section]:
    """The sections whose code spans declare scope (with their subsections)."""
    chosen: list[Section] = []
    open_level: int | None = None  # level of the scope heading we are under
    for section in doc.sections:
        if not section.level:
            continue
        if open_level is not None and section.level > open_level:
            chosen.append(section)
            continue
        open_level = None
        if _is_scope_title(section.title):
            open_level = section.level
            chosen.append(section)
    return chosen


def _code_spans(text: str) -> list[str]:
    spans: list[str] = []
    for token in parse_tokens(text):
        for child in token.children or ():
            if child.type == "code_inline":
                spans.append(child.content)
    return spans


def plan_scope(text: str) -> Scope:
    """The scope the plan ``text`` declares (total: any text gives a Scope)."""
    doc = parse_plan(text)
    entries: list[str] = []
    for section in scope_sections(doc):
        body = section.text.split("\n", 1)[1] if "\n" in section.text else ""
        for span in _code_spans(body):
            entry = _path_like(span)
            if entry is not None:
                entries.append(entry)
    return _build(entries)
