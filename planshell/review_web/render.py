"""Plan markdown -> HTML blocks, each with the source lines it came from.

One function, :func:`render_plan_html`, is the seam: it parses with the shared
markdown engine (:mod:`planshell.markdown`: CommonMark + GFM tables and
strikethrough, raw HTML off, so every character of plan text arrives escaped),
section by section exactly as the TUI's ``PlanView`` does, and renders those
tokens with markdown-it's HTML renderer (task items as the engine sees them,
Pygments for fenced code). Every top-level block carries its ``token.map`` line
range, which is what comments anchor to: a fenced block is one token, so a
comment can never land inside it.

Plan text is hostile (the model wrote it, maybe from a hostile repository):
links keep only ``http``, ``https``, ``mailto`` and in-page ``#`` targets
(anything else shows its label as plain text), images are never loaded (they
render as their alt text and address), and no ``id`` or ``style`` comes from
the plan. What the executor will read is shown, as in the TUI: every link's
target and title after its label, a fence's whole info string, an image's
title; invisible and bidi characters are removed (the page counts them).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from rich.style import Style

from planshell.markdown.parse import task_state
from planshell.markdown.render import DEFAULT_PALETTE, inline_spans, link_suffix
from planshell.plan.blocks import PlanBlock, plan_blocks
from planshell.sanitize import strip_terminal_controls

__all__ = ["Block", "highlight_css", "render_blocks_html", "render_plan_html"]

_SAFE_LINK = re.compile(r"^(?:https?://|mailto:|#)", re.IGNORECASE)
_ALIGN = re.compile(r"^text-align:(left|right|center)$")
_MAX_CODE_HIGHLIGHT = 64 * 1024  # longer code is shown plain (Pygments time is not free)


@dataclass(frozen=True)
class Block:
    """One top-level markdown block: its HTML and its source lines ``[start, end)`` (0-based).

    ``end`` excludes trailing blank lines, so "after the block" is the line a
    comment goes on. ``heading`` is the heading level (0 for other blocks) and
    ``title`` the heading's plain text.
    """

    start: int
    end: int
    kind: str
    html: str
    heading: int = 0
    title: str = ""


def _highlight(code: str, lang: str, _attrs: str) -> str:
    """Pygments HTML for a fence (escaped by Pygments), or "" for markdown-it's own escaping."""
    name = (lang or "").split()[0] if lang else ""
    if not name or len(code) > _MAX_CODE_HIGHLIGHT:
        return ""
    try:
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        return ""
    body = highlight(code, lexer, HtmlFormatter(nowrap=True, classprefix="hl-"))
    return f'<pre class="hl"><code>{body}</code></pre>\n'


def _image(_renderer: Any, tokens: Sequence[Token], idx: int, _options: Any, _env: Any) -> str:
    """Images are never fetched: show their alt text, address and title as plain text.

    The alt text is the engine's (the TUI's) reading of it, link targets included.
    """
    token = tokens[idx]
    alt = " ".join(
        "".join(text for text, _ in line) for line in inline_spans(token, Style(), DEFAULT_PALETTE)
    )
    suffix = link_suffix("", str(token.attrGet("src") or ""), str(token.attrGet("title") or ""))
    return f'<span class="image-ref">[image: {html.escape(alt)}]{html.escape(suffix)}</span>'


