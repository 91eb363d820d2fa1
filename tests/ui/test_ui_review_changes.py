"""The review's "what changed since your last review" (d, ]c, [c) and staleness (chip, s)."""

from __future__ import annotations

from datetime import UTC, datetime

from textual import events
from textual.widgets import Static

from planshell.plan.document import parse_plan
from planshell.plan.receipt import Receipt
from planshell.plan.staleness import Staleness
from planshell.ui.screens.review import FeedbackArea
from planshell.ui.screens.stale_files import StaleFilesScreen
from planshell.ui.widgets.gauge import PlanGauge
from planshell.ui.widgets.plan_view import PlanView
from tests.ui.review_helpers import ReviewHost, make_plan, request_for, settle_review

OLD = make_plan(400)
NEW = (
    OLD.replace("Paragraph about phase 3 with", "Paragraph about phase 3 now with")
    .replace("- [ ] Edit `src/mod12.py`", "- [ ] Rewrite `src/mod12.py`")
    .replace("def f20(x):", "def f20(x, y):")
)


def parts(app: ReviewHost) -> tuple[PlanView, PlanGauge]:
    assert app.review_screen is not None
    return app.review_screen.query_one(PlanView), app.review_screen.query_one(PlanGauge)


def rows(view: PlanView) -> list[str]:
    return [view.render_line(y).text for y in range(view.size.height)]


def styled(view: PlanView, word: str) -> list[object]:
    """Styles of the on-screen segments holding ``word``."""
    return [
        segment.style
        for y in range(view.size.height)
        for segment in view.render_line(y)
        if word in segment.text
    ]


async def test_d_shows_deleted_words_struck_and_inserted_ones_marked() -> None:
    app = ReviewHost(request_for(NEW, previous_text=OLD))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot)
        view, gauge = parts(app)
        assert not view.diff_shown
        await pilot.press("d")
        assert view.diff_shown
        assert gauge.display and "3 changes" in gauge.plain
        await pilot.press("right_square_bracket", "c")
        await pilot.pause()
        assert "change 1/3" in gauge.plain
        screen = "\n".join(rows(view))
        assert "Paragraph about phase 3 now with" in screen  # the inserted word, inline
        [inserted] = styled(view, "now")
        assert inserted.bgcolor is not None and not inserted.strike
        await pilot.press("right_square_bracket", "c")
        await pilot.pause()
        assert "change 2/3" in gauge.plain
        assert any(
            style.strike for style in styled(view, "Edit")
        )  # "Edit" struck, before "Rewrite"
        assert "Rewrite" in "\n".join(rows(view))
        await pilot.press("right_square_bracket", "c", "right_square_bracket", "c")
        await pilot.pause()
        assert "change 3/3" in gauge.plain  # no change after the last: it stays
        assert any("No later change" in toast.message for toast in app.toasts)
        await pilot.press("left_square_bracket", "c")
        await pilot.pause()
        assert "change 2/3" in gauge.plain
        await pilot.press("d")
        assert not view.diff_shown
        assert "Rewrite" not in "\n".join(rows(view)) or not any(
            style.strike for style in styled(view, "Edit")
        )


async def test_c_without_a_bracket_first_does_not_jump() -> None:
    app = ReviewHost(request_for(NEW, previous_text=OLD))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot, "d")
        view, gauge = parts(app)
        top = view.scroll_y
        await pilot.press("c")
        await pilot.press("right_square_bracket", "j", "c")  # another key ends the sequence
        await pilot.pause()
        assert view.scroll_y == top + 1  # only j scrolled
        assert "3 changes" in gauge.plain


