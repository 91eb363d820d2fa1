"""The review's coverage (gauge strip, the unseen question, ``u``), search, fold and copy."""

from __future__ import annotations

from textual.widgets import Button

from planshell.plan.decider import Decision, Review
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.review import ConfirmUnseen, ReviewScreen, SearchInput
from planshell.ui.widgets.gauge import PlanGauge
from planshell.ui.widgets.plan_view import PlanView
from tests.ui.review_helpers import SHORT, ReviewHost, make_plan, request_for
from tests.ui_helpers import read_whole_plan, until

SIZE = (100, 30)


def view_of(app: ReviewHost) -> PlanView:
    assert app.review_screen is not None
    return app.review_screen.query_one(PlanView)


def top_row(view: PlanView) -> str:
    return view.rendered_line(round(view.scroll_y)).strip()


# ------------------------------------------------------------------ coverage


async def test_the_gauge_shows_seen_sections_filled_and_unseen_hollow() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        gauge = app.screen.query_one(PlanGauge)
        view = view_of(app)
        sections = len(view.sections)
        assert view.coverage.unseen()  # 60 lines do not fit in 30 rows
        seen = sum(view.coverage.seen_flags)
        assert f"{seen}/{sections} seen" in gauge.plain
        assert "□" in gauge.plain and "■" in gauge.plain
        await read_whole_plan(pilot)
        assert f"{sections}/{sections} seen" in gauge.plain
        assert "□" not in gauge.plain


async def test_approving_with_unseen_sections_asks_and_the_safe_choice_shows_them() -> None:
    app = ReviewHost(request_for(make_plan(200)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        unseen = view.coverage.unseen()
        assert unseen and unseen[-1] == len(view.sections) - 1  # the last one, at least
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmUnseen)
        assert dialog.question.startswith("Not viewed: ")
        assert dialog.question.endswith(" — approve anyway?")
        assert view.section_title(unseen[0]) in dialog.question
        assert isinstance(app.focused, Button) and app.focused.id == "no"  # the safe choice
        await pilot.press("escape")  # dismissing never approves...
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.results == []
        assert view.current_section() == unseen[0]  # ...and shows the first unseen section
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        await pilot.press("enter")  # Enter presses the focused button: not "approve anyway"
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.results == []
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmUnseen)
        await until(pilot, lambda: confirm.keys_ready)
        await pilot.press("y")  # approve anyway: on to how it runs
        await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.results == []


async def test_a_plan_that_fits_is_seen_at_once_and_approves_without_the_question() -> None:
    text = "# Plan: small\n\n## Goal\n\nOne line.\n\n## Risks\n\nNone.\n"
    app = ReviewHost(request_for(text))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert view_of(app).coverage.complete
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [Review(Decision.APPROVE, reviewed_text=text, permission_mode="ask")]


async def test_u_jumps_to_the_next_unseen_section() -> None:
    app = ReviewHost(request_for(make_plan(200)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        first = view.coverage.unseen()[0]
        await pilot.press("u")
        assert view.current_section() == first
        assert top_row(view) == view.section_title(first)
        second = view.coverage.next_unseen(first)
        assert second is not None and second > first
        await pilot.press("u")
        assert view.current_section() == second


async def test_the_question_shows_model_titles_without_their_escapes() -> None:
    lines = ["# Plan: t", ""] + [f"line {n}\n" for n in range(60)]
    text = "\n".join([*lines, "## Risks \x1b]0;owned\x07[bold]x[/bold]", "", "r", ""])
    app = ReviewHost(request_for(text))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmUnseen)
        assert "\x1b" not in dialog.question and "\x07" not in dialog.question
        assert "Risks" in dialog.question and "[bold]x[/bold]" in dialog.question


# ------------------------------------------------------------- search, fold, copy


async def test_search_highlights_and_n_shift_n_move_between_matches_until_esc() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.focused, SearchInput))
        await pilot.press(*"Module")  # case-insensitive
        await pilot.pause()
        matches = view.matches
        assert len(matches) >= 3
        assert view.current_match == 0
        first = view.heading_line(matches[0].section) + matches[0].inside
        assert "module" in view.rendered_line(first)
        assert "1/" in str(app.screen.query_one("#search-status").render())
        await pilot.press("enter")
        assert app.focused is view and view.search_active
        await pilot.press("n")
        assert view.current_match == 1
        row = view.heading_line(matches[1].section) + matches[1].inside
        assert round(view.scroll_y) <= row < round(view.scroll_y) + view.size.height
        await pilot.press("N", "N")
        assert view.current_match == len(matches) - 1  # wraps
        await pilot.press("escape")  # ends the search, does not leave the review
        await pilot.pause()
        assert not view.search_active and app.results == []
        assert not app.screen.query_one("#search-bar").display
        view.action_top()
        await pilot.pause()
        await pilot.press("n")  # a section jump again
        assert view.current_section() == 1


async def test_escape_in_the_search_input_ends_the_search_only() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        await pilot.press("slash", *"steps")
        await pilot.pause()
        assert view.search_active
        await pilot.press("escape")
        await pilot.pause()
        assert not view.search_active and app.focused is view and app.results == []


async def test_z_folds_the_current_section_and_folded_sections_are_not_seen() -> None:
    app = ReviewHost(request_for(make_plan(200)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        await pilot.press("n")
        target = view.current_section()
        await pilot.press("z")
        await pilot.pause()
        assert target in view.folded
        top = view.heading_line(target)
        assert view.rendered_line(top).strip() == view.section_title(target)
        assert "lines folded (z unfolds)" in view.rendered_line(top + 1)
        assert view.rendered_line(top + 3).strip() == view.section_title(target + 1)
        await pilot.press("z")
        await pilot.pause()
        assert target not in view.folded
        assert "lines folded" not in view.rendered_line(top + 1)
        # A section folded before it was ever on screen does not become seen when shown folded.
        last = len(view.sections) - 1
        assert not view.coverage.seen(last)
        view.toggle_fold(last)
        await pilot.pause()
        assert last in view.folded and view.current_section() == last
        assert not view.coverage.seen(last)
        view.coverage.mark_seen(range(last))  # (as the browser review reports it)
        await pilot.press("u")  # u unfolds what it goes to: now it can be seen
        await pilot.pause()
        assert last not in view.folded and view.current_section() == last
        assert view.coverage.complete


async def test_y_copies_the_current_sections_markdown_without_escapes() -> None:
    text = SHORT.replace("## Phase 2: change module 2", "## Phase 2: change module 2 \x1b[31mred")
    app = ReviewHost(request_for(text))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        await pilot.press("n", "n", "n")
        index = view.current_section()
        assert view.sections[index].title.startswith("Phase 2")
        await pilot.press("y")
        await pilot.pause()
        copied = app.clipboard
        assert copied.startswith("## Phase 2: change module 2 red\n")
        assert "\x1b" not in copied
        assert copied == view.section_markdown(index)
        assert any(toast.message == "Copied §Phase 2: change module 2 red" for toast in app.toasts)
