"""The words a bash-guard rule sees, and how a rule refuses one (see ``guard``).

The guard hands every allowlisted simple command to its rule as a list of :class:`Word`
objects (already decoded from the source text, never from bashlex's ``node.word``). A rule
either returns or raises :class:`Blocked`.
"""

from __future__ import annotations

from dataclasses import dataclass

FIX_PLAN = "Describe the change in the plan instead."
FIX_LITERAL = "Use a literal value, or put file operands after `--`."


class Blocked(Exception):
    """A rule refused a command: ``why`` says what it would do, ``fix`` what to do instead."""

    def __init__(self, why: str, fix: str = FIX_PLAN) -> None:
        super().__init__(why)
        self.why = why
        self.fix = fix


@dataclass(frozen=True)
class Word:
    """One shell word, decoded from its source span by the guard's own quote scanner."""

    src: str
    value: str | None  # literal value after quote removal; None when it holds $-/`-/<()-expansions
    dynamic: bool = False  # parameter expansion or command substitution
    procsub: bool = False  # holds an input process substitution <(…)
    glob: bool = False  # holds an unquoted *, ? or [
    risky_glob: bool = False  # unquoted glob whose literal prefix is empty or starts with "-"
    brace: bool = False  # unquoted brace expansion such as {a,b} or {1..3}
    split: bool = False  # holds an unquoted expansion (or "$@"): it may become several words
    # Each character as ("u", c) unquoted or ("q", c) quoted, each expansion as ("safe", name)
    # or ("any", ""): what planshell.procfs needs to see which paths the word could name.
    shape: tuple[tuple[str, str], ...] = ()

    @property
    def static(self) -> bool:
        """True when the word is exactly one known string at run time."""
        return self.value is not None and not self.glob and not self.brace


# --------------------------------------------------------------------------- helpers


def shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def skip_to_close(text: str, start: int, close: str) -> int | None:
    """The index just past ``close``, scanning from ``start`` with a backslash escaping the
    next character; None when a newline or the end comes first (the part is unterminated).

    One reader for sed's delimited parts and awk's strings and regular expressions.
    """
    p = start
    while p < len(text):
        c = text[p]
        if c == "\\":
            p += 2
            continue
        if c == "\n":
            return None
        p += 1
        if c == close:
            return p
    return None


def require_safe_arg(cmd: str, word: Word) -> None:
    """Block a word of an option-sensitive command that could turn into an option."""
    if word.dynamic:
        raise Blocked(
            f"{cmd} gets the expanded argument {shorten(word.src)} before `--`, "
            "and its value could turn into an option",
            FIX_LITERAL,
        )
    if word.risky_glob:
        raise Blocked(
            f"{cmd} gets the unquoted glob {shorten(word.src)}, which could match a file "
            "named like an option",
            "Quote the pattern, or start it with ./ (for example ./*.txt).",
        )
    if word.brace:
        raise Blocked(
            f"{cmd} gets the brace expansion {shorten(word.src)}, which could produce an option",
            "Spell out the arguments.",
        )


def require_static(cmd: str, word: Word, role: str) -> str:
    """Return the literal value of a word whose run-time value must be known exactly."""
    if word.value is None or not word.static:
        raise Blocked(
            f"the {role} of {cmd} ({shorten(word.src)}) is not a literal, so it cannot be checked",
            "Write it out literally in single quotes.",
        )
    return word.value
