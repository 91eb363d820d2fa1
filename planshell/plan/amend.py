"""Amendments: a person-approved change to a plan while it executes (docs/plan-mode.md).

The model may propose one step's new text with ``amend_plan``; a person may
add an unplanned file to the plan from the permission question. Either way
the approved text changes in two places only: the step's line (its checkbox
state kept) and an entry appended to the plan's ``## Amendments`` section
(created at the end when missing) with the time, the step or path, and the
reason. Nothing here does I/O or asks anyone: the controller asks the person,
writes the result through the plan store and rebinds the approval to it.

The step text and the reason are the model's: they become one line, without
control, escape or bidi characters, of bounded length, and text that would
make structure (a heading, a checkbox, a list item, a fence, a quote) is
refused. After building the new text, it is parsed again and must have the
same steps (only step N's text different), the same sections (plus
Amendments) and the same Verification: anything else is refused, so an
amendment can never add, drop or tick a step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from planshell.plan.document import (
    PlanDocument,
    parse_plan,
    replace_step_text,
    verification_text,
)
from planshell.plan.scope import normalise_entry, plan_scope
from planshell.sanitize import cut_at_word, strip_terminal_controls
from planshell.tools.base import ToolError

__all__ = [
    "AMENDMENTS_TITLE",
    "MAX_REASON_CHARS",
    "MAX_STEP_CHARS",
    "OWN_DIR",
    "AmendedPlan",
    "Amendment",
    "add_to_scope",
    "amend_step",
    "clean_reason",
    "clean_step_text",
    "stamp",
]

AMENDMENTS_TITLE = "Amendments"
MAX_STEP_CHARS = 400
MAX_REASON_CHARS = 300
OWN_DIR = ".planshell"  # plans, run records, config: never added to a plan's scope

# A line that starts one of these is markdown structure, not a step's words.
_STRUCTURE = re.compile(
    r"""^(?:
        \#{1,6}(?:\s|$)          # an ATX heading
      | [-*+](?:\s|$)            # a bullet item
      | \d{1,9}[.)](?:\s|$)      # an ordered item
      | \[[ xX]\](?:\s|$)        # a checkbox
      | >                        # a block quote
      | `{3,} | ~{3,}            # a code fence
      | <                        # an HTML block
      | (?:[-*_]\s*){3,}$        # a thematic break
      | =+\s*$                   # a setext underline
      | \|                       # a table row
    )""",
    re.VERBOSE,
)


def stamp(now: datetime) -> str:
    """``now`` as the entry's time, always in UTC: ``2026-12-02 03:40 UTC``."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class Amendment:
    """One approved change, as the run record and the report keep it."""

    kind: Literal["step", "scope"]
    when: str  # stamp(): "2026-12-02 03:40 UTC"
    reason: str
    step: int = 0  # kind "step": the step number
    old_text: str = ""
    new_text: str = ""
    path: str = ""  # kind "scope": the path added

    def entry(self) -> str:
        """The line appended to the plan's Amendments section."""
        if self.kind == "scope":
            why = f" ({self.reason})" if self.reason else ""
            return f"- {self.when} — added to the plan's scope: `{self.path}`{why}"
        return f"- {self.when} — step {self.step}: {self.reason}"


@dataclass(frozen=True)
class AmendedPlan:
    """The plan text after an amendment, the amendment, and the scope entries it adds."""

    text: str
    amendment: Amendment
    added_scope: tuple[str, ...]


def _one_line(text: str, what: str) -> str:
    """``text`` sanitised and folded to one line; refused when a line of it is structure."""
    clean = strip_terminal_controls(text)
    for number, line in enumerate(clean.splitlines()):
        stripped = line.strip()
        if stripped and _STRUCTURE.match(stripped):
            where = "starts with" if number == 0 else "has a line starting with"
            raise ToolError(
                f"The {what} {where} markdown structure ({stripped[:20]!r}): a heading, list "
                "item, checkbox, quote, fence or HTML would change the plan's shape. Write "
                f"the {what} as one line of plain words."
            )
    return " ".join(clean.split())


def clean_step_text(text: str) -> str:
    """A step's new text: one line of plain words, at most MAX_STEP_CHARS; else ToolError."""
    line = _one_line(text, "step text")
    if not line:
        raise ToolError("The new step text is empty; give the step's new wording.")
    if len(line) > MAX_STEP_CHARS:
        raise ToolError(
            f"The new step text is {len(line)} characters; the limit is {MAX_STEP_CHARS}. "
            "Keep a step to one sentence."
        )
    return line


def clean_reason(text: str) -> str:
    """The reason: one line of plain words (cut at MAX_REASON_CHARS); ToolError when empty."""
    line = _one_line(text, "reason")
    if not line:
        raise ToolError("An amendment needs a reason: say in one sentence why the step changes.")
    return cut_at_word(line, MAX_REASON_CHARS)


def _amendments_heading(doc: PlanDocument) -> tuple[int, int] | None:
    """(level, line after its subtree's last non-blank line) of the Amendments section."""
    sections = doc.sections
    for number, section in enumerate(sections):
        if not section.level or section.title.strip().strip("#").strip().casefold() != "amendments":
            continue
        end = section.end
        for later in sections[number + 1 :]:
            if later.level and later.level <= section.level:
                break
            end = later.end
        return section.level, end
    return None


def _append_entry(text: str, entry: str, level: int) -> str:
    """``text`` with ``entry`` added to its Amendments section (created at ``level``)."""
    doc = parse_plan(text)
    found = _amendments_heading(doc)
    lines = text.split("\n")
    trailing = lines[-1] == ""
    if trailing:
        lines.pop()
    if found is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", f"{'#' * level} {AMENDMENTS_TITLE}", "", entry]
    else:
        end = found[1]
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        block = [entry] if lines[end - 1].lstrip().startswith("- ") else ["", entry]
        lines[end:end] = block
    return "\n".join(lines) + "\n"


def _same_shape(old: PlanDocument, new: PlanDocument, step: int, step_text: str) -> bool:
    """Only step ``step``'s text differs (``step_text``), plus the Amendments section."""
    if len(old.steps) != len(new.steps):
        return False
    for before, after in zip(old.steps, new.steps, strict=True):
        if before.done != after.done or before.has_checkbox != after.has_checkbox:
            return False
        wanted = step_text if before.index == step else before.text
        if after.text != wanted:
            return False
    old_titles = [(s.level, s.title) for s in old.sections]
    new_titles = [(s.level, s.title) for s in new.sections]
    if new_titles != old_titles:  # one new section, the Amendments one, and nothing else
        if len(new_titles) != len(old_titles) + 1:
            return False
        at = next((i for i, t in enumerate(old_titles) if new_titles[i] != t), len(old_titles))
        if new_titles[at][1].casefold() != AMENDMENTS_TITLE.casefold():
            return False
        if new_titles[:at] + new_titles[at + 1 :] != old_titles:
            return False
    return verification_text(old) == verification_text(new) and new.title == old.title


def _with_entry(text: str, entry: str, step: int, step_text: str) -> str:
    """Append ``entry``; the level that keeps the plan's shape (``##``, else ``#``)."""
    old = parse_plan(text)
    for level in (2, 1):
        candidate = _append_entry(text, entry, level)
        if _same_shape(old, parse_plan(candidate), step, step_text):
            return candidate
    raise ToolError(
        "The amendment cannot be added without changing the plan's steps or sections "
        "(its Amendments section is placed oddly); ask the user to refine the plan instead."
    )


def _added(old: str, new: str) -> tuple[str, ...]:
    before = set(plan_scope(old).entries())
    return tuple(e for e in plan_scope(new).entries() if e not in before)


def amend_step(text: str, step: int, new_text: str, reason: str, now: datetime) -> AmendedPlan:
    """``text`` with step ``step`` reworded to ``new_text`` and an Amendments entry; or ToolError."""
    doc = parse_plan(text)
    if isinstance(step, bool) or not 1 <= step <= len(doc.steps):
        raise ToolError(
            f"Step {step} does not exist; the plan has {len(doc.steps)} steps "
            f"(numbered 1 to {len(doc.steps)})."
        )
    line = clean_step_text(new_text)
    why = clean_reason(reason)
    old_text = doc.steps[step - 1].text
    if line == old_text:
        raise ToolError(f"Step {step} already reads {line!r}: nothing to amend.")
    amendment = Amendment("step", stamp(now), why, step, old_text, line)
    reworded = replace_step_text(text, step, line)
    amended = _with_entry(reworded, amendment.entry(), step, line)
    return AmendedPlan(amended, amendment, _added(text, amended))


def add_to_scope(text: str, path: str, now: datetime, reason: str = "") -> AmendedPlan:
    """``text`` with ``path`` named in its Amendments section, so the scope covers it.

    Refused (ToolError) for a path the scope could not name exactly: absolute,
    ``..``, spaces or code characters, or glob characters (a glob would cover
    more than the one file the person allowed).
    """
    entry_path = normalise_entry(path)
    if entry_path is None or entry_path.endswith("/") or set("*?[{`").intersection(entry_path):
        raise ToolError(f"{path!r} cannot be named in a plan's scope exactly.")
    if entry_path.split("/", 1)[0] == OWN_DIR:
        raise ToolError(f"{OWN_DIR}/ is planshell's own: its files are never part of a plan.")
    why = clean_reason(reason) if reason.strip() else ""
    amendment = Amendment("scope", stamp(now), why, path=entry_path)
    step = 0  # no step changes
    amended = _with_entry(text, amendment.entry(), step, "")
    added = _added(text, amended)
    if not plan_scope(amended).covers(entry_path) or set(added) - {entry_path}:
        raise ToolError(f"{path!r} cannot be named in a plan's scope exactly.")
    return AmendedPlan(amended, amendment, added)
