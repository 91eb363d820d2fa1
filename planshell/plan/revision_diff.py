"""What changed since the person last reviewed a plan: a word-level diff, per section.

The review's ``d`` (TUI) and the browser review's "What changed" toggle show the
same output of :func:`revision_diff`, so both front ends agree on what a
"changed place" is. difflib is enough here: plans are capped in size, lines are
matched first (so a 10,000-line plan costs a line diff) and only the lines that
were replaced are diffed again word by word.

Sections are matched by heading (level and title, in order, like
:func:`planshell.plan.document.changed_sections`); a section that is new is all
inserted, one that was removed is shown struck through after the section that
precedes it in the new plan. Each section's text is turned into *display lines*:
a line is split at every newline of the old or the new text, so a deleted line
shows as its own struck line, and each line knows the new plan's source line it
sits at (for the gauge's line numbers).

:func:`unrequested_changes` is the "changed without request" rule; see its docstring.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from planshell.plan.document import PlanDocument, Section, parse_plan


def _plain_inline(text: str) -> str:
    """``markdown.plain_inline``, imported on first use: the renderer module pulls in
    Rich, which the plan controller (and so ``planshell -p``) must not pay for at import."""
    from planshell.markdown.render import plain_inline

    return plain_inline(text)


__all__ = [
    "DiffLine",
    "Fragment",
    "RevisionDiff",
    "SectionChange",
    "named_sections",
    "revision_diff",
    "unrequested_changes",
    "word_fragments",
]

Op = Literal["equal", "insert", "delete"]
_TOKENS = re.compile(r"\n|[^\S\n]+|\w+|[^\w\s]")
# A replaced block of lines longer than this (in tokens, each side) is shown as
# deleted + inserted lines instead of being diffed word by word (difflib is quadratic).
_MAX_WORD_DIFF_TOKENS = 6000
_QUOTE_CHARS = 80  # the browser review quotes a block's first 80 characters
_MIN_QUOTE = 8  # shorter lines ("- [ ] x") are too common to count as a quote


@dataclass(frozen=True)
class Fragment:
    op: Op
    text: str


@dataclass(frozen=True)
class DiffLine:
    """One display line: its fragments and the new plan's 0-based source line.

    ``starts_place``: a changed place starts on this line (the jump target of
    ``]c``); several changes that start on one line are one place.
    """

    fragments: tuple[Fragment, ...]
    source: int
    starts_place: bool = False

    @property
    def changed(self) -> bool:
        return any(fragment.op != "equal" for fragment in self.fragments)

    @property
    def text(self) -> str:
        """The line as the old and new text together (deleted words included)."""
        return "".join(fragment.text for fragment in self.fragments)


@dataclass(frozen=True)
class SectionChange:
    """One changed section: where it shows in the new plan and its display lines.

    ``index`` is the new plan's section index; for a removed section, the new
    section it is shown after (the one that precedes it).
    """

    index: int
    title: str
    level: int
    kind: Literal["changed", "added", "removed"]
    lines: tuple[DiffLine, ...]


@dataclass(frozen=True)
class RevisionDiff:
    """Every changed section, in the order they show in the new plan."""

    changes: tuple[SectionChange, ...] = ()

    @property
    def places(self) -> int:
        """How many changed places (runs of changed words) the diff has."""
        return sum(1 for change in self.changes for line in change.lines if line.starts_place)

    @property
    def empty(self) -> bool:
        return not self.changes

    def by_section(self) -> dict[int, tuple[DiffLine, ...]]:
        """Display lines per new section index (a removed section's after its anchor's own)."""
        out: dict[int, list[DiffLine]] = {}
        for change in self.changes:
            out.setdefault(change.index, []).extend(change.lines)
        return {index: tuple(lines) for index, lines in out.items()}

    def place_lines(self) -> list[tuple[int, int]]:
        """(section index, display line within that section's lines) of each place, in order."""
        found: list[tuple[int, int]] = []
        for index, lines in sorted(self.by_section().items()):
            found.extend((index, number) for number, line in enumerate(lines) if line.starts_place)
        return found


def _tokens(text: str) -> list[str]:
    return _TOKENS.findall(text)


def word_fragments(old: str, new: str) -> list[Fragment]:
    """Fragments turning ``old`` into ``new``, word by word (whitespace runs are tokens).

    Also the amendment review's diff of one step's wording.
    """
    a, b = _tokens(old), _tokens(new)
    if len(a) > _MAX_WORD_DIFF_TOKENS or len(b) > _MAX_WORD_DIFF_TOKENS:
        return [Fragment("delete", old), Fragment("insert", new)]
    out: list[Fragment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(Fragment("equal", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            out.append(Fragment("delete", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(Fragment("insert", "".join(b[j1:j2])))
    return out


def _fragments(old: str, new: str) -> list[Fragment]:
    """Lines matched first; only replaced runs of lines are diffed word by word."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[Fragment] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(Fragment("equal", "".join(b[j1:j2])))
        elif tag == "delete":
            out.append(Fragment("delete", "".join(a[i1:i2])))
        elif tag == "insert":
            out.append(Fragment("insert", "".join(b[j1:j2])))
        else:
            out.extend(word_fragments("".join(a[i1:i2]), "".join(b[j1:j2])))
    return out


def _display_lines(fragments: list[Fragment], first_source: int) -> list[DiffLine]:
    """Split fragments at every newline (old or new) into display lines, and number places.

    A line's source is the new plan's line it sits at: an equal or inserted
    newline moves to the next one, a deleted newline does not. A place is a run
    of inserted or deleted words; only visible unchanged text ends it (line
    breaks and spaces between two changes do not).
    """
    lines: list[list[Fragment]] = [[]]
    sources = [first_source]
    source = first_source
    for fragment in fragments:
        for number, part in enumerate(fragment.text.split("\n")):
            if number:
                if fragment.op != "delete":
                    source += 1
                lines.append([])
                sources.append(source)
            if part:
                lines[-1].append(Fragment(fragment.op, part))
    if not lines[-1] and len(lines) > 1:
        lines.pop()
    out: list[DiffLine] = []
    in_place = False
    for number, line in enumerate(lines):
        starts = False
        for fragment in line:
            if fragment.op == "equal":
                if fragment.text.strip():
                    in_place = False
            elif not in_place:
                in_place = starts = True
        out.append(DiffLine(tuple(line), sources[number], starts))
    return out


# --------------------------------------------------------------------------- sections


def _key(section: Section) -> tuple[int, str]:
    return (section.level, _plain_inline(section.title).strip().casefold())


def _section_text(lines: list[str], section: Section) -> str:
    return "\n".join(lines[section.start : section.end]).rstrip("\n") + "\n"


def _pairs(old: PlanDocument, new: PlanDocument) -> list[tuple[int | None, int | None]]:
    """Old and new sections aligned by heading; a replaced run pairs up by position."""
    a = [_key(section) for section in old.sections]
    b = [_key(section) for section in new.sections]
    out: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        common = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        out.extend((i1 + k, j1 + k) for k in range(common))
        out.extend((i, None) for i in range(i1 + common, i2))
        out.extend((None, j) for j in range(j1 + common, j2))
    return out


def revision_diff(previous: str | None, text: str) -> RevisionDiff:
    """The word-level diff from ``previous`` (the text last reviewed) to ``text``.

    Both are compared as given (front ends sanitise what they display). No
    previous text, or the same text, gives an empty diff.
    """
    if previous is None or previous == text:
        return RevisionDiff()
    old, new = parse_plan(previous), parse_plan(text)
    old_lines, new_lines = previous.split("\n"), text.split("\n")
    changes: list[SectionChange] = []
    last_new = 0
    for i, j in _pairs(old, new):
        if j is not None:
            last_new = j
        if i is not None and j is not None:
            before = _section_text(old_lines, old.sections[i])
            after = _section_text(new_lines, new.sections[j])
            if before == after:
                continue
            section = new.sections[j]
            lines = _display_lines(_fragments(before, after), section.start)
            changes.append(SectionChange(j, section.title, section.level, "changed", tuple(lines)))
        elif j is not None:
            section = new.sections[j]
            after = _section_text(new_lines, section)
            lines = _display_lines([Fragment("insert", after)], section.start)
            changes.append(SectionChange(j, section.title, section.level, "added", tuple(lines)))
        elif i is not None:
            section = old.sections[i]
            before = _section_text(old_lines, section)
            anchor = new.sections[last_new] if new.sections else None
            source = max(0, anchor.end - 1) if anchor is not None else 0
            lines = [
                DiffLine(line.fragments, source, line.starts_place)
                for line in _display_lines([Fragment("delete", before)], source)
            ]
            changes.append(
                SectionChange(last_new, section.title, section.level, "removed", tuple(lines))
            )
    changes.sort(key=lambda change: (change.index, change.kind == "removed"))
    return RevisionDiff(tuple(changes))


# --------------------------------------------------------------------------- the rule


def _named(title: str, feedback: str) -> bool:
    name = _plain_inline(title).strip()
    if len(name) < 3:
        return False
    pattern = r"(?<!\w)" + re.escape(name.casefold()) + r"(?!\w)"
    return re.search(pattern, feedback.casefold()) is not None


def _quoted(lines: list[str], section: Section, feedback: str) -> bool:
    for line in lines[section.start : section.end]:
        stripped = line.strip()
        if len(stripped) >= _MIN_QUOTE and stripped[:_QUOTE_CHARS] in feedback:
            return True
    return False


def named_sections(previous: str, feedback: str) -> set[tuple[int, str]]:
    """Heading keys (level, title) of the sections of ``previous`` the feedback names.

    A section is named when the feedback holds its title as a whole phrase (any
    case), or quotes one of its lines (the first 80 characters of a line of at
    least 8: what the browser review and the TUI's comments send). A section
    under a named one is named too.
    """
    doc = parse_plan(previous)
    lines = previous.split("\n")
    named: set[tuple[int, str]] = set()
    parents: list[tuple[int, bool]] = []  # (level, named) of the enclosing headings
    for section in doc.sections:
        while parents and section.level and parents[-1][0] >= section.level:
            parents.pop()
        inherited = any(flag for _, flag in parents)
        hit = (
            inherited
            or (bool(section.level) and _named(section.title, feedback))
            or _quoted(lines, section, feedback)
        )
        if hit:
            named.add(_key(section))
        if section.level:
            parents.append((section.level, hit))
    return named


def unrequested_changes(previous: str | None, text: str, feedback: str) -> tuple[str, ...]:
    """Titles of sections that changed although the person's feedback named other sections.

    The rule: only when the feedback given at the last review named at least
    one section (:func:`named_sections`); then every changed, added or removed
    section whose heading was not named is listed, in the new plan's order.
    Feedback that names no section ("make it shorter") may touch anything, so
    nothing is flagged; nor is anything without a previous review.
    """
    if previous is None or not feedback.strip():
        return ()
    named = named_sections(previous, feedback)
    if not named:
        return ()
    titles: list[str] = []
    for change in revision_diff(previous, text).changes:
        key = (change.level, _plain_inline(change.title).strip().casefold())
        if key in named:
            continue
        title = _plain_inline(change.title).strip() or "(before the first heading)"
        if title not in titles:
            titles.append(title)
    return tuple(titles)
