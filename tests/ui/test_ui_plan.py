"""Plan mode in the chat TUI (planshell/ui/plan_ui.py), driven with Pilot.

The engine is real (runtime, plan controller, tools, plan store); only the
model is scripted. Screens owned by the picker (PlanPickerScreen,
PlanActionScreen) are answered with ``dismiss`` so these tests do not depend
on their keys; the review screen is driven with its real keys.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from planshell.agent.session import SessionLog
from planshell.config import Settings
from planshell.llm.scripted import Reply, Request, ScriptedProvider
from planshell.llm.types import Message
from planshell.plan.decider import Decision, Review, ReviewRequest
from planshell.plan.prompts import PLAN_MARKER
from planshell.plan.receipt import Receipt
from planshell.ui.app import PlanshellApp
from planshell.ui.keys import DEFAULT_TOGGLE_KEYS
from planshell.ui.plan_args import parse_plan_argument, toggle_keys
from planshell.ui.plan_ui import CREATE_HINT
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.plan_report import PlanReportScreen
from planshell.ui.screens.plan_why import PlanWhyScreen
from planshell.ui.screens.review import ConfirmDiscard, FeedbackArea, ReviewScreen
from planshell.ui.widgets.messages import ErrorRow, NoteRow, UserMessage
from planshell.ui.widgets.mode_chip import ModeChip
from planshell.ui.widgets.tool_row import ToolRow
from tests.engine_helpers import HANG_GUARD
from tests.ui.plan_helpers import (
    PLAN,
    SIZE,
    chip_text,
    make_app,
    mode,
    plans_dir,
    runtime,
    save_plan,
    toasts,
)
from tests.ui_helpers import idle, ready, send, until

WRITE = ("write_plan", {"title": "Add caching", "content": PLAN, "plan_path": "caching.md"})
EXIT = ("exit_plan_mode", {"plan_path": "caching.md"})


def provider(app: PlanshellApp) -> ScriptedProvider:
    p = runtime(app).agent.provider
    assert isinstance(p, ScriptedProvider)
    return p


def notes(screen: ChatScreen) -> list[str]:
    return [n.message for n in screen.transcript.entries_of(NoteRow)]


def users(screen: ChatScreen) -> list[str]:
    return [u.text for u in screen.transcript.entries_of(UserMessage)]


async def screen_of(pilot: Pilot, kind: type) -> Any:
    await until(pilot, lambda: isinstance(pilot.app.screen, kind))
    return pilot.app.screen


async def back_to_chat(pilot: Pilot) -> ChatScreen:
    await until(pilot, lambda: isinstance(pilot.app.screen, ChatScreen))
    return pilot.app.screen  # type: ignore[return-value]


# ------------------------------------------------------------------ parsing, keys


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("", ("bare", "")),
        ("on", ("on", "")),
        (" OFF ", ("off", "")),
        ("list", ("list", "")),
        ("why", ("why", "")),
        ("review", ("review", "")),
        ("review .planshell/plans/a.md", ("review", ".planshell/plans/a.md")),
        ("review a.md", ("review", "a.md")),
        ("review the auth flow", ("request", "review the auth flow")),
        ("review auth", ("request", "review auth")),
        ("on the way home, add caching", ("request", "on the way home, add caching")),
        ("ratelimit", ("name", "ratelimit")),
        ("add rate limiting", ("request", "add rate limiting")),
    ],
)
def test_parse_plan_argument(arg: str, expected: tuple[str, str]) -> None:
    assert parse_plan_argument(arg) == expected


def test_toggle_keys_from_settings() -> None:
    assert toggle_keys(DEFAULT_TOGGLE_KEYS) == (DEFAULT_TOGGLE_KEYS, [])
    keys, warnings = toggle_keys("ctrl+l, f6 ,f6")
    assert keys == "f6" and len(warnings) == 1 and "ctrl+l" in warnings[0]
    keys, warnings = toggle_keys("ctrl+l")
    assert keys == DEFAULT_TOGGLE_KEYS and len(warnings) == 2
    assert toggle_keys("") == (DEFAULT_TOGGLE_KEYS, [])


# ------------------------------------------------------------------ entering and leaving


@pytest.mark.parametrize("key", ["ctrl+shift+l", "ctrl+shift+L", "ctrl+L", "f2"])
async def test_toggle_keys_switch_plan_mode(project: Path, key: str) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press(key)
        await until(pilot, lambda: mode(app) == "plan")
        await until(pilot, lambda: chip_text(app).startswith("PLAN"))
        await pilot.press(key)
        await until(pilot, lambda: mode(app) == "off")
        await until(pilot, lambda: chip_text(app) == "OFF")
        assert not provider(app).requests  # toggling never starts a turn


async def test_plain_ctrl_l_does_not_toggle(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause(0.1)
        assert mode(app) == "off"


async def test_toggle_leaves_execute(project: Path) -> None:
    path = save_plan(project)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        runtime(app).plan.execute_existing(path)
        await until(pilot, lambda: chip_text(app).startswith("EXECUTE"))
        await pilot.press("f2")
        await until(pilot, lambda: mode(app) == "off")
        assert path.exists()


async def test_keymap_from_settings(project: Path) -> None:
    settings = Settings.model_validate({"plan": {"shortcuts": {"toggle_mode": "f6,ctrl+l"}}})
    app = make_app(project, [], settings)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert any("ctrl+l is not used" in t for t in toasts(app))
        await pilot.press("f2")
        await pilot.press("ctrl+l")
        await pilot.pause(0.1)
        assert mode(app) == "off"
        await pilot.press("f6")
        await until(pilot, lambda: mode(app) == "plan")
        from planshell.ui.screens.help import HelpScreen

        await pilot.press("f1")
        help_screen = await screen_of(pilot, HelpScreen)
        assert ("F6", "Toggle plan mode: ctrl+shift+l or F2 (also /plan, /plan on|off)") in [
            (k, d) for k, d in help_screen.keys
        ]


@pytest.mark.parametrize("width", [100, 90, 80, 60])
async def test_execute_footer_fits_with_the_checklist_key(project: Path, width: int) -> None:
    """EXECUTE adds ^t Checklist: whole keys drop, "more" is never cut (it was at 100 columns)."""
    path = save_plan(project)
    app = make_app(project, [])
    async with app.run_test(size=(width, 30)) as pilot:
        screen = await ready(pilot)
        runtime(app).plan.execute_existing(path)
        await until(pilot, lambda: chip_text(app).startswith("EXECUTE"))
        await pilot.pause(0.1)
        keys = list(screen.query("FooterKey"))
        assert "more" in {str(k.description) for k in keys}
        assert max(k.region.right for k in keys) <= width


async def test_footer_palette_and_help_name_the_toggle(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        footer = " ".join(str(w.render()) for w in screen.query("FooterKey"))
        assert "^⇧L/F2" in footer and "Plan mode" in footer
        titles = {c.title: c for c in app.get_system_commands(screen)}
        assert "/plan" in titles and "/todos" in titles and "Plan mode" in titles
        titles["Plan mode"].callback()
        await until(pilot, lambda: mode(app) == "plan")
        from planshell.ui.screens.help import HelpScreen

        await pilot.press("f1")
        help_screen = await screen_of(pilot, HelpScreen)
        keys = dict(help_screen.keys)
        assert keys["ctrl+shift+l, ctrl+shift+L, ctrl+L, F2"].startswith("Toggle plan mode")


async def test_bare_plan_without_plans_enters_then_leaves(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan")
        await until(pilot, lambda: mode(app) == "plan")
        await until(pilot, lambda: any(CREATE_HINT in n for n in notes(screen)))
        await send(pilot, "/plan")
        await until(pilot, lambda: mode(app) == "off")
        assert not provider(app).requests


async def test_bare_plan_with_plans_opens_the_picker_and_executes(project: Path) -> None:
    from planshell.ui.screens.plan_picker import PickerChoice, PlanPickerScreen

    path = save_plan(project)
    app = make_app(project, [Reply(text="Executing.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan")
        picker = await screen_of(pilot, PlanPickerScreen)
        picker.dismiss(PickerChoice("execute", path=path))
        await back_to_chat(pilot)
        await until(pilot, lambda: mode(app) == "execute")
        await idle(pilot, screen)
        assert users(screen) == [
            "Execute the approved plan .planshell/plans/2026-01-01-1200-caching.md."
        ]
        assert runtime(app).plan.plan_path == path


async def test_picker_cancel_and_create(project: Path) -> None:
    from planshell.ui.screens.plan_picker import PickerChoice, PlanPickerScreen

    save_plan(project)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan list")
        picker = await screen_of(pilot, PlanPickerScreen)
        await pilot.press("escape")
        await back_to_chat(pilot)
        assert mode(app) == "off"
        await send(pilot, "/plan list")
        picker = await screen_of(pilot, PlanPickerScreen)
        picker.dismiss(PickerChoice("create", name="speedup"))
        await until(pilot, lambda: mode(app) == "plan")
        assert runtime(app).plan.pending_name == "speedup"
        await until(pilot, lambda: any(CREATE_HINT in n and "speedup" in n for n in notes(screen)))
        assert screen.prompt.text == ""  # nothing prefilled


async def test_picker_refine_exit_and_discard(project: Path) -> None:
    from planshell.ui.screens.plan_picker import PickerChoice, PlanPickerScreen

    path = save_plan(project)
    other = save_plan(project, "2026-01-01-1300-other.md")
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan list")
        (await screen_of(pilot, PlanPickerScreen)).dismiss(PickerChoice("refine", path=path))
        await until(pilot, lambda: mode(app) == "plan")
        assert runtime(app).plan.plan_path == path
        await until(pilot, lambda: screen.prompt.text == "Refine the plan: ")
        await until(pilot, lambda: "Add caching" in chip_text(app))
        # Save & Exit on the active plan: plan mode off, file kept.
        await send(pilot, "/plan list")
        (await screen_of(pilot, PlanPickerScreen)).dismiss(PickerChoice("exit", path=path))
        await until(pilot, lambda: mode(app) == "off")
        assert path.exists()
        # Discard another plan while planning this one: deleted, plan mode stays.
        await send(pilot, "/plan on")
        await until(pilot, lambda: mode(app) == "plan")
        runtime(app).plan.enter_plan(plan_path=path)
        await send(pilot, "/plan list")
        (await screen_of(pilot, PlanPickerScreen)).dismiss(PickerChoice("discard", path=other))
        await until(pilot, lambda: not other.exists())
        assert mode(app) == "plan"
        # Discard the active plan: deleted and plan mode off.
        await send(pilot, "/plan list")
        (await screen_of(pilot, PlanPickerScreen)).dismiss(PickerChoice("discard", path=path))
        await until(pilot, lambda: not path.exists() and mode(app) == "off")


async def test_plan_on_and_off_start_no_turn(project: Path) -> None:
    save_plan(project)  # plans exist: /plan on still enters at once (no picker)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan on")
        await until(pilot, lambda: mode(app) == "plan")
        assert isinstance(app.screen, ChatScreen)
        await send(pilot, "/plan on")
        await until(pilot, lambda: any("already on" in t for t in toasts(app)))
        await send(pilot, "/plan off")
        await until(pilot, lambda: mode(app) == "off")
        await send(pilot, "/plan off")
        await until(pilot, lambda: any("already off" in t for t in toasts(app)))
        await pilot.pause(0.05)
        assert not provider(app).requests and users(screen) == []


async def test_plan_new_name_names_the_plan(project: Path) -> None:
    write = ("write_plan", {"title": "Rate limits", "content": PLAN})
    app = make_app(project, [Reply(calls=[write]), Reply(text="Written.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan ratelimit")
        await until(pilot, lambda: mode(app) == "plan")
        assert not provider(app).requests
        await send(pilot, "plan the limits")
        await idle(pilot, screen)
        (written,) = plans_dir(project).glob("*.md")
        assert written.name.endswith("-ratelimit.md")
        await until(pilot, lambda: chip_text(app) == "PLAN · Add caching")


async def test_plan_existing_name_shows_the_action_menu(project: Path) -> None:
    from planshell.ui.screens.plan_actions import PlanActionScreen

    path = save_plan(project)
    app = make_app(project, [Reply(text="On it.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan caching")
        menu = await screen_of(pilot, PlanActionScreen)
        await pilot.press("escape")  # back: nothing happens
        await back_to_chat(pilot)
        assert mode(app) == "off"
        # The file changes while the menu shows it: nothing is executed.
        await send(pilot, "/plan caching")
        menu = await screen_of(pilot, PlanActionScreen)
        path.write_text(PLAN.replace("Test it", "Test it twice"))
        menu.dismiss("execute")
        await until(pilot, lambda: any("nothing was executed" in t for t in toasts(app)))
        assert mode(app) == "off" and not provider(app).requests
        await send(pilot, "/plan caching")
        menu = await screen_of(pilot, PlanActionScreen)
        menu.dismiss("execute")
        await until(pilot, lambda: mode(app) == "execute")
        await idle(pilot, screen)
        assert users(screen) == [f"Execute the approved plan .planshell/plans/{path.name}."]


async def test_plan_request_runs_read_only_from_its_first_tool_call(project: Path) -> None:
    replies = [
        Reply(text="Trying to write.", calls=[("write", {"path": "hack.txt", "content": "x"})]),
        Reply(text="I will plan instead."),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan add caching to the server")
        await until(pilot, lambda: bool(provider(app).requests))
        await idle(pilot, screen)
        first: Request = provider(app).requests[0]
        assert PLAN_MARKER in first.system
        assert "write" not in first.tools and "edit" not in first.tools
        assert "write_plan" in first.tools
        assert not (project / "hack.txt").exists()
        (row,) = screen.transcript.entries_of(ToolRow)
        assert row.status == "error"
        assert users(screen) == ["add caching to the server"]
        assert mode(app) == "plan"


async def test_request_starting_with_a_reserved_word(project: Path) -> None:
    app = make_app(project, [Reply(text="Looking at auth.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan review the auth flow")
        await until(pilot, lambda: bool(provider(app).requests))
        await idle(pilot, screen)
        assert users(screen) == ["review the auth flow"]
        assert PLAN_MARKER in provider(app).requests[0].system
        assert isinstance(app.screen, ChatScreen)


async def test_busy_plan_guards_the_next_tool_call_and_steers(project: Path) -> None:
    release = asyncio.Event()  # the turn streams until plan mode is on
    replies = [
        Reply(
            text="working " * 50,
            chunk=8,
            hold=release,
            calls=[("write", {"path": "hack.txt", "content": "x"})],
        ),
        Reply(text="Understood: planning now."),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "change things")
        await until(pilot, lambda: runtime(app).agent.busy)
        await send(pilot, "/plan also think about caching")
        await until(pilot, lambda: mode(app) == "plan")
        assert runtime(app).agent.busy  # still the same turn
        release.set()
        await idle(pilot, screen)
        assert not (project / "hack.txt").exists()
        (row,) = screen.transcript.entries_of(ToolRow)
        assert row.status == "error"
        queued = [
            u
            for u in screen.transcript.entries_of(UserMessage)
            if u.text == "also think about caching"
        ]
        assert queued and queued[0].state == "delivered"
        assert len(provider(app).requests) == 2
        assert PLAN_MARKER in provider(app).requests[1].system


async def test_failed_submission_keeps_the_mode_the_person_chose(project: Path) -> None:
    """An error while sending is not a way out of plan mode (nor out of EXECUTE)."""
    from planshell.ui.screens.plan_picker import PickerChoice, PlanPickerScreen

    path = save_plan(project)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        modes: list[str] = []

        async def broken(text: str) -> None:
            modes.append(mode(app))
            raise RuntimeError("provider exploded")

        runtime(app).agent.submit = broken  # type: ignore[method-assign]
        await send(pilot, "/plan add caching to the server")
        await until(pilot, lambda: bool(screen.transcript.entries_of(ErrorRow)))
        assert modes == ["plan"]
        assert mode(app) == "plan"  # the failure did not end plan mode
        assert not runtime(app).registry.is_active("write")
        message = screen.transcript.entries_of(ErrorRow)[0].message
        assert "provider exploded" in message and "stays PLAN" in message
        # Executing a picked plan: the person approved it, so EXECUTE stays too.
        await send(pilot, "/plan list")
        (await screen_of(pilot, PlanPickerScreen)).dismiss(PickerChoice("execute", path=path))
        await until(pilot, lambda: len(screen.transcript.entries_of(ErrorRow)) == 2)
        assert modes == ["plan", "execute"]
        assert mode(app) == "execute"
        assert runtime(app).registry.is_active("write")


async def test_plan_why_shows_capabilities(project: Path) -> None:
    app = make_app(project, [], Settings.model_validate({"plan": {"sandbox": "off"}}))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/plan why")
        why = await screen_of(pilot, PlanWhyScreen)
        assert "Plan mode capabilities" in why.markdown
        assert "guarded" in why.markdown
        await pilot.press("pagedown")
        await pilot.press("escape")
        await back_to_chat(pilot)


# ------------------------------------------------------------------ /plan review


async def test_plan_review_newest_approve_executes(project: Path) -> None:
    save_plan(project, "2026-01-01-1000-old.md", PLAN.replace("Add caching", "Old plan"))
    path = save_plan(project)
    app = make_app(project, [Reply(text="Executing.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/plan review")
        review = await screen_of(pilot, ReviewScreen)
        assert review.request.path == path
        await approve(pilot)
        await until(pilot, lambda: mode(app) == "execute")
        await idle(pilot, screen)
        assert users(screen) == [f"Execute the approved plan .planshell/plans/{path.name}."]


async def test_plan_review_path_refine(project: Path) -> None:
    path = save_plan(project, "2026-01-01-1000-old.md", PLAN.replace("Add caching", "Old plan"))
    save_plan(project)
    app = make_app(project, [Reply(text="Refining.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, f"/plan review .planshell/plans/{path.name}")
        review = await screen_of(pilot, ReviewScreen)
        assert review.request.title == "Old plan"
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.focused, FeedbackArea))
        await pilot.press(*"fewer steps", "enter")
        await until(pilot, lambda: mode(app) == "plan")
        assert runtime(app).plan.plan_path == path
        await idle(pilot, screen)
        assert users(screen) == [f"Refine the plan .planshell/plans/{path.name}: fewer steps"]


@pytest.mark.parametrize("keys", [["escape"], ["x", "escape"], ["D", "y"]])
async def test_plan_review_keep_exit_discard(project: Path, keys: list[str]) -> None:
    # From OFF, x (leave plan mode) does nothing: Esc closes.
    path = save_plan(project)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, f"/plan review {path}")
        await screen_of(pilot, ReviewScreen)
        await pilot.press(*keys)
        await back_to_chat(pilot)
        await pilot.pause(0.05)
        assert mode(app) == "off"
        assert path.exists() == (keys != ["D", "y"])
        assert not provider(app).requests


async def test_plan_review_refuses_a_plan_changed_during_review(project: Path) -> None:
    path = save_plan(project)
    app = make_app(project, [Reply(text="Executing.")])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/plan review")
        first = await screen_of(pilot, ReviewScreen)
        path.write_text(PLAN.replace("Test it", "Test it twice"))
        await approve(pilot)
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen is not first)
        second = app.screen
        assert "Test it twice" in second.request.text
        assert "changed while you were reviewing" in second.request.notice
        assert mode(app) == "off"


async def test_palette_cannot_turn_plan_mode_off_under_an_open_review(project: Path) -> None:
    """Found by a newcomer: palette "Plan mode" under the review, then `a`, ran the plan in OFF."""
    app = make_app(project, [Reply(calls=[WRITE]), Reply(calls=[EXIT]), Reply(text="Executing.")])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/plan add caching to the server")
        review = await screen_of(pilot, ReviewScreen)
        assert runtime(app).plan.review_pending
        chat = app.screen_stack[0]
        titles = {c.title: c for c in app.get_system_commands(chat)}
        titles["Plan mode"].callback()
        await until(pilot, lambda: any("review is open" in t for t in toasts(app)))
        assert mode(app) == "plan"
        await pilot.press("f2")  # the toggle key from the review: also refused
        await pilot.pause(0.05)
        assert mode(app) == "plan" and app.screen is review
        await approve(pilot)
        await until(pilot, lambda: mode(app) == "execute")
        assert runtime(app).registry.is_active("write")


# ------------------------------------------------------------------ the engine's review (exit_plan_mode)


async def approve(pilot: Pilot, key: str = "enter") -> None:
    """The review's a, then ``key`` in the approve dialog (Enter: the focused "ask")."""
    await pilot.press("a")
    await screen_of(pilot, ApproveModeScreen)
    await pilot.press(key)


