"""The plan document: a markdown file parsed into a title, sections and steps.

Everything here is a pure function over text so the UI, the agent loop and the
tools all agree on what "step 3" or "the Verification section" means. Sections
come from a single forward pass over the lines (ATX headings outside fences;
no regexes that can backtrack), because it re-runs on every edit of a plan of
any size. Steps come from the shared markdown engine's tokens
(:mod:`planshell.markdown`), parsed over the Steps section only: a step is
exactly a top-level list item the review shows (``"    - [ ] x"`` on its own
is an indented code block, not a step), and it has a checkbox exactly when the
review shows one.

Line numbers are 0-based indices into ``text.split("\\n")``; a trailing newline
does not add a line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from planshell.markdown.parse import parse_tokens, task_state
from planshell.sanitize import cut_at_word, strip_terminal_controls

__all__ = [
    "MAX_STEPS",
    "PLAN_TEMPLATE_HINT",
    "PlanDocument",
    "Section",
    "Step",
    "changed_sections",
    "parse_plan",
    "parse_plan_uncached",
    "replace_step_text",
    "set_step_checked",
    "validate_plan",
    "verification_text",
]

MAX_STEPS = 50
UNTITLED = "Untitled plan"
_TITLE_LINE_MAX = 80
_DIGEST_CHARS = 16

# Per-line marks from the scan. Only lines marked _PLAIN can be list items.
_PLAIN, _FENCED, _FENCE_OPEN, _HEADING = 0, 1, 2, 3
_MARKER_START = frozenset("-*+0123456789")
_SCAN_START = frozenset(" #`~")

PLAN_TEMPLATE_HINT = """\
# Plan: <short title>

## Goal
One or two sentences: what will be true when this is done.

## Context
What exploring showed: the relevant files (with paths), current behaviour, constraints.

## Approach
The chosen design and why; alternatives considered and rejected.

## Steps
- [ ] First concrete change: which file or function, and what changes
- [ ] Second change
  - nested bullets hold detail; only top-level items are steps
- [ ] Add or update tests

## Risks
What could go wrong, and how we would notice.

## Verification
```bash
# commands that prove the change works, e.g.
pytest -q
```
"""


@dataclass(frozen=True)
class Section:
    """A heading and the lines up to the next heading (of any level)."""

    title: str
    level: int
    start: int
    end: int
    text: str
    digest: str


@dataclass(frozen=True)
class Step:
    """A top-level list item of the Steps section."""

    index: int
    text: str
    done: bool
    line: int
    has_checkbox: bool


@dataclass(frozen=True)
class PlanDocument:
    """A parsed plan. Build it with ``PlanDocument.parse`` or ``parse_plan``."""

    text: str
    title: str
    sections: tuple[Section, ...]
    steps: tuple[Step, ...]

    @classmethod
    def parse(cls, text: str) -> PlanDocument:
        """Parse markdown ``text``; never raises on odd input."""
        return parse_plan(text)

    @property
    def done_count(self) -> int:
        """Steps ticked off so far."""
        return sum(1 for step in self.steps if step.done)

    @property
    def total_steps(self) -> int:
        """How many steps the plan has."""
        return len(self.steps)


class _Heading(NamedTuple):
    line: int
    level: int
    title: str


class _Item(NamedTuple):
    """A list-item line, with the positions needed to tick its checkbox."""

    indent: int  # column of the marker
    content_col: int  # column where the item's content starts (for nesting)
    marker_end: int  # string index just past the marker
    box: int  # string index of "[" (or where a checkbox would be inserted)
    has_checkbox: bool
    done: bool
    text: str


# --------------------------------------------------------------------------- scan


def _split_lines(text: str) -> list[str]:
    """Split on "\\n" only, so line numbers match what set_step_checked edits."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _indent(line: str, start: int = 0, col: int = 0) -> tuple[int, int]:
    """Return (column, index) of the first non-blank char at or after ``start``.

    ``col`` is the column of ``line[start]``; tabs stop every 4 columns.
    """
    for index in range(start, len(line)):
        char = line[index]
        if char == " ":
            col += 1
        elif char == "\t":
            col += 4 - col % 4
        else:
            return col, index
    return col, len(line)


