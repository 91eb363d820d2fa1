"""The guard's quote scanner: decode a word from its source span as bash will.

bashlex mis-parses some inputs, so the guard never trusts ``node.word``: every word is
decoded again here from its source span, and every ``$``, backtick and ``<(`` found there
must line up with an expansion node that bashlex reported. The guard's walker, the
permission rules' splitter and ``permissions.resolve`` all read words through
:func:`scan_word`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from planshell.shell.forms import MARKER_CHARS
from planshell.shell.verdict import quote
from planshell.shell.words import Word

_TILDE = re.compile(r"~(?:[A-Za-z0-9._-]*|\+)")  # ~, ~user, ~+ ($PWD)
_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$-])"
_INT = r"\s*-?\s*[0-9]+\s*"
_PARAM_FORMS = (
    re.compile(rf"{_NAME}|!"),  # $x, $1, $@, $!
    re.compile(rf"#{_NAME}"),  # ${#x}
    re.compile(rf"{_NAME}:{_INT}(?::{_INT})?"),  # ${x:1:2} (literal offsets only)
    re.compile(rf"{_NAME}(?::?[-+?]|##?|%%?|//?|/#|/%|\^\^?|,,?)(?P<operand>.*)", re.S),
)
_OPERAND_BAD = ("$(", "`", "<(", ">(", "${", "$'", '$"', "$[")
_UNQUOTED_META = frozenset(" \t\n;&|<>()")
_NAME_ONLY = re.compile(_NAME)
# Variables bash sets from what earlier commands did: `echo /proc/1/environ; cat $_`.
_SHELL_SET = frozenset(
    "_ FUNCNAME PIPESTATUS REPLY MAPFILE OPTARG DIRSTACK COPROC HISTCMD GROUPS".split()
)
_SHELL_PREFIXES = ("BASH", "COMP", "READLINE")  # BASH_REMATCH, BASH_COMMAND, BASH_ARGV, …


@dataclass
class Scan:
    """What the quote scanner learned about one word."""

    word: Word
    inner: list[Any] = field(default_factory=list)  # commands inside $(…), `…` and <(…)
    params: list[int] = field(default_factory=list)  # offsets of its parameter expansions


class WordError(Exception):
    """A word the scanner cannot decode as bash would; ``fix`` says what to write instead."""

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
    """Decode one word from its source span (see :func:`scan_word`)."""

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

    def fail(self, why: str) -> WordError:
        return WordError(f"the word {quote(self.src[self.start : self.end], 40)} {why}")

    def take_part(self, i: int, kinds: tuple[str, ...]) -> int:
        """Consume the expansion node bashlex reported at ``i``; return the end offset."""
        part = self.parts.get(i)
        if part is None or part.kind not in kinds or part.pos[1] <= i or part.pos[1] > self.end:
            raise self.fail("holds an expansion that bashlex did not parse")
        self.visited.add(i)
        if part.kind == "parameter":
            problem = _param_problem(part)
            if problem:
                raise WordError(problem, "Use a plain $VAR or ${VAR} expansion.")
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
                raise WordError(
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
            raise WordError("the guard could not match its reading of this word with bash's")
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
            raise WordError(
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

    def run(self) -> Scan:
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
        return Scan(word, self.inner, self.params)


def scan_word(src: str, node: Any) -> Scan:
    """Decode a word from its source span, cross-checking bashlex's expansion nodes.

    The value is bash's own quote removal done by :class:`_WordScanner` (single quotes,
    double quotes with their four escapes, backslashes, ``'it'\\''s'`` splices), never
    bashlex's ``node.word``, which keeps later quotes of a word that starts with one
    (``'-del''ete'``) and drops backslashes (``-F'\\t'``). Every check after this point
    sees the value bash will see, so such words need no special refusal.
    """
    return _WordScanner(src, node).run()
