"""What a bash line really runs, for permission rules (never for the plan-mode guard).

``split_command`` hands a rule each simple command's words as typed; bash runs
something else when a word is brace-expanded (``{rm,-f,x}`` is ``rm -f x``),
names a path (``/bin/rm``), or starts a wrapper that runs the words after it
(``env``, ``nice``, ``sudo``, ``xargs``, ``find -exec``, ``bash -c '…'``,
``eval``). This module walks the whole parsed line (substitutions, redirection
targets, assignments, loops and function bodies included), expands braces (see
``braces``), and unwraps wrappers (see ``wrappers``), so a deny rule sees every command
that will run.

A word whose value is only known when bash runs it (``$x``, ``$(…)``, a glob)
becomes a :class:`~planshell.permissions.args.Hole`. A command whose *name* is a hole, or a wrapper whose
options cannot be read, cannot be resolved: the line gets a reason in
:attr:`Resolution.unresolved`, and the engine then asks instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planshell.permissions.args import Arg, Hole, basename
from planshell.permissions.braces import expand
from planshell.permissions.wrappers import WRAPPERS, Unresolved
from planshell.shell import bashlex_safe
from planshell.shell.parsing import precheck, strip_time, uncovered_text
from planshell.shell.scanner import WordError, scan_word
from planshell.shell.segments import split_command
from planshell.shell.words import Word

# Variables whose value bash runs or sources: PS4 under set -x, PROMPT_COMMAND,
# BASH_ENV, the alias and command hash tables, exported functions (BASH_FUNC_x%%).
_RUNS_VARIABLE = re.compile(
    r"(?<![A-Za-z0-9_])(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|BASH_ALIASES|BASH_CMDS"
    r"|BASH_LOADABLES_PATH|BASH_FUNC_\w*)(?![A-Za-z0-9_])|^ENV\+?="
)
# name[subscript]=value: bash reads it as an assignment; bashlex reports a word.
_ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*\]\+?=.*", re.S)
# Builtins that evaluate text as arithmetic (a[$(cmd)] runs cmd) or assign to variables
# whose later arithmetic use does: literal $( or ` text next to them cannot be resolved.
_EVALUATING = frozenset({
    "let", "declare", "typeset", "local", "export", "readonly", "read", "printf", "test",
    "[", "unset", "mapfile", "readarray", "wait", "getopts", "shift", "return", "exit",
})  # fmt: skip
MAX_DEPTH = 8  # nested bash -c / eval / find -exec levels
MAX_COMMANDS = 500


@dataclass(frozen=True)
class Command:
    """One command the line runs, with its words as bash will pass them."""

    words: tuple[Arg, ...]  # words[0] is always a known string
    src: str  # source text the guard can check; "" for a command a wrapper builds
    layer: bool = False  # a wrapper that only runs the words after it (nice, timeout, exec)
    origin: str = ""  # the source text of the simple command that starts it


@dataclass(frozen=True)
class Resolution:
    """Every command a line runs, and whether a rule may decide the line by them."""

    commands: tuple[Command, ...]
    unresolved: str = ""  # why some command cannot be known before it runs; "" if none
    plain: bool = True  # lines nested in bash -c / eval / wrappers are plain too


def resolve(command: str) -> Resolution:
    """Every command ``command`` runs; never raises."""
    walker = _Resolver(0)
    try:
        walker.line(command)
    except RecursionError:
        walker.fail("it is nested too deeply")
    except Exception as exc:  # fail closed: an unknown command asks
        walker.fail(f"it could not be read ({type(exc).__name__})")
    if walker.literal_substitution and any(
        basename(str(c.words[0])) in _EVALUATING for c in walker.commands
    ):
        walker.fail(
            "quoted $( ) or ` text may run as a command in arithmetic (let, declare, read, test, …)"
        )
    return Resolution(tuple(walker.commands), walker.why, walker.plain)


# ------------------------------------------------------------------------ the walk


@dataclass
class _Resolver:
    depth: int
    commands: list[Command] = field(default_factory=list)
    why: str = ""
    plain: bool = True
    literal_substitution: bool = False  # some word's text holds "$(" or "`" as data

    def fail(self, why: str) -> None:
        self.why = self.why or why

    def line(self, text: str) -> None:
        if self.depth > MAX_DEPTH:
            self.fail("commands are nested too deeply")
            return
        early = precheck(text)
        if early is not None:
            self.fail(early.reason.removeprefix("blocked: "))
            return
        stripped = strip_time(text)
        try:
            trees = bashlex_safe.parse(stripped)
        except Exception as exc:
            self.fail(f"it cannot be parsed ({type(exc).__name__})")
            return
        if not trees or uncovered_text(stripped, trees) is not None:
            self.fail("it cannot be parsed completely")
            return
        for tree in trees:
            self.node(tree, stripped)

    def node(self, node: Any, src: str) -> None:
        kind = getattr(node, "kind", None)
        if kind == "command":
            self.simple(node, src)
        elif kind in ("word", "assignment"):
            self.scan(node, src)
        elif kind == "redirect":
            self.redirect(node, src)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.node(node.command, src)
        else:
            self.children(node, src)

    def children(self, node: Any, src: str) -> None:
        for attr in ("parts", "list", "redirects"):
            for child in getattr(node, attr, None) or []:
                self.node(child, src)
        child = getattr(node, "command", None)
        if child is not None and hasattr(child, "kind"):
            self.node(child, src)

    def scan(self, node: Any, src: str) -> Word | None:
        """Decode a word; walk the commands inside its substitutions."""
        try:
            scanned = scan_word(src, node)
        except WordError as exc:
            self.fail(f"a word cannot be read: {exc.why}")
            return None
        for inner in scanned.inner:
            self.node(inner, src)
        word = scanned.word
        for text in (word.src, word.value or ""):
            if _RUNS_VARIABLE.search(text):
                self.fail(
                    "it sets or names a variable bash runs commands from (PS4, "
                    "PROMPT_COMMAND, BASH_ENV, BASH_ALIASES, BASH_CMDS, BASH_FUNC_…)"
                )
        if word.value is not None and ("$(" in word.value or "`" in word.value):
            self.literal_substitution = True
        return word

    def redirect(self, node: Any, src: str) -> None:
        target = getattr(node, "output", None)
        if getattr(target, "kind", None) == "word":
            self.scan(target, src)
        doc = getattr(node, "heredoc", None)
        if node.type in ("<<", "<<-") and doc is not None:
            delimiter = src[target.pos[0] : target.pos[1]] if target is not None else ""
            body = src[doc.pos[0] : doc.pos[1]]
            quoted = any(c in delimiter for c in "'\"\\")
            if not quoted and any(s in body for s in ("$(", "`", "\\\n")):
                self.fail("a here-document runs a command substitution")
            if "$(" in body or "`" in body:
                self.literal_substitution = True

    def simple(self, node: Any, src: str) -> None:
        words: list[Arg] = []
        readable = True
        for part in node.parts:
            if part.kind == "word":
                word = self.scan(part, src)
                if word is None:
                    readable = False
                elif not words and _ARRAY_ASSIGNMENT.fullmatch(word.value or word.src):
                    continue  # a[0]=x before the command name: an assignment
                else:
                    try:
                        words.extend(expand(word))
                    except WordError as exc:
                        self.fail(exc.why)
                        readable = False
            else:
                self.node(part, src)
        if not readable or not words:
            return  # an unreadable word already failed; no words: only redirections
        self.run(words, src[node.pos[0] : node.pos[1]])

    def run(self, words: Sequence[Arg], src: str) -> None:
        """Record ``words`` and, through any wrappers, the commands they start."""
        current: list[Arg] = list(words)
        origin = src
        while True:
            if len(self.commands) >= MAX_COMMANDS:
                self.fail("it runs too many commands")
                return
            head = current[0]
            if isinstance(head, Hole):
                self.fail(
                    "the command name is only known when it runs (a variable, substitution or glob)"
                )
                return
            handler = WRAPPERS.get(basename(head))
            if handler is None:
                self.commands.append(Command(tuple(current), src, origin=origin))
                return
            try:
                step = handler(current[1:])
            except Unresolved as exc:
                self.commands.append(Command(tuple(current), src, origin=origin))
                self.fail(f"{head}: {exc}")
                return
            self.commands.append(Command(tuple(current), src, step.layer, origin))
            self.plain = self.plain and step.plain
            for text in step.lines:
                self.nested(text)
            for extra in step.others:
                self.run_inner(extra, origin)
            if not step.inner:
                return
            current, src = step.inner, ""

    def run_inner(self, words: list[Arg], origin: str) -> None:
        before = len(self.commands)
        self.run(words, "")
        self.commands[before:] = [
            Command(c.words, c.src, c.layer, origin) for c in self.commands[before:]
        ]

    def nested(self, text: str) -> None:
        inner = _Resolver(self.depth + 1)
        inner.line(text)
        self.commands.extend(inner.commands)
        self.literal_substitution |= inner.literal_substitution
        if inner.why:
            self.fail(inner.why)
        self.plain = self.plain and inner.plain and split_command(text).plain
