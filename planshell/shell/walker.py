"""The guard's tree walk: prove every node of one parsed command read-only.

:class:`Walker` visits a bashlex tree and raises :class:`~planshell.shell.verdict.Refusal`
at the first thing that is not allowed: structure (lists, pipes, groups, policy v2
blocks), simple commands (their name, assignments and allowlist rule), redirections and
here-documents. Words are read with :func:`~planshell.shell.scanner.scan_word`; the
``[[ ]]``, ``case`` and ``$(( ))`` markers of :mod:`~planshell.shell.forms` must each be
met where the rewrite put them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any, Protocol

from planshell.shell.allowlist import ALLOWLIST, check_command
from planshell.shell.assignments import check_prefix_assignment
from planshell.shell.conditions import check_cond
from planshell.shell.forms import CASE, COND, COND_END, COND_OPS, MARKER_CHARS, Rewrite
from planshell.shell.parsing import LIST_OPS
from planshell.shell.proc_paths import check_proc_paths
from planshell.shell.scanner import Scan, WordError, scan_word
from planshell.shell.verdict import (
    CD_HINT,
    FIX_STRUCTURE,
    FIX_UNCHECKED,
    Refusal,
    Verdict,
    quote,
    refuse,
)
from planshell.shell.words import Blocked, Word

# Output targets that name the command's own stdout/stderr (see Walker.finish).
_STD_TARGETS = frozenset({"/dev/stdout", "/dev/stderr"})
_NETWORK = re.compile(r"/+dev/+(?:tcp|udp)/")
_FD_NAME = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_HEREDOC_BAD = ("`", "$(", "${", "$[", "\\\n")
# The keywords each policy v2 block may hold (bashlex reports ; and newlines as keywords).
_BLOCK_WORDS: dict[str, frozenset[str]] = {
    "if": frozenset({"if", "then", "elif", "else", "fi"}),
    "for": frozenset({"for", "in", "do", "done", ";", "\n"}),
    "while": frozenset({"while", "do", "done"}),
    "until": frozenset({"until", "do", "done"}),
}
_LOOP_NAME = re.compile(r"[a-z_][a-z0-9_]*")


class Patterns(Protocol):
    """The configured patterns a walk consults (the guard that started it)."""

    def safe_match(self, words_text: str) -> bool: ...

    def destructive_match(self, segment: str) -> str | None: ...


class Walker:
    """Walk one bashlex tree; raise :class:`Refusal` at the first thing that is not allowed."""

    def __init__(self, guard: Patterns, src: str, forms: Rewrite | None = None) -> None:
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
            raise refuse(
                self.orig,
                "the guard could not match its reading of a [[ ]], case, $(( )) or here-doc "
                "with bash's",
                FIX_UNCHECKED,
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
            raise refuse(
                self.std_targets[0],
                "writing to /dev/stdout or /dev/stderr is only allowed when no redirection "
                f"(here {quote(self.fd_sources[0], 40)}) could point fd 1 or 2 at a file",
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
            raise refuse(self.text(node), "function definitions are not allowed", FIX_STRUCTURE)
        elif kind in _BLOCK_WORDS:
            self.block(node, kind)
        else:
            raise refuse(self.text(node), f"the shell construct {kind!r} is not allowed")

    def list_(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "operator":
                if part.op == "&":
                    raise refuse(
                        self.text(node),
                        "background jobs (&) are not allowed",
                        "Run the command in the foreground.",
                    )
                if part.op not in LIST_OPS:
                    raise refuse(self.text(node), f"the operator {part.op!r} is not allowed")
            else:
                self.node(part)

    def pipeline(self, node: Any) -> None:
        for part in node.parts:
            if part.kind == "pipe":
                if part.pipe not in ("|", "|&"):
                    raise refuse(self.text(node), f"the pipe {part.pipe!r} is not allowed")
            elif part.kind == "reservedword":
                if part.word != "!":
                    raise refuse(self.text(node), f"the keyword {part.word!r} is not allowed")
            else:
                self.node(part)

    def compound(self, node: Any) -> None:
        items = list(node.list)
        segment = self.text(node)
        pairs = {"(": ")", "{": "}"}
        if not items:
            raise refuse(segment, "this compound command is not allowed", FIX_STRUCTURE)
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
            raise refuse(segment, "this compound command is not allowed", FIX_STRUCTURE)
        if self.src.startswith("((", node.pos[0]):
            raise refuse(segment, "arithmetic (( )) is not allowed", FIX_STRUCTURE)
        for inner in items[1:-1]:
            if inner.kind == "reservedword":
                raise refuse(segment, f"the keyword {inner.word!r} is not allowed")
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
                    raise refuse(segment, f"the keyword {part.word!r} is not allowed")
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
                raise refuse(segment, f"the construct {pkind!r} is not allowed in `{kind}`")

    def loop_variable(self, part: Any, segment: str) -> None:
        value = self.scan(part, segment).word.value
        if value is None or not _LOOP_NAME.fullmatch(value) or "proxy" in value:
            raise refuse(
                segment,
                f"the loop variable {quote(self.text(part), 40)} could change what a later "
                "command runs (only lower-case names are allowed)",
                "Use a lower-case loop variable such as f.",
            )

    # ------------------------------------------------------------ simple command

    def command(self, node: Any) -> None:
        """Check one simple command; a refused ``cd`` segment also gets the cd hint."""
        try:
            self.simple_command(node)
        except Refusal as refusal:
            verdict = refusal.verdict
            first = next((p for p in node.parts if p.kind == "word"), None)
            if (
                verdict.segment == self.text(node)
                and getattr(first, "word", None) == "cd"
                and CD_HINT not in verdict.reason
            ):
                reason = f"{verdict.reason} Note: {CD_HINT}"
                raise Refusal(Verdict(False, reason, verdict.segment)) from None
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
                raise refuse(segment, f"the construct {part.kind!r} is not allowed")
        for redirect in redirects:
            self.redirect(redirect, segment)
            self.fd_variable(redirect, words, segment)
        if not words:
            if assignments:
                raise refuse(
                    segment,
                    "variable assignments are not allowed (they change the shell's state)",
                    "Drop the assignment.",
                )
            raise refuse(segment, "a redirection without a command is not allowed")
        for assignment in assignments:
            self.prefix_assignment(assignment, segment)
        for left, right in itertools.pairwise(words):
            if left.pos[1] == right.pos[0]:
                raise refuse(
                    segment,
                    f"bashlex split the word {quote(self.text(left) + self.text(right), 40)} "
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
            raise refuse(segment, f"{name} is not a read-only command")
        for scan in scans:
            for inner in scan.inner:
                self.substitution(inner)
        try:
            check_proc_paths(name, [s.word for s in scans[1:]])
            if allowed:
                check_command(name, [s.word for s in scans[1:]])
        except Blocked as exc:
            raise refuse(segment, exc.why, exc.fix) from None
        pattern = self.guard.destructive_match(segment)
        if pattern is not None:
            raise refuse(segment, f"it matches the destructive pattern /{pattern}/")

    def prefix_assignment(self, node: Any, segment: str) -> None:
        """``LC_ALL=C sort f``: only a fixed locale or time zone (see ``assignments``)."""
        scan = self.scan(node, segment)
        try:
            check_prefix_assignment(scan.word.value)
        except Blocked as exc:
            raise refuse(segment, exc.why, exc.fix) from None

    def marker_command(self, words: list[Any], segment: str) -> None:
        """A ``[[ ]]`` or a ``case`` clause that :mod:`forms` rewrote.

        Each marker must sit exactly where the rewrite put it (an anchor), and every other
        word is checked as a word: its substitutions must be allowed.
        """
        head = words[0].pos[0]
        cond = self.src[words[0].pos[0] : words[0].pos[1]] == COND
        if not self.meet(head, "cond" if cond else "case"):
            raise refuse(segment, "this command cannot be checked", FIX_UNCHECKED)
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
                raise refuse(segment, "this [[ ]] cannot be checked", FIX_UNCHECKED)
            try:
                check_cond(items[:-1])
            except Blocked as exc:
                raise refuse(segment, exc.why, exc.fix) from None

    def command_name(self, word: Word, segment: str) -> str:
        """The command name must be one bare literal word (looked up as written)."""
        value = word.value
        if value is None or word.dynamic or word.procsub:
            raise refuse(
                segment,
                f"the command name {quote(word.src, 40)} holds an expansion",
                "Write the command name literally.",
            )
        if word.brace or (word.glob and value != "["):
            raise refuse(
                segment,
                f"the command name {quote(word.src, 40)} holds a glob or brace expansion",
                "Write the command name literally.",
            )
        if "/" in value:
            raise refuse(
                segment,
                f"the command name {quote(value, 40)} is a path, not an allowlisted command",
                "Call the command by its bare name.",
            )
        if not value:
            raise refuse(segment, "the command name is empty")
        return value

    def fd_variable(self, redirect: Any, words: list[Any], segment: str) -> None:
        """``{fd}>file`` assigns a shell variable; bashlex reports ``{fd}`` as a word."""
        for word in words:
            if word.pos[1] == redirect.pos[0] and _FD_NAME.fullmatch(self.text(word)):
                raise refuse(segment, "{fd} redirections assign a shell variable")

    # ---------------------------------------------------------------- redirects

    def redirect(self, node: Any, segment: str) -> None:
        kind = node.type
        rsrc = self.text(node)
        if "/dev/tcp/" in rsrc or "/dev/udp/" in rsrc:
            raise refuse(segment, "/dev/tcp and /dev/udp redirections open network connections")
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
                raise refuse(
                    segment,
                    f"{kind}{quote(word.src, 40)} writes to a file",
                    "Let the output go to stdout instead.",
                )
        elif kind == "<":
            self.fd_sources.append(rsrc)
            word = self.checked_word(target, segment)
            self.proc_word("<", word, segment, recursive=False)
            if word.dynamic or word.glob or word.brace:
                raise refuse(
                    segment,
                    f"the input redirection target {quote(word.src, 40)} holds an expansion "
                    "(it could name /dev/tcp/…)",
                    "Name the input file literally.",
                )
            if word.value is not None and _NETWORK.search(word.value):
                raise refuse(segment, "/dev/tcp and /dev/udp redirections open network connections")
        elif kind in (">", ">>", ">|", "&>", "&>>"):
            word = self.checked_word(target, segment)
            if word.static and word.value in _STD_TARGETS:
                self.std_targets.append(segment)
            elif word.value != "/dev/null" or word.glob:
                raise refuse(
                    segment,
                    f"the redirection {quote(rsrc, 40)} writes to a file "
                    "(only /dev/null, /dev/stdout and /dev/stderr are allowed)",
                    "Let the output go to stdout instead.",
                )
        else:
            raise refuse(
                segment,
                f"the redirection {quote(rsrc, 40)} opens a file for writing",
                "Use plain input redirection instead.",
            )

    def proc_word(self, name: str, word: Word, segment: str, recursive: bool) -> None:
        try:
            check_proc_paths(name, [word], recursive)
        except Blocked as exc:
            raise refuse(segment, exc.why, exc.fix) from None

    def checked_word(self, node: Any, segment: str) -> Word:
        if getattr(node, "kind", None) != "word":
            raise refuse(segment, "a redirection has an unexpected target")
        scan = self.scan(node, segment)
        for inner in scan.inner:
            self.substitution(inner)
        return scan.word

    def heredoc(self, node: Any, segment: str) -> None:
        self.fd_sources.append(self.text(node))
        doc = getattr(node, "heredoc", None)
        delimiter = node.output
        if doc is None or getattr(delimiter, "kind", None) != "word":
            raise refuse(segment, "this here-document cannot be checked")
        value = self.scan(delimiter, segment).word.value
        if value is None:
            raise refuse(segment, "the here-document delimiter holds an expansion")
        if value != getattr(delimiter, "word", None):
            # bashlex found the body's end with its own reading of the delimiter.
            raise refuse(segment, "bashlex reads the here-document delimiter differently")
        body = self.text(doc)
        if any(c in MARKER_CHARS for c in self.src[doc.pos[0] : doc.pos[1]]):
            raise refuse(segment, "this here-document cannot be checked", FIX_UNCHECKED)
        at = delimiter.pos[0]
        if self.meet(at, "heredoc"):
            # A quoted delimiter (<<'EOF'): bash expands nothing in the body, so any body is
            # plain text. The rewrite and bashlex must agree on where the body ends.
            if self.forms.heredoc_ends.get(at) not in (doc.pos[1], doc.pos[1] - 1):
                raise refuse(segment, "this here-document cannot be checked", FIX_UNCHECKED)
            return
        for bad in _HEREDOC_BAD:
            if bad in body:
                shown = "a backslash-newline" if bad == "\\\n" else bad
                raise refuse(
                    segment,
                    f"the here-document body holds {shown}, which bash would expand or run",
                    "Remove the expansion from the here-document.",
                )

    # -------------------------------------------------------------------- words

    def scan(self, node: Any, segment: str) -> Scan:
        """Decode a word and meet the ``$(( ))`` anchors in it."""
        try:
            scan = scan_word(self.src, node)
        except WordError as exc:
            raise refuse(segment, exc.why, exc.fix) from None
        for pos in scan.params:
            self.meet(pos, "arith")
        start, end = node.pos
        if self.orig is not self.src:  # messages quote what the user wrote
            scan.word = dataclasses.replace(scan.word, src=self.orig[start:end])
        return scan
