"""One markdown engine for plans and chat (pure: no Textual).

markdown-it-py parses (CommonMark + tables, strikethrough, task lists);
:mod:`planshell.markdown.render` turns top-level blocks into styled rows for a
width; :class:`planshell.markdown.parse.MarkdownStream` re-parses only the last
open block when text is appended. ``plan/document.py`` derives sections and
steps from the same tokens, so a "step" is exactly a task item the user sees.
"""

from planshell.markdown.parse import Block, MarkdownStream, parse_blocks, parse_tokens
from planshell.markdown.render import (
    DEFAULT_PALETTE,
    Palette,
    RenderedLine,
    inline_spans,
    plain_inline,
    render_block,
    render_blocks,
    render_text,
)
from planshell.markdown.wrap import cells, chop, wrap_spans

__all__ = [
    "DEFAULT_PALETTE",
    "Block",
    "MarkdownStream",
    "Palette",
    "RenderedLine",
    "cells",
    "chop",
    "inline_spans",
    "parse_blocks",
    "parse_tokens",
    "plain_inline",
    "render_block",
    "render_blocks",
    "render_text",
    "wrap_spans",
]
