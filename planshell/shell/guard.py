"""Plan-mode bash guard: decide whether a shell command is provably read-only.

The spec is ``POLICY.md`` (v2) of the shared bash corpus. In short: rewrite the forms
bashlex cannot parse (``[[ ]]``, ``$(( ))``, ``case``, ``time``, quoted here-docs; see
``forms``), parse with bashlex, walk the tree, and allow only simple commands on the
allowlist (see ``allowlist``) joined by pipes, lists, subshells, groups and
``if``/``for``/``while``/``until``/``case`` blocks, with no assignments (but a literal
locale or time zone prefix) and no writing redirections. Every word a reading command gets
is also checked against ``planshell.procfs`` (other processes' environments). Anything the
guard cannot parse, or cannot classify, is blocked ("fail closed").

bashlex mis-parses some inputs, so the guard never trusts ``node.word``: every word is
decoded again from its source span by :func:`_scan_word`, and every ``$``, backtick and
``<(`` found there must line up with an expansion node that bashlex reported.

Patterns (config ``plan.bash.safe_patterns`` / ``plan.bash.destructive_patterns``) are
case-insensitive regexes and replace the built-in lists when given:

* a destructive pattern is ``re.search``-ed in the source text of every simple command,
  and a match blocks it even when the rules would allow it;
* a safe pattern must ``re.fullmatch`` the words of a simple command whose name is not on
  the allowlist (the source text of its words joined by single spaces, redirections left
  out); a match allows that command only if every structural check still passes.

bashlex is imported lazily: it costs ~100 ms, and the app must start fast.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from planshell.shell import bashlex_safe
from planshell.shell.allowlist import ALLOWLIST, check_command
from planshell.shell.assignments import check_prefix_assignment
from planshell.shell.conditions import check_cond
from planshell.shell.forms import (
    CASE,
    COND,
    COND_END,
    COND_OPS,
    MARKER_CHARS,
    Refused,
    Rewrite,
    Unsupported,
    rewrite,
)
from planshell.shell.proc_paths import check_proc_paths
from planshell.shell.words import FIX_PLAN, Blocked, Word

__all__ = [
    "DEFAULT_DESTRUCTIVE_PATTERNS",
    "DEFAULT_SAFE_PATTERNS",
    "BashGuard",
    "CommandParts",
    "Segment",
    "Verdict",
    "is_read_only",
    "split_command",
]

_P = r"^[\s\"'\\]*"  # the start of a segment, allowing a quoted or escaped name
_END = r"(?![\w.-])"  # the name ends here (so merge does not match merge-base)
DEFAULT_DESTRUCTIVE_PATTERNS: list[str] = [
    _P + r"(?:sudo|doas|su|pkexec)" + _END,
    _P + r"(?:rm|rmdir|shred|unlink|dd|truncate|mkfs(?:\.\w+)?|chmod|chown|chgrp|mv)" + _END,
    _P + r"(?:curl|wget|nc|ncat|ssh|scp|rsync)" + _END,
    _P + r"(?:kill|killall|pkill|shutdown|reboot|halt|poweroff|systemctl)" + _END,
    _P + r"git(?:\s+(?:-C\s+\S+|--no-pager|-P))*\s+"
    r"(?:push|commit|reset|rebase|merge|checkout|switch|restore|clean|rm|mv|cherry-pick|"
    r"revert|am|apply|pull|fetch|clone|gc|prune|update-ref|filter-branch)" + _END,
]
DEFAULT_SAFE_PATTERNS: list[str] = [
    r"(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)\s+--version",
]

MAX_COMMAND_LENGTH = 20_000
_FIX_PARSE = "use a simpler command, or the read/grep/find tools instead."
_FIX_UNCHECKED = "Use a simpler command, or the read/grep/find tools instead."
_CD_HINT = (
    "the working directory is already the project root; use the read/grep/find tools for files."
)
_FIX_STRUCTURE = "Run the simple commands one at a time."
_LIST_OPS = frozenset({";", "&&", "||", "\n"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# A lone surrogate is how Python carries a byte that is not valid UTF-8 (surrogateescape):
# bash and the programs it runs see raw bytes there, not the character the guard checked.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# The `time` keyword at the very start of the input: bashlex cannot parse it, and it only
# reports how long the pipeline after it took, so the guard blanks it out and checks the rest.
_TIME_PREFIX = re.compile(r"[ \t]*(time[ \t]+(?:-p[ \t]+)?)")
# Output targets that name the command's own stdout/stderr (see _Walker.finish).
_STD_TARGETS = frozenset({"/dev/stdout", "/dev/stderr"})
_BAD_CONTINUATION = re.compile(r"(?<![ \t\n])\\\n")
_GAP_OK = re.compile(r"(?:[ \t\n]+|#[^\n]*|\\\n)*")
_NETWORK = re.compile(r"/+dev/+(?:tcp|udp)/")
_TILDE = re.compile(r"~(?:[A-Za-z0-9._-]*|\+)")  # ~, ~user, ~+ ($PWD)
_FD_NAME = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$-])"
_INT = r"\s*-?\s*[0-9]+\s*"
_PARAM_FORMS = (
    re.compile(rf"{_NAME}|!"),  # $x, $1, $@, $!
    re.compile(rf"#{_NAME}"),  # ${#x}
    re.compile(rf"{_NAME}:{_INT}(?::{_INT})?"),  # ${x:1:2} (literal offsets only)
    re.compile(rf"{_NAME}(?::?[-+?]|##?|%%?|//?|/#|/%|\^\^?|,,?)(?P<operand>.*)", re.S),
)
_OPERAND_BAD = ("$(", "`", "<(", ">(", "${", "$'", '$"', "$[")
_HEREDOC_BAD = ("`", "$(", "${", "$[", "\\\n")
_UNQUOTED_META = frozenset(" \t\n;&|<>()")
# The keywords each policy v2 block may hold (bashlex reports ; and newlines as keywords).
_BLOCK_WORDS: dict[str, frozenset[str]] = {
    "if": frozenset({"if", "then", "elif", "else", "fi"}),
    "for": frozenset({"for", "in", "do", "done", ";", "\n"}),
    "while": frozenset({"while", "do", "done"}),
    "until": frozenset({"until", "do", "done"}),
}
_LOOP_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_NAME_ONLY = re.compile(_NAME)
# Variables bash sets from what earlier commands did: `echo /proc/1/environ; cat $_`.
_SHELL_SET = frozenset(
    "_ FUNCNAME PIPESTATUS REPLY MAPFILE OPTARG DIRSTACK COPROC HISTCMD GROUPS".split()
)
_SHELL_PREFIXES = ("BASH", "COMP", "READLINE")  # BASH_REMATCH, BASH_COMMAND, BASH_ARGV, …


@dataclass(frozen=True)
class Verdict:
    """The guard's answer for one command."""

    allowed: bool
    reason: str  # one sentence; for a block: names the offending segment and why, suggests a fix
    segment: str | None = None  # the source text of the offending segment, when known