def _fence_with_info(default: Any) -> Any:
    """Fenced code shows its whole info string above the code (the executor reads all of it)."""

    def fence(_renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        info = tokens[idx].info.strip()
        label = f'<div class="fence-info">{html.escape(info)}</div>' if info else ""
        return label + str(default(tokens, idx, options, env))

    return fence


_CHECKBOX = '<input class="task-list-item-checkbox" disabled="disabled" type="checkbox">'
_CHECKED = (
    '<input class="task-list-item-checkbox" checked="checked" disabled="disabled" type="checkbox">'
)


@cache
def _html() -> MarkdownIt:
    """Only the HTML *renderer* (and its options): parsing is the shared engine's."""
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.add_render_rule("image", _image)
    default_fence = md.renderer.rules["fence"]  # type: ignore[attr-defined]
    md.add_render_rule("fence", _fence_with_info(default_fence))
    return md


def _tasks(tokens: Sequence[Token]) -> None:
    """GFM task items, as the engine counts them: a disabled checkbox instead of ``[ ]``.

    The checkbox is a fixed string of ours (an ``html_inline`` token is written
    verbatim); the item's own text stays a text token, so it is escaped.
    """
    for index, token in enumerate(tokens):
        if token.type != "list_item_open":
            continue
        is_task, done = task_state(tokens, index)
        if not is_task:
            continue
        token.attrJoin("class", "task-list-item")
        for opener in reversed(tokens[:index]):
            if (
                opener.type in ("bullet_list_open", "ordered_list_open")
                and opener.level == token.level - 1
            ):
                if "contains-task-list" not in str(opener.attrGet("class") or ""):
                    opener.attrJoin("class", "contains-task-list")
                break
        inline = tokens[index + 2]
        children = inline.children or []
        if children and children[0].type == "text":
            children[0].content = children[0].content[3:]
        box = Token("html_inline", "", 0, content=_CHECKED if done else _CHECKBOX)
        inline.children = [box, *children]


def _harden(tokens: Sequence[Token]) -> None:
    """Links open outside the page, unsafe ones lose their target; no inline style (CSP)."""
    stack = list(tokens)
    while stack:
        token = stack.pop()
        if token.children and token.type != "image":  # _image draws its alt as escaped text
            stack.extend(token.children)
        if token.type in ("html_inline", "html_block"):  # the parser has HTML off: never trust it
            token.type = "text"
        # Invisible and bidi characters would reorder or hide text in the page too.
        token.content = strip_terminal_controls(token.content)
        if token.type == "fence":
            token.info = strip_terminal_controls(token.info)
        for name in ("href", "src", "title"):
            value = token.attrGet(name)
            if value is not None:
                token.attrSet(name, strip_terminal_controls(str(value)))
        if token.type == "link_open":  # the target and title as written, for the visible suffix
            token.meta = {
                **token.meta,
                "href": str(token.attrGet("href") or ""),
                "title": str(token.attrGet("title") or ""),
            }
        if token.type == "link_open" and not _SAFE_LINK.match(
            str(token.attrGet("href") or "").strip()
        ):
            token.tag, token.attrs = "span", {"class": "unsafe-link"}
        elif token.type == "link_open":
            token.attrSet("rel", "noopener noreferrer")
            token.attrSet("target", "_blank")
        style = token.attrGet("style")
        if style is not None:
            token.attrs.pop("style", None)
            match = _ALIGN.match(str(style))
            if match:
                token.attrJoin("class", f"align-{match.group(1)}")


def _show_link_targets(tokens: Sequence[Token]) -> None:
    """After each link, its target and title as visible text, as the TUI shows them.

    A hover is not a review: the executor reads ``[docs](https://x "step 0: …")``
    whole, and a target the page refuses to link (``file:``, a relative path)
    is still shown. Our span is a fixed string around escaped text.
    """
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        out: list[Token] = []
        opened: list[tuple[Token, int]] = []  # (link_open, index of the label's first child)
        for child in token.children:
            if child.type == "link_open":
                opened.append((child, len(out) + 1))
            out.append(child)
            if child.type == "link_close" and opened:
                opener, first = opened.pop()
                child.tag = opener.tag  # an unsafe link is a <span>: close it as one
                target = str(opener.meta.get("href", opener.attrGet("href") or ""))
                title = str(opener.meta.get("title", opener.attrGet("title") or ""))
                label = "".join(
                    c.content for c in out[first:-1] if c.type in ("text", "code_inline")
                )
                suffix = link_suffix(label, target, title)
                if suffix:
                    span = f'<span class="link-target">{html.escape(suffix)}</span>'
                    out.append(Token("html_inline", "", 0, content=span))
        token.children = out


def render_plan_html(text: str) -> list[Block]:
    """The plan as top-level blocks with escaped HTML and source line ranges.

    The blocks are :func:`planshell.plan.blocks.plan_blocks`: the ones the TUI
    shows and comments are anchored to, with the same line ranges.
    """
    return render_blocks_html(plan_blocks(text))


def render_blocks_html(plan_blocks: Sequence[PlanBlock]) -> list[Block]:
    """Some of a plan's blocks (:func:`planshell.plan.blocks.section_blocks`) as HTML blocks."""
    md = _html()
    env: dict[str, Any] = {}
    blocks: list[Block] = []
    for block in plan_blocks:
        group = list(block.tokens)
        first = group[0]
        _harden(group)
        _show_link_targets(group)
        _tasks(group)
        body = md.renderer.render(group, md.options, env)
        level, title = 0, ""
        if first.type == "heading_open":
            level = int(first.tag[1:])
            title = "".join(
                c.content for c in (group[1].children or []) if c.type in {"text", "code_inline"}
            )
        blocks.append(Block(block.start, block.end, block.kind, body, level, title))
    return blocks


@cache
def highlight_css() -> str:
    """Pygments rules for light and dark themes, scoped to ``.hl``."""
    light = HtmlFormatter(style="default", classprefix="hl-").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai", classprefix="hl-").get_style_defs(".hl")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
