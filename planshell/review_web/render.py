"""Plan markdown -> HTML blocks, each with the source lines it came from.

One function, :func:`render_plan_html`, is the seam: it uses markdown-it-py
(CommonMark, raw HTML off, so every character of plan text arrives escaped)
with the GFM tables, strikethrough and task-list plugins, and Pygments for
fenced code. Every top-level block carries its ``token.map`` line range, which
is what comments anchor to: a fenced block is one token, so a comment can never
land inside it.

Plan text is hostile (the model wrote it, maybe from a hostile repository):
links keep only ``http``, ``https``, ``mailto`` and in-page ``#`` targets
(anything else stays literal text), images are never loaded (they render as
their alt text and address), and no ``id`` or ``style`` comes from the plan.
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
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

__all__ = ["Block", "highlight_css", "render_plan_html"]

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
    """Images are never fetched: show their alt text and address as plain text."""
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    src = str(token.attrGet("src") or "")
    return (
        '<span class="image-ref">[image: '
        f"{html.escape(alt)}]{' ' + html.escape(src) if src else ''}</span>"
    )


def _validate_link(url: str) -> bool:
    return bool(_SAFE_LINK.match(url.strip()))


@cache
def _engine() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"]).use(tasklists_plugin)
    md.validateLink = _validate_link  # type: ignore[method-assign]
    md.add_render_rule("image", _image)
    return md


def _harden(tokens: list[Token]) -> None:
    """Links open outside the page; table alignment becomes a class (CSP has no inline style)."""
    stack = list(tokens)
    while stack:
        token = stack.pop()
        if token.children:
            stack.extend(token.children)
        if token.type == "link_open":
            token.attrSet("rel", "noopener noreferrer")
            token.attrSet("target", "_blank")
        style = token.attrGet("style")
        if style is not None:
            token.attrs.pop("style", None)
            match = _ALIGN.match(str(style))
            if match:
                token.attrJoin("class", f"align-{match.group(1)}")


def _trim_end(lines: list[str], start: int, end: int) -> int:
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def render_plan_html(text: str) -> list[Block]:
    """The plan as top-level blocks with escaped HTML and source line ranges."""
    md = _engine()
    env: dict[str, Any] = {}
    tokens = md.parse(text, env)
    _harden(tokens)
    lines = text.split("\n")
    blocks: list[Block] = []
    index = 0
    while index < len(tokens):
        first = tokens[index]
        close = index
        if first.nesting == 1:
            depth = 0
            for close in range(index, len(tokens)):
                depth += tokens[close].nesting
                if depth == 0:
                    break
        group = tokens[index : close + 1]
        index = close + 1
        if first.map is None:
            continue
        start, end = first.map
        end = _trim_end(lines, start, min(end, len(lines)))
        body = md.renderer.render(group, md.options, env)
        kind = first.type.removesuffix("_open")
        level, title = 0, ""
        if first.type == "heading_open":
            level = int(first.tag[1:])
            title = "".join(c.content for c in (group[1].children or []) if c.type in {"text", "code_inline"})
        blocks.append(Block(start, end, kind, body, level, title))
    return blocks


@cache
def highlight_css() -> str:
    """Pygments rules for light and dark themes, scoped to ``.hl``."""
    light = HtmlFormatter(style="default", classprefix="hl-").get_style_defs(".hl")
    dark = HtmlFormatter(style="monokai", classprefix="hl-").get_style_defs(".hl")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
