"""Rendering: top-level markdown blocks into rows of Rich segments for a width.

Pure (no Textual): the plan review and the chat transcript both draw these
rows from their Line-API views. Every row knows the source lines of the block
it came from (``token.map``), so selection, "current section" and step counts
agree with the source. Every piece of text passes through the sanitiser, even
though callers sanitise too: the model writes this text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from rich.segment import Segment
from rich.style import Style

from planshell.markdown.parse import Block, parse_blocks, parser, task_state
from planshell.markdown.wrap import cells, chop, wrap_spans
from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:  # markdown-it itself is imported on the first parse (parse.parser)
    from markdown_it.token import Token

__all__ = [
    "DEFAULT_PALETTE",
    "Palette",
    "RenderedLine",
    "inline_spans",
    "link_suffix",
    "plain_inline",
    "render_block",
    "render_blocks",
    "render_text",
]

_BULLETS = ("•", "◦", "▪", "▫")
_TAB = 4
_HIGHLIGHT_MAX = 40_000  # longer code blocks are shown without colours (bounded work)


@dataclass(frozen=True)
class Palette:
    """Rich styles for each element; a view fills it from its theme."""

    text: Style = field(default_factory=Style)
    h1: Style = field(default_factory=lambda: Style(bold=True))
    h2: Style = field(default_factory=lambda: Style(bold=True))
    h3: Style = field(default_factory=lambda: Style(bold=True))
    h4: Style = field(default_factory=lambda: Style(bold=True))
    h1_rule: Style = field(default_factory=Style)
    rule: Style = field(default_factory=lambda: Style(dim=True))
    bullet: Style = field(default_factory=Style)
    task: Style = field(default_factory=Style)
    task_done: Style = field(default_factory=Style)
    done: Style = field(default_factory=lambda: Style(dim=True))
    code: Style = field(default_factory=lambda: Style(bold=True))
    code_block: Style = field(default_factory=Style)
    fence_info: Style = field(default_factory=lambda: Style(dim=True))
    quote: Style = field(default_factory=lambda: Style(dim=True))
    link: Style = field(default_factory=lambda: Style(underline=True))
    muted: Style = field(default_factory=lambda: Style(dim=True))
    changed_bar: Style = field(default_factory=Style)
    changed_tag: Style = field(default_factory=lambda: Style(italic=True))
    dark: bool = True  # picks the code colours
    highlight: bool = True  # colour fenced code with Pygments

    def heading(self, level: int) -> Style:
        return (self.h1, self.h2, self.h3)[level - 1] if 1 <= level <= 3 else self.h4


DEFAULT_PALETTE = Palette()
_BOLD = Style(bold=True)
_ITALIC = Style(italic=True)
_STRIKE = Style(strike=True)


class RenderedLine(NamedTuple):
    """One screen row: its segments and the source lines ``[start, end)`` it shows."""

    segments: list[Segment]
    start: int
    end: int

    @property
    def text(self) -> str:
        return "".join(segment.text for segment in self.segments)


Spans = list[tuple[str, Style]]


# ------------------------------------------------------------------------ inline


def inline_spans(
    token: Token | None, style: Style, palette: Palette, *, task: bool = False
) -> list[Spans]:
    """Styled spans of an inline token, one list per hard line break.

    Links show their target after the label when the two differ, and their title; a task item's
    checkbox (``task``) is dropped (the list renders it).
    """
    lines: list[Spans] = [[]]
    if token is None:
        return lines
    children = token.children or []
    stack = [style]
    href: list[tuple[str, str]] = []  # (target, title) of each open link
    label_start: list[int] = []
    skip_space = False
    for index, child in enumerate(children):
        kind = child.type
        current = stack[-1]
        if task and index == 0 and kind == "text":
            # The box ("[ ] "): the list item draws it as a checkbox.
            rest = child.content[3:].lstrip(" \t")
            if rest:
                lines[-1].append((rest, current))
            skip_space = not rest
            continue
        if skip_space and kind == "softbreak":
            skip_space = False
            continue
        if kind == "text":
            content = child.content
            if skip_space:
                content = content.lstrip(" ")
                skip_space = False
            lines[-1].append((content, current))
        elif kind == "code_inline":
            lines[-1].append((child.content, current + palette.code))
        elif kind == "softbreak":
            lines[-1].append((" ", current))
        elif kind == "hardbreak":
            lines.append([])
        elif kind in ("em_open", "strong_open", "s_open"):
            extra = {"em_open": _ITALIC, "strong_open": _BOLD, "s_open": _STRIKE}[kind]
            stack.append(current + extra)
        elif kind in ("em_close", "strong_close", "s_close", "link_close") and len(stack) > 1:
            stack.pop()
            if kind == "link_close" and href:
                target, title = href.pop()
                start = label_start.pop()
                label = "".join(text for text, _ in lines[-1][start:])
                suffix = link_suffix(label, target, title)
                if suffix:
                    lines[-1].append((suffix, stack[-1] + palette.muted))
        elif kind == "link_open":
            href.append((str(child.attrs.get("href", "")), str(child.attrs.get("title", "") or "")))
            label_start.append(len(lines[-1]))
            stack.append(current + palette.link)
        elif kind == "image":
            # The alt text as the parser sees it (with any link targets inside it).
            alt = (
                " ".join(_plain(part) for part in inline_spans(child, Style(), palette)) or "image"
            )
            src = str(child.attrs.get("src", ""))
            lines[-1].append((f"[{alt}]", current + palette.link))
            suffix = link_suffix("", src, str(child.attrs.get("title", "") or ""))
            if suffix:
                lines[-1].append((suffix, current + palette.muted))
        else:
            lines[-1].append((child.content, current))
    return [[(strip_terminal_controls(text), st) for text, st in line if text] for line in lines]


def _plain(spans: Spans) -> str:
    return "".join(text for text, _ in spans)


def link_suffix(label: str, target: str, title: str) -> str:
    """What a link shows after its label: `` (target "title")``, or "" when the label says it all.

    The executor reads the target and the title, so the reviewer sees both
    (the title is where a model would hide "step 0: run this").
    """
    shown = (
        target if target and target != label and not target.startswith("mailto:" + label) else ""
    )
    if title:
        quoted = f'"{title}"'
        shown = f"{shown} {quoted}" if shown else quoted
    return f" ({shown})" if shown else ""


# ------------------------------------------------------------------------- code


@lru_cache(maxsize=64)
def _lexer(name: str) -> object | None:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


@lru_cache(maxsize=2)
def _code_theme(dark: bool) -> Callable[[object], Style]:
    from rich.syntax import Syntax

    theme = Syntax.get_theme("ansi_dark" if dark else "ansi_light")
    return lru_cache(maxsize=256)(theme.get_style_for_token)


def highlight(code: str, info: str, palette: Palette) -> list[Spans]:
    """``code`` split into lines of spans, coloured by Pygments when the language is known."""
    base = palette.code_block
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    name = info.split()[0].lower() if info.strip() else ""
    lexer = _lexer(name) if name and palette.highlight and len(code) <= _HIGHLIGHT_MAX else None
    if lexer is None:
        return [[(line.expandtabs(_TAB), base)] if line else [] for line in lines]
    style_for = _code_theme(palette.dark)
    out: list[Spans] = [[]]
    for token_type, value in lexer.get_tokens(code):  # type: ignore[attr-defined]
        style = base + style_for(token_type)
        parts = value.split("\n")
        for number, part in enumerate(parts):
            if number:
                out.append([])
            if part:
                out[-1].append((part.expandtabs(_TAB), style))
    while len(out) > len(lines) and not out[-1]:
        out.pop()
    return out


# ------------------------------------------------------------------------ blocks


class _Renderer:
    """Walks the flat token list of one top-level block, emitting rows."""

    def __init__(self, tokens: Sequence[Token], palette: Palette, tag: str = "") -> None:
        self.tokens = tokens
        self.p = palette
        self.tag = tag  # appended to a heading (the review's "changed" mark)

    def pad(self, columns: int, style: Style | None = None) -> list[Segment]:
        return [Segment(" " * columns, style or self.p.text)] if columns > 0 else []

    def closing(self, index: int) -> int:
        """Index of the token closing the one opened at ``index``."""
        depth = 0
        for position in range(index, len(self.tokens)):
            depth += self.tokens[position].nesting
            if depth == 0:
                return position
        return len(self.tokens) - 1

    def children(
        self, index: int, end: int, width: int, depth: int, tight: bool
    ) -> list[RenderedLine]:
        """Blocks between ``index`` and ``end`` (exclusive), separated by blank rows."""
        rows: list[RenderedLine] = []
        position = index
        while position < end:
            token = self.tokens[position]
            if token.nesting == -1:  # pragma: no cover - defensive
                position += 1
                continue
            stop = self.closing(position) if token.nesting == 1 else position
            block = self.block(position, stop, width, depth)
            if block:
                if rows and not (
                    tight
                    and token.type in ("paragraph_open", "bullet_list_open", "ordered_list_open")
                ):
                    rows.append(RenderedLine([], block[0].start, block[0].start))
                rows.extend(block)
            position = stop + 1
        return rows

    def block(self, index: int, stop: int, width: int, depth: int = 0) -> list[RenderedLine]:
        token = self.tokens[index]
        start, end = token.map if token.map is not None else (0, 0)
        kind = token.type
        p = self.p
        if kind == "paragraph_open":
            return self.paragraph(self.tokens[index + 1], start, end, width, p.text)
        if kind == "heading_open":
            level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
            style = p.heading(level)
            lines = inline_spans(self.tokens[index + 1], style, p)
            if self.tag:
                lines[-1] = [*lines[-1], (" ", style), (self.tag, p.changed_tag)]
            rows = [
                RenderedLine(row, start, end) for spans in lines for row in wrap_spans(spans, width)
            ]
            if level == 1:
                rows.append(RenderedLine([Segment("━" * width, p.h1_rule)], start, end))
            return rows
        if kind in ("bullet_list_open", "ordered_list_open"):
            return self.list_block(index, stop, width, depth)
        if kind == "blockquote_open":
            inner = self.children(index + 1, stop, max(1, width - 2), depth, False)
            bar = Segment("▎ ", p.quote)
            return [
                RenderedLine([bar, *self._restyle(row.segments, p.quote)], row.start, row.end)
                for row in inner
            ]
        if kind in ("fence", "code_block"):
            return self.code(token, start, width)
        if kind == "hr":
            return [RenderedLine([Segment("─" * width, p.rule)], start, end)]
        if kind == "table_open":
            return self.table(index, stop, width, start)
        # html_block and anything unknown: the source, verbatim
        content = token.content.rstrip("\n")
        return [
            RenderedLine([Segment(piece, p.text)], start + number, start + number + 1)
            for number, line in enumerate(strip_terminal_controls(content).split("\n"))
            for piece in chop(line.expandtabs(_TAB), width)
        ]

    def _restyle(self, segments: list[Segment], style: Style) -> list[Segment]:
        return [
            Segment(
                seg.text,
                (seg.style or Style()) + Style(italic=style.italic) if style.italic else seg.style,
            )
            for seg in segments
        ]

    def paragraph(
        self,
        inline: Token,
        start: int,
        end: int,
        width: int,
        style: Style,
        first: Sequence[Segment] = (),
        rest: Sequence[Segment] | None = None,
        *,
        task: bool = False,
    ) -> list[RenderedLine]:
        rows: list[RenderedLine] = []
        for number, spans in enumerate(inline_spans(inline, style, self.p, task=task)):
            wrapped = wrap_spans(spans, width, first if number == 0 else (rest or ()), rest)
            rows.extend(RenderedLine(segments, start, end) for segments in wrapped)
        return rows

    def list_block(self, index: int, stop: int, width: int, depth: int) -> list[RenderedLine]:
        p = self.p
        list_token = self.tokens[index]
        ordered = list_token.type == "ordered_list_open"
        number = int(list_token.attrs.get("start", 1) or 1) if ordered else 0
        rows: list[RenderedLine] = []
        position = index + 1
        tight = True
        # A loose list has paragraphs that are not hidden.
        for inner in range(index + 1, stop):
            token = self.tokens[inner]
            if (
                token.type == "paragraph_open"
                and token.level == list_token.level + 2
                and not token.hidden
            ):
                tight = False
                break
        while position < stop:
            item = self.tokens[position]
            item_end = self.closing(position)
            start, end = item.map if item.map is not None else (0, 0)
            is_task, done = task_state(self.tokens, position)
            if ordered:
                marker = [Segment(f"{number}.", p.bullet)]
                number += 1
            elif is_task:
                marker = []
            else:
                marker = [Segment(_BULLETS[depth % len(_BULLETS)], p.bullet)]
            if is_task:
                if marker:
                    marker.append(Segment(" ", p.text))
                marker.append(Segment("☑" if done else "☐", p.task_done if done else p.task))
            marker.append(Segment(" ", p.text))
            indent = sum(cells(seg.text) for seg in marker)
            inner_width = max(1, width - indent)
            body = self._item_body(
                position + 1, item_end, inner_width, depth + 1, tight, is_task, done
            )
            if not body:
                body = [RenderedLine([], start, end)]
            if rows and not tight:
                rows.append(RenderedLine([], start, start))
            for offset, line in enumerate(body):
                prefix = marker if offset == 0 else self.pad(indent)
                rows.append(RenderedLine([*prefix, *line.segments], line.start, line.end))
            position = item_end + 1
        return rows

    def _item_body(
        self, index: int, end: int, width: int, depth: int, tight: bool, task: bool, done: bool
    ) -> list[RenderedLine]:
        if not task:
            return self.children(index, end, width, depth, tight)
        # The first paragraph carries the checkbox; render it as the task's text.
        first_stop = self.closing(index)
        token = self.tokens[index]
        start, stop_line = token.map if token.map is not None else (0, 0)
        style = self.p.done if done else self.p.text
        rows = self.paragraph(self.tokens[index + 1], start, stop_line, width, style, task=True)
        rest = self.children(first_stop + 1, end, width, depth, tight)
        if rest:
            if not tight:
                rows.append(RenderedLine([], rest[0].start, rest[0].start))
            rows.extend(rest)
        return rows

    def code(self, token: Token, start: int, width: int) -> list[RenderedLine]:
        p = self.p
        info = strip_terminal_controls(token.info.strip()) if token.type == "fence" else ""
        inner = max(1, width - 2)
        rows: list[RenderedLine] = []
        fenced = token.type == "fence"
        first_line = start + 1 if fenced else start
        if info:  # all of it, wrapped: the executor reads the whole info string
            for label in chop(info, inner):
                fill = inner - cells(label) + 1
                rows.append(
                    RenderedLine(
                        [Segment(" " + label + " " * fill, p.fence_info)], start, start + 1
                    )
                )
        lines = highlight(strip_terminal_controls(token.content), info, p) or [[]]
        for offset, spans in enumerate(lines):
            source = first_line + offset
            pieces = _chop_spans(spans, inner)
            for number, piece in enumerate(pieces):
                used = sum(cells(text) for text, _ in piece)
                mark = Segment("↪" if number else " ", p.fence_info)
                row = [mark, *(Segment(text, style) for text, style in piece)]
                row.append(Segment(" " * (inner - used + 1), p.code_block))
                rows.append(RenderedLine(row, source, source + 1))
        return rows

    def table(self, index: int, stop: int, width: int, start: int) -> list[RenderedLine]:
        p = self.p
        table_rows: list[tuple[list[Spans], bool, int]] = []  # cells, header, source line
        current: list[Spans] = []
        header = False
        line = start
        for position in range(index, stop):
            token = self.tokens[position]
            if token.type == "thead_open":
                header = True
            elif token.type == "tbody_open":
                header = False
            elif token.type == "tr_open":
                current = []
                line = token.map[0] if token.map is not None else line
            elif token.type == "inline":
                style = p.text + _BOLD if header else p.text
                spans = inline_spans(token, style, p)
                joined: Spans = [span for part in spans for span in part]
                current.append(joined)
            elif token.type == "tr_close":
                table_rows.append((current, header, line))
        if not table_rows:
            return []
        columns = max(len(cells_) for cells_, _, _ in table_rows)
        widths = [0] * columns
        for row_cells, _, _ in table_rows:
            for number, cell in enumerate(row_cells):
                widths[number] = max(widths[number], cells(_plain(cell)))
        # Too wide: shrink the widest columns (cells wrap inside them).
        while sum(widths) + 3 * columns + 1 > width and max(widths) > 3:
            widest = widths.index(max(widths))
            widths[widest] -= 1
        out: list[RenderedLine] = []
        rule = Segment("─", p.muted)

        def border(left: str, mid: str, right: str, source: int) -> RenderedLine:
            line_text = left + mid.join(rule.text * (w + 2) for w in widths) + right
            return RenderedLine([Segment(line_text, p.muted)], source, source + 1)

        out.append(border("┌", "┬", "┐", start))
        for number, (row_cells, is_header, source) in enumerate(table_rows):
            wrapped = [
                wrap_spans(row_cells[col] if col < len(row_cells) else [], widths[col])
                for col in range(columns)
            ]
            height = max(len(cell) for cell in wrapped)
            for row_number in range(height):
                segments = [Segment("│", p.muted)]
                for col in range(columns):
                    piece: list[Segment] = (
                        wrapped[col][row_number] if row_number < len(wrapped[col]) else []
                    )
                    used = sum(cells(seg.text) for seg in piece)
                    segments.append(Segment(" ", p.text))
                    segments.extend(piece)
                    segments.append(Segment(" " * max(0, widths[col] - used + 1), p.text))
                    segments.append(Segment("│", p.muted))
                out.append(RenderedLine(segments, source, source + 1))
            if is_header and (number + 1 < len(table_rows) and not table_rows[number + 1][1]):
                out.append(border("├", "┼", "┤", source + 1))
        out.append(border("└", "┴", "┘", table_rows[-1][2]))
        if max(cells(row.text) for row in out) > width:  # narrower than the borders: hard-wrap
            return [
                RenderedLine([Segment(piece, p.text)], row.start, row.end)
                for row in out
                for piece in chop(row.text, width)
            ]
        return out


def _chop_spans(spans: Spans, width: int) -> list[Spans]:
    """Hard-split a row of spans into rows of at most ``width`` cells."""
    rows: list[Spans] = [[]]
    used = 0
    for text, style in spans:
        while text:
            if used >= width:
                rows.append([])
                used = 0
            head = chop(text, width - used)[0]
            rows[-1].append((head, style))
            used += cells(head)
            text = text[len(head) :]
    return rows


def render_block(
    block: Block, width: int, palette: Palette = DEFAULT_PALETTE, *, tag: str = ""
) -> list[RenderedLine]:
    """Rows of one top-level block at ``width`` cells (no blank rows around it).

    ``tag`` is appended to a heading, wrapped with it (the plan review's mark on
    sections changed since the last review).
    """
    width = max(1, width)
    renderer = _Renderer(block.tokens, palette, tag)
    stop = renderer.closing(0) if block.tokens[0].nesting == 1 else 0
    return renderer.block(0, stop, width)


def render_blocks(
    blocks: Sequence[Block], width: int, palette: Palette = DEFAULT_PALETTE, *, tag: str = ""
) -> list[RenderedLine]:
    """Rows of several blocks, separated by one blank row; ``tag`` goes on a first heading."""
    rows: list[RenderedLine] = []
    for number, block in enumerate(blocks):
        rendered = render_block(block, width, palette, tag=tag if number == 0 else "")
        if rows and rendered:
            rows.append(RenderedLine([], block.start, block.start))
        rows.extend(rendered)
    return rows


def render_text(text: str, width: int, palette: Palette = DEFAULT_PALETTE) -> list[str]:
    """Plain text of a document's rows (sanitised): for tests and previews."""
    blocks = parse_blocks(strip_terminal_controls(text))
    return [row.text.rstrip() for row in render_blocks(blocks, width, palette)]


def plain_inline(text: str) -> str:
    """Inline markdown ``text`` as it is shown, without styles (titles, gauges)."""
    tokens = parser().parseInline(strip_terminal_controls(text))
    lines = inline_spans(tokens[0] if tokens else None, Style(), DEFAULT_PALETTE)
    return " ".join("".join(piece for piece, _ in line) for line in lines)