def _run_length(text: str, char: str) -> int:
    """How many times ``char`` repeats at the start of ``text`` (C-speed)."""
    return len(text) - len(text.lstrip(char))


def _fence_open(stripped: str) -> tuple[str, int] | None:
    """``stripped`` has had up to 3 leading spaces removed already."""
    char = stripped[0]
    length = _run_length(stripped, char)
    if length < 3:
        return None
    if char == "`" and "`" in stripped[length:]:
        return None  # CommonMark: a backtick fence's info string has no backticks
    return char, length


def _fence_closes(line: str, fence: tuple[str, int]) -> bool:
    """CommonMark: same char, at least as long, indent <= 3, nothing after."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith(fence[0]):
        return False
    length = _run_length(stripped, fence[0])
    return length >= fence[1] and not stripped[length:].strip()


def _heading(stripped: str) -> tuple[int, str] | None:
    """Parse an ATX heading; ``stripped`` starts with "#" (indent already checked)."""
    level = _run_length(stripped, "#")
    if level > 6:
        return None
    rest = stripped[level:]
    if rest and rest[0] not in " \t\r":
        return None
    content = rest.strip()
    without_closing = content.rstrip("#")
    if not without_closing:
        content = ""
    elif without_closing != content and without_closing[-1] in " \t":
        content = without_closing.rstrip()
    return level, content


def _scan(lines: list[str]) -> tuple[list[_Heading], bytearray]:
    """One pass: find headings and mark fenced lines (fence state is sequential)."""
    headings: list[_Heading] = []
    marks = bytearray(len(lines))
    fence: tuple[str, int] | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            marks[index] = _FENCED
            if fence[0] in line and _fence_closes(line, fence):
                fence = None
            continue
        if not line or line[0] not in _SCAN_START:
            continue  # fast path: most lines start with a letter
        # Only spaces count here: any tab before column 4 already makes it code.
        stripped = line.lstrip(" ")
        if not stripped or len(line) - len(stripped) > 3:
            continue
        first = stripped[0]
        if first == "#":
            heading = _heading(stripped)
            if heading is not None:
                marks[index] = _HEADING
                headings.append(_Heading(index, *heading))
        elif first in "`~":
            fence = _fence_open(stripped)
            if fence is not None:
                marks[index] = _FENCE_OPEN
    return headings, marks


# ----------------------------------------------------------------------- sections


def _digest(level: int, title: str, body: list[str]) -> str:
    """Hash the section ignoring trailing spaces, CRLF and surrounding blank lines."""
    normalised = "\n".join([line.rstrip() for line in body]).strip("\n")
    payload = f"{level}\x00{title}\x00{normalised}"
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def _make_section(lines: list[str], title: str, level: int, start: int, end: int) -> Section:
    body_start = start + 1 if level else start
    return Section(
        title=title,
        level=level,
        start=start,
        end=end,
        text="\n".join(lines[start:end]),
        digest=_digest(level, title, lines[body_start:end]),
    )


def _sections(lines: list[str], headings: list[_Heading]) -> tuple[Section, ...]:
    sections: list[Section] = []
    first = headings[0].line if headings else len(lines)
    if any(line.strip() for line in lines[:first]):
        sections.append(_make_section(lines, "", 0, 0, first))
    for number, heading in enumerate(headings):
        end = headings[number + 1].line if number + 1 < len(headings) else len(lines)
        sections.append(_make_section(lines, heading.title, heading.level, heading.line, end))
    return tuple(sections)


def _subtree_end(headings: list[_Heading], number: int, default: int) -> int:
    """End of a heading's subtree: the next heading at the same or a higher level."""
    level = headings[number].level
    for later in headings[number + 1 :]:
        if later.level <= level:
            return later.line
    return default


# -------------------------------------------------------------------------- steps


def _normal_title(title: str) -> str:
    return title.strip().strip("*_`").strip().rstrip(":").strip().casefold()


