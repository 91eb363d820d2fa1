"""One markdown engine for plans and chat (pure: no Textual).

markdown-it-py parses (CommonMark + tables, strikethrough, task lists);
:mod:`planshell.markdown.render` turns top-level blocks into styled rows for a
width; :class:`planshell.markdown.parse.MarkdownStream` re-parses only the last
open block when text is appended. ``plan/document.py`` derives sections and
steps from the same tokens, so a "step" is exactly a task item the user sees.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Where each name lives. Imported on first use (PEP 562): the plan store needs only the
# parser, and the renderer pulls in Rich, which ``planshell -p`` must not pay for.
_HOMES = {
    "Block": "parse",
    "MarkdownStream": "parse",
    "parse_blocks": "parse",
    "parse_tokens": "parse",
    "DEFAULT_PALETTE": "render",
    "Palette": "render",
    "RenderedLine": "render",
    "inline_spans": "render",
    "plain_inline": "render",
    "render_block": "render",
    "render_blocks": "render",
    "render_text": "render",
    "cells": "wrap",
    "chop": "wrap",
    "wrap_spans": "wrap",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


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
