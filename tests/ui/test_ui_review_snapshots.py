"""How the review screen looks: top of a plan, the middle with the gauge, 50 columns."""

from __future__ import annotations

from datetime import UTC, datetime

from textual.pilot import Pilot

from planshell.plan.receipt import Receipt
from planshell.ui.widgets.plan_view import PlanView
from tests.ui.test_ui_review import ReviewHost, make_plan, request_for
from tests.ui_helpers import until

RECEIPT = Receipt(
    True, [], "write barrier: nothing written outside the plan", datetime(2025, 1, 1, tzinfo=UTC)
)


PLAN = make_plan(300)


def host(**request: object) -> ReviewHost:
    return ReviewHost(request_for(PLAN, **request))


async def settle(pilot: Pilot[None], *keys: str) -> None:
    """Press ``keys`` and wait for the background layout (it sizes the scrollbar)."""
    await pilot.pause()
    if keys:
        await pilot.press(*keys)
    app = pilot.app
    assert isinstance(app, ReviewHost) and app.review_screen is not None
    view = app.review_screen.query_one(PlanView)
    await until(pilot, lambda: view.layout_complete)  # not a count of pauses: load varies
    await pilot.pause()


def test_review_top(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = host(changed_sections=frozenset({1}), previous_text="old", receipt=RECEIPT)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_review_middle_with_gauge(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = host(
        changed_sections=frozenset({4}),
        previous_text="old",
        notice="The plan file changed while you were reviewing it; review it again.",
    )

    async def middle(pilot: Pilot[None]) -> None:
        await settle(pilot, "n", "n", "n", "n", "j", "j")

    assert snap_compare(app, terminal_size=(120, 40), run_before=middle)


def test_review_narrow_50_columns(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = host(changed_sections=frozenset({2}), previous_text="old")

    async def narrow(pilot: Pilot[None]) -> None:
        await settle(pilot, "n", "n")

    assert snap_compare(app, terminal_size=(50, 24), run_before=narrow)


def test_review_refine_editor_open(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = host()

    async def refine(pilot: Pilot[None]) -> None:
        await settle(pilot, "n", "r", *"split step 2", "ctrl+j", *"and add tests")

    assert snap_compare(app, terminal_size=(80, 24), run_before=refine)


def test_review_discard_confirmation(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = host()

    async def confirm(pilot: Pilot[None]) -> None:
        await settle(pilot, "D")

    assert snap_compare(app, terminal_size=(80, 24), run_before=confirm)