def _is_thematic_break(stripped: str) -> bool:
    """``* * *``, ``---``, ``___``: look like list markers but are rules."""
    chars = stripped.replace(" ", "").replace("\t", "")
    return len(chars) >= 3 and chars[0] in "-*_" and chars == chars[0] * len(chars)


def _marker_end(line: str, start: int) -> int | None:
    """Index just past a list marker at ``start`` ("-", "*", "+", "12." or "3)")."""
    char = line[start]
    if char in "-*+":
        end = start + 1
    else:
        end = start
        while end < len(line) and end - start <= 9 and "0" <= line[end] <= "9":
            end += 1
        if end == start or end - start > 9 or end >= len(line) or line[end] not in ".)":
            return None
        end += 1
    if end < len(line) and line[end] not in " \t":
        return None
    return end


def _parse_item(line: str) -> _Item | None:
    """Parse a list-item line (without its trailing "\\r"), or return None."""
    indent, start = _indent(line)
    if start >= len(line) or _is_thematic_break(line[start:]):
        return None
    end = _marker_end(line, start)
    if end is None:
        return None
    marker_col = indent + (end - start)
    content_col, box = _indent(line, end, marker_col)
    rest = line[box:]
    if not rest or content_col - marker_col > 4:
        content_col = marker_col + 1  # CommonMark: blank item or indented code after marker
    checked = (
        len(rest) >= 3
        and rest[0] == "["
        and rest[1] in " xX"
        and rest[2] == "]"
        and (len(rest) == 3 or rest[3] in " \t")
    )
    text = rest[3:].strip() if checked else rest.strip()
    done = checked and rest[1] in "xX"
    return _Item(indent, content_col, end, box, checked, done, text)


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def _top_level_items(
    lines: list[str], marks: bytearray, lo: int, hi: int, *, first_list_only: bool
) -> list[tuple[int, _Item]]:
    """Top-level items of the lists in lines[lo:hi]; nested items belong to their parent.

    An item is top-level when it starts left of the content column of the
    current top-level item (CommonMark's rule); deeper lines are its content.
    """
    found: list[tuple[int, _Item]] = []
    top_col: int | None = None  # content column of the current top-level item
    after_blank = False
    for index in range(lo, hi):
        mark = marks[index]
        if mark == _FENCED:
            continue
        if mark == _HEADING:  # headings always end a list: they start a new section
            if top_col is not None and first_list_only:
                break
            top_col, after_blank = None, False
            continue
        line = lines[index]
        stripped = line.lstrip(" \t")
        if not stripped or stripped.isspace():
            after_blank = True
            continue
        indent = (
            _indent(line)[0]
            if "\t" in line[: len(line) - len(stripped)]
            else len(line) - len(stripped)
        )
        if top_col is not None and indent >= top_col:
            after_blank = False  # content (or a nested item) of the current item
            continue
        item = _parse_item(_strip_cr(line)) if stripped[0] in _MARKER_START else None
        if item is not None:
            found.append((index, item))
            top_col = item.content_col
        elif top_col is not None and _ends_list(stripped, mark, after_blank):
            if first_list_only:
                break
            top_col = None
        after_blank = False
    return found


def _ends_list(stripped: str, mark: int, after_blank: bool) -> bool:
    """Whether a non-item line left of the item's content column closes the list."""
    if mark == _FENCE_OPEN or _is_thematic_break(stripped):
        return True
    return after_blank  # otherwise a lazy continuation of the item's paragraph


def _steps_range(headings: list[_Heading], line_count: int) -> tuple[int, int] | None:
    """Lines under the Steps heading (including its subsections), if there is one.

    A heading titled exactly "Steps" wins; else the first one ending in " steps"
    (so "Implementation steps" works but a later "Verification steps" does not
    steal the role).
    """
    candidates = [
        number
        for number, heading in enumerate(headings)
        if (title := _normal_title(heading.title)) == "steps" or title.endswith(" steps")
    ]
    if not candidates:
        return None
    exact = [n for n in candidates if _normal_title(headings[n].title) == "steps"]
    number = exact[0] if exact else candidates[0]
    return headings[number].line + 1, _subtree_end(headings, number, line_count)


