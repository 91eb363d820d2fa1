"""The approved plan's Verification commands, run once without a second question (issue 24.4).

A person who approves a plan also approves the commands of its Verification
section (``report.verification_commands``: the lines of its code blocks, else
its inline code). While the plan executes, a bash command that *is* one of
them runs once per approved revision without asking (``permissions/engine.py``
decides where in its order; deny rules and the protected-path and sandbox
questions come first). "Is" means equal after whitespace normalisation only:
runs of blanks outside quotes become one space and the ends are stripped, so
``make  test`` is ``make test``, but ``make test; rm x``, ``make test && x``,
``make tests`` and ``echo "a  b"`` for ``echo "a b"`` are not.

Only text a person could read counts: a command with a control, format or
unusual space character (a newline runs a second command; a bidi override or a
zero-width space hides what runs) or longer than :data:`MAX_COMMAND` is never
matched, so it asks as usual.
"""

from __future__ import annotations

import unicodedata

from planshell.plan.report import verification_commands

__all__ = ["MAX_COMMAND", "approved_check", "normalise_command"]

MAX_COMMAND = 300  # the run record keeps this much of a command (evidence.MAX_DETAIL_CHARS)


def _readable(command: str) -> bool:
    """Only characters a person reads as they run: no control, format or odd space."""
    if not command or len(command) > MAX_COMMAND:
        return False
    for char in command:
        if char in " \t":
            continue
        category = unicodedata.category(char)
        if category[0] in "CZ":  # Cc Cf Cs Co Cn, Zs (other than a space) Zl Zp
            return False
    return True


def normalise_command(command: str) -> str | None:
    """``command`` with each run of blanks outside quotes as one space, ends stripped.

    None when the command is not plain readable text (then nothing matches it).
    Inside single or double quotes, and after a backslash, every character is kept:
    there whitespace is part of a word.
    """
    if not _readable(command):
        return None
    out: list[str] = []
    quote = ""
    escaped = False
    blank = False
    for char in command:
        if escaped:
            out.append(char)
            escaped = False
            continue
        if quote:
            out.append(char)
            if char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in " \t":
            blank = True
            continue
        if blank and out:
            out.append(" ")
        blank = False
        out.append(char)
        if char == "\\":
            escaped = True
        elif char in "'\"":
            quote = char
    return "".join(out)


def approved_check(text: str, command: str) -> str | None:
    """The Verification command of approved ``text`` that ``command`` is (normalised), or None."""
    want = normalise_command(command)
    if want is None:
        return None
    for check in verification_commands(text):
        if normalise_command(check) == want:
            return want
    return None
