"""The plan picker and the plan action screen, driven through Pilot with real plan files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Button, Input

from planshell.plan.store import PlanInfo, PlanStore
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.plan_actions import DISCARD_QUESTION, PlanActionScreen
from planshell.ui.screens.plan_picker import (
    CreatePlanScreen,
    PickerChoice,
    PlanList,
    PlanPickerScreen,
    format_age,
    matches_filter,
    progress_bar,
)
from planshell.ui.widgets.plan_view import PlanView
from tests.ui.picker_helpers import NOW, ActionHost, PickerHost, plan_text, three_plans, write_plan


def picker_of(app: PickerHost) -> PlanPickerScreen:
    assert app.picker is not None
    return app.picker


def list_rows(app: PickerHost) -> list[str]:
    plan_list = picker_of(app).query_one(PlanList)
    return [plan_list.render_line(y).text.rstrip() for y in range(plan_list.size.height)]


def highlighted_title(app: PickerHost) -> str | None:
    plan_list = picker_of(app).plan_list
    option = plan_list.highlighted_option
    if option is None:
        return None
    info = plan_list.plan_for(option.id)
    return "<create>" if info is None else info.title


async def open_plan(pilot, app: PickerHost, title: str) -> PlanActionScreen:  # type: ignore[no-untyped-def]
    """Move the highlight to ``title`` with the arrow keys and press Enter."""
    for _ in range(10):
        if highlighted_title(app) == title:
            break
        await pilot.press("down")
    assert highlighted_title(app) == title
    await pilot.press("enter")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, PlanActionScreen)
    return screen


# ------------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-30, "just now"),
        (0, "just now"),
        (59, "just now"),
        (60, "1 min ago"),
        (5 * 60 + 30, "5 min ago"),
        (3599, "59 min ago"),
        (3600, "1 h ago"),
        (2 * 3600 + 59, "2 h ago"),
        (86399, "23 h ago"),
        (86400, "1 d ago"),
        (3 * 86400 + 5, "3 d ago"),
        (400 * 86400, "400 d ago"),
    ],
)
def test_format_age(seconds: float, text: str) -> None:
    assert format_age(seconds) == text


def test_progress_bar_shows_any_progress_and_only_full_when_done() -> None:
    assert progress_bar(0, 5, 8) == ("", "─" * 8)
    assert progress_bar(5, 5, 8) == ("━" * 8, "")
    filled, empty = progress_bar(1, 50, 8)
    assert len(filled) == 1 and len(filled) + len(empty) == 8
    filled, _ = progress_bar(49, 50, 8)
    assert len(filled) == 7
    assert progress_bar(0, 0, 4) == ("", "─" * 4)
    assert progress_bar(9, 5, 4) == ("━" * 4, "")


def test_filter_matches_every_word_in_title_or_name_ignoring_case() -> None:
    info = PlanInfo(Path("/p/2025-01-01-1200-rate.md"), "2025-01-01-1200-rate.md",
                    "Add Rate limiting", NOW, 0, 0, None)  # fmt: skip
    assert matches_filter(info, "")
    assert matches_filter(info, "rate LIMIT")
    assert matches_filter(info, "2025 add")
    assert not matches_filter(info, "rate cache")


# ------------------------------------------------------------------- listing


async def test_lists_newest_first_with_titles_ages_and_progress(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        assert [info.title for info in picker.plan_list.shown_plans] == [
            "Add rate limiting",
            "Rewrite the docs",
            "Cache lookups",
        ]
        rows = list_rows(app)
        assert rows[0].startswith("+ Create new plan")
        assert "Add rate limiting" in rows[1] and "5 min ago" in rows[1] and "2/5" in rows[1]
        assert "━" in rows[1] and "─" in rows[1]
        assert "Rewrite the docs" in rows[2] and "2 h ago" in rows[2] and "3/3" in rows[2]
        assert "Cache lookups" in rows[3] and "3 d ago" in rows[3] and "no steps" in rows[3]
        # the ages line up in one column
        assert rows[1].index("ago") == rows[2].index("ago") == rows[3].index("ago")
        assert "3 plans in .planshell/plans" in str(picker.query_one("#picker-count").render())
        assert highlighted_title(app) == "<create>"
        assert isinstance(app.focused, Input) and app.focused.id == "picker-filter"


async def test_empty_store_offers_create_only(tmp_path: Path) -> None:
    app = PickerHost(PlanStore(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = list_rows(app)
        assert rows[0].startswith("+ Create new plan")
        assert rows[1].strip() == "No saved plans yet."
        await pilot.press("down", "j", "enter")
        await pilot.pause()
        assert isinstance(app.screen, CreatePlanScreen)


async def test_broken_plan_is_listed_dimmed_with_its_problem_and_cannot_be_opened(
    tmp_path: Path,
) -> None:
    store = three_plans(tmp_path)
    broken = store.plans_dir / "2025-01-04-0000-broken.md"
    broken.write_bytes(b"# Plan\x00\x01\x02\xff binary")
    os.utime(broken, (NOW - 60, NOW - 60))
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        first = picker.plan_list.shown_plans[0]
        assert first.name == broken.name and first.problem
        rows = list_rows(app)
        assert broken.name in rows[1] and "cannot open" in rows[1] and "1 min ago" in rows[1]
        assert "⚠ looks binary" in rows[2]
        option = picker.plan_list.get_option_at_index(1)
        assert option.disabled
        await pilot.press("down")  # skips the broken file
        assert highlighted_title(app) == "Add rate limiting"
        await pilot.press("up")
        assert highlighted_title(app) == "<create>"
        # clicking it does nothing either
        picker.plan_list.highlighted = 1
        picker.plan_list.action_select()
        await pilot.pause()
        assert app.screen is picker and app.results == []


async def test_titles_and_names_are_sanitised(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    write_plan(
        store, "evil.md", plan_text("evil \x1b]52;c;SGVsbG8=\x07title \x1b[31mred", 2, 1), 10
    )
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        rows = "\n".join(list_rows(app))
        assert "\x1b" not in rows and "evil title red" in rows
        screen = await open_plan(pilot, app, picker_of(app).plan_list.shown_plans[0].title)
        header = str(screen.query_one("#actions-title").render())
        assert "\x1b" not in header and "evil title red" in header


# --------------------------------------------------------------- filter/keys


async def test_typing_filters_the_list_and_highlights_the_best_match(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        await pilot.press(*"cache")
        assert picker.filter_input.value == "cache"
        assert [i.title for i in picker.plan_list.shown_plans] == ["Cache lookups"]
        assert highlighted_title(app) == "Cache lookups"
        assert "named “cache”" in list_rows(app)[0]
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        assert len(picker.plan_list.shown_plans) == 3
        await pilot.press(*"zzz")
        assert picker.plan_list.shown_plans == []
        assert "No plan matches “zzz”." in list_rows(app)[1]
        assert highlighted_title(app) == "<create>"
        # the file name matches too
        await pilot.press("ctrl+u")
        assert picker.filter_input.value == ""
        await pilot.press(*"2025-01-01")
        assert [i.title for i in picker.plan_list.shown_plans] == ["Rewrite the docs"]


async def test_arrows_and_j_k_move_j_k_type_once_there_is_a_filter(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        await pilot.press("down")
        assert highlighted_title(app) == "Add rate limiting"
        await pilot.press("j")
        assert highlighted_title(app) == "Rewrite the docs"
        await pilot.press("down")
        assert highlighted_title(app) == "Cache lookups"
        await pilot.press("k", "up")
        assert highlighted_title(app) == "Add rate limiting"
        await pilot.press("k")
        assert highlighted_title(app) == "<create>"
        await pilot.press("up")  # wraps around
        assert highlighted_title(app) == "Cache lookups"
        await pilot.press("pageup")
        assert highlighted_title(app) == "<create>"
        assert picker.filter_input.value == ""
        # with a filter, j and k are text
        await pilot.press("r", "j", "k")
        assert picker.filter_input.value == "rjk"
        await pilot.press("ctrl+u")
        # J (capital) starts a filter: the filter ignores case
        await pilot.press("J")
        assert picker.filter_input.value == "J"


async def test_a_filtered_list_does_not_wrap_onto_create(tmp_path: Path) -> None:
    """Issue 12, item 8: Down on the last match stays there; Enter opens that plan."""
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"ra")  # "Add rate limiting" and "Rewrite the docs"? only matches
        picker = picker_of(app)
        matches = [i.title for i in picker.plan_list.shown_plans]
        assert matches, matches
        for _ in range(len(matches) + 2):
            await pilot.press("down")
        assert highlighted_title(app) == matches[-1]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlanActionScreen)
        assert not isinstance(app.screen, CreatePlanScreen)


async def test_enter_on_a_plan_opens_the_action_screen_esc_comes_back(tmp_path: Path) -> None:
    store = three_plans(tmp_path)
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        await pilot.press(*"docs")
        screen = await open_plan(pilot, app, "Rewrite the docs")
        assert screen.path == store.plans_dir / "2025-01-01-0900-docs.md"
        assert "Rewrite the docs" in str(screen.query_one("#actions-title").render())
        assert "3/3 steps done" in str(screen.query_one("#actions-progress").render())
        assert isinstance(app.focused, PlanView)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is picker and app.results == []
        assert picker.filter_input.value == "docs"
        assert app.focused is picker.filter_input
        assert highlighted_title(app) == "Rewrite the docs"


async def test_esc_from_the_list_answers_none(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("x", "escape")
        await pilot.pause()
    assert app.results == [None]


@pytest.mark.parametrize(
    ("keys", "action"),
    [(("e",), "execute"), (("r",), "refine"), (("s",), "exit"), (("D", "y"), "discard")],
)
async def test_each_action_answers_a_picker_choice(
    tmp_path: Path, keys: tuple[str, ...], action: str
) -> None:
    store = three_plans(tmp_path)
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await open_plan(pilot, app, "Add rate limiting")
        await pilot.press(*keys)
        await pilot.pause()
    path = store.plans_dir / "2025-01-03-1200-rate-limit.md"
    assert app.results == [PickerChoice(action, path=path)]  # type: ignore[arg-type]
    assert path.exists()  # the picker only answers; the caller deletes


async def test_discard_asks_first_and_no_stays(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = await open_plan(pilot, app, "Add rate limiting")
        await pilot.press("D")
        await pilot.pause()
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert confirm.question == DISCARD_QUESTION
        assert "2025-01-03-1200-rate-limit.md" in confirm.detail
        assert app.focused is not None and app.focused.id == "no"  # the safe default
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and app.results == []
        await pilot.press("D", "escape")
        await pilot.pause()
        assert app.screen is screen and app.results == []
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is picker_of(app)
    assert app.results == []


async def test_buttons_are_reachable_with_tab_arrows_and_enter(tmp_path: Path) -> None:
    store = three_plans(tmp_path)
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await open_plan(pilot, app, "Add rate limiting")
        await pilot.press("tab")
        assert isinstance(app.focused, Button) and app.focused.id == "action-execute"
        await pilot.press("right", "right")
        assert app.focused.id == "action-exit"
        await pilot.press("left")
        assert app.focused.id == "action-refine"
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [
        PickerChoice("refine", path=store.plans_dir / "2025-01-03-1200-rate-limit.md")
    ]


async def test_clicking_the_discard_button_confirms_first(tmp_path: Path) -> None:
    store = three_plans(tmp_path)
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await open_plan(pilot, app, "Cache lookups")
        await pilot.click("#action-discard")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
    assert app.results == [
        PickerChoice("discard", path=store.plans_dir / "2024-12-28-1000-cache.md")
    ]


async def test_plan_view_scroll_keys_work_in_the_action_screen(tmp_path: Path) -> None:
    store = PlanStore(tmp_path)
    long = plan_text("Long plan", 40, 10, extra="\n".join(f"line {n}" for n in range(80)))
    path = write_plan(store, "long.md", long, 0)
    app = ActionHost(path, long)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(PlanView)
        await pilot.press("j", "j")
        assert view.scroll_y == 2
        await pilot.press("space")
        assert view.scroll_y > 2
        await pilot.press("g", "n")
        assert view.current_section() == 1
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_a_plan_deleted_after_listing_is_reported_not_opened(tmp_path: Path) -> None:
    store = three_plans(tmp_path)
    app = PickerHost(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        (store.plans_dir / "2025-01-03-1200-rate-limit.md").unlink()
        await pilot.press("down", "enter")
        await pilot.pause()
        picker = picker_of(app)
        assert app.screen is picker
        assert [i.title for i in picker.plan_list.shown_plans] == [
            "Rewrite the docs",
            "Cache lookups",
        ]
        assert any("no plan named" in n.message for n in app.toasts)


# -------------------------------------------------------------------- create


async def test_create_with_a_name(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, CreatePlanScreen)
        await pilot.press(*"Rate limiting!")
        assert "rate-limiting.md" in str(modal.query_one("#create-file").render())
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [PickerChoice("create", name="Rate limiting!")]


async def test_create_with_an_empty_name(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert "-plan.md" in str(app.screen.query_one("#create-file").render())
        await pilot.press("space", "enter")
        await pilot.pause()
    assert app.results == [PickerChoice("create", name=None)]


async def test_create_esc_goes_back_to_the_list(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("a", "escape")
        await pilot.pause()
        picker = picker_of(app)
        assert app.screen is picker and app.results == []
        assert app.focused is picker.filter_input
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_create_is_prefilled_with_an_unmatched_filter(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"websockets", "enter")
        await pilot.pause()
        name = app.screen.query_one("#create-name", Input)
        assert name.value == "websockets"
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [PickerChoice("create", name="websockets")]


async def test_theme_switch_restyles_the_rows(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        picker = picker_of(app)
        await pilot.press("down", "down")
        before = picker.plan_list._style("title")
        app.theme = "planshell-light"
        await pilot.pause()
        await pilot.pause()
        assert picker.plan_list._style("title") != before
        assert highlighted_title(app) == "Rewrite the docs"
        assert "Rewrite the docs" in list_rows(app)[2]


async def test_tiny_terminal_does_not_crash(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(24, 8)) as pilot:
        await pilot.pause()
        await pilot.press("down", "j", "enter")
        await pilot.pause()
        assert isinstance(app.screen, PlanActionScreen)
        await pilot.resize_terminal(12, 5)
        await pilot.press("escape", "k")
        await pilot.pause()
        assert app.screen is picker_of(app)


async def test_popping_without_dismiss_answers_none(tmp_path: Path) -> None:
    app = PickerHost(three_plans(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await open_plan(pilot, app, "Add rate limiting")
        app.pop_screen()  # the action screen: back to the list
        await pilot.pause()
        assert app.screen is picker_of(app) and app.results == []
        app.pop_screen()
        await pilot.pause()
    assert app.results == [None]


async def test_push_screen_wait_gets_the_choice(tmp_path: Path) -> None:
    store = three_plans(tmp_path)
    answers: list[PickerChoice | None] = []

    class WaitHost(App[None]):
        def on_mount(self) -> None:
            self.run_worker(self.ask())

        async def ask(self) -> None:
            answers.append(await self.push_screen_wait(PlanPickerScreen(store, now=lambda: NOW)))

    app = WaitHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        await pilot.press("e")
        await app.workers.wait_for_complete()
    assert answers == [
        PickerChoice("execute", path=store.plans_dir / "2025-01-03-1200-rate-limit.md")
    ]
