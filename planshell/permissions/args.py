"""The words of a resolved command: known strings, or holes bash fills in at run time.

The resolver, the wrappers it unwraps and the rules that match its commands all hold
words this way, so a rule can tell a literal ``rm`` from a ``$x`` it cannot know.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from enum import Enum


class Hole(Enum):
    """A word bash fills in at run time."""

    ONE = "one"  # exactly one word, value unknown ("$x", a file name from find)
    MANY = "many"  # any number of words, none included ($x unquoted, a glob, xargs input)


Arg = str | Hole


def basename(word: str) -> str:
    """The program a command word names (``/bin/rm`` is ``rm``), as a rule matches it."""
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word


def describe(words: Sequence[Arg]) -> str:
    """``words`` for a message; holes show as ``…``."""
    return shlex.join("…" if isinstance(w, Hole) else w for w in words)
