"""A person's review comments, tracked across the model's revisions of a plan.

The format in the plan file is the browser review's (:mod:`planshell.plan.review_format`):
a comment is a run of ``> [!REVIEW] <comment>`` lines after the block it is
about, written by :func:`add_comment` with the same ``apply_reviews`` and
recorded in the same :data:`~planshell.plan.review_format.LEDGER`, so a
comment written in the TUI is one the browser review shows, and back.

A comment is about a section (:func:`add_comment`: after its last block, the
section's text quoted) or about lines the person selected
(:func:`add_range_comment`: after the last block the lines touch, the
selection quoted).

The model answers a comment with a reply line right after its review lines::

    > [!REVIEW] say which tests
    > [!RESOLVED] named test_cache_hit and test_cache_expiry in Verification

That is the one mechanism: no tool argument. What makes it forge-proof is that
the engine, not the file, knows which comments there are (:class:`ReviewComment`
kept by ``ReviewRounds`` per plan path): a reply counts only when it follows
the exact review lines of a comment the person made, so

* a ``> [!REVIEW]`` line the model wrote is never a person's comment (it is
  not in the tracked list, nor in the ledger the browser uses);
* a ``> [!RESOLVED]`` line after anything else (a model-written review line, a
  comment that does not exist, ordinary text) marks nothing: it stays plan text.

A comment is **addressed** only when the model replied; its section changing
without a reply leaves it **open** (noted "changed, no reply"). Open comments
carry over to the next round, re-attached to their section by title (after
its last block, a selection's comment too), or to the end of the plan with the
note "section gone".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from planshell.plan.blocks import PlanBlock, plan_blocks
from planshell.plan.document import PlanDocument, Section, parse_plan
from planshell.plan.review_format import (
    LEDGER,
    MAX_COMMENT_CHARS,
    REVIEW_PREFIX,
    Comment,
    FeedbackError,
    ReviewLedger,
    apply_reviews,
    code_lines,
    comment_lines,
)
from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from pathlib import Path

    from planshell.plan.store import PlanStore

__all__ = [
    "MAX_QUOTE_CHARS",
    "RESOLVED_PREFIX",
    "CommentStatus",
    "ReviewComment",
    "add_comment",
    "add_range_comment",
    "carry_over",
    "comments_from_blocks",
    "comments_message",
    "new_comment_id",
    "range_anchor",
    "track",
]

RESOLVED_PREFIX = "> [!RESOLVED]"
MAX_QUOTE_CHARS = 600  # what the panel and the model see of the quoted text


class CommentStatus(StrEnum):
    OPEN = "open"
    ADDRESSED = "addressed"


@dataclass(frozen=True)
class ReviewComment:
    """One comment of the person's: where, about what, what, and what came of it.

    ``quote`` is the text the comment is about as it was when the comment was
    made (model-authored: front ends sanitise it); ``section`` its section's
    title. ``reply`` is the model's ``> [!RESOLVED]`` text, ``note`` why an
    open comment is open in a special way ("changed, no reply", "section gone").
    """

    id: str
    section: str
    quote: str
    text: str
    status: CommentStatus = CommentStatus.OPEN
    reply: str = ""
    note: str = ""
    quote_digest: str = ""

    @property
    def open(self) -> bool:
        return self.status is CommentStatus.OPEN

    @property
    def lines(self) -> list[str]:
        """The review lines this comment is written as (sanitised, one per comment line)."""
        return [f"{REVIEW_PREFIX} {line}" for line in comment_lines(self.text)]


def new_comment_id(existing: Iterable[ReviewComment]) -> str:
    """``c1``, ``c2``, …: one more than the highest number in use."""
    numbers = [int(c.id[1:]) for c in existing if c.id[1:].isdigit()]
    return f"c{max(numbers, default=0) + 1}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _section_body(text: str, section: Section) -> str:
    """A section's text without its heading line and without review/reply lines."""
    lines = text.split("\n")[section.start : section.end]
    if section.level:
        lines = lines[1:]
    kept = [
        line
        for line in lines
        if not line.startswith(REVIEW_PREFIX) and not line.startswith(RESOLVED_PREFIX)
    ]
    return "\n".join(kept).strip()


def _quote(body: str) -> str:
    clean = strip_terminal_controls(body)
    return clean if len(clean) <= MAX_QUOTE_CHARS else clean[: MAX_QUOTE_CHARS - 1] + "…"


def _anchor(text: str, section: Section) -> PlanBlock:
    """The block a comment on ``section`` goes after: its last block that is not a review line."""
    lines = text.split("\n")
    blocks = [
        b
        for b in plan_blocks(text)
        if b.start >= section.start and b.end <= section.end and not _is_note_block(lines, b)
    ]
    if not blocks:
        raise FeedbackError("This section has no block to comment on.")
    return blocks[-1]


def _is_note_block(lines: list[str], block: PlanBlock) -> bool:
    first = lines[block.start] if block.start < len(lines) else ""
    return first.startswith((REVIEW_PREFIX, RESOLVED_PREFIX))