def review_flow(after: list[Reply] | None = None) -> list[Any]:
    return [Reply(calls=[WRITE]), Reply(calls=[EXIT]), *(after or [Reply(text="Noted.")])]


def last_tool_result(app: PlanshellApp) -> str:
    messages = runtime(app).agent.messages
    return next(m.content for m in reversed(messages) if m.role == "tool")


@pytest.mark.parametrize(
    ("keys", "expected_mode", "result_start", "kept"),
    [
        (["a", "enter"], "execute", "Approved. Plan mode is over", True),
        (["escape"], "plan", "wants to keep planning", True),
        (["x"], "off", "The user left plan mode without approving", True),
        (["D", "y"], "off", "The user discarded the plan", False),
        (["r", *"fewer steps", "enter"], "plan", "The user asked for changes", True),
    ],
    ids=["approve", "keep", "exit", "discard", "refine"],
)
async def test_review_decisions_through_the_real_screen(
    project: Path, keys: list[str], expected_mode: str, result_start: str, kept: bool
) -> None:
    app = make_app(project, review_flow(), plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "plan caching")
        review = await screen_of(pilot, ReviewScreen)
        assert review.request.title == "Add caching"
        if keys[0] == "r":
            await pilot.press("r")
            await until(pilot, lambda: isinstance(app.focused, FeedbackArea))
            keys = keys[1:]
        if keys[0] == "D":
            await pilot.press("D")
            await screen_of(pilot, ConfirmDiscard)
            keys = keys[1:]
        await pilot.press(*keys)
        await back_to_chat(pilot)
        await idle(pilot, screen)
        assert mode(app) == expected_mode
        result = last_tool_result(app)
        assert result_start.lower() in result.lower(), result
        assert (plans_dir(project) / "caching.md").exists() == kept
        if expected_mode == "plan" and "enter" in keys:
            assert "fewer steps" in result
        # The person sees what they decided, not the words meant for the model (issue 26.22).
        (row,) = [
            r for r in screen.transcript.entries_of(ToolRow) if r.tool_name == "exit_plan_mode"
        ]
        assert row.summary() == SHOWN[result_start]
        assert result_start.lower() not in screen.transcript.visible_text().lower()


