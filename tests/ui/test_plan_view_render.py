"""The plan viewer's rows (the shared markdown engine, one section at a time), without an app."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style

from planshell.markdown import Palette, RenderedLine, inline_spans, wrap_spans
from planshell.markdown.parse import parser
from planshell.plan.document import parse_plan
from planshell.ui.widgets.plan_view import render_markdown, render_section

PALETTE = Palette(
    text=Style(),
    done=Style(color="grey50"),
    code=Style(color="yellow"),
    task=Style(color="white"),
    task_done=Style(color="green"),
)


def rows(text: str, width: int = 60) -> list[str]:
    return [row.rstrip() for row in render_markdown(text, width, PALETTE)]


def first_section(
    lines: list[str], width: int = 60, palette: Palette = PALETTE, tag: str = ""
) -> list[RenderedLine]:
    section = parse_plan("\n".join(lines)).sections[0]
    return render_section(lines, section, width, palette, tag=tag)


def section_rows(lines: list[str], width: int = 60, tag: str = "") -> list[list[Segment]]:
    return [row.segments for row in first_section(lines, width, tag=tag)]


def spans_of(text: str, style: Style, palette: Palette) -> list[tuple[str, Style]]:
    """The styled spans the engine makes of one line of inline markdown."""
    return [
        span
        for line in inline_spans(parser().parseInline(text)[0], style, palette)
        for span in line
    ]


def text_of(segments: list[Segment]) -> str:
    return "".join(segment.text for segment in segments)


# ---------------------------------------------------------------- headings


def test_h1_has_a_full_width_rule_under_it() -> None:
    out = rows("# Plan: Rate limits\n\nBody.\n", width=30)
    assert out[0] == "Plan: Rate limits"
    assert out[1] == "━" * 30
    assert out[3] == "Body."


def test_h2_and_h3_are_styled_and_show_inline_code_without_backticks() -> None:
    palette = Palette(h2=Style(bold=True, color="magenta"), h3=Style(bold=True, color="cyan"))
    rendered = first_section(["## Use `limits.py`"], 40, palette)
    first = rendered[0].segments
    assert text_of(first) == "Use limits.py"
    assert first[0].style == palette.h2
    h3 = first_section(["### Risks"], 40, palette)
    assert h3[0].segments[0].style == palette.h3


def test_changed_tag_is_appended_to_the_heading() -> None:
    rendered = section_rows(["## Goal", "text"], tag="· changed")
    assert text_of(rendered[0]) == "Goal · changed"
    assert rendered[0][-1].style == PALETTE.changed_tag


def test_sections_end_with_one_blank_row() -> None:
    out = rows("## A\n\n\n\ntext\n\n\n## B\nmore\n")
    assert out == ["A", "", "text", "", "B", "", "more", ""]


# -------------------------------------------------------------- paragraphs


def test_paragraph_lines_join_and_wrap_at_words() -> None:
    text = "alpha beta gamma\ndelta epsilon zeta eta theta iota kappa lambda\n"
    out = rows(text, width=20)
    assert out[:4] == ["alpha beta gamma", "delta epsilon zeta", "eta theta iota kappa", "lambda"]
    assert all(cell_len(row) <= 20 for row in render_markdown(text, 20))


def test_a_word_longer_than_the_row_is_split() -> None:
    out = rows("x" * 25, width=10)
    assert out[:3] == ["x" * 10, "x" * 10, "x" * 5]


def test_wide_characters_wrap_by_cells() -> None:
    out = render_markdown("漢字 " * 10, 9)
    assert all(cell_len(row) <= 9 for row in out)
    assert out[0].rstrip() == "漢字 漢字"


def test_punctuation_after_styled_word_stays_attached() -> None:
    spans = spans_of("see **this**, then", Style(), PALETTE)
    wrapped = wrap_spans(spans, 9)
    assert [text_of(row) for row in wrapped] == ["see this,", "then"]


# ------------------------------------------------------------------ inline


def test_inline_markup_is_styled_and_markers_removed() -> None:
    spans = spans_of(
        "a **b** *c* _d_ `e` ~~f~~ [g](http://x) <https://h.example>", Style(), PALETTE
    )
    text = "".join(text for text, _ in spans)
    assert text == "a b c d e f g (http://x) https://h.example"  # a link shows its target
    styles = {text: style for text, style in spans}
    assert styles["b"].bold
    assert styles["c"].italic and styles["d"].italic
    assert styles["e"] == PALETTE.code
    assert styles["f"].strike
    assert styles["g"].underline


def test_literal_markers_survive() -> None:
    spans = spans_of(r"snake_case_name, 2 * 3 * 4, \*not em\*, a_b", Style(), PALETTE)
    assert "".join(text for text, _ in spans) == "snake_case_name, 2 * 3 * 4, *not em*, a_b"
    assert not any(style.italic for _, style in spans)


def test_code_span_is_verbatim() -> None:
    spans = spans_of("run `a **b** c`", Style(), PALETTE)
    assert spans[-1] == ("a **b** c", PALETTE.code)


def test_pathological_inline_input_is_shown_literally() -> None:
    # Speed (linear scaling) is measured in bench/scaling.py, not asserted here.
    text = "*a " * 2500 + "`" * 3000 + "_x" * 2000 + "[" * 2000
    out = render_markdown(text, 80)
    assert max(cell_len(row) for row in out) <= 80
    # Unclosed markers are text: only the wrapping changed the whitespace.
    assert "".join("".join(out).split()) == "".join(text.split())


# ------------------------------------------------------------------- lists


def test_bullets_nest_with_hanging_indent() -> None:
    text = "- first item that is long enough to wrap\n  - nested item also long enough\n- second\n"
    out = rows(text, width=24)
    assert out[0] == "• first item that is"
    assert out[1] == "  long enough to wrap"
    assert out[2] == "  ◦ nested item also"
    assert out[3] == "    long enough"
    assert out[4] == "• second"


def test_numbered_list_counts_from_its_start_and_aligns_continuations() -> None:
    out = rows("3. one two three four\n10. ten\n", width=13)
    assert out[:3] == ["3. one two", "   three four", "4. ten"]  # CommonMark numbering


def test_task_items_show_boxes_and_done_text_is_dimmed() -> None:
    rendered = section_rows(["- [ ] write tests", "- [x] read code", "1. [X] numbered done"])
    assert text_of(rendered[0]) == "☐ write tests"
    assert text_of(rendered[1]) == "☑ read code"
    assert text_of(rendered[3]) == "1. ☑ numbered done"  # another list: a blank row before it
    box = next(segment for segment in rendered[1] if segment.text == "☑")
    assert box.style == PALETTE.task_done
    done_text = next(segment for segment in rendered[1] if "read" in segment.text)
    assert done_text.style == PALETTE.done
    pending_text = next(segment for segment in rendered[0] if "write" in segment.text)
    assert pending_text.style == PALETTE.text


def test_lazy_and_indented_continuation_lines_join_the_item() -> None:
    out = rows("- item\ncontinued lazily\n\n  indented paragraph\n", width=40)
    assert out[0] == "• item continued lazily"
    assert out[2] == "  indented paragraph"


# ------------------------------------------------------------ code and rest


def test_fences_are_verbatim_and_hash_lines_are_not_headings() -> None:
    text = "## Steps\n\n```bash\n# not a heading\n  indented   spaces\n```\n\nafter\n"
    out = rows(text, width=40)
    assert "Steps" in out[0]
    body = out[out.index("bash") :] if "bash" in out else out
    assert any(row.strip() == "bash" for row in out)  # the info string, shown dim
    assert any(row == "  # not a heading" or row.strip() == "# not a heading" for row in body)
    assert any("  indented   spaces" in row for row in out)
    assert out[-2] == "after"


def test_fence_info_is_dim_and_code_has_a_background() -> None:
    palette = Palette(code_block=Style(bgcolor="grey11"), fence_info=Style(dim=True))
    rendered = first_section(["```python", "x = 1", "```"], 20, palette)
    info, code = rendered[0].segments, rendered[1].segments
    assert info[0].style == palette.fence_info
    assert text_of(info).strip() == "python"
    assert code[-1].style == palette.code_block
    assert cell_len(text_of(code)) == 20  # the background runs to the edge


def test_long_code_lines_are_hard_wrapped_with_a_mark() -> None:
    out = rows("```\n" + "x" * 30 + "\n```\n", width=20)
    code = [row for row in out if "x" in row]
    assert code[0].strip() == "x" * 18
    assert code[1].startswith("↪") and code[1].strip("↪ ") == "x" * 12


def test_unclosed_fence_runs_to_the_end() -> None:
    out = rows("```\n# inside\n## also inside\n")
    assert any("## also inside" in row for row in out)


def test_blockquote_rule_and_table() -> None:
    text = "> quoted *text*\n> more\n\n---\n\n| a | bb |\n|---|----|\n| 1 | `2` |\n"
    out = rows(text, width=30)
    assert out[0] == "▎ quoted text more"
    assert "─" * 30 in out
    table = [row for row in out if row.startswith(("│", "├"))]
    assert table == ["│ a │ bb │", "├───┼────┤", "│ 1 │ 2  │"]


def test_no_row_is_wider_than_the_width() -> None:
    text = (
        "# T\n\n- [ ] " + "word " * 40 + "\n\n```\n" + "y" * 200 + "\n```\n\n> " + "q " * 50 + "\n"
        "| " + " | ".join(["cell"] * 30) + " |\n"
    )
    for width in (12, 20, 37, 80):
        assert all(cell_len(row) <= width for row in render_markdown(text, width)), width


def test_sources_point_at_the_lines_rows_came_from() -> None:
    rendered = first_section(["## H", "", "para", "", "- item"], 40)
    by_text = {text_of(row.segments).strip(): row.start for row in rendered}
    assert by_text["H"] == 0
    assert by_text["para"] == 2
    assert by_text["• item"] == 4
