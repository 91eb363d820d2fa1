"""A review screen on its own: a generated plan, a request for it, a host app, keys pressed on it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from textual.pilot import Pilot

from planshell.plan.decider import Review, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.receipt import Receipt
from planshell.ui.screens.results import push_answering
from planshell.ui.screens.review import ReviewScreen
from planshell.ui.toasts import ToastLog
from planshell.ui.widgets.plan_view import PlanView
from tests.plan_samples import generated_plan
from tests.ui_helpers import read_whole_plan, until


def make_plan(lines: int) -> str:
    return generated_plan(
        lines,
        title="Generated test plan",
        intro="A generated plan for the review screen tests.",
        last_line="LAST LINE OF THE PLAN",
    )


def request_for(text: str, **kwargs: object) -> ReviewRequest:
    return ReviewRequest(
        path=Path("/tmp/plans/2025-01-01-1200-test.md"),
        text=text,
        title=parse_plan(text).title,
        **kwargs,  # type: ignore[arg-type]
    )


class ReviewHost(ToastLog[None]):
    """Pushes one ReviewScreen and records what it was dismissed with."""

    def __init__(self, request: ReviewRequest, *, read_only: bool = False) -> None:
        super().__init__()
        self.request = request
        self.read_only = read_only
        self.results: list[Review | None] = []
        self.review_screen: ReviewScreen | None = None
        from planshell.ui.themes import load_themes

        for theme in load_themes().themes:
            self.register_theme(theme)
        self.theme = "planshell-dark"

    def on_mount(self) -> None:
        self.review_screen = ReviewScreen(self.request, read_only=self.read_only)
        push_answering(self, self.review_screen, self.results.append)


SHORT = make_plan(60)


async def run_keys(
    text: str, *keys: str, read: bool = True, **request: object
) -> tuple[ReviewHost, list[Review | None]]:
    """Review TEXT (paged through to the end first, unless ``read`` is False), press KEYS:
    the host and what the screen was dismissed with."""
    app = ReviewHost(request_for(text, **request))
    async with app.run_test(size=(100, 30)) as pilot:
        if read:
            await read_whole_plan(pilot)
        await pilot.press(*keys)
        await pilot.pause()
    return app, app.results


RECEIPT = Receipt(
    True, [], "write barrier: nothing written outside the plan", datetime(2025, 1, 1, tzinfo=UTC)
)


SNAPSHOT_PLAN = make_plan(300)


def review_host(**request: object) -> ReviewHost:
    """A host reviewing the 300-line plan the review snapshots show."""
    return ReviewHost(request_for(SNAPSHOT_PLAN, **request))


async def settle_review(pilot: Pilot[None], *keys: str) -> None:
    """Press ``keys`` and wait for the background layout (it sizes the scrollbar)."""
    await pilot.pause()
    if keys:
        await pilot.press(*keys)
    app = pilot.app
    assert isinstance(app, ReviewHost) and app.review_screen is not None
    view = app.review_screen.query_one(PlanView)
    await until(pilot, lambda: view.layout_complete)  # not a count of pauses: load varies
    await pilot.pause()