class _Refusal(Exception):
    """Internal: carries a finished block verdict out of the tree walk."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


def _quote(segment: str, limit: int = 120) -> str:
    flat = " ".join(segment.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _refuse(segment: str, why: str, fix: str = FIX_PLAN) -> _Refusal:
    """Build the refusal: name the segment, say why, and suggest the fix."""
    reason = f'blocked: "{_quote(segment)}" — {why}; plan mode may only read. {fix}'
    return _Refusal(Verdict(False, reason, segment))


def _unparseable(detail: str, command: str) -> Verdict:
    reason = f"blocked: bash could not parse this command safely ({detail}); {_FIX_PARSE}"
    if command.lstrip().startswith("cd "):
        reason += f" Note: {_CD_HINT}"
    return Verdict(False, reason, None)


@dataclass
class _Scan:
    """What the quote scanner learned about one word."""

    word: Word
    inner: list[Any] = field(default_factory=list)  # commands inside $(…), `…` and <(…)
    params: list[int] = field(default_factory=list)  # offsets of its parameter expansions


class _Walker:
    """Walk one bashlex tree; raise :class:`_Refusal` at the first thing that is not allowed."""

    def __init__(self, guard: BashGuard, src: str, forms: Rewrite | None = None) -> None:
        self.guard = guard
        self.forms = forms if forms is not None else Rewrite(src)
        self.src = self.forms.text  # what bashlex parsed (policy v2 forms rewritten)
        self.orig = src  # what the user wrote: messages quote this
        self.seen: set[int] = set()  # anchors of the rewrite met in their role
        self.std_targets: list[str] = []  # segments writing to /dev/stdout or /dev/stderr
        self.fd_sources: list[str] = []  # segments that may point some fd at a file

    def meet(self, pos: int, *kinds: str) -> bool:
        """Mark the rewrite anchor at ``pos`` as met when it is one of ``kinds``."""
        if self.forms.anchors.get(pos) in kinds:
            self.seen.add(pos)
            return True
        return False

    def finish(self) -> None:
        """Refuse a rewrite the tree did not confirm, then check /dev/stdout targets."""
        missed = sorted(set(self.forms.anchors) - self.seen)
        if missed:
            raise _refuse(
                self.orig,
                "the guard could not match its reading of a [[ ]], case, $(( )) or here-doc "
                "with bash's",
                _FIX_UNCHECKED,
            )
        self.finish_std_targets()

    def finish_std_targets(self) -> None:
        """Refuse /dev/stdout and /dev/stderr targets unless fd 1 and 2 are surely not files.

        bash opens /dev/stdout like a file (on Linux it is /proc/self/fd/1), so if an earlier
        redirection made fd 1 a file opened for reading (`1<f`, `3<f 1<&3`, `<f 1<&0`),
        `>/dev/stdout` truncates and writes that file. Without any input redirection or
        duplication from another fd, fd 1 and 2 are the tool's pipes (or /dev/null).
        """
        if self.std_targets and self.fd_sources:
            raise _refuse(
                self.std_targets[0],
                "writing to /dev/stdout or /dev/stderr is only allowed when no redirection "
                f"(here {_quote(self.fd_sources[0], 40)}) could point fd 1 or 2 at a file",
                "Drop the /dev/stdout or /dev/stderr redirection.",
            )

    def substitution(self, node: Any) -> None:
        """Check the command inside $(…), `…` or <(…).

        `$(<file)` is bash's fast `$(cat file)`: a command with no words and one input
        redirection, which only opens the file for reading.
        """
        parts = getattr(node, "parts", None) or []
        if (
            getattr(node, "kind", None) == "command"
            and len(parts) == 1
            and parts[0].kind == "redirect"
            and parts[0].type == "<"
            and getattr(parts[0], "input", None) in (None, 0)
        ):
            self.redirect(parts[0], self.text(node))
            return
        self.node(node)

    def text(self, node: Any) -> str:
        start, end = node.pos
        return self.orig[start:end]

    # ----------------------------------------------------------------- structure

    def node(self, node: Any) -> None:
        kind = getattr(node, "kind", None)
        if kind == "command":
            self.command(node)
        elif kind == "list":
            self.list_(node)
        elif kind == "pipeline":
            self.pipeline(node)
        elif kind == "compound":
            self.compound(node)
        elif kind == "function":
            raise _refuse(self.text(node), "function definitions are not allowed", _FIX_STRUCTURE)
        elif kind in _BLOCK_WORDS:
            self.block(node, kind)
        else:
            raise _refuse(self.text(node), f"the shell construct {kind!r} is not allowed")

    def list_(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "operator":
                if part.op == "&":
                    raise _refuse(
                        self.text(node),
                        "background jobs (&) are not allowed",
                        "Run the command in the foreground.",
                    )
                if part.op not in _LIST_OPS:
                    raise _refuse(self.text(node), f"the operator {part.op!r} is not allowed")
            else:
                self.node(part)

    def pipeline(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "pipe":
                if part.pipe not in ("|", "|&"):
                    raise _refuse(self.text(node), f"the pipe {part.pipe!r} is not allowed")
            elif part.kind == "reservedword":
                if part.word != "!":
                    raise _refuse(self.text(node), f"the keyword {part.word!r} is not allowed")
            else:
                self.node(part)

    def compound(self, node: Any) -> None:
        items = list(node.list)
        segment = self.text(node)
        pairs = {"(": ")", "{": "}"}
        if not items:
            raise _refuse(segment, "this compound command is not allowed", _FIX_STRUCTURE)
        first, last = items[0], items[-1]
        if first.kind in _BLOCK_WORDS and len(items) == 1:
            self.node(first)
            for redirect in getattr(node, "redirects", None) or []:
                self.redirect(redirect, segment)
            return
        if (
            first.kind != "reservedword"
            or first.word not in pairs
            or last.kind != "reservedword"
            or last.word != pairs[first.word]
        ):
            raise _refuse(segment, "this compound command is not allowed", _FIX_STRUCTURE)
        if self.src.startswith("((", node.pos[0]):
            raise _refuse(segment, "arithmetic (( )) is not allowed", _FIX_STRUCTURE)
        for inner in items[1:-1]:
            if inner.kind == "reservedword":
                raise _refuse(segment, f"the keyword {inner.word!r} is not allowed")
            self.node(inner)
        for redirect in getattr(node, "redirects", None) or []:
            self.redirect(redirect, segment)

    def block(self, node: Any, kind: str) -> None:
        """``if``/``for``/``while``/``until`` (policy v2): every part inside must be allowed.

        The command's time limit bounds a loop that never ends. A ``for`` variable is an
        assignment, so only a lower-case name that no program reads is allowed (PATH, HOME,
        IFS or GIT_DIR would change what later commands run).
        """
        segment = self.text(node)
        parts = list(node.parts)
        for index, part in enumerate(parts):
            pkind = part.kind
            if pkind == "reservedword":
                if part.word not in _BLOCK_WORDS[kind]:
                    raise _refuse(segment, f"the keyword {part.word!r} is not allowed")
            elif pkind == "word" and kind == "for":
                if index == 1:
                    self.loop_variable(part, segment)
                else:
                    # The list is where loop variables get their values, so a word here
                    # may not lead to /proc at all (see planshell.procfs).
                    scan = self.scan(part, segment)
                    self.proc_word("for", scan.word, segment, recursive=True)
                    for inner in scan.inner:
                        self.substitution(inner)
            elif pkind in ("list", "command", "pipeline", "compound"):
                self.node(part)
            else:
                raise _refuse(segment, f"the construct {pkind!r} is not allowed in `{kind}`")

    def loop_variable(self, part: Any, segment: str) -> None:
        value = self.scan(part, segment).word.value
        if value is None or not _LOOP_NAME.fullmatch(value) or "proxy" in value:
            raise _refuse(
                segment,
                f"the loop variable {_quote(self.text(part), 40)} could change what a later "
                "command runs (only lower-case names are allowed)",
                "Use a lower-case loop variable such as f.",
            )

    # ------------------------------------------------------------ simple command

    def command(self, node: Any) -> None:
        """Check one simple command; a refused ``cd`` segment also gets the cd hint."""
        try:
            self.simple_command(node)
        except _Refusal as refusal:
            verdict = refusal.verdict
            first = next((p for p in node.parts if p.kind == "word"), None)
            if (
                verdict.segment == self.text(node)
                and getattr(first, "word", None) == "cd"
                and _CD_HINT not in verdict.reason
            ):
                reason = f"{verdict.reason} Note: {_CD_HINT}"
                raise _Refusal(Verdict(False, reason, verdict.segment)) from None
            raise

    def simple_command(self, node: Any) -> None:
        segment = self.text(node)
        words, redirects, assignments = [], [], []
        for part in node.parts:
            if part.kind == "assignment":
                assignments.append(part)
            elif part.kind == "word":
                words.append(part)
            elif part.kind == "redirect":
                redirects.append(part)
            else:
                raise _refuse(segment, f"the construct {part.kind!r} is not allowed")
        for redirect in redirects:
            self.redirect(redirect, segment)
            self.fd_variable(redirect, words, segment)
        if not words:
            if assignments:
                raise _refuse(
                    segment,
                    "variable assignments are not allowed (they change the shell's state)",
                    "Drop the assignment.",
                )
            raise _refuse(segment, "a redirection without a command is not allowed")
        for assignment in assignments:
            self.prefix_assignment(assignment, segment)
        for left, right in itertools.pairwise(words):
            if left.pos[1] == right.pos[0]:
                raise _refuse(
                    segment,
                    f"bashlex split the word {_quote(self.text(left) + self.text(right), 40)} "
                    "in two, so its value cannot be trusted",
                    "Put the whole word in one pair of single quotes.",
                )
        if self.src[words[0].pos[0] : words[0].pos[1]] in (COND, CASE):
            self.marker_command(words, segment)
            return
        self.meet(words[0].pos[0], "arithcmd")
        scans = [self.scan(w, segment) for w in words]
        name_word = scans[0].word
        name = self.command_name(name_word, segment)
        allowed = name in ALLOWLIST
        if not allowed and not self.guard.safe_match(" ".join(s.word.src for s in scans)):
            raise _refuse(segment, f"{name} is not a read-only command")
        for scan in scans:
            for inner in scan.inner:
                self.substitution(inner)
        try:
            check_proc_paths(name, [s.word for s in scans[1:]])
            if allowed:
                check_command(name, [s.word for s in scans[1:]])
        except Blocked as exc:
            raise _refuse(segment, exc.why, exc.fix) from None
        pattern = self.guard.destructive_match(segment)
        if pattern is not None:
            raise _refuse(segment, f"it matches the destructive pattern /{pattern}/")

    def prefix_assignment(self, node: Any, segment: str) -> None:
        """``LC_ALL=C sort f``: only a fixed locale or time zone (see ``assignments``)."""
        scan = self.scan(node, segment)
        try:
            check_prefix_assignment(scan.word.value)
        except Blocked as exc:
            raise _refuse(segment, exc.why, exc.fix) from None

    def marker_command(self, words: list[Any], segment: str) -> None:
        """A ``[[ ]]`` or a ``case`` clause that :mod:`forms` rewrote.

        Each marker must sit exactly where the rewrite put it (an anchor), and every other
        word is checked as a word: its substitutions must be allowed.
        """
        head = words[0].pos[0]
        cond = self.src[words[0].pos[0] : words[0].pos[1]] == COND
        if not self.meet(head, "cond" if cond else "case"):
            raise _refuse(segment, "this command cannot be checked", _FIX_UNCHECKED)
        items: list[Word | str] = []
        for word in words[1:]:
            raw = self.src[word.pos[0] : word.pos[1]]
            if cond and raw in COND_OPS and self.meet(word.pos[0], "condop"):
                items.append(COND_OPS[raw])
                continue
            if cond and raw == COND_END and self.meet(word.pos[0], "condend"):
                items.append("]]")
                continue
            scan = self.scan(word, segment)
            for inner in scan.inner:
                self.substitution(inner)
            items.append(scan.word)
        if cond:
            if items[-1:] != ["]]"] or "]]" in items[:-1]:
                raise _refuse(segment, "this [[ ]] cannot be checked", _FIX_UNCHECKED)
            try:
                check_cond(items[:-1])
            except Blocked as exc:
                raise _refuse(segment, exc.why, exc.fix) from None

    def command_name(self, word: Word, segment: str) -> str:
        """The command name must be one bare literal word (looked up as written)."""
        value = word.value
        if value is None or word.dynamic or word.procsub:
            raise _refuse(
                segment,
                f"the command name {_quote(word.src, 40)} holds an expansion",
                "Write the command name literally.",
            )
        if word.brace or (word.glob and value != "["):
            raise _refuse(
                segment,
                f"the command name {_quote(word.src, 40)} holds a glob or brace expansion",
                "Write the command name literally.",
            )
        if "/" in value:
            raise _refuse(
                segment,
                f"the command name {_quote(value, 40)} is a path, not an allowlisted command",
                "Call the command by its bare name.",
            )
        if not value:
            raise _refuse(segment, "the command name is empty")
        return value

    def fd_variable(self, redirect: Any, words: list[Any], segment: str) -> None:
        """``{fd}>file`` assigns a shell variable; bashlex reports ``{fd}`` as a word."""
        for word in words:
            if word.pos[1] == redirect.pos[0] and _FD_NAME.fullmatch(self.text(word)):
                raise _refuse(segment, "{fd} redirections assign a shell variable")

    # ---------------------------------------------------------------- redirects

    def redirect(self, node: Any, segment: str) -> None:
        kind = node.type
        rsrc = self.text(node)
        if "/dev/tcp/" in rsrc or "/dev/udp/" in rsrc:
            raise _refuse(segment, "/dev/tcp and /dev/udp redirections open network connections")
        target = node.output
        if kind in ("<<", "<<-"):
            self.heredoc(node, segment)
        elif kind == "<<<":
            self.fd_sources.append(rsrc)
            self.checked_word(target, segment)
        elif kind in (">&", "<&"):
            if target == "-":
                return
            if isinstance(target, int):
                if kind == "<&" or target not in (1, 2):
                    self.fd_sources.append(rsrc)
                return
            word = self.checked_word(target, segment)
            if kind == ">&" and word.static and word.value in _STD_TARGETS:
                self.std_targets.append(segment)
            elif not (kind == ">&" and word.value == "/dev/null" and not word.glob):
                raise _refuse(
                    segment,
                    f"{kind}{_quote(word.src, 40)} writes to a file",
                    "Let the output go to stdout instead.",
                )
        elif kind == "<":
            self.fd_sources.append(rsrc)
            word = self.checked_word(target, segment)
            self.proc_word("<", word, segment, recursive=False)
            if word.dynamic or word.glob or word.brace:
                raise _refuse(
                    segment,
                    f"the input redirection target {_quote(word.src, 40)} holds an expansion "
                    "(it could name /dev/tcp/…)",
                    "Name the input file literally.",
                )
            if word.value is not None and _NETWORK.search(word.value):
                raise _refuse(
                    segment, "/dev/tcp and /dev/udp redirections open network connections"
                )
        elif kind in (">", ">>", ">|", "&>", "&>>"):
            word = self.checked_word(target, segment)
            if word.static and word.value in _STD_TARGETS:
                self.std_targets.append(segment)
            elif word.value != "/dev/null" or word.glob:
                raise _refuse(
                    segment,
                    f"the redirection {_quote(rsrc, 40)} writes to a file "
                    "(only /dev/null, /dev/stdout and /dev/stderr are allowed)",
                    "Let the output go to stdout instead.",
                )
        else:
            raise _refuse(
                segment,
                f"the redirection {_quote(rsrc, 40)} opens a file for writing",
                "Use plain input redirection instead.",
            )

    def proc_word(self, name: str, word: Word, segment: str, recursive: bool) -> None:
        try:
            check_proc_paths(name, [word], recursive)
        except Blocked as exc:
            raise _refuse(segment, exc.why, exc.fix) from None

    def checked_word(self, node: Any, segment: str) -> Word:
        if getattr(node, "kind", None) != "word":
            raise _refuse(segment, "a redirection has an unexpected target")
        scan = self.scan(node, segment)
        for inner in scan.inner:
            self.substitution(inner)
        return scan.word

    def heredoc(self, node: Any, segment: str) -> None:
        self.fd_sources.append(self.text(node))
        doc = getattr(node, "heredoc", None)
        delimiter = node.output
        if doc is None or getattr(delimiter, "kind", None) != "word":
            raise _refuse(segment, "this here-document cannot be checked")
        value = self.scan(delimiter, segment).word.value
        if value is None:
            raise _refuse(segment, "the here-document delimiter holds an expansion")
        if value != getattr(delimiter, "word", None):
            # bashlex found the body's end with its own reading of the delimiter.
            raise _refuse(segment, "bashlex reads the here-document delimiter differently")
        body = self.text(doc)
        if any(c in MARKER_CHARS for c in self.src[doc.pos[0] : doc.pos[1]]):
            raise _refuse(segment, "this here-document cannot be checked", _FIX_UNCHECKED)
        at = delimiter.pos[0]
        if self.meet(at, "heredoc"):
            # A quoted delimiter (<<'EOF'): bash expands nothing in the body, so any body is
            # plain text. The rewrite and bashlex must agree on where the body ends.
            if self.forms.heredoc_ends.get(at) not in (doc.pos[1], doc.pos[1] - 1):
                raise _refuse(segment, "this here-document cannot be checked", _FIX_UNCHECKED)
            return
        for bad in _HEREDOC_BAD:
            if bad in body:
                shown = "a backslash-newline" if bad == "\\\n" else bad
                raise _refuse(
                    segment,
                    f"the here-document body holds {shown}, which bash would expand or run",
                    "Remove the expansion from the here-document.",
                )

    # -------------------------------------------------------------------- words

    def scan(self, node: Any, segment: str) -> _Scan:
        """Decode a word and meet the ``$(( ))`` anchors in it."""
        try:
            scan = _scan_word(self.src, node)
        except _WordError as exc:
            raise _refuse(segment, exc.why, exc.fix) from None
        for pos in scan.params:
            self.meet(pos, "arith")
        start, end = node.pos
        if self.orig is not self.src:  # messages quote what the user wrote
            scan.word = dataclasses.replace(scan.word, src=self.orig[start:end])
        return scan


class _WordError(Exception):
    def __init__(self, why: str, fix: str = "Use plain single quotes.") -> None:
        super().__init__(why)
        self.why = why
        self.fix = fix


def _param_problem(node: Any) -> str | None:
    """Describe why a parameter expansion is not allowed, or return None."""
    value = getattr(node, "value", None)
    if not isinstance(value, str) or not value:
        return "the word uses $'…', $\"…\" or a bare $, which bashlex cannot decode"
    for n, form in enumerate(_PARAM_FORMS):
        m = form.fullmatch(value)
        if m is None:
            continue
        if n == 3 and any(bad in m.group("operand") for bad in _OPERAND_BAD):
            return f"the expansion ${{{value}}} runs a substitution bashlex cannot see"
        return None
    return f"the expansion ${{{value}}} assigns, transforms or is indirect"


def _param_shape(value: Any) -> tuple[str, str]:
    """How far an expansion's value is the attacker's (see planshell.procfs).

    ``$(…)``-like sources, variables that bash sets from what commands did (``$_``,
    ``BASH_REMATCH``, ``PIPESTATUS``, …) and operators with operands
    (``${x:-/proc/1/environ}``) can be any text. Loop variables (whose lists are checked)
    and the environment planshell passes (no command in plan mode can assign) are not.
    """
    name = value if isinstance(value, str) else ""
    bare = name[1:] if name.startswith("#") and len(name) > 1 else name
    if name.startswith("#") and _NAME_ONLY.fullmatch(bare):
        return ("safe", name)  # a length: a number
    if not _NAME_ONLY.fullmatch(bare) or bare in _SHELL_SET or bare.startswith(_SHELL_PREFIXES):
        return ("any", name)
    return ("safe", bare)


class _WordScanner:
    """Decode one word from its source span (see :func:`_scan_word`)."""

    def __init__(self, src: str, node: Any) -> None:
        self.src = src
        self.start, self.end = node.pos
        self.parts = {p.pos[0]: p for p in (getattr(node, "parts", None) or [])}
        self.visited: set[int] = set()
        self.out: list[str] = []
        self.inner: list[Any] = []
        self.params: list[int] = []
        self.shape: list[tuple[str, str]] = []
        self.dynamic = self.procsub = self.glob = self.risky = self.split = False
        self.brace_open = self.brace_sep = self.brace = self.prev_dot = False

    def fail(self, why: str) -> _WordError:
        return _WordError(f"the word {_quote(self.src[self.start : self.end], 40)} {why}")

    def take_part(self, i: int, kinds: tuple[str, ...]) -> int:
        """Consume the expansion node bashlex reported at ``i``; return the end offset."""
        part = self.parts.get(i)
        if part is None or part.kind not in kinds or part.pos[1] <= i or part.pos[1] > self.end:
            raise self.fail("holds an expansion that bashlex did not parse")
        self.visited.add(i)
        if part.kind == "parameter":
            problem = _param_problem(part)
            if problem:
                raise _WordError(problem, "Use a plain $VAR or ${VAR} expansion.")
            self.dynamic = True
            self.params.append(part.pos[0])
            self.shape.append(_param_shape(part.value))
        elif part.kind == "commandsubstitution":
            self.dynamic = True
            self.shape.append(("any", ""))
            if part.command is not None:
                self.inner.append(part.command)
        elif part.kind == "processsubstitution":
            if self.src.startswith(">(", i):
                raise _WordError(
                    "output process substitution >(…) runs a writer",
                    "Read from stdout instead.",
                )
            self.procsub = True
            self.shape.append(("safe", "<("))  # a /dev/fd/N pipe
            self.inner.append(part.command)
        elif part.kind == "tilde":
            text = self.src[part.pos[0] : part.pos[1]]
            if not _TILDE.fullmatch(text) or getattr(part, "value", text) != text:
                raise self.fail("holds a ~ expansion that cannot be checked")
            self.out.append(text)
            self.shape.extend(("u", c) for c in text)
        return part.pos[1]

    def literal(self, c: str, quoted: bool) -> None:
        if c in MARKER_CHARS:  # a rewrite marker where bash would see text: readings differ
            raise _WordError("the guard could not match its reading of this word with bash's")
        if not quoted:
            if c in "*?[":
                if not self.glob:
                    prefix = "".join(self.out)
                    self.risky = prefix == "" or prefix.startswith("-")
                self.glob = True
            elif c == "{":
                self.brace_open = True
            elif c == "," and self.brace_open:
                self.brace_sep = True
            elif c == "." and self.brace_open and self.prev_dot:
                self.brace_sep = True  # a sequence expression such as {1..3}
            elif c == "}" and self.brace_open and self.brace_sep:
                self.brace = True
        self.prev_dot = c == "." and not quoted
        self.out.append(c)
        self.shape.append(("q" if quoted else "u", c))

    def dollar(self, i: int, quoted: bool) -> int:
        nxt = self.src[i + 1] if i + 1 < self.end else ""
        if nxt in ("'", '"'):
            raise _WordError(
                "$'…' and $\"…\" quoting cannot be decoded safely",
                "Use plain single or double quotes.",
            )
        if i not in self.parts and (i + 1 == self.end) and not quoted:
            self.literal("$", quoted=True)
            return i + 1
        end = self.take_part(i, ("parameter", "commandsubstitution"))
        if not quoted or self.src[i + 1 : end].lstrip("{").startswith("@"):
            self.split = True  # word splitting, or "$@" (several words even when quoted)
        return end

    def unquoted(self, i: int) -> int:
        src, c = self.src, self.src[i]
        nxt = src[i + 1] if i + 1 < self.end else ""
        if c == "\\":
            if not nxt:
                raise self.fail("ends with a lone backslash")
            if nxt != "\n":
                self.literal(nxt, quoted=True)
            return i + 2
        if c == "'":
            close = src.find("'", i + 1, self.end)
            if close < 0:
                raise self.fail("has an unterminated single quote")
            for ch in src[i + 1 : close]:
                self.literal(ch, quoted=True)
            return close + 1
        if c == "$":
            return self.dollar(i, quoted=False)
        if c == "`":
            self.split = True
            return self.take_part(i, ("commandsubstitution",))
        if c in "<>" and nxt == "(":
            return self.take_part(i, ("processsubstitution",))
        if c == "~" and i in self.parts:
            return self.take_part(i, ("tilde",))
        if c in _UNQUOTED_META:
            raise self.fail(f"holds an unquoted {c!r} that bashlex mis-parsed")
        self.literal(c, quoted=False)
        return i + 1

    def double_quoted(self, i: int) -> tuple[int, bool]:
        src, c = self.src, self.src[i]
        nxt = src[i + 1] if i + 1 < self.end else ""
        if c == '"':
            return i + 1, False
        if c == "\\":
            if nxt in ("$", "`", '"', "\\"):
                self.literal(nxt, quoted=True)
                return i + 2, True
            if nxt == "\n":
                return i + 2, True
            self.literal("\\", quoted=True)
            return i + 1, True
        if c == "$":
            return self.dollar(i, quoted=True), True
        if c == "`":
            return self.take_part(i, ("commandsubstitution",)), True
        self.literal(c, quoted=True)
        return i + 1, True

    def run(self) -> _Scan:
        i, in_double = self.start, False
        while i < self.end:
            if in_double:
                i, in_double = self.double_quoted(i)
            elif self.src[i] == '"':
                i, in_double = i + 1, True
            else:
                i = self.unquoted(i)
        if in_double or i != self.end:
            raise self.fail("has an unterminated double quote")
        if set(self.parts) - self.visited:
            raise self.fail("holds an expansion the guard could not place")
        text = self.src[self.start : self.end]
        if (self.dynamic or self.procsub) and "\n" in text:
            raise self.fail("holds a command substitution and spans a newline")
        value = None if (self.dynamic or self.procsub) else "".join(self.out)
        word = Word(
            src=text,
            value=value,
            dynamic=self.dynamic,
            procsub=self.procsub,
            glob=self.glob,
            risky_glob=self.glob and self.risky,
            brace=self.brace,
            split=self.split,
            shape=tuple(self.shape),
        )
        return _Scan(word, self.inner, self.params)


def _scan_word(src: str, node: Any) -> _Scan:
    """Decode a word from its source span, cross-checking bashlex's expansion nodes.

    The value is bash's own quote removal done by :class:`_WordScanner` (single quotes,
    double quotes with their four escapes, backslashes, ``'it'\\''s'`` splices), never
    bashlex's ``node.word``, which keeps later quotes of a word that starts with one
    (``'-del''ete'``) and drops backslashes (``-F'\\t'``). Every check after this point
    sees the value bash will see, so such words need no special refusal.
    """
    return _WordScanner(src, node).run()


# ----------------------------------------------------------------------- top level


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


def _uncovered_text(src: str, trees: list[Any]) -> str | None:
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


def _compile(
    patterns: list[str] | None, defaults: list[str], label: str, warnings: list[str]
) -> tuple[list[re.Pattern[str]], bool]:
    """Compile a replace-only pattern list; fall back to the defaults if none compiles."""
    if patterns is None:
        return [re.compile(p, re.IGNORECASE) for p in defaults], False
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except (re.error, TypeError) as exc:
            warnings.append(f"plan.bash.{label}: skipped invalid regex {pattern!r} ({exc})")
    if patterns and not compiled:
        warnings.append(f"plan.bash.{label}: every pattern is invalid; using the built-in list")
        return [re.compile(p, re.IGNORECASE) for p in defaults], False
    return compiled, True


class BashGuard:
    """Decides whether a bash command is provably read-only (plan mode)."""

    def __init__(
        self,
        safe_patterns: list[str] | None = None,
        destructive_patterns: list[str] | None = None,
    ) -> None:
        self.warnings: list[str] = []
        self._safe, self.uses_custom_safe = _compile(
            safe_patterns, DEFAULT_SAFE_PATTERNS, "safe_patterns", self.warnings
        )
        self._destructive, self.uses_custom_destructive = _compile(
            destructive_patterns,
            DEFAULT_DESTRUCTIVE_PATTERNS,
            "destructive_patterns",
            self.warnings,
        )
        self._cached = functools.lru_cache(maxsize=1024)(self._evaluate)

    def check(self, command: str) -> Verdict:
        """Return the verdict for ``command``; never raises (any error blocks)."""
        if not isinstance(command, str):
            return Verdict(False, "blocked: the command is not a string.", None)
        try:
            return self._cached(command)
        except Exception as exc:  # fail closed on any bug
            return Verdict(
                False,
                f"blocked: the guard hit an internal error ({type(exc).__name__}); {_FIX_PARSE}",
                None,
            )

    def safe_match(self, words_text: str) -> bool:
        return any(p.fullmatch(words_text) for p in self._safe)

    def destructive_match(self, segment: str) -> str | None:
        for p in self._destructive:
            if p.search(segment):
                return p.pattern
        return None

    def _evaluate(self, command: str) -> Verdict:
        early = _precheck(command)
        if early is not None:
            return early
        try:
            forms = rewrite(command)
        except Refused as exc:
            return _refuse(command, exc.why, exc.fix).verdict
        except Unsupported:
            forms = Rewrite(_strip_time(command))
        text = forms.text
        if not text.strip():
            return _unparseable("`time` has no command after it", command)
        try:
            trees = bashlex_safe.parse(text)
        except Exception as exc:
            return _unparseable(f"{type(exc).__name__}: {_quote(str(exc), 80)}", command)
        if not trees:
            return _unparseable("nothing to run", command)
        stray = _uncovered_text(text, trees)
        if stray is not None:
            return _unparseable(f"bashlex skipped {_quote(stray, 40)!r}", command)
        walker = _Walker(self, command, forms)
        try:
            for tree in trees:
                walker.node(tree)
            walker.finish()
        except _Refusal as refusal:
            return refusal.verdict
        except RecursionError:
            return _unparseable("the command is nested too deeply", command)
        return Verdict(True, "allowed: every part of the command only reads.", None)


def _precheck(command: str) -> Verdict | None:
    """Refuse inputs that bashlex would mis-read before parsing them at all."""
    if not command.strip():
        return _unparseable("the command is empty", command)
    if all(not line.strip() or line.lstrip().startswith("#") for line in command.split("\n")):
        return _unparseable("the command is only a comment", command)
    if len(command) > MAX_COMMAND_LENGTH:
        return _unparseable("the command is too long", command)
    if _CONTROL.search(command):
        return _unparseable("it holds control characters", command)
    if _SURROGATE.search(command):
        return _unparseable("it holds bytes that are not valid UTF-8", command)
    if _BAD_CONTINUATION.search(command):
        return _unparseable("a backslash-newline joins two tokens", command)
    return None


def _strip_time(command: str) -> str:
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


@functools.cache
def _default_guard() -> BashGuard:
    return BashGuard()


def is_read_only(command: str) -> bool:
    """True when the default guard allows ``command``; never raises."""
    try:
        return _default_guard().check(command).allowed
    except Exception:
        return False


# ------------------------------------------------------------- segments (permission rules)


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
                    if part.op not in _LIST_OPS:
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
                    scan = _scan_word(self.src, part)
                except _WordError as exc:
                    self.complex(f"a word cannot be read: {exc.why}")
                    words.append("")
                    plain = False
                    continue
                words.append(scan.word.value or "")
                if scan.word.value is None:
                    plain = False
                    self.complex(f"{_quote(scan.word.src, 40)} holds an expansion")
                for inner in scan.inner:
                    self.node(inner, top=False)
            elif part.kind == "redirect":
                if not self.harmless_redirect(part):
                    plain = False
                    self.complex(f"{_quote(self.src[part.pos[0] : part.pos[1]], 40)} redirects")
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
                word = _scan_word(self.src, target).word
            except _WordError:
                return False
            return word.static and word.value in _HARMLESS_REDIRECT_TARGETS
        return False


def split_command(command: str) -> CommandParts:
    """Split ``command`` into its simple commands with the guard's parser and word decoder."""
    early = _precheck(command)
    if early is not None:
        return CommandParts((), False, early.reason)
    stripped = _strip_time(command)
    try:
        trees = bashlex_safe.parse(stripped)
    except Exception as exc:
        return CommandParts((), False, f"it cannot be parsed ({type(exc).__name__})")
    if not trees or _uncovered_text(stripped, trees) is not None:
        return CommandParts((), False, "it cannot be parsed completely")
    splitter = _Splitter(stripped)
    try:
        for tree in trees:
            splitter.node(tree)
    except RecursionError:
        return CommandParts(tuple(splitter.segments), False, "it is nested too deeply")
    plain = not splitter.why and all(s.plain for s in splitter.segments)
    return CommandParts(tuple(splitter.segments), plain, splitter.why)