async def test_bracket_c_typed_fast_jumps_and_never_opens_a_comment() -> None:
    """Found by the tmux walk-through: a terminal delivers "]c" back to back, and the
    bracket's binding action ran only after the screen had seen the c, so the jump was
    lost and the c reached the comment key. The keys are posted as the driver posts them."""
    app = ReviewHost(request_for(NEW, previous_text=OLD))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot, "d")
        assert app.review_screen is not None
        app.review_screen.end_grace()  # c is a decision key (comment): it would act now
        _view, gauge = parts(app)
        app.post_message(events.Key("right_square_bracket", "]"))
        app.post_message(events.Key("c", "c"))
        await pilot.pause()
        assert "change 1/3" in gauge.plain
        # The comment key never ran (here, without a project, it would say so in a toast).
        assert not any("Comments need a project" in toast.message for toast in app.toasts)
        app.post_message(events.Key("c", "c"))  # a c on its own is the comment key again
        await pilot.pause()
        assert any("Comments need a project" in toast.message for toast in app.toasts)


async def test_a_typed_d_in_the_refine_editor_is_text() -> None:
    app = ReviewHost(request_for(NEW, previous_text=OLD))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot)
        assert app.review_screen is not None
        app.review_screen.end_grace()  # r is a decision key: it waits for the key grace
        view, _ = parts(app)
        await pilot.press("r", "d", "]", "c")
        assert app.review_screen is not None
        assert app.review_screen.query_one(FeedbackArea).text == "d]c"
        assert not view.diff_shown


async def test_no_earlier_review_means_no_diff() -> None:
    app = ReviewHost(request_for(NEW))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot, "right_square_bracket", "c")
        view, _ = parts(app)
        assert not view.diff_shown and view.diff.empty
        assert any("Press d first" in toast.message for toast in app.toasts)


async def test_changed_without_request_is_in_the_header() -> None:
    app = ReviewHost(
        request_for(NEW, previous_text=OLD, unrequested=("Phase 20: change module 20",))
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot)
        assert app.review_screen is not None
        widget = app.review_screen.query_one("#review-unrequested", Static)
        assert widget.display
        assert "changed without request: Phase 20: change module 20" in str(widget.render())


async def test_staleness_chip_and_s_shows_the_diffs() -> None:
    stale = Staleness("abc1234def", ("src/a.py", "src/b.py"))
    diff = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\x1b[31m"
    app = ReviewHost(request_for(NEW, staleness=stale, stale_diff=diff))
    async with app.run_test(size=(140, 30)) as pilot:
        await settle_review(pilot)
        assert app.review_screen is not None
        chip = app.review_screen.query_one("#stale", Static)
        assert chip.display
        assert "written at abc1234; 2 cited files changed since" in str(chip.render())
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, StaleFilesScreen)
        shown = str(app.screen.query_one("#text-content", Static).render())
        assert "+a = 2" in shown and "\x1b" not in shown  # repository text is made visible
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.review_screen


async def test_the_staleness_chip_leaves_the_title_and_the_receipt_their_room() -> None:
    """Found by the tmux walk-through: beside a dirty receipt, in the title bar, the chip
    squeezed the plan's title to "Review pl…". It has a row of its own now."""
    stale = Staleness("abc1234def", ("src/app/server.py",))
    receipt = Receipt(
        False,
        ["src/app/server.py"],
        "1 path changed while planning: src/app/server.py",
        datetime(2025, 1, 1, tzinfo=UTC),
    )
    app = ReviewHost(request_for(NEW, staleness=stale, receipt=receipt))
    async with app.run_test(size=(110, 30)) as pilot:
        await settle_review(pilot)
        assert app.review_screen is not None
        screen = app.review_screen

        def drawn(selector: str) -> str:
            """What the widget's first row shows (ellipsis included), not what it was given."""
            return screen.query_one(selector, Static).render_line(0).text

        assert f"Review plan {parse_plan(NEW).title}" in drawn("#review-title")
        assert "1 path changed while planning" in drawn("#receipt")
        chip = "written at abc1234; 1 cited file changed since: src/app/server.py · s"
        assert chip in drawn("#stale")


async def test_no_chip_for_a_fresh_plan() -> None:
    app = ReviewHost(request_for(NEW, staleness=Staleness("abc1234def", ())))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle_review(pilot, "s")
        assert app.review_screen is not None
        assert not app.review_screen.query_one("#stale", Static).display
        assert app.screen is app.review_screen
        assert any("No cited file changed" in toast.message for toast in app.toasts)
