"""End to end in a real terminal: start planshell (demo model), ask, read the answer, quit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tmux_harness import start_planshell

pytestmark = pytest.mark.tmux


def test_ask_the_demo_model_and_quit(project: Path, tmp_path: Path) -> None:
    with start_planshell(project, tmp_path / "home", size=(110, 50)) as pane:
        pane.wait_for("Ask anything")
        pane.wait_for("demo (offline)")
        pane.type("what does the server do?")
        pane.keys("Enter")
        pane.wait_for("Offline demo model")
        screen = pane.wait_gone("working")
        # The question and the demo's tool rows (it reads the project with real tools).
        assert "› what does the server do?" in screen
        assert "✓ ls" in screen
        pane.type("/quit")
        pane.keys("Enter")
        assert pane.wait_exit() == 0
        pane.wait_until(lambda _: pane.pane_dead(), what="the pane to close")
