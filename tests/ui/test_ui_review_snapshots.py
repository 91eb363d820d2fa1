"""How the review screen looks: top of a plan, the middle with the gauge, 50 columns."""

from __future__ import annotations

from textual.pilot import Pilot

from tests.ui.review_helpers import RECEIPT, review_host, settle_review
from tests.ui_helpers import read_whole_plan


def test_review_top(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = review_host(changed_sections=frozenset({1}), previous_text="old", receipt=RECEIPT)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_review)


def test_review_middle_with_gauge(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = review_host(
        changed_sections=frozenset({4}),
        previous_text="old",
        notice="The plan file changed while you were reviewing it; review it again.",
    )

    async def middle(pilot: Pilot[None]) -> None:
        await settle_review(pilot, "n", "n", "n", "n", "j", "j")

    assert snap_compare(app, terminal_size=(120, 40), run_before=middle)


def test_review_narrow_50_columns(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = review_host(changed_sections=frozenset({2}), previous_text="old")

    async def narrow(pilot: Pilot[None]) -> None:
        await settle_review(pilot, "n", "n")

    assert snap_compare(app, terminal_size=(50, 24), run_before=narrow)


def test_review_refine_editor_open(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = review_host()

    async def refine(pilot: Pilot[None]) -> None:
        await settle_review(pilot, "n", "r", *"split step 2", "ctrl+j", *"and add tests")

    assert snap_compare(app, terminal_size=(80, 24), run_before=refine)


def test_review_discard_confirmation(snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = review_host()

    async def confirm(pilot: Pilot[None]) -> None:
        await settle_review(pilot, "D")

    assert snap_compare(app, terminal_size=(80, 24), run_before=confirm)


def test_review_approve_choices(snap_compare) -> None:  # type: ignore[no-untyped-def]
    """a: how the plan runs, in words; the safe choice highlighted; auto offered by the config."""
    app = review_host(allow_auto=True)

    async def approve(pilot: Pilot[None]) -> None:
        await settle_review(pilot)
        await read_whole_plan(pilot)  # every section seen: a goes straight to the choices
        await settle_review(pilot, "a")

    assert snap_compare(app, terminal_size=(100, 30), run_before=approve)
