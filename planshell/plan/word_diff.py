"""A word diff for showing an amendment: the old and new step text, changed words marked.

Pure and small (difflib over whitespace-separated words): the amendment
review shows it, old words struck through in red, new ones in green. The
words are the model's: front ends sanitise them before display.
"""

from __future__ import annotations

import difflib
from typing import Literal

__all__ = ["WordOp", "word_diff"]

# ("equal" | "delete" | "insert", the words, joined by single spaces)
WordOp = tuple[Literal["equal", "delete", "insert"], str]


def word_diff(old: str, new: str) -> list[WordOp]:
    """``old`` -> ``new`` as runs of kept, deleted and inserted words, in reading order.

    A replaced run is its deleted words followed by its inserted words.
    """
    a, b = old.split(), new.split()
    out: list[WordOp] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(("equal", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("delete", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("insert", " ".join(b[j1:j2])))
    return out
