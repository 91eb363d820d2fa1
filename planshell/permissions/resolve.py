"""What a bash line really runs, for permission rules (never for the plan-mode guard).

``split_command`` hands a rule each simple command's words as typed; bash runs
something else when a word is brace-expanded (``{rm,-f,x}`` is ``rm -f x``),
names a path (``/bin/rm``), or starts a wrapper that runs the words after it
(``env``, ``nice``, ``sudo``, ``xargs``, ``find -exec``, ``bash -c '…'``,
``eval``). This module walks the whole parsed line (substitutions, redirection
targets, assignments, loops and function bodies included), expands braces, and
unwraps wrappers, so a deny rule sees every command that will run.

A word whose value is only known when bash runs it (``$x``, ``$(…)``, a glob)
becomes a :class:`Hole`. A command whose *name* is a hole, or a wrapper whose
options cannot be read, cannot be resolved: the line gets a reason in
:attr:`Resolution.unresolved`, and the engine then asks instead of guessing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

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
MAX_BRACE_WORDS = 256


class Hole(Enum):
    """A word bash fills in at run time."""

    ONE = "one"  # exactly one word, value unknown ("$x", a file name from find)
    MANY = "many"  # any number of words, none included ($x unquoted, a glob, xargs input)


Arg = str | Hole


@dataclass(frozen=True)
class Command:
    """One command the line runs, with its words as bash will pass them."""

    words: tuple[Arg, ...]  # words[0] is always a known string
    src: str  # source text the guard can check; "" for a command a wrapper builds
    layer: bool = False  # a wrapper that only runs the words after it (nice, timeout, exec)
    origin: str = ""  # the source text of the simple command that starts it


@dataclass(frozen=True)
class Resolution:
    commands: tuple[Command, ...]
    unresolved: str = ""  # why some command cannot be known before it runs; "" if none
    plain: bool = True  # lines nested in bash -c / eval / wrappers are plain too


class _Unresolved(Exception):
    pass


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


def basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word


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
                        words.extend(_expand(word))
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
            handler = _WRAPPERS.get(basename(head))
            if handler is None:
                self.commands.append(Command(tuple(current), src, origin=origin))
                return
            try:
                step = handler(current[1:])
            except _Unresolved as exc:
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


# --------------------------------------------------------------------- words


_SEQUENCE = re.compile(
    r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?"
)
Marked = list[tuple[str, bool]]  # (character, quoted)


def _expand(word: Word) -> list[Arg]:
    """The words bash makes of ``word``: brace expansion, then globs become holes."""
    if word.value is None:
        return [Hole.MANY if word.split or word.brace else Hole.ONE]
    if not word.brace and not word.glob:
        return [word.value]
    marks = _marks(word.src)
    if "".join(c for c, _ in marks) != word.value:
        raise WordError(f"the word {word.src!r} could not be decoded twice alike")
    pieces = _braces(marks) if word.brace else [marks]
    if len(pieces) > MAX_BRACE_WORDS:
        raise WordError(f"the word {word.src!r} expands to too many words")
    return [Hole.MANY if _has_glob(p) else "".join(c for c, _ in p) for p in pieces]


def _marks(src: str) -> Marked:
    """Quote removal of a word without expansions, keeping which characters were quoted."""
    out: Marked = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            if i + 1 < n and src[i + 1] != "\n":
                out.append((src[i + 1], True))
            i += 2
        elif c == "'":
            end = src.index("'", i + 1)
            out.extend((ch, True) for ch in src[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while src[i] != '"':
                if src[i] == "\\" and src[i + 1] in '$`"\\\n':
                    if src[i + 1] != "\n":
                        out.append((src[i + 1], True))
                    i += 2
                else:
                    out.append((src[i], True))
                    i += 1
            i += 1
        else:
            out.append((c, False))
            i += 1
    return out


def _has_glob(marks: Marked) -> bool:
    for i, (c, quoted) in enumerate(marks):
        if quoted:
            continue
        if c in "*?":
            return True
        if c == "[" and any(ch == "]" and not q for ch, q in marks[i + 2 :]):
            return True
    return False


def _braces(marks: Marked) -> list[Marked]:
    """Bash brace expansion of one word (``{a,b}``, nested, ``{1..3}``, ``{a..c}``)."""
    i = 0
    while i < len(marks):
        c, quoted = marks[i]
        if c == "{" and not quoted and not (i and marks[i - 1] == ("$", False)):
            found = _brace_body(marks, i)
            if found is not None:
                end, parts = found
                alternatives = parts if len(parts) > 1 else _sequence(parts[0])
                if alternatives is not None:
                    tails = _braces(marks[end + 1 :])
                    out: list[Marked] = []
                    for alternative in alternatives:
                        for middle in _braces(alternative):
                            out.extend(marks[:i] + middle + tail for tail in tails)
                            if len(out) > MAX_BRACE_WORDS:
                                return out
                    return out
        i += 1
    return [marks]


def _brace_body(marks: Marked, start: int) -> tuple[int, list[Marked]] | None:
    depth, parts, current = 0, [], []  # type: ignore[var-annotated]
    for j in range(start + 1, len(marks)):
        c, quoted = marks[j]
        if not quoted and c == "{":
            depth += 1
        elif not quoted and c == "}":
            if depth == 0:
                parts.append(current)
                return j, parts
            depth -= 1
        elif not quoted and c == "," and depth == 0:
            parts.append(current)
            current = []
            continue
        current.append(marks[j])
    return None


def _sequence(marks: Marked) -> list[Marked] | None:
    if any(q for _, q in marks):
        return None
    m = _SEQUENCE.fullmatch("".join(c for c, _ in marks))
    if m is None:
        return None
    if m.group(1) is not None:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        width = max(len(m.group(1)), len(m.group(2)))
        padded = any(
            g.lstrip("-").startswith("0") and len(g.lstrip("-")) > 1
            for g in (m.group(1), m.group(2))
        )
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(values) > MAX_BRACE_WORDS:
            raise WordError("a brace sequence expands to too many words")
        texts = [str(v).zfill(width) if padded else str(v) for v in values]
    else:
        a, b = ord(m.group(4)), ord(m.group(5))
        step = abs(int(m.group(6) or 1)) or 1
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        texts = [chr(v) for v in values]
    return [[(ch, True) for ch in text] for text in texts]


# ------------------------------------------------------------------- wrappers


@dataclass
class _Step:
    inner: list[Arg] = field(default_factory=list)  # the command it runs next; [] none
    layer: bool = True  # the wrapper itself does nothing else
    plain: bool = True  # a rule may cover it (no environment changes, no extra files)
    lines: list[str] = field(default_factory=list)  # command strings it parses and runs
    others: list[list[Arg]] = field(default_factory=list)  # further commands (find -exec)


@dataclass(frozen=True)
class _Opts:
    """A wrapper's options (getopt with a leading '+': they stop at the first operand)."""

    flags: str = ""
    with_arg: str = ""
    long_flags: frozenset[str] = frozenset()
    long_with_arg: frozenset[str] = frozenset()
    numeric: bool = False  # -5 (nice)
    optional: str = ""  # short options whose value, if any, is glued on (xargs -i{})