def _steps(lines: list[str], marks: bytearray, headings: list[_Heading]) -> tuple[Step, ...]:
    span = _steps_range(headings, len(lines))
    first_list_only = span is None
    lo, hi = (0, len(lines)) if span is None else span
    if first_list_only:
        # Without a Steps heading: the first list. Parse from the first line the
        # scan takes for an item up to the next heading (bounded work).
        found = _top_level_items(lines, marks, lo, hi, first_list_only=True)
        if not found:
            return ()
        lo = found[0][0]
        hi = next((h.line for h in headings if h.line > lo), len(lines))
    steps: list[Step] = []
    for line, has_checkbox, done in _token_items(lines[lo:hi], first_list_only):
        item = _parse_item(_strip_cr(lines[lo + line]))
        if item is None:  # pragma: no cover - markdown-it only opens items on marker lines
            continue
        text = (
            item.text
            if item.has_checkbox == has_checkbox
            else _strip_cr(lines[lo + line])[item.box :].strip()
        )
        steps.append(Step(len(steps) + 1, text, done, lo + line, has_checkbox))
    return tuple(steps)


def _token_items(lines: list[str], first_list_only: bool) -> list[tuple[int, bool, bool]]:
    """(line, is a task, is ticked) of each top-level list item, from the engine's tokens."""
    items: list[tuple[int, bool, bool]] = []
    lists = 0
    # markdown-it also breaks lines at "\r": keep its line numbers ours.
    tokens = parse_tokens("\n".join(line.replace("\r", " ") for line in lines))
    for index, token in enumerate(tokens):
        if token.level == 0 and token.type in ("bullet_list_open", "ordered_list_open"):
            lists += 1
            if first_list_only and lists > 1:
                break
        if token.type != "list_item_open" or token.level != 1 or token.map is None:
            continue
        items.append((token.map[0], *task_state(tokens, index)))
    return items


# -------------------------------------------------------------------------- title


def _clean_title(title: str) -> str:
    return " ".join(strip_terminal_controls(title).split())


def _title(lines: list[str], marks: bytearray, headings: list[_Heading]) -> str:
    """``# Plan: X`` > first H1 > first heading > first line > "Untitled plan"."""
    for heading in headings:
        is_plan_title = heading.level == 1 and heading.title[:5].casefold() == "plan:"
        if is_plan_title and (title := _clean_title(heading.title[5:])):
            return title
    for wanted_h1 in (True, False):
        for heading in headings:
            if (heading.level == 1 or not wanted_h1) and (title := _clean_title(heading.title)):
                return title
    for index, line in enumerate(lines):
        if marks[index] == _PLAIN and (title := _clean_title(line)):
            return cut_at_word(title, _TITLE_LINE_MAX)
    return UNTITLED


# ------------------------------------------------------------------------- public


def parse_plan(text: str) -> PlanDocument:
    """Parse a plan's markdown. Total: any string gives a document, never an error.

    The last few texts' documents are kept (a document is immutable): the same plan
    is parsed by several readers in a row (``planshell review``'s title, then the
    view; the controller and the review screen), and a 100k-line plan costs ~70 ms.
    """
    return _parsed(text)


def parse_plan_uncached(text: str) -> PlanDocument:
    """The parse itself, without the cache: what a new text costs (``bench/scaling.py``)."""
    lines = _split_lines(text)
    headings, marks = _scan(lines)
    return PlanDocument(
        text=text,
        title=_title(lines, marks, headings),
        sections=_sections(lines, headings),
        steps=_steps(lines, marks, headings),
    )


_parsed = lru_cache(maxsize=4)(parse_plan_uncached)


def validate_plan(text: str) -> str | None:
    """Return why the plan cannot be accepted (too many steps), or None if it is fine."""
    count = parse_plan(text).total_steps
    if count <= MAX_STEPS:
        return None
    return (
        f"The plan has {count} steps; the limit is {MAX_STEPS} (MAX_STEPS). "
        "A plan that long is hard to review: split it into phases or group small "
        f"steps so the Steps list has at most {MAX_STEPS} top-level items."
    )


