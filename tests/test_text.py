"""plural(): counted nouns people read (issue 26.22: "1 entries", "1 steps ticked", "1 files")."""

from __future__ import annotations

import pytest

from planshell.text import plural


@pytest.mark.parametrize(
    ("count", "noun", "expected"),
    [
        (1, "entry", "1 entry"),
        (2, "entry", "2 entries"),
        (0, "file", "0 files"),
        (1, "file", "1 file"),
        (1, "step", "1 step"),
        (4, "step", "4 steps"),
        (2, "day", "2 days"),
        (3, "match", "3 matches"),
        (2, "box", "2 boxes"),
        (1_204, "line", "1,204 lines"),
        (1, "earlier entry", "1 earlier entry"),
        (20, "earlier entry", "20 earlier entries"),
        (2, "skipped dir", "2 skipped dirs"),
    ],
)
def test_plural(count: int, noun: str, expected: str) -> None:
    assert plural(count, noun) == expected


def test_an_irregular_plural_is_given() -> None:
    assert plural(2, "child", "children") == "2 children"
    assert plural(1, "child", "children") == "1 child"
