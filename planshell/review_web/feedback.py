"""Reviewer comments in the plan file: ``> [!REVIEW] <comment>`` lines after their block.

The codec works on lines. A comment is anchored to one top-level block by its
source line range (from :func:`planshell.review_web.render.render_plan_html`),
and written as a run of review lines framed by one blank line on each side::

    - step one
                                   <- added
    > [!REVIEW] say which tests    <- the comment (one line per comment line)
                                   <- added

Reading strips every run outside code (a ``> [!REVIEW]`` line inside a fenced
or indented code block is content, found by the same markdown parser the page
uses) together with its two framing blank lines, so writing is idempotent:
previous review lines are removed before the new ones go in, and
``split_reviews(apply_reviews(t, c)) == (split_reviews(t)[0], c)``;
``apply_reviews`` checks exactly that before it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from markdown_it import MarkdownIt

from planshell.review_web.render import Block, render_plan_html
from planshell.sanitize import strip_terminal_controls

__all__ = [
    "MAX_COMMENT_CHARS",
    "REVIEW_PREFIX",
    "Comment",
    "FeedbackError",
    "apply_reviews",
    "split_reviews",
]

REVIEW_PREFIX = "> [!REVIEW]"
MAX_COMMENT_CHARS = 8000


class FeedbackError(ValueError):
    """Comments that cannot be written (unknown anchor, too long, unclosed fence)."""


@dataclass(frozen=True)
class Comment:
    """A comment on the block whose source lines are ``[start, end)`` of the plan without reviews."""

    start: int
    end: int
    text: str


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _code_lines(text: str) -> set[int]:
    """Line numbers inside fenced or indented code, at any nesting depth."""
    lines: set[int] = set()
    for token in _parser().parse(text):
        if token.type in {"fence", "code_block"} and token.map is not None:
            lines.update(range(*token.map))
    return lines


def _is_review(line: str) -> bool:
    return line.rstrip("\r").startswith(REVIEW_PREFIX)


def _blank(line: str) -> bool:
    return not line.strip()


def _comment_lines(text: str) -> list[str]:
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


def split_reviews(text: str) -> tuple[str, list[Comment]]:
    """``text`` without its review lines, and the comments they held, anchored to blocks."""
    lines = text.split("\n")
    runs = _runs(lines, _code_lines(text))
    if not runs:
        return text, []
    kept: list[str] = []
    found: list[tuple[int, str]] = []  # (position in the base text, comment)
    cursor = 0
    for start, end in runs:
        cut_start, cut_end = start, end
        if start > 0 and _blank(lines[start - 1]) and end < len(lines) and _blank(lines[end]):
            cut_start, cut_end = start - 1, end + 1
        kept.extend(lines[cursor:max(cut_start, cursor)])
        body = "\n".join(
            line.rstrip("\r")[len(REVIEW_PREFIX):].strip() for line in lines[start:end]
        ).strip()
        found.append((len(kept), body))
        cursor = max(cursor, cut_end)
    kept.extend(lines[cursor:])
    base = "\n".join(kept)
    blocks = render_plan_html(base)
    merged: dict[tuple[int, int], list[str]] = {}
    for position, body in found:
        block = _block_before(blocks, position)
        if block is None or not body:
            continue
        merged.setdefault((block.start, block.end), []).append(body)
    comments = [Comment(s, e, "\n".join(bodies)) for (s, e), bodies in merged.items()]
    return base, sorted(comments, key=lambda c: c.start)


def _block_before(blocks: Sequence[Block], position: int) -> Block | None:
    """The block a review run at ``position`` belongs to: the last one ending at or before it."""
    best: Block | None = None
    for block in blocks:
        if block.end <= position:
            best = block
    return best


def apply_reviews(text: str, comments: Iterable[Comment]) -> str:
    """``text`` with its old review lines replaced by ``comments`` (an empty comment removes one).

    Anchors are ranges of the text without reviews and must name one of its
    blocks exactly; anything else raises :class:`FeedbackError`.
    """
    base, _old = split_reviews(text)
    blocks = {(b.start, b.end) for b in render_plan_html(base)}
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
        body = _comment_lines(comment.text)
        if body:
            wanted.setdefault(key, []).extend(body)
    lines = base.split("\n")
    for (_start, end), body in sorted(wanted.items(), key=lambda item: -item[0][1]):
        lines[end:end] = ["", *(f"{REVIEW_PREFIX} {line}" for line in body), ""]
    result = "\n".join(lines)
    expected = [Comment(s, e, "\n".join(b)) for (s, e), b in sorted(wanted.items())]
    if split_reviews(result) != (base, expected):
        # e.g. a block that is an unclosed code fence: the comment would become code.
        raise FeedbackError("These comments cannot be written back unambiguously here.")
    return result
