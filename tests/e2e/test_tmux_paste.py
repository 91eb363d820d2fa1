"""A real terminal's paste (bracketed, CR for each newline) keeps its line breaks (issue 26.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tmux_harness import start_planshell

pytestmark = pytest.mark.tmux


def test_a_42_line_paste_is_folded_as_42_lines(project: Path, tmp_path: Path) -> None:
    text = "".join(f"line {i} of the pasted log, with some words for width\n" for i in range(42))
    with start_planshell(project, tmp_path / "home", size=(120, 40)) as pane:
        pane.wait_for("Ask anything")
        pane.paste(text)
        screen = pane.wait_for("[pasted ")
        assert "[pasted 42 lines, 2 KB]" in screen, screen