SHOWN = {
    "Approved. Plan mode is over": "approved: executing the plan",
    "wants to keep planning": "kept planning",
    "The user left plan mode without approving": "left plan mode; the plan file is kept",
    "The user discarded the plan": "plan discarded",
    "The user asked for changes": "changes requested",
}


async def test_review_dismissal_means_keep(project: Path) -> None:
    app = make_app(project, review_flow(), plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "plan caching")
        await screen_of(pilot, ReviewScreen)
        app.pop_screen()
        await back_to_chat(pilot)
        await idle(pilot, screen)
        assert mode(app) == "plan"
        assert "wants to keep planning" in last_tool_result(app)


async def test_engine_shows_the_review_again_when_the_plan_changed(project: Path) -> None:
    app = make_app(project, review_flow(), plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "plan caching")
        first = await screen_of(pilot, ReviewScreen)
        (plans_dir(project) / "caching.md").write_text(PLAN.replace("Test it", "Test it twice"))
        await approve(pilot)
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen is not first)
        second = app.screen
        assert "Test it twice" in second.request.text
        notice = str(second.query_one("#review-notice").render())
        assert "changed while you were reviewing" in notice
        assert mode(app) == "plan"
        await approve(pilot)
        await back_to_chat(pilot)
        await idle(pilot, screen)
        assert mode(app) == "execute"


