"""The bash guard's rules for conditions: ``test``, ``[`` and the ``[[ ]]`` form."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from planshell.shell.words import Blocked, Word

# ------------------------------------------------------------------------ test and [

_SUBSCRIPT_OPS = frozenset({"-v", "-R"})


def _may_be_subscript_op(word: Word) -> bool:
    """Could this word be `-v` or `-R` when test runs?"""
    if word.value is not None and not (word.glob or word.brace):
        return word.value in _SUBSCRIPT_OPS
    if word.glob and not word.brace and word.value is not None:
        return word.risky_glob  # a glob with a literal prefix such as src/ never matches -v
    return True


def _may_hold_subscript(word: Word) -> bool:
    """Could this word hold an array subscript (a `[`) when test runs?"""
    return not word.static or "[" in (word.value or "")


def rule_test(cmd: str) -> Callable[[list[Word]], None]:
    """test and [: `-v NAME[SUB]` (and `-R`) make bash evaluate SUB, which runs `$(…)`.

    bash evaluates the subscript of `-v`/`-R`'s operand as arithmetic (indexed arrays) or
    expands it (associative arrays), so `test -v 'x[$(id)]'` runs id, and so does
    `test -v 'x[y]'` when the variable y holds `$(id)`. The operand of a unary operator is
    always the word right after it, so a command is blocked when a word that could be -v/-R
    is followed by a word that could hold a `[`. A word that may split into several words
    at run time (an unquoted expansion, "$@", a glob, a brace expansion) can shift every
    position, so one such word blocks when any word could be -v/-R and any could hold `[`.
    The other test operators never evaluate their operands: -eq and friends take only
    plain integers in the test builtin ("integer expression expected"), unlike [[ ]].
    """

    def rule(args: list[Word]) -> None:
        words = list(args)
        if cmd == "[" and words and words[-1].static and words[-1].value == "]":
            words = words[:-1]
        why = (
            f"{cmd} -v (or -R) makes bash evaluate an array subscript, which can run a "
            "command substitution"
        )
        fix = "Test a plain variable name (no [ ]), written literally."
        if any(w.split or w.glob or w.brace for w in words):
            if any(map(_may_be_subscript_op, words)) and any(map(_may_hold_subscript, words)):
                raise Blocked(why, fix)
            return
        for op, operand in itertools.pairwise(words):
            if _may_be_subscript_op(op) and _may_hold_subscript(operand):
                raise Blocked(why, fix)

    return rule


# ---------------------------------------------------------------------------- [[ ]]

_COND_ARITH = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = re.compile(r"[+-]?[0-9]+")


def check_cond(items: list[Word | str]) -> None:
    """``[[ … ]]`` (policy v2): file and string tests only.

    ``items`` are the words between ``[[`` and ``]]``, with ``&& || ( ) < >`` as plain
    strings. bash picks the operators of ``[[`` when it parses, before any expansion, so an
    expansion is always an operand, never an operator. Two kinds of operator evaluate their
    operand as code: ``-v``/``-R`` (an array subscript runs ``$(…)``) and the arithmetic
    comparisons ``-eq``…``-ge`` (bash evaluates both sides as arithmetic, where a name's
    value is evaluated again). The latter are allowed only between two integer literals.
    """
    for index, item in enumerate(items):
        if isinstance(item, str):
            continue
        value = item.value if item.static else None
        if value in _SUBSCRIPT_OPS:
            raise Blocked(
                f"[[ {value} ]] makes bash evaluate an array subscript, which can run a "
                "command substitution",
                "Test the value with -n or -z instead.",
            )
        if value in _COND_ARITH:
            around = items[index - 1 : index] + items[index + 1 : index + 2]
            if len(around) != 2 or not all(
                isinstance(w, Word) and w.static and _INTEGER.fullmatch(w.value or "")
                for w in around
            ):
                raise Blocked(
                    f"[[ … {value} … ]] evaluates both sides as arithmetic, where a name's "
                    "value runs as code; only integer literals are allowed there",
                    "Compare strings with == instead, or use literal numbers.",
                )
