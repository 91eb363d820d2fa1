"""A command line split into its simple commands, for permission rules (never for the guard).

A rule matches the words of each simple command as bash will see them, so the split uses
the guard's parser checks and its word decoder; anything that is not plain (an
expansion, a redirection to a file, a compound command) is noted so that no rule allows
the line by its parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planshell.shell import bashlex_safe
from planshell.shell.parsing import LIST_OPS, precheck, strip_time, uncovered_text
from planshell.shell.scanner import WordError, scan_word
from planshell.shell.verdict import quote


@dataclass(frozen=True)
class Segment:
    """One simple command of a command line, as bash will see its words."""

    src: str  # its source text
    words: tuple[str, ...]  # decoded words (quote removal done); a word with an expansion is ""
    plain: bool  # every word is literal, no assignment, no writing redirection


@dataclass(frozen=True)
class CommandParts:
    """A command line split into simple commands (for permission rules, never for the guard).

    ``plain`` is True when the line is only simple commands joined by ``;``,
    ``&&``, ``||``, newlines and pipes, each of them plain: then the segments are
    *all* that runs, and a rule may allow the line segment by segment. Otherwise
    ``segments`` holds what could be found (for deny rules) and ``why`` says
    what stops a rule from covering the line.
    """

    segments: tuple[Segment, ...]
    plain: bool
    why: str = ""


_HARMLESS_REDIRECT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


class _Splitter:
    """Collect simple commands with the guard's word decoder; note anything not plain."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.segments: list[Segment] = []
        self.why = ""

    def complex(self, why: str) -> None:
        self.why = self.why or why

    def node(self, node: Any, top: bool = True) -> None:
        kind = getattr(node, "kind", None)
        if kind == "list":
            for part in node.parts:
                if part.kind == "operator":
                    if part.op not in LIST_OPS:
                        self.complex(f"it uses the operator {part.op!r}")
                else:
                    self.node(part, top)
        elif kind == "pipeline":
            for part in node.parts:
                if part.kind not in ("pipe", "reservedword"):
                    self.node(part, top)
        elif kind == "command":
            self.command(node, top)
        else:
            self.complex(f"it holds a {kind or 'shell'} construct")
            self.inner(node)

    def inner(self, node: Any) -> None:
        """Walk into any node for the commands inside (deny rules must see them)."""
        for attr in ("parts", "list"):
            for child in getattr(node, attr, None) or []:
                if getattr(child, "kind", None) in ("command", "list", "pipeline", "compound"):
                    self.node(child, top=False)
                else:
                    self.inner(child)
        child = getattr(node, "command", None)
        if child is not None and hasattr(child, "kind"):
            self.node(child, top=False)

    def command(self, node: Any, top: bool) -> None:
        segment = self.src[node.pos[0] : node.pos[1]]
        plain = top
        words: list[str] = []
        for part in node.parts:
            if part.kind == "word":
                try:
                    scan = scan_word(self.src, part)
                except WordError as exc:
                    self.complex(f"a word cannot be read: {exc.why}")
                    words.append("")
                    plain = False
                    continue
                words.append(scan.word.value or "")
                if scan.word.value is None:
                    plain = False
                    self.complex(f"{quote(scan.word.src, 40)} holds an expansion")
                for inner in scan.inner:
                    self.node(inner, top=False)
            elif part.kind == "redirect":
                if not self.harmless_redirect(part):
                    plain = False
                    self.complex(f"{quote(self.src[part.pos[0] : part.pos[1]], 40)} redirects")
            else:
                plain = False
                self.complex(f"it holds a shell {part.kind}")
            if part.kind != "word":
                self.inner(part)
        if not words:
            plain = False
            self.complex("a segment has no command")
        self.segments.append(Segment(segment, tuple(words), plain))

    def harmless_redirect(self, node: Any) -> bool:
        """``2>&1``, ``>/dev/null`` and the like: they neither read nor write files."""
        target = node.output
        if node.type in (">&", "<&") and (isinstance(target, int) or target == "-"):
            return True
        if node.type in (">", ">>", "&>", ">&") and getattr(target, "kind", None) == "word":
            try:
                word = scan_word(self.src, target).word
            except WordError:
                return False
            return word.static and word.value in _HARMLESS_REDIRECT_TARGETS
        return False


def split_command(command: str) -> CommandParts:
    """Split ``command`` into its simple commands with the guard's parser and word decoder."""
    early = precheck(command)
    if early is not None:
        return CommandParts((), False, early.reason)
    stripped = strip_time(command)
    try:
        trees = bashlex_safe.parse(stripped)
    except Exception as exc:
        return CommandParts((), False, f"it cannot be parsed ({type(exc).__name__})")
    if not trees or uncovered_text(stripped, trees) is not None:
        return CommandParts((), False, "it cannot be parsed completely")
    splitter = _Splitter(stripped)
    try:
        for tree in trees:
            splitter.node(tree)
    except RecursionError:
        return CommandParts(tuple(splitter.segments), False, "it is nested too deeply")
    plain = not splitter.why and all(s.plain for s in splitter.segments)
    return CommandParts(tuple(splitter.segments), plain, splitter.why)
