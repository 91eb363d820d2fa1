"""Tests for planshell.sanitize: model text must not drive the terminal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planshell.sanitize import strip_terminal_controls as clean

FORBIDDEN = {chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]}
FORBIDDEN |= {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


@pytest.mark.parametrize(
    ("dirty", "expected"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;38;2;255;0;0mbold\x1b[m", "bold"),
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear screen, cursor home
        ("a\x1b[10;20Hb\x1b[3Ac\x1b[?25l", "abc"),  # cursor moves, hide cursor
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("x\x1b[12", "x"),  # truncated CSI at the end
    ],
)
def test_csi_sequences_removed(dirty: str, expected: str) -> None:
    assert clean(dirty) == expected


@pytest.mark.parametrize(
    ("dirty", "expected"),
    [
        ("\x1b]8;;https://evil.example\x07click\x1b]8;;\x07", "click"),  # OSC 8, BEL
        ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),  # OSC 8, ST
        ("a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab"),  # OSC 52 clipboard, BEL
        ("a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab"),  # OSC 52 clipboard, ST
        ("a\x1b]0;window title\x9cb", "ab"),  # 8-bit ST
        ("a\x9d0;title\x07b", "ab"),  # 8-bit OSC
    ],
)
def test_osc_sequences_removed(dirty: str, expected: str) -> None:
    assert clean(dirty) == expected


def test_unterminated_osc_is_cut_at_the_line_end() -> None:
    assert clean("a\x1b]52;c;payload\nnext line") == "a\nnext line"


@pytest.mark.parametrize(
    "dirty",
    [
        "a\x1bPq#0;2;0;0;0#0~~\x1b\\b",  # DCS (sixel)
        "a\x1b_Gf=100;AAAA\x1b\\b",  # APC (kitty graphics)
        "a\x1b^privacy message\x1b\\b",  # PM
        "a\x1bXstart of string\x1b\\b",  # SOS
        "a\x90dcs 8-bit\x9cb",
    ],
)
def test_string_sequences_removed(dirty: str) -> None:
    assert clean(dirty) == "ab"


@pytest.mark.parametrize(
    ("dirty", "expected"),
    [
        ("a\x1b7b", "ab"),  # save cursor
        ("a\x1bcb", "ab"),  # full reset
        ("a\x1b(Bb", "ab"),  # charset designation (intermediate byte)
        ("a\x1b#8b", "ab"),  # screen alignment test
        ("a\x1b=b", "ab"),  # keypad mode
        ("a\x1bbc", "ac"),  # ESC b is itself a two-byte sequence
    ],
)
def test_other_escape_sequences_removed(dirty: str, expected: str) -> None:
    assert clean(dirty) == expected


def test_lone_escape_and_escape_runs_removed() -> None:
    assert clean("a\x1b") == "a"
    assert clean("\x1b\x1b\x1b[31mx") == "x"


def test_c0_and_del_removed_but_newline_and_tab_kept() -> None:
    assert clean("a\x00b\x07c\x08d\x7fe") == "abcde"
    assert clean("col1\tcol2\nrow2\n") == "col1\tcol2\nrow2\n"


def test_c1_controls_removed() -> None:
    assert clean("a\x80b\x85c\x8dd\x96e") == "abcde"
    assert clean("a\x9fapc payload\x9cb") == "ab"  # 8-bit APC string, ST-terminated


def test_carriage_returns() -> None:
    assert clean("one\r\ntwo\r\n") == "one\ntwo\n"
    assert clean("safe\rEVIL") == "safeEVIL"  # a lone \r cannot overwrite the line


def test_bidi_overrides_removed() -> None:
    assert clean("a\u202eevil\u202cb") == "aevilb"
    assert clean("\u2066x\u2067y\u2068z\u2069") == "xyz"
    assert clean("\u202a\u202b\u202d") == ""


def test_plain_unicode_untouched() -> None:
    text = "Plan ✅ 日本語のテキスト 🎉👩‍💻 café — naïve ½ \u00a0nbsp"
    assert clean(text) == text
    assert clean("") == ""


@given(st.text())
def test_output_never_contains_controls(text: str) -> None:
    out = clean(text)
    assert not (set(out) & FORBIDDEN)
    assert "\r" not in out


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs"))))
def test_text_without_controls_unchanged(text: str) -> None:
    assert clean(text) == text


@given(st.text())
def test_idempotent(text: str) -> None:
    once = clean(text)
    assert clean(once) == once


# Speed (1 MB against 10 KB) is measured in bench/scaling.py, not asserted here.


def test_one_megabyte_plain_text_is_unchanged() -> None:
    text = ("hello world 日本 🎉 and some code();\n" * 40_000)[:1_000_000]
    assert clean(text) == text


def test_one_megabyte_with_escapes_keeps_only_the_text() -> None:
    line = "log \x1b[32mOK\x1b[0m line with text\n"
    text = line * 40_000
    assert clean(text) == "log OK line with text\n" * 40_000


INVISIBLE = [
    "\u200b",
    "\u200e",
    "\u200f",
    "\u061c",
    "\u2028",
    "\u2029",
    "\u2060",
    "\u2064",
    "\ufeff",
    "\u180e",
    "\u3164",
    "\U000e0041",
    "\U000e007f",
    "\U000e0100",
    "\u202e",
    "\u2067",
]


@pytest.mark.parametrize("char", INVISIBLE)
def test_invisible_and_bidi_characters_are_removed_and_counted(char: str) -> None:
    from planshell.sanitize import count_hidden

    text = f"run{char} make{char}{char} test"
    assert clean(text) == "run make test"
    assert count_hidden(text) == 3


def test_tag_character_smuggling_is_removed() -> None:
    """ASCII smuggled as Unicode tag characters is invisible on screen: drop it."""
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "rm -rf ~")
    assert clean(f"Looks fine{hidden}.") == "Looks fine."


def test_plain_line_is_one_printable_line() -> None:
    from planshell.sanitize import plain_line

    assert plain_line("a\nb\t c\x1b]52;c;aGk=\x07d\u202e") == "a b cd"
    assert plain_line("x" * 300, 10) == "x" * 9 + "…"
