"""Key grace in a real terminal: an `a` sent as the review appears does not approve the plan.

The review shows a held key as a dimmed dot (`· approve & run`); the test sends
`a` as soon as it sees that state, then waits for the letter to appear (the
held key started the grace again, so it appears only after it). The review is
still open; the next `a` opens the approve dialog, whose early `2` does nothing
either; once its keys show, `2` ("Accept edits inside the plan's scope") runs
the plan to the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.ui.keygrace import HELD_KEY
from tests.tmux_harness import start_planshell

pytestmark = pytest.mark.tmux


def test_an_a_sent_as_the_review_appears_does_not_approve(project: Path, tmp_path: Path) -> None:
    with start_planshell(project, tmp_path / "home", "--plan") as pane:
        pane.wait_for("demo (offline)")
        pane.type("add rate limiting to the server")
        pane.keys("Enter")
        pane.wait_for(f"{HELD_KEY} approve & run")  # the review is up, its keys held
        pane.keys("a")
        screen = pane.wait_for("a approve & run")  # ready: the early `a` did nothing
        assert "Review plan" in screen and "Plan progress" not in screen
        pane.read_whole_plan()  # else approving asks about the unseen sections first
        pane.keys("a")
        pane.wait_for(f"{HELD_KEY * 5} chooses")  # the approve dialog is up, its keys held
        pane.keys("2")
        screen = pane.wait_for("Enter chooses · 1-2")  # ready: the early `2` chose nothing
        assert "Plan progress" not in screen
        pane.keys("2")
        # plan_complete opens the plan report over the chat; Enter closes it.
        pane.wait_for("Plan report:")
        pane.wait_until(lambda s: "working" not in s, what="the turn to end")
        pane.keys("Enter")
        # The demo's last words (not the "Plan complete: permissions back to ask." toast),
        # and the turn over: /quit during a turn asks first instead of quitting.
        pane.wait_until(
            lambda s: "Plan complete: 4 steps ticked" in s and "working" not in s,
            what="the plan to complete and the turn to end",
        )
        pane.type("/quit")
        pane.keys("Enter")
        assert pane.wait_exit() == 0
