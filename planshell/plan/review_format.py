"""Reviewer comments in the plan file: ``> [!REVIEW] <comment>`` lines after their block.

The codec works on lines. A comment is anchored to one top-level block by its
source line range (from :func:`planshell.plan.blocks.plan_blocks`),
and written as a run of review lines framed by one blank line on each side::

    - step one
                                   <- added
    > [!REVIEW] say which tests    <- the comment (one line per comment line)
                                   <- added

Reading strips every run outside code (a ``> [!REVIEW]`` line inside a fenced
or indented code block is content, found by the same markdown parser the page
uses) together with its two framing blank lines, so writing is idempotent:
previous review lines are removed before the new ones go in, and
``split_reviews(apply_reviews(t, c, a), a') == (split_reviews(t, a)[0], c)``
(``a'``: ``a`` plus the lines just written); ``apply_reviews`` checks exactly
that before it returns.

Only runs the person wrote are comments: the model can write ``> [!REVIEW]``
lines into its own plan, so authorship comes from :class:`ReviewLedger` (what
planshell itself wrote), never from the text. Every other run is plan text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from planshell.markdown.parse import parse_tokens
from planshell.plan.blocks import PlanBlock, plan_blocks
from planshell.sanitize import strip_terminal_controls

__all__ = [
    "LEDGER",
    "MAX_COMMENT_CHARS",
    "REVIEW_PREFIX",
    "Comment",
    "FeedbackError",
    "ReviewLedger",
    "apply_reviews",
    "code_lines",
    "comment_lines",
    "review_lines",
    "split_reviews",
]

REVIEW_PREFIX = "> [!REVIEW]"
MAX_COMMENT_CHARS = 8000

# Whether one review line (without its line ending) is the person's: see ReviewLedger.
Authored = Callable[[str], bool]


class FeedbackError(ValueError):
    """Comments that cannot be written (unknown anchor, too long, unclosed fence)."""


@dataclass(frozen=True)
class Comment:
    """A comment on the block whose source lines are ``[start, end)`` of the plan without reviews."""

    start: int
    end: int
    text: str


def code_lines(text: str) -> set[int]:
    """Line numbers inside fenced or indented code, at any nesting depth."""
    lines: set[int] = set()
    for token in parse_tokens(text):
        if token.type in {"fence", "code_block"} and token.map is not None:
            lines.update(range(*token.map))
    return lines


def _is_review(line: str) -> bool:
    return line.rstrip("\r").startswith(REVIEW_PREFIX)


def _blank(line: str) -> bool:
    return not line.strip()


def _body(line: str) -> str:
    """The comment text of one review line ("" for a bare ``> [!REVIEW]``)."""
    return line.rstrip("\r")[len(REVIEW_PREFIX) :].strip()


def review_lines(comments: Iterable[Comment]) -> set[str]:
    """The review lines :func:`apply_reviews` writes for ``comments`` (what the ledger records)."""
    return {
        f"{REVIEW_PREFIX} {line}" for comment in comments for line in comment_lines(comment.text)
    }


def comment_lines(text: str) -> list[str]:
    """A comment as review-line bodies: terminal controls removed, blank lines dropped."""
    clean = strip_terminal_controls(text)
    return [line.strip() for line in clean.splitlines() if line.strip()]


def _runs(lines: list[str], code: set[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    index = 0
    while index < len(lines):
        if index not in code and _is_review(lines[index]):
            end = index
            while end < len(lines) and end not in code and _is_review(lines[end]):
                end += 1
            runs.append((index, end))
            index = end
        else:
            index += 1
    return runs


def _cut(
    lines: list[str], runs: Sequence[tuple[int, int]]
) -> tuple[list[str], list[tuple[int, str]]]:
    """``lines`` without ``runs`` (and their framing blanks); each run's base position and body."""
    kept: list[str] = []
    found: list[tuple[int, str]] = []
    cursor = 0
    for start, end in runs:
        cut_start, cut_end = start, end
        if start > 0 and _blank(lines[start - 1]) and end < len(lines) and _blank(lines[end]):
            cut_start, cut_end = start - 1, end + 1
        kept.extend(lines[cursor : max(cut_start, cursor)])
        body = "\n".join(_body(line) for line in lines[start:end]).strip()
        found.append((len(kept), body))
        cursor = max(cursor, cut_end)
    kept.extend(lines[cursor:])
    return kept, found