def _find_section(doc: PlanDocument, title: str) -> Section | None:
    for section in doc.sections:
        if section.title == title:
            return section
    return None


def _check_text(text: str) -> None:
    if len(text) > MAX_COMMENT_CHARS:
        raise FeedbackError(f"A comment is over {MAX_COMMENT_CHARS} characters.")
    if not comment_lines(text):
        raise FeedbackError("Write a comment first.")


def _read_expected(store: PlanStore, path: Path, expected: str) -> str:
    current = store.read(path)
    if current != expected:
        raise FeedbackError("The plan file changed since it was shown; review it again.")
    return current


def add_comment(
    store: PlanStore,
    path: Path,
    expected: str,
    section_index: int,
    text: str,
    *,
    comment_id: str,
    ledger: ReviewLedger = LEDGER,
) -> tuple[str, ReviewComment]:
    """Write the person's comment on section ``section_index`` into the plan file.

    The review lines go after the section's last block, through the plan store
    (atomic), only if the file still holds ``expected`` (the text on screen);
    the ledger records them as the person's. Returns the new text and the
    comment. Raises :class:`FeedbackError` when it cannot be written.
    """
    _check_text(text)
    current = _read_expected(store, path, expected)
    doc = parse_plan(current)
    if not 0 <= section_index < len(doc.sections):
        raise FeedbackError("There is no section here to comment on.")
    section = doc.sections[section_index]
    new_text, comment = _insert(current, section, text, comment_id)
    store.write(path, new_text)
    ledger.record(path, comment.lines)
    return new_text, comment


def range_anchor(text: str, start: int, end: int) -> tuple[Section, PlanBlock]:
    """The block a comment on source lines ``[start, end)`` goes after, and its section.

    The last block the range touches: the last one (review and reply lines
    skipped, as for a section) that starts before ``end``, so a range that
    ends inside a list or a fence is about that whole block and the comment
    goes after it, never inside it. Raises :class:`FeedbackError` when the
    range is empty or before every block.
    """
    if not 0 <= start < end:
        raise FeedbackError("Select some lines of the plan first.")
    lines = text.split("\n")
    blocks = [b for b in plan_blocks(text) if b.start < end and not _is_note_block(lines, b)]
    if not blocks:
        raise FeedbackError("The selection has no block to comment on.")
    block = blocks[-1]
    doc = parse_plan(text)
    section = next(
        (s for s in reversed(doc.sections) if s.start <= block.start),
        None,
    )
    if section is None:  # pragma: no cover - every block is in a section
        raise FeedbackError("The selection has no block to comment on.")
    return section, block


def add_range_comment(
    store: PlanStore,
    path: Path,
    expected: str,
    lines: tuple[int, int],
    quote: str,
    text: str,
    *,
    comment_id: str,
    ledger: ReviewLedger = LEDGER,
) -> tuple[str, ReviewComment]:
    """Write the person's comment on source lines ``lines`` (``[start, end)``) of the plan.

    As :func:`add_comment`, but the review lines go after the last block the
    lines touch (:func:`range_anchor`) and the comment's quote is ``quote``,
    the text the person selected (sanitised here), so the model is told
    exactly what the comment is about.
    """
    _check_text(text)
    current = _read_expected(store, path, expected)
    section, block = range_anchor(current, *lines)
    new_text = _apply(current, block, text)
    body = _section_body(current, section)
    comment = ReviewComment(
        id=comment_id,
        section=section.title,
        quote=_quote(quote.strip("\n")),
        text="\n".join(comment_lines(text)),
        quote_digest=_digest(body),
    )
    store.write(path, new_text)
    ledger.record(path, comment.lines)
    return new_text, comment


def _apply(text: str, block: PlanBlock, comment: str) -> str:
    """``text`` with ``comment`` after ``block``; existing review lines untouched.

    ``apply_reviews`` with nobody's lines authored: every review or reply line
    already in the file is left exactly where it is, and the new run is checked
    to read back as exactly this comment.
    """
    return apply_reviews(text, [Comment(block.start, block.end, comment)], lambda _line: False)


def _insert(
    text: str, section: Section, comment: str, comment_id: str
) -> tuple[str, ReviewComment]:
    """``text`` with ``comment`` after ``section``'s last block (see :func:`_apply`)."""
    block = _anchor(text, section)
    new_text = _apply(text, block, comment)
    body = _section_body(text, section)
    made = ReviewComment(
        id=comment_id,
        section=section.title,
        quote=_quote(body),
        text="\n".join(comment_lines(comment)),
        quote_digest=_digest(body),
    )
    return new_text, made