def _options(args: list[Arg], spec: _Opts, seen: list[tuple[str, str]] | None = None) -> int:
    """Index of the first operand after the options; unknown or unreadable options raise."""
    i = 0
    while i < len(args):
        word = args[i]
        if isinstance(word, Hole):
            raise _Unresolved("an option is only known when it runs")
        if word == "--":
            return i + 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in spec.long_with_arg:
                if not eq:
                    i += 1
                    value = _text(args, i)
                if seen is not None:
                    seen.append((name, value))
            elif name not in spec.long_flags:
                raise _Unresolved(f"unknown option {word!r}")
            elif seen is not None:
                seen.append((name, value))
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            return i
        if spec.numeric and word[1:].isdigit():
            i += 1
            continue
        for k, c in enumerate(word[1:], start=1):
            if c in spec.optional:
                if seen is not None:
                    seen.append((c, word[k + 1 :]))
                break
            if c in spec.with_arg:
                value = word[k + 1 :]
                if not value:
                    i += 1
                    value = _text(args, i)
                if seen is not None:
                    seen.append((c, value))
                break
            if c not in spec.flags:
                raise _Unresolved(f"unknown option -{c}")
            if seen is not None:
                seen.append((c, ""))
        i += 1
    return i


def _text(args: list[Arg], i: int) -> str:
    if i >= len(args):
        return ""
    word = args[i]
    if isinstance(word, Hole):
        raise _Unresolved("an option's value is only known when it runs")
    return word


