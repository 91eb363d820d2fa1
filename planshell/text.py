"""Counted nouns for messages people read: "1 entry", "2 entries", never "1 entries" or "file(s)".

Headless: no Textual, no Rich. English plural rules enough for planshell's own nouns;
pass ``many`` for anything irregular.
"""

from __future__ import annotations

__all__ = ["plural"]

_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural unless ``count`` is 1: ``1 step``,
    ``3 steps``, ``2 entries``, ``1,204 lines``. Only the last word of ``noun`` changes
    (``1 earlier entry``, ``2 earlier entries``); ``many`` overrides the plural form."""
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {many if many is not None else _plural_of(noun)}"


def _plural_of(noun: str) -> str:
    head, _, last = noun.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(_SIBILANT_ENDINGS):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}" if head else last
