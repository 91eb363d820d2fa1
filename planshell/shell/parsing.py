"""Checks around the bashlex parse: inputs bashlex would mis-read, and text it skipped.

The guard, the permission rules' splitter and ``permissions.resolve`` parse a line the
same way: :func:`precheck` first, a leading ``time`` blanked out by :func:`strip_time`,
then :func:`uncovered_text` to refuse a parse that left part of the line unread.
"""

from __future__ import annotations

import re
from typing import Any

from planshell.shell.verdict import Verdict, unparseable

MAX_COMMAND_LENGTH = 20_000
# The list operators that run commands one after another (bashlex also reports newlines).
LIST_OPS = frozenset({";", "&&", "||", "\n"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# A lone surrogate is how Python carries a byte that is not valid UTF-8 (surrogateescape):
# bash and the programs it runs see raw bytes there, not the character the guard checked.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# The `time` keyword at the very start of the input: bashlex cannot parse it, and it only
# reports how long the pipeline after it took, so the guard blanks it out and checks the rest.
_TIME_PREFIX = re.compile(r"[ \t]*(time[ \t]+(?:-p[ \t]+)?)")
_BAD_CONTINUATION = re.compile(r"(?<![ \t\n])\\\n")
_GAP_OK = re.compile(r"(?:[ \t\n]+|#[^\n]*|\\\n)*")


def precheck(command: str) -> Verdict | None:
    """Refuse inputs that bashlex would mis-read before parsing them at all."""
    if not command.strip():
        return unparseable("the command is empty", command)
    if all(not line.strip() or line.lstrip().startswith("#") for line in command.split("\n")):
        return unparseable("the command is only a comment", command)
    if len(command) > MAX_COMMAND_LENGTH:
        return unparseable("the command is too long", command)
    if _CONTROL.search(command):
        return unparseable("it holds control characters", command)
    if _SURROGATE.search(command):
        return unparseable("it holds bytes that are not valid UTF-8", command)
    if _BAD_CONTINUATION.search(command):
        return unparseable("a backslash-newline joins two tokens", command)
    return None


def strip_time(command: str) -> str:
    """Blank out a leading `time` keyword (and its -p) with spaces, keeping every offset.

    Only an unquoted `time` that is the first word of the input and is followed by a
    blank is the keyword there; it times the pipeline after it and changes nothing else
    (its report goes to stderr), so the command that remains is exactly what bash runs.
    """
    m = _TIME_PREFIX.match(command)
    if m is None:
        return command
    start, end = m.span(1)
    return command[:start] + " " * (end - start) + command[end:]


def _heredoc_spans(node: Any, out: list[tuple[int, int]]) -> None:
    """Collect the source spans of here-document bodies (they sit outside their command)."""
    if getattr(node, "kind", None) == "heredoc":
        out.append(tuple(node.pos))
    for attr in ("parts", "list", "redirects"):
        for child in getattr(node, attr, None) or []:
            _heredoc_spans(child, out)
    for attr in ("command", "heredoc", "output"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            _heredoc_spans(child, out)


def uncovered_text(src: str, trees: list[Any]) -> str | None:
    """Return source text that no parsed node covers (other than blanks and comments)."""
    spans: list[tuple[int, int]] = [tuple(t.pos) for t in trees]
    for tree in trees:
        _heredoc_spans(tree, spans)
    spans.sort()
    cursor = 0
    for start, end in spans:
        if start > cursor and not _GAP_OK.fullmatch(src[cursor:start]):
            return src[cursor:start]
        cursor = max(cursor, end)
    rest = src[cursor:]
    return None if _GAP_OK.fullmatch(rest) else rest