def _reply_after(lines: list[str], code: set[int], wanted: list[str]) -> tuple[bool, str]:
    """Whether ``wanted`` (review lines) is in ``lines`` outside code, and the reply after it."""
    if not wanted:
        return False, ""
    found = False
    size = len(wanted)
    for start in range(len(lines) - size + 1):
        if any(i in code for i in range(start, start + size)):
            continue
        if [line.rstrip("\r") for line in lines[start : start + size]] != wanted:
            continue
        found = True
        replies: list[str] = []
        index = start + size
        while index < len(lines) and index not in code:
            line = lines[index].rstrip("\r")
            if not line.startswith(RESOLVED_PREFIX):
                break
            body = line[len(RESOLVED_PREFIX) :].strip()
            if body:
                replies.append(body)
            index += 1
        if replies:
            return True, strip_terminal_controls("\n".join(replies))
    return found, ""


def track(comments: Sequence[ReviewComment], text: str) -> list[ReviewComment]:
    """Each earlier comment's status in the revision ``text``.

    Addressed: its exact review lines are there, followed by ``> [!RESOLVED]``
    lines (their text is the reply). Anything else is open, with a note when
    its section is gone, its review lines were removed, or its section changed.
    """
    lines = text.split("\n")
    code = code_lines(text)
    doc = parse_plan(text)
    out: list[ReviewComment] = []
    for comment in comments:
        present, reply = _reply_after(lines, code, comment.lines)
        if reply:
            out.append(replace(comment, status=CommentStatus.ADDRESSED, reply=reply, note=""))
            continue
        section = _find_section(doc, comment.section)
        notes: list[str] = []
        if section is None:
            notes.append("section gone")
        elif comment.quote_digest and _digest(_section_body(text, section)) != comment.quote_digest:
            notes.append("changed, no reply")
        if not present:
            notes.append("comment removed without a reply")
        out.append(replace(comment, status=CommentStatus.OPEN, reply="", note="; ".join(notes)))
    return out


def carry_over(
    store: PlanStore,
    path: Path,
    expected: str,
    comments: Sequence[ReviewComment],
    *,
    ledger: ReviewLedger = LEDGER,
) -> str:
    """Write back the open ``comments`` whose review lines the revision removed.

    Each goes after its section (found by title), or after the plan's last
    section when that is gone, so the model can reply to it again. Returns the
    text now in the file (``expected`` when nothing had to be written).
    """
    text = expected
    lines_now = text.split("\n")
    code = code_lines(text)
    written: list[str] = []
    for comment in comments:
        if not comment.open or _reply_after(lines_now, code, comment.lines)[0]:
            continue
        doc = parse_plan(text)
        section = _find_section(doc, comment.section) or (
            doc.sections[-1] if doc.sections else None
        )
        if section is None:
            continue
        try:
            text, _ = _insert(text, section, comment.text, comment.id)
        except FeedbackError:
            continue
        written.extend(comment.lines)
        lines_now = text.split("\n")
        code = code_lines(text)
    if text != expected:
        if store.read(path) != expected:
            raise FeedbackError("The plan file changed since it was shown; review it again.")
        store.write(path, text)
        ledger.record(path, written)
    return text


def comments_from_blocks(
    base: str, comments: Sequence[Comment], earlier: Sequence[ReviewComment]
) -> list[ReviewComment]:
    """The browser review's saved comments as tracked comments, ids after ``earlier``'s.

    ``base`` is the plan without the person's review lines (``split_reviews``);
    a browser comment is about one block, so its quote is that block's text.
    """
    doc = parse_plan(base)
    lines = base.split("\n")
    made: list[ReviewComment] = []
    for comment in comments:
        section = next(
            (s for s in reversed(doc.sections) if s.start <= comment.start),
            None,
        )
        block = "\n".join(lines[comment.start : comment.end]).strip()
        made.append(
            ReviewComment(
                id=new_comment_id([*earlier, *made]),
                section=section.title if section is not None else "",
                quote=_quote(block),
                text="\n".join(comment_lines(comment.text)),
                quote_digest=_digest(_section_body(base, section)) if section is not None else "",
            )
        )
    return made


def comments_message(comments: Sequence[ReviewComment], feedback: str = "") -> str:
    """The one refinement message for every comment: section, quoted text, comment."""
    parts = [
        f"The user left {len(comments)} comment(s) on the plan. Each is written in the plan "
        "file as `> [!REVIEW]` lines after the block it is about:",
    ]
    for number, comment in enumerate(comments, 1):
        where = f'section "{comment.section}"' if comment.section else "the plan's preamble"
        if comment.note:
            where += f" ({comment.note})"
        quote = "\n".join(f"   > {line}" for line in comment.quote.split("\n")) or "   > (empty)"
        text = comment.text.replace("\n", " / ")
        parts.append(f"{number}. [{comment.id}] On {where}, about:\n{quote}\n   Comment: {text}")
    parts.append(
        "Revise the plan to address them. Keep each `> [!REVIEW]` line as it is, and right "
        "after the lines of each comment you addressed add one line "
        "`> [!RESOLVED] <how you addressed it>`. Leave a comment you did not address "
        "without a reply."
    )
    if feedback.strip():
        parts.append(f"The user also wrote: {feedback.strip()}")
    return "\n".join(parts)
