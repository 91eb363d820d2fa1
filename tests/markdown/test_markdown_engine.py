"""The shared markdown engine: rows, source maps, incremental parsing."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from planshell.markdown import MarkdownStream, parse_blocks, render_text
from planshell.markdown.parse import Block

SAMPLE = """# Title

Some *text* with `code` and a [link](http://x.y).

- [ ] task one
- [x] done
  - nested

```python
def f(x):
    return x + 1
```

| a | bb |
|---|----|
| 1 | 2 |

> quote

---
"""


def shape(blocks: list[Block]) -> list[tuple[str, int, int]]:
    return [(b.kind, b.start, b.end) for b in blocks]


def test_rows_show_blocks_with_link_targets_tasks_and_tables() -> None:
    rows = render_text(SAMPLE, 60)
    assert rows[0] == "Title"
    assert "Some text with code and a link (http://x.y)." in rows
    assert "☐ task one" in rows and "☑ done" in rows
    assert "  • nested" in rows or "  ◦ nested" in rows
    assert any(r.startswith("│ a") for r in rows)
    assert " python" in rows
    assert "▎ quote" in rows


def test_indented_task_is_code_not_a_task() -> None:
    rows = render_text("    - [ ] x\n", 40)
    assert rows == [" - [ ] x"]


def test_rows_never_exceed_the_width_and_carry_source_lines() -> None:
    from planshell.markdown import render_blocks

    blocks = parse_blocks(SAMPLE)
    for width in (5, 12, 40):
        for row in render_blocks(blocks, width):
            assert sum(len(s.text) for s in row.segments) <= width
            assert 0 <= row.start <= row.end


def test_terminal_controls_never_reach_the_rows() -> None:
    rows = render_text("# a\x1b[31mred\n\n`x\x1b]52;c;AAA\x07`\n\n```\n\x1b[2Jboom\n```\n", 40)
    assert not any("\x1b" in row or "\x07" in row for row in rows)


markdown_pieces = st.sampled_from(
    [
        "# H\n",
        "text ",
        "more text\n",
        "\n",
        "- a\n",
        "- [ ] t\n",
        "  - n\n",
        "1. o\n",
        "```py\n",
        "```\n",
        "x = 1\n",
        "> q\n",
        "| a | b |\n",
        "|---|---|\n",
        "---\n",
        "    code\n",
        "===\n",
        "*em* ",
        "`c` ",
        "~~~\n",
    ]
)


def streamed(text: str, cuts: list[int], *, compact: bool) -> MarkdownStream:
    """``text`` appended to a stream in pieces of the ``cuts`` sizes, in turn."""
    stream = MarkdownStream(compact=compact)
    position = 0
    for number in range(10_000):
        if position >= len(text):
            break
        size = cuts[number % len(cuts)]
        stream.append(text[position : position + size])
        position += size
    return stream


# Found by the compact test: "- a" then "*" makes a new list until "*em* " ends lazily inside
# the first one; the first list must not be taken as stable while that line is unfinished.
@example(pieces=["- a\n", "*em* "], cuts=[1])
@given(st.lists(markdown_pieces, max_size=30), st.lists(st.integers(1, 9), min_size=1, max_size=10))
def test_streaming_gives_the_same_blocks_as_one_parse(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    stream = streamed(text, cuts, compact=False)
    assert stream.text == text
    assert shape(stream.blocks) == shape(parse_blocks(text))


def test_appending_keeps_earlier_blocks() -> None:
    stream = MarkdownStream("# a\n\npara\n\n")
    first = stream.blocks[0]
    stream.append("- item\n")
    assert stream.blocks[0] is first


@example(pieces=["- a\n", "*em* "], cuts=[1])
@given(st.lists(markdown_pieces, max_size=30), st.lists(st.integers(1, 9), min_size=1, max_size=10))
def test_a_compact_stream_gives_the_same_blocks(pieces: list[str], cuts: list[int]) -> None:
    """Stable blocks kept as source and parsed again when read come out as parsed in place."""
    text = "".join(pieces)
    stream = streamed(text, cuts, compact=True)
    assert stream.text == text
    assert shape(stream.blocks) == shape(parse_blocks(text))
    assert stream.keys == [block.key for block in stream.blocks]
    assert [stream.block(i).key for i in range(len(stream.keys))] == stream.keys
