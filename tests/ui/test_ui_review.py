"""The plan review screen, driven through Pilot: scrolling, exact n/p, decisions, safety."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.app import App
from textual.selection import SELECT_ALL

from planshell.plan.decider import Decision, Review
from planshell.plan.document import parse_plan
from planshell.plan.receipt import Receipt
from planshell.ui.review_app import MAX_VIEW_BYTES, run_review
from planshell.ui.screens.results import push_answering, wait_for_answer
from planshell.ui.screens.review import (
    ConfirmDiscard,
    ConfirmDropEdit,
    FeedbackArea,
    ReviewScreen,
)
from planshell.ui.widgets.gauge import GaugeState, PlanGauge, gauge_text
from planshell.ui.widgets.plan_view import PlanView
from planshell.ui.widgets.review_footer import (
    DECISION_HINTS,
    Hint,
    ReviewFooter,
    fit_hints,
    hints_width,
)
from tests.ui.review_helpers import SHORT, ReviewHost, make_plan, request_for, run_keys
from tests.ui_helpers import read_whole_plan

# ------------------------------------------------------------------ helpers


def view_of(app: ReviewHost) -> PlanView:
    assert app.review_screen is not None
    return app.review_screen.query_one(PlanView)


def top_row(view: PlanView) -> str:
    """The top row as the compositor draws it (gutter stripped)."""
    return view.render_line(0).text.rstrip()[2:]


def screen_rows(view: PlanView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


MEDIUM = make_plan(400)


# -------------------------------------------------------------- scrolling


async def test_scroll_keys_move_by_line_page_and_half_page() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        height = view.size.height
        assert view.scroll_y == 0
        await pilot.press("j", "down")
        assert view.scroll_y == 2
        await pilot.press("k")
        assert view.scroll_y == 1
        await pilot.press("up", "up")
        assert view.scroll_y == 0
        await pilot.press("space")
        assert view.scroll_y == height - 1
        await pilot.press("b")
        assert view.scroll_y == 0
        await pilot.press("pagedown", "pagedown", "pageup")
        assert view.scroll_y == height - 1
        await pilot.press("g", "ctrl+d")
        assert view.scroll_y == height // 2
        await pilot.press("ctrl+u")
        assert view.scroll_y == 0
        await pilot.press("G")
        assert view.scroll_y == view.content_height - height
        await pilot.press("home")
        assert view.scroll_y == 0
        await pilot.press("end")
        assert view.scroll_y == view.content_height - height


async def test_n_and_p_land_exactly_on_headings() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        headings = [(i, s.title) for i, s in enumerate(view.sections) if s.level]
        assert top_row(view) == headings[0][1].replace("Plan: ", "Plan: ")
        for index, title in headings[1:15]:
            await pilot.press("n")
            assert top_row(view) == title, (index, title)
            assert view.current_section() == index
            assert view.scroll_y == view.heading_line(index)
        for _index, title in reversed(headings[:14]):
            await pilot.press("p")
            assert top_row(view) == title
        await pilot.press("ctrl+d")  # mid-section: p goes back to this section's heading
        section = view.current_section()
        await pilot.press("p")
        assert top_row(view) == view.sections[section].title


async def test_n_reaches_the_last_heading_exactly() -> None:
    text = make_plan(120)
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        last = max(i for i, s in enumerate(view.sections) if s.level)
        for _ in range(len(view.sections) + 2):
            await pilot.press("n")
        assert view.current_section() == last
        assert top_row(view) == view.sections[last].title


async def test_fenced_hash_lines_are_not_jump_targets() -> None:
    text = "# Plan: T\n\n```sh\n# comment\n```\n\n## Real\n\nbody\n" + "\n\n".join(
        f"line {n}" for n in range(80)
    )
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(80, 24)) as pilot:
        view = view_of(app)
        await pilot.press("n")
        assert top_row(view) == "Real"


async def test_resize_keeps_the_top_section_anchored() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(120, 30)) as pilot:
        view = view_of(app)
        for _ in range(6):
            await pilot.press("n")
        section = view.current_section()
        await pilot.resize_terminal(60, 30)
        await pilot.pause()
        assert view.current_section() == section
        assert top_row(view) == view.sections[section].title
        await pilot.press("n")
        assert top_row(view) == view.sections[section + 1].title


# ------------------------------------------------------------------ gauge


def test_gauge_text_drops_the_range_first_then_shortens_the_section() -> None:
    state = GaugeState(41, 80, 1204, "Approach and alternatives", changed=True)
    wide = gauge_text(state, 120).plain
    assert "lines 41–80 of 1,204" in wide
    assert "§ Approach and alternatives · changed" in wide
    assert "6%" in wide
    medium = gauge_text(state, 60).plain
    assert "lines" not in medium
    assert "§ Approach and alternatives · changed" in medium
    narrow = gauge_text(state, 34).plain
    assert "lines" not in narrow and "…" in narrow and "· changed" in narrow
    assert len(narrow) <= 34


async def test_gauge_shows_range_and_section_at_120_and_60_columns() -> None:
    app = ReviewHost(request_for(MEDIUM, changed_sections=frozenset({1})))
    async with app.run_test(size=(120, 30)) as pilot:
        gauge = app.screen.query_one(PlanGauge)
        assert gauge.display
        _first, last, total = view_of(app).visible_range()
        assert gauge.plain.startswith("▰") or gauge.plain.startswith("▱")
        assert f"lines 1–{last} of {total}" in gauge.plain
        assert "§ Plan: Generated test plan" in gauge.plain
        await pilot.press("n", "n")
        assert "§ Steps" in gauge.plain or "§ Phase 1" in gauge.plain
        await pilot.press("p")
        assert "§ Phase 1: change module 1 · changed" in gauge.plain
        await pilot.resize_terminal(60, 30)
        await pilot.pause()
        assert "lines" not in gauge.plain
        assert "Phase 1" in gauge.plain
        assert len(gauge.plain) <= 58


TINY = "# Plan: tiny\n\nOne line.\n\n## Goal\n\nFast.\n\n## Steps\n\n- [ ] Do it\n"


async def test_gauge_shows_on_a_short_plan_and_n_p_move_its_section_marker() -> None:
    """Issue 26 item 18: a plan that fits showed no gauge, and n/p no section marker."""
    app = ReviewHost(request_for(TINY))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        gauge = app.screen.query_one(PlanGauge)
        assert gauge.display
        assert "3/3 seen" in gauge.plain and "§ Plan: tiny" in gauge.plain, gauge.plain
        await pilot.press("n")
        assert "§ Goal" in gauge.plain, gauge.plain
        await pilot.press("n")
        assert "§ Steps" in gauge.plain, gauge.plain
        await pilot.press("p")
        assert "§ Goal" in gauge.plain, gauge.plain


def _layout(text: str) -> tuple[int, int]:
    """(cells of the bar, cell where the section starts)."""
    return sum(text.count(c) for c in "▰▱"), text.index("§")


@pytest.mark.parametrize("width", [60, 78, 118])
def test_gauge_fields_keep_their_width_as_you_move(width: int) -> None:
    """Issue 26 item 18: at 80x24 the bar jumped between 10 and 16 cells with the section."""
    seen = (True, False, True, False, False, True, False)
    states = [
        GaugeState(1, 20, 1204, "Goal", seen=seen),
        GaugeState(41, 80, 1204, "Approach and alternatives considered at length", True, seen),
        GaugeState(900, 960, 1204, "Verification", seen=seen),
        GaugeState(1150, 1204, 1204, "Risks and rollback plan for the cache", seen=seen),
    ]
    layouts = {_layout(gauge_text(state, width).plain) for state in states}
    assert len(layouts) == 1, layouts
    for state in states:
        assert gauge_text(state, width).cell_len <= width


# ----------------------------------------------------------------- footer


def test_fit_hints_drops_whole_hints_lowest_priority_first() -> None:
    at_100 = fit_hints(DECISION_HINTS, 100)
    assert at_100 == list(DECISION_HINTS)
    # 80 columns keeps every decision key and e edit; "? more" is never dropped.
    at_80 = fit_hints(DECISION_HINTS, 78)  # 80 columns less the footer's padding
    assert [hint.key for hint in at_80] == ["Esc", "a", "r", "x", "D", "e", "?"]
    at_60 = fit_hints(DECISION_HINTS, 60)
    assert [hint.key for hint in at_60] == ["Esc", "a", "r", "x", "?"]
    assert hints_width(at_60) <= 60
    at_50 = fit_hints(DECISION_HINTS, 48)
    assert [hint.key for hint in at_50] == ["Esc", "a", "?"]
    assert fit_hints(DECISION_HINTS, 5) == []
    assert fit_hints([Hint("z", "low", 1), Hint("Esc", "keep planning", 100)], 17)[0].key == "Esc"


@pytest.mark.parametrize(("columns", "keys"), [(100, 8), (80, 7), (60, 4), (50, 3)])
async def test_live_footer_fits_the_terminal(columns: int, keys: int) -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(columns, 24)):
        footer = app.screen.query_one(ReviewFooter)
        shown = footer.shown
        assert len(shown) == keys
        assert str(shown[0]) == "Esc keep planning" and str(shown[-1]) == "? more"
        rendered = footer.render().plain
        assert rendered.startswith("Esc keep planning")
        assert "…" not in rendered


@pytest.mark.parametrize("mode", ["off", "execute"])
async def test_review_opened_outside_plan_says_esc_closes(mode: str) -> None:
    """Issue 12, item 17: only in PLAN does Esc keep planning."""
    app = ReviewHost(request_for(SHORT, mode=mode))
    async with app.run_test(size=(100, 24)) as pilot:
        screen = app.review_screen
        assert screen is not None
        labels = [str(hint) for hint in screen.query_one(ReviewFooter).hints]
        assert "Esc keep planning" not in labels and "Esc close" in labels
        assert ("x exit" in labels) == (mode == "execute")
        await pilot.press("x")  # nothing to leave from OFF
        await pilot.pause()
        if mode == "off":
            assert app.results == []
            await pilot.press("escape")
            await pilot.pause()
    assert app.results and app.results[-1] is not None
    expected = Decision.KEEP if mode == "off" else Decision.EXIT
    assert app.results[-1].decision is expected


async def test_review_help_lists_only_keys_that_work_here_once() -> None:
    """Issue 12, item 10: F1 on the review: no q Close, no second ctrl+q, no slash commands."""
    from planshell.ui.screens.help import HelpScreen

    class HelpHost(ReviewHost):
        BINDINGS = [("f1", "show_help", "more")]  # noqa: RUF012

        def action_show_help(self) -> None:
            from planshell.ui.screens.help import collect_keys

            screen = self.screen
            nodes = [self, screen, *(screen.focused.ancestors_with_self if screen.focused else [])]
            self.push_screen(HelpScreen(collect_keys(self, nodes, []), commands=False))

    app = HelpHost(request_for(SHORT))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        keys = [key for key, _ in help_screen.keys]
        assert "q" not in keys
        assert len(keys) == len(set(keys))
        assert "a" in keys and "e" in keys and "n" in keys
        assert not help_screen.query("#help-commands")


# ---------------------------------------------------------------- decisions


async def test_approve_returns_the_exact_text_shown() -> None:
    text = SHORT + "tricky \x1b[31mred\x1b[0m\n"
    _, results = await run_keys(text, "a", "enter")  # Enter: the focused "ask me" choice
    assert results == [Review(Decision.APPROVE, reviewed_text=text, permission_mode="ask")]


async def test_escape_keeps_planning() -> None:
    _, results = await run_keys(SHORT, "escape")
    assert results == [Review(Decision.KEEP)]


async def test_x_exits_plan_mode_keeping_the_file() -> None:
    _, results = await run_keys(SHORT, "x")
    assert results == [Review(Decision.EXIT)]


@pytest.mark.parametrize("yes", [["y"], ["right", "enter"], ["tab", "enter"]])
async def test_discard_after_confirming(yes: list[str]) -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        assert isinstance(app.screen, ConfirmDiscard)
        await pilot.press(*yes)
        await pilot.pause()
    assert app.results == [Review(Decision.DISCARD)]


@pytest.mark.parametrize("no", ["n", "escape", "enter"])
async def test_discard_declined_returns_to_the_plan(no: str) -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        assert isinstance(app.screen, ConfirmDiscard)
        await pilot.press(no)
        await pilot.pause()
        assert app.screen is app.review_screen
        assert app.results == []
        await pilot.press("x")
        await pilot.pause()
    assert app.results == [Review(Decision.EXIT)]


async def test_refine_editor_empty_does_nothing_esc_returns_enter_submits() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.review_screen
        assert screen is not None
        view = view_of(app)
        await pilot.press("r")
        area = screen.query_one(FeedbackArea)
        assert area.has_focus
        assert view.display and view.size.height >= 10  # the plan stays visible above
        await pilot.press("enter")  # empty: nothing happens
        await pilot.pause()
        assert app.results == [] and app.screen is screen
        await pilot.press("a", "x")  # typed into the editor, not decisions
        assert area.text == "ax" and app.results == []
        await pilot.press("escape")  # back to the plan, nothing decided
        await pilot.pause()
        assert not screen.query_one("#refine").display
        assert view.has_focus and app.results == []
        await pilot.press("r")
        area.clear()
        await pilot.press(*"add tests", "ctrl+j", *"and docs", "enter")
        await pilot.pause()
    assert app.results == [Review(Decision.REFINE, feedback="add tests\nand docs")]


async def test_decision_keys_are_inert_while_refining() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.review_screen
        assert screen is not None
        await pilot.press("r")
        screen.plan_view.focus()  # even with the plan focused
        await pilot.press("a", "x", "D")
        await pilot.pause()
        assert app.results == [] and app.screen is screen
        await pilot.press("escape")  # closes the editor first
        assert not screen.query_one("#refine").display and app.results == []


# ----------------------------------------------------------- dismissal safety


async def test_dismiss_without_a_result_means_keep() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test() as pilot:
        assert app.review_screen is not None
        app.review_screen.dismiss()
        await pilot.pause()
    assert app.results == [Review(Decision.KEEP)]


async def test_action_dismiss_means_keep() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test() as pilot:
        assert app.review_screen is not None
        await app.review_screen.run_action("dismiss")
        await pilot.pause()
    assert app.results == [Review(Decision.KEEP)]


async def test_app_level_pop_means_keep() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test() as pilot:
        app.pop_screen()
        await pilot.pause()
    assert app.results == [Review(Decision.KEEP)]


async def test_switching_screens_away_means_keep_and_exit_answers_nothing() -> None:
    from textual.screen import Screen

    app = ReviewHost(request_for(SHORT))
    async with app.run_test() as pilot:
        await pilot.pause()
        app.switch_screen(Screen())
        await pilot.pause()
        assert app.results == [Review(Decision.KEEP)]
        push_answering(app, ReviewScreen(request_for(SHORT)), app.results.append)
        await pilot.pause()
    # the app shut down with a review open: nobody is left to answer
    assert app.results == [Review(Decision.KEEP)]


async def test_waiting_for_the_answer_resolves_keep_on_pop() -> None:
    class WaitHost(App[None]):
        result: Review | None = None

        def on_mount(self) -> None:
            self.run_worker(self.ask())

        async def ask(self) -> None:
            self.result = await wait_for_answer(self, ReviewScreen(request_for(SHORT)))

    app = WaitHost()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        app.pop_screen()
        await app.workers.wait_for_complete()
    assert app.result == Review(Decision.KEEP)


# --------------------------------------------------------- changes, notices


async def test_changed_sections_are_marked() -> None:
    text = make_plan(60)
    doc = parse_plan(text)
    changed = 2
    app = ReviewHost(request_for(text, changed_sections=frozenset({changed}), previous_text="x"))
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.review_screen
        assert screen is not None
        header = str(screen.query_one("#review-changes").render())
        assert "1 section changed since your last review" in header
        view = view_of(app)
        row = view.rendered_line(view.heading_line(changed))
        assert row.startswith("▎ ") and row.rstrip().endswith("· changed")
        assert doc.sections[changed].title in row
        other = view.rendered_line(view.heading_line(1))
        assert not other.startswith("▎") and "changed" not in other
        await pilot.pause()


async def test_no_changes_header_and_notice_shown_when_set() -> None:
    app = ReviewHost(request_for(SHORT, notice="The plan file changed while you were reviewing."))
    async with app.run_test(size=(100, 30)):
        screen = app.review_screen
        assert screen is not None
        assert not screen.query_one("#review-changes").display
        notice = screen.query_one("#review-notice")
        assert notice.display and "changed while you were reviewing" in str(notice.render())


def receipt_of(summary: str, clean: bool) -> Receipt:
    return Receipt(clean, [] if clean else ["src/a.py"], summary, datetime.now(UTC))


@pytest.mark.parametrize(("clean", "css_class"), [(True, "-clean"), (False, "-dirty")])
async def test_receipt_chip(clean: bool, css_class: str) -> None:
    receipt = receipt_of("write barrier: 0 files changed", clean)
    app = ReviewHost(request_for(SHORT, receipt=receipt))
    async with app.run_test(size=(100, 30)):
        chip = app.screen.query_one("#receipt")
        assert chip.display and chip.has_class(css_class)
        assert "write barrier: 0 files changed" in str(chip.render())


async def test_receipt_slot_hidden_without_a_receipt() -> None:
    app = ReviewHost(request_for(SHORT, receipt=None))
    async with app.run_test(size=(100, 30)):
        assert not app.screen.query_one("#receipt").display


# ------------------------------------------------------------------ editing


def _edit_plan(monkeypatch: pytest.MonkeyPatch, seen: list[str] | None = None) -> None:
    def fake_editor(self: ReviewScreen, editor: str, path: Path) -> bool:
        if seen is not None:
            seen.append(editor)
        path.write_text(path.read_text().replace("Phase 2: change module 2", "Phase 2: USER EDIT"))
        return True

    monkeypatch.setattr(ReviewScreen, "_run_editor", fake_editor)


async def test_an_edit_is_shown_marked_and_approving_binds_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = make_plan(60)
    monkeypatch.setenv("VISUAL", "fake-editor")
    seen: list[str] = []
    _edit_plan(monkeypatch, seen)
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.review_screen
        assert screen is not None
        await pilot.press("e")
        await pilot.pause()
        assert seen == ["fake-editor"]
        assert screen.edited_text is not None and "USER EDIT" in screen.edited_text
        assert "a approves your edited plan" in str(screen.query_one("#review-notice").render())
        assert "by your edit" in str(screen.query_one("#review-changes").render())
        view = view_of(app)
        edited = next(i for i, s in enumerate(view.sections) if "USER EDIT" in s.title)
        assert edited in view.changed
        labels = [str(hint) for hint in screen.query_one(ReviewFooter).hints]
        assert "a approve my edit" in labels and "f send edit as feedback" in labels
        await read_whole_plan(pilot)  # the edited section is new: it was never on screen
        await pilot.press("a", "enter")
        await pilot.pause()
    (result,) = app.results
    assert result is not None and result.decision is Decision.APPROVE and result.edited
    assert result.permission_mode == "ask"
    assert result.reviewed_text == screen.edited_text


async def test_an_edit_can_go_to_the_model_as_feedback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISUAL", "fake-editor")
    _edit_plan(monkeypatch)
    app = ReviewHost(request_for(make_plan(60)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f")  # nothing to send before an edit
        await pilot.pause()
        assert app.results == []
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
    (result,) = app.results
    assert result is not None and result.decision is Decision.REFINE
    assert result.reviewed_text is None and not result.edited
    assert result.feedback.startswith("The user edited the plan; unified diff:\n")
    assert "+## Phase 2: USER EDIT" in result.feedback
    assert "-## Phase 2: change module 2" in result.feedback


async def test_x_with_an_edit_asks_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26, item 10: x after e asks before the edit is dropped, Back focused."""
    monkeypatch.setenv("VISUAL", "fake-editor")
    _edit_plan(monkeypatch)
    app = ReviewHost(request_for(make_plan(60)))
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.review_screen
        assert screen is not None
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDropEdit)
        assert app.screen.question == "Exit and drop your edit?"
        assert app.screen.focused is not None and app.screen.focused.id == "no"
        await pilot.press("enter")  # the focused, safe choice: back, the edit kept
        await pilot.pause()
        assert app.screen is screen and app.results == []
        assert screen.edited_text is not None and "USER EDIT" in screen.edited_text
        await pilot.press("x", "escape")  # Esc answers no as well
        await pilot.pause()
        assert app.screen is screen and app.results == []
        await pilot.press("x", "y")
        await pilot.pause()
    assert app.results == [Review(Decision.EXIT)]


