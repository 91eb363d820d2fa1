"""The diff an approval prompt shows: the bytes that will be written, none of them hidden.

The prompt is a promise: what you approve is what lands on disk. A diff of
text that went through newline translation or a terminal sanitiser can break
it: a ``\\r`` vanishes, a zero-width space or a bidi override renders as
nothing (or reorders the line), so two different files look alike. Here every
such character is *marked*, not stripped:

- ``\\r`` (carriage return) is shown as ``␍`` where it stands, so a CRLF line
  reads ``text␍`` and a line that changes only its ending shows up as changed;
- controls, format characters (zero-width, bidi marks, embeddings, overrides,
  isolates, the BOM, tag characters), separators other than the space,
  variation selectors and code points with no glyph are shown as ``⟨U+200B⟩``;
- the two marks themselves, when the file holds them literally, are shown the
  same way (``⟨U+240D⟩``, ``⟨U+27E8⟩``), so the rendering is one-to-one: two
  different lines never look the same.

Tabs and spaces stay as they are; ``\\n`` ends a line (and only ``\\n``:
``\\u2028`` and friends do not split lines here). Headless and pure: no
Textual, no Rich, no file access.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from planshell.sanitize import count_hidden

__all__ = ["CR_MARK", "LEGEND", "MARK", "has_marks", "visible_diff", "visible_line"]

CR_MARK = "␍"
_OPEN = "⟨"
LEGEND = (
    f"({CR_MARK} marks a carriage return (CR, \\r); {_OPEN}U+XXXX⟩ marks an invisible, "
    "bidi or control character by its code point. Both are written as shown.)"
)
# One mark in rendered text (front ends highlight these; the legend holds none).
MARK = re.compile(f"{CR_MARK}|{_OPEN}U\\+[0-9A-F]{{4,6}}⟩")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
_NO_NEWLINE = "\\ No newline at end of file"


def _shown(char: str) -> str:
    """One character as it appears in the diff."""
    if char == "\r":
        return CR_MARK
    if char.isascii():
        return char if char.isprintable() or char == "\t" else f"{_OPEN}U+{ord(char):04X}⟩"
    if (
        char in (CR_MARK, _OPEN)
        or unicodedata.category(char) in _HIDDEN_CATEGORIES
        or count_hidden(char)
        or "\ufe00" <= char <= "\ufe0f"
    ):
        return f"{_OPEN}U+{ord(char):04X}⟩"
    return char


def visible_line(text: str) -> str:
    """``text`` (one line, without its ``\\n``) with every hidden character marked."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to mark
    return "".join(_shown(char) for char in text)


def _lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, made visible; a last line without ``\\n`` is flagged."""
    parts = text.split("\n")
    lines = [visible_line(part) + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(f"{visible_line(parts[-1])}\n{_NO_NEWLINE}\n")
    return lines


def visible_diff(rel: str, before: bytes | None, after: bytes) -> str:
    """A unified diff from ``before`` (None: no file yet) to exactly ``after``, nothing hidden.

    Both sides are decoded as strict UTF-8; a side that is not UTF-8 is not
    shown as text but said to be replaced whole (with its size). A legend
    follows when the diff holds a mark, and ``""`` means no change at all.
    """
    if before == after:
        return ""
    name = visible_line(rel)
    old_header = "/dev/null" if before is None else f"a/{name}"
    head: list[str] = []
    before_text = "" if before is None else _decode(before)
    after_text = _decode(after)
    if before_text is None:
        head.append(
            f"(the file now holds {len(before or b'')} bytes that are not UTF-8 text; "
            "all of them are replaced)\n"
        )
        before_text = ""
    if after_text is None:
        return "".join(head) + f"(writes {len(after)} bytes that are not UTF-8 text)\n"
    body = "".join(
        difflib.unified_diff(_lines(before_text), _lines(after_text), old_header, f"b/{name}")
    )
    if not body:  # only possible when before was not text and after is empty
        body = f"--- {old_header}\n+++ b/{name}\n(the new content is empty)\n"
    text = "".join(head) + body
    if has_marks(body):
        text += LEGEND + "\n"
    return text


def has_marks(text: str) -> bool:
    """Whether ``text`` holds a ``␍`` or ``⟨U+…⟩`` mark (the legend is then shown)."""
    return MARK.search(text) is not None


def _decode(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
