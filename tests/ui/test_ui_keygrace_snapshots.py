"""How a decision screen looks while its keys are held: dots and dimmed keys, nothing moved.

The grace is made to outlast the screenshot, so the held state is what is
captured every time (the other snapshots are taken with the grace off, which
is the ready state).
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from planshell.ui.decider import LEAVE_PLAN_QUESTION
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.confirm import ConfirmScreen
from tests.ui.review_helpers import ReviewHost, make_plan, request_for, settle_review


@pytest.fixture(autouse=True)
def held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(KeyGrace, "GRACE", 3600.0)


def test_review_keys_held(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = ReviewHost(request_for(make_plan(300)))
    assert snap_compare(app, terminal_size=(100, 24), run_before=settle_review)


def test_leave_plan_question_held(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = ReviewHost(request_for(make_plan(300)))

    async def ask(pilot: Pilot[None]) -> None:
        await settle_review(pilot)
        question = ConfirmScreen(
            LEAVE_PLAN_QUESTION,
            detail="Leaving gives the agent every tool back without a reviewed plan.",
            yes="Allow",
            no="Keep planning",
        )
        await pilot.app.push_screen(question)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=ask)