async def test_leaving_without_an_edit_asks_nothing() -> None:
    _app, results = await run_keys(make_plan(60), "x")
    assert results == [Review(Decision.EXIT)]


async def test_without_editor_set_a_fallback_editor_is_used_and_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "vi"  # no nano on this PATH: the next fallback
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    seen: list[str] = []
    _edit_plan(monkeypatch, seen)
    app = ReviewHost(request_for(make_plan(60)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert seen == ["vi"]
        messages = [n.message for n in app.toasts]
        assert any("editing with vi" in m for m in messages), messages


async def test_edit_without_any_editor_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # neither nano nor vi
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        assert app.review_screen is not None and app.review_screen.edited_text is None
        await read_whole_plan(pilot)
        await pilot.press("a", "enter")
        await pilot.pause()
    assert app.results == [Review(Decision.APPROVE, reviewed_text=SHORT, permission_mode="ask")]


# ------------------------------------------------------------- read-only


async def test_read_only_offers_scrolling_and_close_only() -> None:
    app = ReviewHost(request_for(MEDIUM), read_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.review_screen
        assert screen is not None
        await pilot.press("a", "x", "D", "r", "e")
        await pilot.pause()
        assert app.results == [] and app.screen is screen
        assert not screen.query_one("#refine").display
        await pilot.press("n")
        assert view_of(app).current_section() == 1
        assert str(screen.query_one(ReviewFooter).shown[0]) == "q close"
        await pilot.press("q")
        await pilot.pause()
    assert app.results == [Review(Decision.KEEP)]


# --------------------------------------------------------------- big plans


async def test_ten_thousand_line_plan_opens_and_g_reaches_the_end() -> None:
    text = make_plan(10_000)
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(120, 40)) as pilot:
        view = view_of(app)
        assert top_row(view) == "Plan: Generated test plan"
        await pilot.press("G")
        _first, last, total = view.visible_range()
        assert (last, total) == (10_000, 10_000)
        assert any("LAST LINE OF THE PLAN" in row for row in screen_rows(view))
        assert view.scroll_y == view.content_height - view.size.height
        for _ in range(3):
            await pilot.press("p")
            assert (
                view.render_line(0).text[2:].rstrip() == view.sections[view.current_section()].title
            )


async def test_scrollbar_jump_past_the_layout_keeps_rows_exact() -> None:
    text = make_plan(10_000)
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(120, 40)) as pilot:
        view = view_of(app)
        view.load(text)  # restart the lazy layout: only the top is exact now
        assert not view.layout_complete
        view.scroll_to(y=view.virtual_size.height // 2, animate=False)  # like a scrollbar drag
        section = view.current_section()
        inside = round(view.scroll_y) - view.heading_line(section)
        assert 0 <= inside < view.heading_line(section + 1) - view.heading_line(section)
        await pilot.pause()
        await pilot.press("p", "n")
        assert top_row(view) == view.sections[section + 1].title


# -------------------------------------------------------- selection and copy


def _row_of(view: PlanView, text: str) -> int:
    """Screen row (relative to the view) showing ``text``."""
    rows = screen_rows(view)
    return next(y for y, row in enumerate(rows) if text in row)


async def test_mouse_selection_and_ctrl_c_copy_the_selected_plan_text() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        await pilot.pause()
        rows = screen_rows(view)
        first = _row_of(view, "A generated plan")
        last = first + 2
        start_col = 2 + rows[first][2:].index("generated")  # the gutter is two cells
        end_col = 2 + len(rows[last][2:])
        await pilot.mouse_down(view, offset=(start_col, first))
        await pilot.hover(view, offset=(start_col + 3, first + 1))
        await pilot.hover(view, offset=(end_col, last))
        await pilot.mouse_up(view, offset=(end_col, last))
        await pilot.pause()
        assert view in app.screen.selections
        await pilot.press("ctrl+c")
        await pilot.pause()
        expected = "\n".join(
            [
                rows[first][start_col:].rstrip(),
                *(r[2:].rstrip() for r in rows[first + 1 : last + 1]),
            ]
        )
        assert app.clipboard == expected
        assert expected.startswith("generated plan for the review screen tests.")
        # the selection is drawn: the selected cells carry the selection style
        selected = app.screen.get_component_rich_style("screen--selection")
        strip = view.render_line(first)
        styles = [seg.style for seg in strip if seg.text.strip()]
        assert any(s is not None and s.bgcolor == selected.bgcolor for s in styles)


async def test_selecting_everything_copies_the_plan_source() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        await pilot.pause()
        await pilot.click(view, offset=(10, 5), times=2)  # double-click: the whole plan
        assert app.screen.selections == {view: SELECT_ALL}
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.clipboard == MEDIUM.rstrip("\n")


async def test_selection_dragged_below_the_plan_copies_to_its_end() -> None:
    app = ReviewHost(request_for(MEDIUM))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        await pilot.pause()
        first = _row_of(view, "A generated plan")
        await pilot.mouse_down(view, offset=(2, first))
        # past the plan view: the footer
        footer = app.screen.query_one(ReviewFooter)
        await pilot.hover(footer, offset=(5, 0))
        await pilot.mouse_up(footer, offset=(5, 0))
        await pilot.press("ctrl+c")
        await pilot.pause()
        from_view = view.get_selection(app.screen.selections[view])
        assert from_view is not None
        assert from_view[0].startswith("A generated plan for the review screen tests.")
        assert from_view[0].rstrip().endswith("LAST LINE OF THE PLAN")
        # the clipboard has the plan part first, then the widgets below it (gauge, footer)
        assert app.clipboard.startswith(from_view[0])


# --------------------------------------------------------------- sanitising


async def test_terminal_controls_in_the_plan_never_reach_the_screen() -> None:
    text = (
        "# Plan: evil \x1b]52;c;SGVsbG8=\x07title\n\n"
        "Text with \x1b[31mred\x1b[0m and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ and \u202edrow.\n"
        + "\n".join(f"- item {n} \x1b[2J\x9b1;1H" for n in range(50))
    )
    app = ReviewHost(request_for(text, notice="notice \x1b[5m blink"))
    async with app.run_test(size=(100, 30)) as pilot:
        view = view_of(app)
        rows = [view.rendered_line(row) for row in range(view.content_height)]
        joined = "\n".join(rows)
        assert "\x1b" not in joined and "\x9b" not in joined and "\u202e" not in joined
        assert "red" in joined and "Plan: evil title" in joined
        screen = app.review_screen
        assert screen is not None
        for widget_id in ("#review-title", "#review-notice"):
            assert "\x1b" not in str(screen.query_one(widget_id).render())
        await pilot.pause()


# ----------------------------------------------------------- planshell review


def test_run_review_refuses_binary_huge_and_missing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "plan.md"
    binary.write_bytes(b"# Plan\x00\x01\x02")
    assert run_review(binary) == 1
    assert "binary" in capsys.readouterr().err
    huge = tmp_path / "huge.md"
    with huge.open("wb") as handle:
        handle.truncate(MAX_VIEW_BYTES + 1)
    assert run_review(huge) == 1
    assert "4 MiB" in capsys.readouterr().err
    assert run_review(tmp_path / "missing.md") == 1
    assert "cannot open" in capsys.readouterr().err
    latin = tmp_path / "latin.md"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    assert run_review(latin) == 1
    err = capsys.readouterr().err
    assert "binary" in err or "UTF-8" in err
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo.md"
        os.mkfifo(fifo)
        assert run_review(fifo) == 1
        assert "regular file" in capsys.readouterr().err


async def test_review_app_opens_read_only_and_exits_zero(tmp_path: Path) -> None:
    from planshell.ui.review_app import ReviewApp, read_plan_file

    path = tmp_path / "plan.md"
    path.write_text(MEDIUM)
    request = request_for(read_plan_file(path))
    app = ReviewApp(request)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.screen.read_only
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0


@pytest.mark.parametrize("text", ["", "\n\n", "just one line, no heading", "## only\n"])
async def test_degenerate_plans_and_tiny_terminals_do_not_crash(text: str) -> None:
    app = ReviewHost(request_for(text))
    async with app.run_test(size=(20, 8)) as pilot:
        await pilot.press("n", "p", "G", "g", "space", "d", "j")
        await pilot.resize_terminal(12, 5)
        await pilot.press("n", "G")
        view = view_of(app)
        assert view.visible_range()[2] in (0, len(text.splitlines()))
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [Review(Decision.KEEP)]


@pytest.mark.parametrize("theme", ["planshell-dark", "planshell-light"])
async def test_muted_plan_text_is_readable_in_every_theme(theme):
    """Done steps, quotes and fence labels must not vanish into the background.

    Theme colours with alpha (or ``auto``) used to reach the line renderer as
    solid white: invisible on the light theme.
    """
    from textual.color import Color

    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        app.theme = theme
        await pilot.pause()
        view = view_of(app)
        view._palette = None  # re-resolve for the new theme
        palette = view._get_palette()
        background = view.background_colors[1]
        for style in (palette.done, palette.quote, palette.fence_info):
            assert style.color is not None
            fg = Color.from_rich_color(style.color)
            lighter, darker = sorted((fg.brightness, background.brightness), reverse=True)
            assert lighter - darker > 0.25, (theme, style)


@pytest.mark.parametrize("width", [80, 100, 140])
async def test_title_bar_never_cuts_a_word(width: int) -> None:
    """Issue 26 item 17: at 80 columns ``✓ no changes outside the pl…`` and ``2026-12-02-0452…``."""
    receipt = Receipt(True, [], "no changes outside the plan", datetime.now(UTC))
    request = dataclasses.replace(
        request_for(SHORT, receipt=receipt),
        path=Path("/tmp/plans/2026-12-02-0452-add-rate-limiting-to-the-handler.md"),
        title="Add rate limiting to the request handler",
    )
    app = ReviewHost(request)
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        for name in ("#review-title", "#receipt"):
            widget = screen.query_one(name)
            text = str(widget.render()).strip()
            assert widget.display and text, name
            assert widget.content_region.width >= cell_len(text), (name, text, widget.region)
            assert "…" not in text or name == "#review-title", text
        title = str(screen.query_one("#review-title").render())
        assert (request.path.name in title) or ("2026" not in title), title
        chip = str(screen.query_one("#receipt").render()).strip()
        assert chip in ("✓ no changes outside the plan", "✓ no changes"), chip
        if width >= 140:
            assert request.path.name in title and chip.endswith("outside the plan")