def set_step_checked(text: str, step_index: int, done: bool) -> str:
    """Tick (``done=True``) or untick step ``step_index`` (1-based), editing one line.

    An item without a checkbox gets one. Raises IndexError for a step that does
    not exist and ValueError for an index that is not an integer.
    """
    if isinstance(step_index, bool) or not isinstance(step_index, int):
        raise ValueError(f"step index must be an integer, not {step_index!r}")
    lines, line_no, raw, line, item = _step_line(text, step_index)
    new_line = _with_checkbox(line, item, done)
    if new_line == line:
        return text
    lines[line_no] = new_line + raw[len(line) :]
    return "\n".join(lines)


def replace_step_text(text: str, step_index: int, new_text: str) -> str:
    """Step ``step_index`` (1-based) with its first line's text replaced, checkbox kept.

    Only the item's own line changes (continuation lines and nested details
    stay). The caller checks ``new_text`` is one line of plain text; raises
    IndexError for a step that does not exist.
    """
    lines, line_no, raw, line, item = _step_line(text, step_index)
    if item.has_checkbox:
        head = line[: item.box + 3] + " "
    elif item.box >= len(line):
        head = line[: item.marker_end] + " "
    else:
        head = line[: item.box]
    lines[line_no] = head + new_text + raw[len(line) :]
    return "\n".join(lines)


def _step_line(text: str, step_index: int) -> tuple[list[str], int, str, str, _Item]:
    """Step ``step_index`` (1-based) of ``text``: its lines, the step's line number, that
    line as is and without CR, and the list item parsed from it (IndexError: no such step)."""
    steps = parse_plan(text).steps
    if not 1 <= step_index <= len(steps):
        if not steps:
            raise IndexError(f"step {step_index} does not exist: the plan has no steps")
        raise IndexError(
            f"step {step_index} does not exist: the plan has {len(steps)} steps "
            f"(numbered 1 to {len(steps)})"
        )
    lines = text.split("\n")
    line_no = steps[step_index - 1].line
    raw = lines[line_no]
    line = _strip_cr(raw)
    item = _parse_item(line)
    if item is None:  # pragma: no cover - parse_plan only reports item lines
        raise ValueError(f"line {line_no + 1} is not a list item")
    return lines, line_no, raw, line, item


def _with_checkbox(line: str, item: _Item, done: bool) -> str:
    mark = "x" if done else " "
    if item.has_checkbox:
        if item.done == done:
            return line
        return line[: item.box + 1] + mark + line[item.box + 2 :]
    if item.box >= len(line):  # empty item such as "-" or "1. "
        return f"{line[: item.marker_end]} [{mark}]"
    return f"{line[: item.box]}[{mark}] {line[item.box :]}"


def changed_sections(old: PlanDocument | None, new: PlanDocument) -> set[int]:
    """Indices of ``new`` sections that differ from ``old`` (matched by level + title).

    With no previous review (``old`` is None) every section counts as changed.
    """
    if old is None:
        return set(range(len(new.sections)))
    seen: dict[tuple[int, str], set[str]] = {}
    for section in old.sections:
        seen.setdefault((section.level, section.title), set()).add(section.digest)
    return {
        number
        for number, section in enumerate(new.sections)
        if section.digest not in seen.get((section.level, section.title), set())
    }


def verification_text(doc: PlanDocument) -> str | None:
    """Body of the Verification section (with its subsections), or None if absent/empty.

    The agent turns it into the last todo item, so the plan's own checks run.
    """
    sections = doc.sections
    matches = [n for n, s in enumerate(sections) if s.level and _is_verification(s.title)]
    if not matches:
        return None
    exact = [n for n in matches if _normal_title(sections[n].title) == "verification"]
    number = exact[0] if exact else matches[0]
    section = sections[number]
    end = section.end
    for later in sections[number + 1 :]:
        if later.level <= section.level:
            break
        end = later.end
    lines = _split_lines(doc.text)[section.start + 1 : end]
    body = "\n".join(_strip_cr(line) for line in lines).strip("\n")
    return body if body.strip() else None


def _is_verification(title: str) -> bool:
    normal = _normal_title(title)
    return normal.startswith("verification") or normal.endswith(" verification")