def _simple(spec: _Opts) -> Callable[[list[Arg]], _Step]:
    def handler(args: list[Arg]) -> _Step:
        return _Step(args[_options(args, spec) :])

    return handler


def _command(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    i = _options(args, _Opts("pvV"), seen)
    if any(name in ("v", "V") for name, _ in seen):
        return _Step()  # command -v only says what a name is
    return _Step(args[i:])


def _builtin(args: list[Arg]) -> _Step:
    return _Step(args[_options(args, _Opts()) :])


def _env(args: list[Arg]) -> _Step:
    spec = _Opts("i0v", "uCS", frozenset({
        "--ignore-environment", "--null", "--debug", "--default-signal", "--ignore-signal",
        "--block-signal", "--list-signal-handling"}),
        frozenset({"--unset", "--chdir", "--split-string"}))  # fmt: skip
    rest = list(args)
    plain = True
    while True:
        seen: list[tuple[str, str]] = []
        i = _options(rest, spec, seen)
        if i < len(rest) and rest[i] == "-":  # env - is env -i
            rest = rest[i + 1 :]
            continue
        split = [v for name, v in seen if name in ("S", "--split-string")]
        plain = plain and not any(n in ("S", "--split-string", "C", "--chdir") for n, _ in seen)
        if not split:
            break
        text = split[-1]
        if any(c in text for c in "$\\#'\""):
            raise _Unresolved("env -S with quotes, escapes or variables")
        rest = [*text.split(), *rest[i:]]  # env -S splits, then reads options again
    rest = rest[i:]
    while rest and (isinstance(rest[0], Hole) or "=" in rest[0]):
        if isinstance(rest[0], Hole):
            raise _Unresolved("an argument is only known when it runs")
        plain = False  # VAR=x changes what the command does, as an assignment would
        rest = rest[1:]
    return _Step(rest, plain=plain)


def _timeout(args: list[Arg]) -> _Step:
    spec = _Opts(
        "v",
        "ks",
        frozenset({"--preserve-status", "--foreground", "--verbose"}),
        frozenset({"--kill-after", "--signal"}),
    )
    i = _options(args, spec)
    if i < len(args) and args[i] is Hole.MANY:
        raise _Unresolved("the duration is only known when it runs")
    return _Step(args[i + 1 :])


def _time(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts(
        "pavqV",
        "fo",
        frozenset({"--portability", "--append", "--verbose", "--quiet", "--help", "--version"}),
        frozenset({"--format", "--output"}),
    )
    i = _options(args, spec, seen)
    return _Step(args[i:], plain=not any(n in ("o", "--output") for n, _ in seen))


def _sudo(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts(
        "AbBEeHiKklNnPSsVv",
        "aCcDghpRrTtUu",
        frozenset(
            {
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--edit",
                "--set-home",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--no-update",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--version",
                "--validate",
            }
        ),
        frozenset(
            {
                "--close-from",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            }
        ),
    )
    i = _options(args, spec, seen)
    if any(n in ("e", "--edit") for n, _ in seen):
        return _Step(layer=False)  # sudoedit: the operands are files
    rest = args[i:]
    while rest and isinstance(rest[0], str) and "=" in rest[0]:
        rest = rest[1:]
    return _Step(rest, layer=False)


def _doas(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    i = _options(args, _Opts("Lns", "aCu"), seen)
    if any(n == "C" for n, _ in seen):
        return _Step(layer=False)  # checks a config file
    return _Step(args[i:], layer=False)


def _su(args: list[Arg]) -> _Step:
    """su/runuser run only a ``-c`` string; their options may follow the user name."""
    return _Step(layer=False, lines=_dash_c(args, ("--command", "--session-command")))


def _dash_c(args: list[Arg], long_names: tuple[str, ...]) -> list[str]:
    """The ``-c STRING`` values anywhere in ``args`` (``-lc 'x'``, ``--command=x``)."""
    if any(isinstance(w, Hole) for w in args):
        raise _Unresolved("an argument is only known when it runs")
    words = [w for w in args if isinstance(w, str)]
    lines: list[str] = []
    for k, word in enumerate(words):
        nxt = words[k + 1] if k + 1 < len(words) else ""
        name, eq, value = word.partition("=")
        if name in long_names:
            lines.append(value if eq else nxt)
        elif word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            glued = word[word.index("c", 1) + 1 :]
            lines.append(glued or nxt)
    return [t for t in lines if t]


def _pkexec(args: list[Arg]) -> _Step:
    spec = _Opts(
        "", "", frozenset({"--disable-internal-agent", "--keep-cwd"}), frozenset({"--user"})
    )
    return _Step(args[_options(args, spec) :], layer=False)


def _xargs(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts("0oprtx", "adEILnPs", frozenset({
        "--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit",
        "--show-limits", "--replace", "--eof", "--max-lines"}),
        frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars",
                   "--process-slot-var"}), optional="iel")  # fmt: skip
    i = _options(args, spec, seen)
    replace = [v or "{}" for n, v in seen if n in ("I", "i", "--replace")]
    inner = args[i:] or ["echo"]
    if replace:
        marker = replace[-1]
        return _Step([Hole.ONE if isinstance(w, str) and marker in w else w for w in inner])
    return _Step([*inner, Hole.MANY])


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(args: list[Arg]) -> _Step:
    step = _Step(layer=False)
    if Hole.MANY in args:
        raise _Unresolved("an argument is only known when it runs (it could be -exec)")
    if Hole.ONE in args and any(w in (";", "+") for w in args):
        raise _Unresolved("an argument is only known when it runs (it could be -exec)")
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            inner = [Hole.ONE if isinstance(w, str) and "{}" in w else w for w in args[i + 1 : j]]
            if inner:
                step.others.append(inner)
            i = j
        i += 1
    return step


_SHELL_FLAGS = "abcefhiklmnprstuvxBCDEHPT"


def _shell(args: list[Arg]) -> _Step:
    """bash/sh/zsh …: ``-c STRING`` is parsed as a line; reading stdin cannot be resolved."""
    command_mode = reads_stdin = False
    i = 0
    while i < len(args):
        word = args[i]
        if isinstance(word, Hole):
            raise _Unresolved("an argument is only known when it runs")
        if word == "--" or word == "-":
            i += 1
            break
        if word in ("--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            for c in word[1:]:
                if c not in _SHELL_FLAGS + "oO":
                    raise _Unresolved(f"unknown option {word!r}")
            command_mode |= "c" in word[1:] and word[0] == "-"
            reads_stdin |= "s" in word[1:] and word[0] == "-"
            i += 2 if word[-1] in "oO" else 1
            continue
        break
    if command_mode:
        text = _text(args, i)
        if i >= len(args):
            return _Step()
        return _Step(lines=[text])
    if reads_stdin or i >= len(args):
        raise _Unresolved("the shell reads its commands from stdin")
    return _script(args[i])


_STDIN = re.compile(r"/dev/(?:stdin|fd/\d+)|/proc/(?:self|\d+)/fd/\d+|-")


def _script(path: Arg) -> _Step:
    """A script file runs by the shell's name only (like python or make); stdin cannot."""
    if isinstance(path, Hole) or _STDIN.fullmatch(path):
        raise _Unresolved("the script it runs is only known when it runs (stdin, <(…), $x)")
    return _Step(layer=False)


def _source(args: list[Arg]) -> _Step:
    return _script(args[0]) if args else _Step(layer=False)


def _eval(args: list[Arg]) -> _Step:
    if any(isinstance(w, Hole) for w in args):
        raise _Unresolved("eval runs text that is only known when it runs")
    text = " ".join(w for w in args if isinstance(w, str))
    return _Step(lines=[text] if text.strip() else [])


def _trap(args: list[Arg]) -> _Step:
    i = _options(args, _Opts("lp"))
    if i >= len(args) or i + 1 >= len(args):
        return _Step(layer=False)  # trap -p, trap SIG: nothing set to run
    text = _text(args, i)
    return _Step(layer=False, lines=[text] if text not in ("", "-") else [])


def _alias(args: list[Arg]) -> _Step:
    lines = []
    for word in args:
        if isinstance(word, Hole):
            raise _Unresolved("an alias is only known when it runs")
        _name, eq, value = word.partition("=")
        if eq and value.strip():
            lines.append(value)
    return _Step(layer=False, lines=lines)


def _hash(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    _options(args, _Opts("lrdt", "p"), seen)
    paths = [v for n, v in seen if n == "p"]
    return _Step(layer=False, others=[[p, Hole.MANY] for p in paths if p])


def _watch(args: list[Arg]) -> _Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts("bcCdeghtwpqrx", "n", frozenset({
        "--beep", "--color", "--no-color", "--differences", "--errexit", "--chgexit",
        "--no-title", "--no-wrap", "--precise", "--exec", "--no-rerun"}),
        frozenset({"--interval", "--equexit"}))  # fmt: skip
    i = _options(args, spec, seen)
    rest = args[i:]
    if any(n in ("x", "--exec") for n, _ in seen):
        return _Step(rest)
    if any(isinstance(w, Hole) for w in rest):
        raise _Unresolved("the command is only known when it runs")
    return _Step(lines=[" ".join(w for w in rest if isinstance(w, str))] if rest else [])


def _callback(spec: _Opts) -> Callable[[list[Arg]], _Step]:
    """mapfile -C, compgen/complete -C: the option's value runs as a command."""

    def handler(args: list[Arg]) -> _Step:
        seen: list[tuple[str, str]] = []
        _options(args, spec, seen)
        return _Step(layer=False, lines=[v for n, v in seen if n == "C" and v])

    return handler


def _runner(operands: int = 0, spec: _Opts | None = None) -> Callable[[list[Arg]], _Step]:
    """A program that runs the command after its options and ``operands`` words.

    Without ``spec`` its options are not read at all: any option cannot be resolved.
    """

    def handler(args: list[Arg]) -> _Step:
        if spec is not None:
            i = _options(args, spec)
        elif args and (isinstance(args[0], Hole) or args[0].startswith("-")):
            raise _Unresolved("its options are not understood")
        else:
            i = 0
        if Hole.MANY in args[i : i + operands]:
            raise _Unresolved("an argument is only known when it runs")
        return _Step(args[i + operands :])

    return handler


def _unknown(args: list[Arg]) -> _Step:
    raise _Unresolved("the commands it runs are not understood")


def _flock(args: list[Arg]) -> _Step:
    """flock [options] FILE -c 'CMD', or flock [options] FILE CMD …"""
    spec = _Opts(
        "sxunoFe",
        "Ew",
        frozenset(
            {
                "--shared",
                "--exclusive",
                "--unlock",
                "--nonblock",
                "--close",
                "--no-fork",
                "--verbose",
            }
        ),
        frozenset({"--conflict-exit-code", "--wait", "--timeout"}),
    )
    i = _options(args, spec)
    if i + 1 < len(args) and args[i + 1] in ("-c", "--command"):
        return _Step(lines=[_text(args, i + 2)])
    if Hole.MANY in args[i : i + 1]:
        raise _Unresolved("an argument is only known when it runs")
    return _Step(args[i + 1 :])


def _script_command(args: list[Arg]) -> _Step:
    lines = _dash_c(args, ("--command",))
    if not lines:
        raise _Unresolved("script starts a shell that reads its commands from stdin")
    return _Step(layer=False, lines=lines)


def _sg(args: list[Arg]) -> _Step:
    """sg GROUP [-c] 'CMD': the command is a string for /bin/sh."""
    rest = args[1:]
    if rest[:1] == ["-c"]:
        rest = rest[1:]
    if not rest:
        raise _Unresolved("sg starts a shell that reads its commands from stdin")
    return _Step(layer=False, lines=[_text(rest, 0)])


def _busybox(args: list[Arg]) -> _Step:
    if args and isinstance(args[0], str) and args[0].startswith("--"):
        return _Step()
    return _Step(list(args))


_WRAPPERS: dict[str, Callable[[list[Arg]], _Step]] = {
    "command": _command,
    "builtin": _builtin,
    "exec": _simple(_Opts("cl", "a")),
    "env": _env,
    "nice": _simple(_Opts("", "n", frozenset(), frozenset({"--adjustment"}), numeric=True)),
    "nohup": _simple(_Opts()),
    "timeout": _timeout,
    "stdbuf": _simple(_Opts("", "ioe", frozenset(), frozenset({"--input", "--output", "--error"}))),
    "setsid": _simple(_Opts("cfw", "", frozenset({"--ctty", "--fork", "--wait"}))),
    "time": _time,
    "sudo": _sudo,
    "doas": _doas,
    "su": _su,
    "runuser": _su,
    "pkexec": _pkexec,
    "xargs": _xargs,
    "find": _find,
    "eval": _eval,
    "trap": _trap,
    "alias": _alias,
    "hash": _hash,
    "watch": _watch,
    "busybox": _busybox,
    "source": _source,
    "ionice": _runner(0, _Opts("t", "cn")),
    "chrt": _runner(1),
    "taskset": _runner(1, _Opts("ac")),
    "chroot": _runner(
        1, _Opts("", "", frozenset({"--skip-chdir"}), frozenset({"--userspec", "--groups"}))
    ),
    "flock": _flock,
    "faketime": _runner(1),
    **{
        name: _runner()
        for name in (
            "unshare",
            "nsenter",
            "strace",
            "ltrace",
            "valgrind",
            "numactl",
            "firejail",
            "systemd-run",
            "run0",
            "fakeroot",
            "unbuffer",
            "rlwrap",
            "torsocks",
            "proxychains",
            "proxychains4",
            "catchsegv",
            "dbus-run-session",
            "xvfb-run",
            "ccache",
            "sem",
        )
    },
    "parallel": _unknown,
    "script": _script_command,
    "sg": _sg,
    "mapfile": _callback(_Opts("t", "dnOsuCc")),
    "readarray": _callback(_Opts("t", "dnOsuCc")),
    "compgen": _callback(_Opts("abcdefgjksuvDEI", "oAGWFPSXC")),
    "complete": _callback(_Opts("abcdefgjksuvDEIpr", "oAGWFPSXC")),
    ".": _source,
    **{name: _shell for name in ("bash", "sh", "dash", "ksh", "mksh", "ash", "yash")},
    # Shells whose syntax is not bash's (zsh runs =rm as /bin/rm): never resolved.
    **{
        name: _unknown
        for name in (
            "zsh",
            "fish",
            "csh",
            "tcsh",
            "rc",
            "es",
            "elvish",
            "nu",
            "xonsh",
            "pwsh",
            "oksh",
            "loksh",
        )
    },
}


def describe(words: Sequence[Arg]) -> str:
    """``words`` for a message; holes show as ``…``."""
    return shlex.join("…" if isinstance(w, Hole) else w for w in words)