def split_reviews(text: str, authored: Authored) -> tuple[str, list[Comment]]:
    """``text`` without the person's review lines, and the comments they held, anchored to blocks.

    A run of ``> [!REVIEW]`` lines is the person's only when ``authored`` says
    so for every line of it (planshell wrote it: :class:`ReviewLedger`) and it
    follows a block. Every other run (one the model wrote into its plan, one
    before the first block, an empty one) stays in the text: it is plan text,
    shown as such and approved as such. Nothing is ever dropped.
    """
    lines = text.split("\n")
    # Every candidate run holds an authored review line: without one, skip the full
    # markdown parse below (seconds on a 100k-line plan; most plans have no comments).
    if not any(_is_review(line) and _body(line) and authored(line.rstrip("\r")) for line in lines):
        return text, []
    code = code_lines(text)
    candidates = [
        (start, end)
        for start, end in _runs(lines, code)
        if all(_body(line) and authored(line.rstrip("\r")) for line in lines[start:end])
    ]
    while candidates:
        kept, found = _cut(lines, candidates)
        base = "\n".join(kept)
        blocks = plan_blocks(base)
        anchors = [_block_before(blocks, position) for position, _ in found]
        orphans = {
            run
            for run, anchor, (_, body) in zip(candidates, anchors, found, strict=True)
            if anchor is None or not body
        }
        if orphans:  # put them back as plan text and look again (the blocks moved)
            candidates = [run for run in candidates if run not in orphans]
            continue
        merged: dict[tuple[int, int], list[str]] = {}
        for anchor, (_, body) in zip(anchors, found, strict=True):
            assert anchor is not None
            merged.setdefault((anchor.start, anchor.end), []).append(body)
        comments = [Comment(s, e, "\n".join(bodies)) for (s, e), bodies in merged.items()]
        return base, sorted(comments, key=lambda c: c.start)
    return text, []


def _block_before(blocks: Sequence[PlanBlock], position: int) -> PlanBlock | None:
    """The block a review run at ``position`` belongs to: the last one ending at or before it."""
    best: PlanBlock | None = None
    for block in blocks:
        if block.end <= position:
            best = block
    return best


class ReviewLedger:
    """The review lines planshell itself wrote into each plan file: who wrote a comment.

    The model writes the plan file (``write_plan``) and can write any text into
    it, ``> [!REVIEW]`` lines included, so a line's look proves nothing. This
    record is kept in planshell's memory, which no tool reaches: a review line
    counts as the person's only when a save from their review wrote exactly
    that line into exactly that file. A later planshell process starts with an
    empty record, so earlier comments are then shown as plan text (the safe side).
    """

    def __init__(self) -> None:
        self._lines: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def record(self, path: Path, lines: Iterable[str]) -> None:
        """Remember review ``lines`` planshell just wrote into ``path`` for the person.

        Only those lines (:func:`review_lines` of the saved comments): other
        review lines in the same file stay the model's.
        """
        with self._lock:
            self._lines.setdefault(str(path), set()).update(lines)

    def authored(self, path: Path) -> Authored:
        """Whether a review line of ``path`` is one planshell wrote there for the person."""
        with self._lock:
            lines = frozenset(self._lines.get(str(path), ()))
        return lines.__contains__


LEDGER = ReviewLedger()


def apply_reviews(text: str, comments: Iterable[Comment], authored: Authored) -> str:
    """``text`` with the person's old review lines replaced by ``comments`` (an empty one removes one).

    Anchors are ranges of the text without the person's reviews and must name
    one of its blocks exactly; anything else raises :class:`FeedbackError`.
    Review lines the person did not write (``authored``) stay where they are.
    """
    base, _old = split_reviews(text, authored)
    blocks = {(b.start, b.end) for b in plan_blocks(base)}
    wanted: dict[tuple[int, int], list[str]] = {}
    for comment in comments:
        if len(comment.text) > MAX_COMMENT_CHARS:
            raise FeedbackError(f"A comment is over {MAX_COMMENT_CHARS} characters.")
        key = (comment.start, comment.end)
        if key not in blocks:
            raise FeedbackError(
                f"Lines {comment.start + 1}-{comment.end} are not a block of the plan "
                "(it changed?); reload the page."
            )
        body = comment_lines(comment.text)
        if body:
            wanted.setdefault(key, []).extend(body)
    lines = base.split("\n")
    for (_start, end), body in sorted(wanted.items(), key=lambda item: -item[0][1]):
        lines[end:end] = ["", *(f"{REVIEW_PREFIX} {line}" for line in body), ""]
    result = "\n".join(lines)
    expected = [Comment(s, e, "\n".join(b)) for (s, e), b in sorted(wanted.items())]
    written = review_lines(comments)
    if split_reviews(result, lambda line: authored(line) or line in written) != (base, expected):
        # e.g. a block that is an unclosed code fence: the comment would become code.
        raise FeedbackError("These comments cannot be written back unambiguously here.")
    return result