async def test_files_changed_while_planning_asks_again(project: Path) -> None:
    def touch_and_exit(request: Request) -> Reply:
        (project / "README.md").write_text("# Changed behind the planner's back\n")
        return Reply(calls=[EXIT])

    replies = [Reply(calls=[WRITE]), touch_and_exit, Reply(text="Noted.")]
    app = make_app(project, replies, plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "plan caching")
        review = await screen_of(pilot, ReviewScreen)
        assert "README.md" in str(review.query_one("#receipt").render())
        await approve(pilot)
        confirm = await screen_of(pilot, ConfirmScreen)
        assert str(confirm.query_one("#question").render()) == (
            "Files changed while planning: README.md. Approve anyway?"
        )
        await pilot.press("y")
        await back_to_chat(pilot)
        await idle(pilot, screen)
        assert mode(app) == "execute"


DIRTY_RECEIPT = Receipt(
    clean=False,
    changed=[f"src/f{i}.py" for i in range(8)],
    summary="8 paths changed while planning",
    taken_at=datetime.now(UTC),
    digest="x",
)


async def test_dirty_receipt_no_goes_back_to_the_review(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        request = ReviewRequest(project / "p.md", PLAN, "Add caching", receipt=DIRTY_RECEIPT)
        task = asyncio.ensure_future(app.decider.review_plan(request))
        await screen_of(pilot, ReviewScreen)
        await approve(pilot)
        confirm = await screen_of(pilot, ConfirmScreen)
        question = str(confirm.query_one("#question").render())
        assert question.startswith("Files changed while planning: src/f0.py, src/f1.py")
        assert "and 2 more. Approve anyway?" in question
        await pilot.press("n")
        await screen_of(pilot, ReviewScreen)  # shown again
        assert not task.done()
        await approve(pilot)
        await screen_of(pilot, ConfirmScreen)
        await pilot.press("escape")  # dismissal is "no" as well
        await screen_of(pilot, ReviewScreen)
        await pilot.press("escape")
        review = await asyncio.wait_for(task, HANG_GUARD)
        assert review.decision is Decision.KEEP
        # Yes approves.
        task = asyncio.ensure_future(app.decider.review_plan(request))
        await screen_of(pilot, ReviewScreen)
        await approve(pilot, "2")  # "Accept edits inside the plan's scope"
        await screen_of(pilot, ConfirmScreen)
        await pilot.press("y")
        review = await asyncio.wait_for(task, HANG_GUARD)
        assert review == Review(
            Decision.APPROVE, reviewed_text=PLAN, permission_mode="accept-edits"
        )


# ------------------------------------------------------------------ chip, marker, checklist


async def test_checklist_follows_execution_and_goes_away(project: Path) -> None:
    from planshell.ui.widgets.checklist import ChecklistPanel

    app = make_app(project, review_flow([Reply(text="Approved; say go.")]), plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "plan caching")
        await screen_of(pilot, ReviewScreen)
        await approve(pilot)
        await back_to_chat(pilot)
        await idle(pilot, screen)
        panel = screen.query_one("#checklist", ChecklistPanel)
        assert panel.display
        assert panel.items == (
            ("Read the server", "pending"),
            ("Add the cache", "pending"),
            ("Test it", "pending"),
            ("Verification: make test", "pending"),
        )
        assert chip_text(app) == "EXECUTE · Add caching · 0/3"
        # Live: the tick shows while the turn is still running (its last reply holds
        # the turn open until the test has looked).
        turn_ends = asyncio.Event()
        tick = [("set_plan_steps", {"updates": [{"step": i, "status": "done"}]}) for i in (1, 2)]
        provider(app).replies = [
            Reply(calls=tick[:1]),
            Reply(calls=tick[1:]),
            Reply(text="Two steps done, pausing here.", hold=turn_ends),
        ]
        await send(pilot, "go")
        await until(pilot, lambda: panel.done == 2)
        assert runtime(app).agent.busy
        assert chip_text(app) == "EXECUTE · Add caching · 2/3"
        turn_ends.set()
        await idle(pilot, screen)
        # Ticked with no edit or command recorded against them: done, but flagged.
        assert panel.items[:3] == (
            ("Read the server", "unverified"),
            ("Add the cache", "unverified"),
            ("Test it", "pending"),
        )
        # ctrl+t and /todos hide and show it.
        await pilot.press("ctrl+t")
        await until(pilot, lambda: not panel.display)
        await send(pilot, "/todos")
        await until(pilot, lambda: panel.display)
        provider(app).replies = [
            Reply(calls=[("set_plan_steps", {"updates": [{"step": 3, "status": "done"}]})]),
            Reply(calls=[("plan_complete", {})]),
            Reply(text="All done."),
        ]
        await send(pilot, "finish")
        await idle(pilot, screen)
        assert mode(app) == "off"
        # plan_complete opened the plan report (tests/ui/test_ui_plan_report.py): Enter closes it.
        await until(pilot, lambda: isinstance(app.screen, PlanReportScreen))
        await pilot.press("enter")
        await until(pilot, lambda: not panel.display)
        assert chip_text(app) == "OFF"
        await send(pilot, "/todos")
        await until(pilot, lambda: any("No checklist yet" in t for t in toasts(app)))


async def test_chip_titles_and_marker(project: Path) -> None:
    settings = Settings.model_validate({"plan": {"sandbox": "off"}})
    app = make_app(project, [Reply(calls=[WRITE]), Reply(text="Written.")], settings, plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert chip_text(app) == "PLAN"
        marker = screen.status.marker
        await until(
            pilot, lambda: marker.display and str(marker.render()) == "⚠ guard only — no sandbox"
        )
        await send(pilot, "plan caching")
        await idle(pilot, screen)
        assert chip_text(app) == "PLAN · Add caching"
        await send(pilot, "/plan off")
        await until(pilot, lambda: chip_text(app) == "OFF" and not marker.display)


async def test_marker_refused_when_the_sandbox_is_required_but_missing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planshell.sandbox import bwrap

    monkeypatch.setattr(bwrap, "find_bwrap", lambda: None)
    settings = Settings.model_validate({"plan": {"sandbox": "required"}})
    app = make_app(project, [], settings)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f2")
        marker = screen.status.marker
        await until(pilot, lambda: str(marker.render()) == "refused")
        assert marker.has_class("-refused") and marker.display


async def test_custom_labels_colour_and_notify(project: Path) -> None:
    settings = Settings.model_validate(
        {
            "plan": {
                "labels": {
                    "plan": {
                        "widget": "THINKING",
                        "widget_with_title": "THINKING {title}",
                        "widget_color": "#123456",
                        "notify": "Planning {title} now",
                        "notify_type": "warning",
                    },
                    "execute": {"widget_with_title": "DOING {title} ({done} of {total})"},
                }
            }
        }
    )
    path = save_plan(project)
    app = make_app(project, [], settings)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f2")
        await until(pilot, lambda: chip_text(app) == "THINKING")
        chip = screen.query_one(ModeChip)
        assert chip.styles.background.hex6 == "#123456"
        await until(pilot, lambda: "Planning the plan now" in toasts(app))
        note = next(n for n in app.toasts if n.message == "Planning the plan now")
        assert note.severity == "warning"
        runtime(app).plan.enter_plan(plan_path=path)
        runtime(app).plan.execute_existing(path)
        await until(pilot, lambda: chip_text(app) == "DOING Add caching (0 of 3)")
        assert any(t == "Plan approved: executing Add caching." for t in toasts(app))


async def test_hide_notify_and_hide_widget(project: Path) -> None:
    # sandbox off: without bubblewrap "auto" adds its own (not hidden) guard-only warning
    settings = Settings.model_validate(
        {"plan": {"ui": {"hide_notify": True, "hide_widget": True}, "sandbox": "off"}}
    )
    app = make_app(project, [], settings)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chip = screen.query_one(ModeChip)
        assert not chip.display
        await pilot.press("f2")
        await until(pilot, lambda: chip.mode == "plan")
        await pilot.pause(0.1)
        assert not chip.display and not screen.status.marker.display
        assert not [t for t in toasts(app) if "Plan mode" in t]


async def test_resumed_execute_shows_chip_and_checklist(project: Path) -> None:
    from planshell.plan.approval_record import ApprovalRecord
    from planshell.ui.widgets.checklist import ChecklistPanel

    path = save_plan(project, text=PLAN.replace("- [ ] Read the server", "- [x] Read the server"))
    log = SessionLog.create(project)
    log.append_message(Message("user", "earlier"))
    approval = ApprovalRecord(path, path.read_text()).to_entry()  # as an approval records it
    log.append(
        {
            "type": "mode",
            "mode": "execute",
            "plan_path": str(path),
            "saved_tools": None,
            "approval": approval,
        }
    )
    log.close()
    app = make_app(project, [], resume=SessionLog.load(log.path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: chip_text(app) == "EXECUTE · Add caching · 1/3")
        panel = await until_query(pilot, screen, ChecklistPanel)
        await until(pilot, lambda: panel.display and panel.done == 1)
    # --plan with a resumed conversation forces PLAN.
    app = make_app(project, [], resume=SessionLog.load(log.path), plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert mode(app) == "plan"
        await until(pilot, lambda: chip_text(app).startswith("PLAN"))


async def until_query(pilot: Pilot, screen: ChatScreen, kind: type) -> Any:
    await until(pilot, lambda: bool(screen.query(kind)))
    return screen.query_one(kind)


async def test_plan_new_starts_a_new_file_and_keeps_the_current_plan(project: Path) -> None:
    """Issue 12, item 16: /plan new REQUEST never overwrites the plan being refined."""
    first = save_plan(project)
    other = PLAN.replace("Add caching", "Add a search box")
    app = make_app(
        project,
        [
            Reply(calls=[("write_plan", {"title": "Add a search box", "content": other})]),
            Reply(text="Written."),
        ],
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        runtime(app).plan.enter_plan(plan_path=first)
        await send(pilot, "/plan new add a search box to the widget list")
        await until(pilot, lambda: len(list(plans_dir(project).glob("*.md"))) == 2)
        await idle(pilot, screen)
        assert first.read_text() == PLAN
        (new,) = [p for p in plans_dir(project).glob("*.md") if p != first]
        assert new.name.endswith("-add-a-search-box-to-the-widget-list.md")
        assert runtime(app).plan.plan_path == new
        assert users(screen)[-1] == "add a search box to the widget list"


def test_plan_new_is_parsed_as_its_own_form() -> None:
    assert parse_plan_argument("new add a search box") == ("new", "add a search box")
    assert parse_plan_argument("news for the team") == ("request", "news for the team")


async def test_a_command_line_prompt_runs_as_typed_and_opens_the_full_review(
    project: Path,
) -> None:
    """`planshell review PATH` starts the TUI with `/plan review NAME` (issue 26, item 8):
    the prompt runs as the command, not as a message to the model, and the review decides."""
    path = save_plan(project)
    provider = ScriptedProvider([])
    app = PlanshellApp(
        Settings(),
        project,
        provider=provider,
        persist=False,
        project_label="~/proj",
        prompt=f"/plan review .planshell/plans/{path.name}",
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert not review.read_only and review.request.path == path
        assert provider.requests == []  # nothing went to the model
