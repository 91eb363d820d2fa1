"""Strip terminal control sequences from untrusted (model-authored) text.

Anything the model writes can end up on the user's terminal. Escape sequences
in it could recolour the screen, move the cursor, set the clipboard (OSC 52),
plant hyperlinks (OSC 8) or reorder what the user reads (bidi overrides), so
all of them are removed before display. Headless: no Textual, no Rich.
"""

from __future__ import annotations

import re

__all__ = ["count_hidden", "plain_line", "strip_terminal_controls"]

# Characters that show nothing (or reorder what is shown) yet can carry text the
# reader never sees: bidi marks, embeddings, overrides and isolates; zero-width
# spaces and marks (the joiners ZWJ/ZWNJ stay: emoji sequences and Persian
# need them); word joiner and invisible operators; BOM; Mongolian vowel
# separator; Hangul fillers; line/paragraph separators; tag characters (ASCII
# smuggling) and the supplementary variation selectors (emoji smuggling).
_INVISIBLE = (
    "\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069"
    "\u3164\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]+")
_INVISIBLE_ONE = re.compile(f"[{_INVISIBLE}]")

# String terminator: ESC \ (7-bit) or U+009C (8-bit).
_ST = r"(?:\x1b\\|\x9c)"

# One pass over the text. The payload classes exclude ESC / BEL / ST, so every
# scan stops at the next ESC and the whole substitution stays linear.
_CONTROLS = re.compile(
    "|".join(
        (
            # OSC: ESC ] ... terminated by BEL or ST. An unterminated one is cut
            # at the next ESC or newline, so a stray introducer cannot swallow
            # the rest of the output (the ESC is gone, so the rest is inert).
            r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]*(?:\x07|" + _ST + r")?",
            # DCS (P), SOS (X), PM (^), APC (_): terminated by ST (BEL tolerated).
            r"(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|" + _ST + r")?",
            # CSI: parameters, intermediates, final byte (final may be missing).
            r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?",
            # Any other escape sequence: intermediates then a final byte.
            r"\x1b[\x20-\x2f]*[\x30-\x7e]",
            # A run of ESCs that start no sequence: all but the last go in one
            # match (the last may still introduce a sequence), then a lone ESC.
            r"\x1b+(?=\x1b)|\x1b",
            # Runs of C0 controls (keeping \n and \t), DEL, C1.
            "[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]+",
            # Invisible and bidi characters (see _INVISIBLE).
            _INVISIBLE_RUN.pattern,
        )
    )
)

# Cheap pre-check: most text has none of these, so we can return it untouched.
_ANY_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def strip_terminal_controls(text: str) -> str:
    """Return ``text`` without escape sequences, control chars, bidi or invisible chars.

    ``\\n`` and ``\\t`` survive; ``\\r\\n`` becomes ``\\n`` and a lone ``\\r`` is
    dropped (it would let later text overwrite earlier text on the same line).
    """
    if _ANY_CONTROL.search(text) is None:
        return text
    return _CONTROLS.sub("", text)  # "\r" is a C0 control, so "\r\n" becomes "\n"


def count_hidden(text: str) -> int:
    """How many invisible or bidi characters ``text`` holds (the review flags them)."""
    return len(_INVISIBLE_ONE.findall(text))


def plain_line(text: str, limit: int = 200) -> str:
    """Untrusted text as one printable line: sanitised, whitespace folded, cut at ``limit``."""
    line = " ".join(strip_terminal_controls(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cut_at_word(text: str, limit: int, mark: str = "…") -> str:
    """``text`` in at most ``limit`` characters, cut at a word boundary (never mid-word).

    A single word longer than ``limit`` is cut hard. ``mark`` is appended when
    something was cut (it counts towards ``limit``).
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = max(limit - len(mark), 1)
    head = text[: room + 1]
    cut = head.rfind(" ")
    kept = head[:cut] if cut > 0 else text[:room]
    return kept.rstrip(" ,;:.-") + mark
