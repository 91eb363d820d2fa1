"""The quit question (ctrl+q while a turn runs) stays on top and goes away with the turn.

Issue 26 item 2: ctrl+q pressed just after ``/plan new …`` left the question
under the review the turn opened a moment later, and after Esc it asked
"A turn is still running. Quit anyway?" with no turn running.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.screen import Screen

from planshell.llm.scripted import Reply
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.review import ReviewScreen
from tests.ui.plan_helpers import PLAN, SIZE, make_app, mode
from tests.ui_helpers import idle, ready, send, until

WRITE = ("write_plan", {"title": "Add caching", "content": PLAN, "plan_path": "caching.md"})
EXIT = ("exit_plan_mode", {"plan_path": "caching.md"})
QUESTION = "A turn is still running. Quit anyway?"


def asking_to_quit(screen: object) -> bool:
    return isinstance(screen, ConfirmScreen) and screen.question == QUESTION


async def test_quit_question_stays_above_a_review_opened_after_it(project: Path) -> None:
    gate = asyncio.Event()
    replies = [
        Reply(text="Planning.", hold=gate, calls=[WRITE]),
        Reply(calls=[EXIT]),
        Reply(text="Noted."),
    ]
    app = make_app(project, replies, plan=True)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready(pilot)
        await send(pilot, "plan caching")
        await until(pilot, lambda: app.runtime is not None and app.runtime.agent.busy)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: asking_to_quit(app.screen))
        gate.set()  # the turn goes on and opens the review
        await until(pilot, lambda: any(isinstance(s, ReviewScreen) for s in app.screen_stack))
        await pilot.pause()
        assert asking_to_quit(app.screen), app.screen_stack
        assert isinstance(app.screen_stack[-2], ReviewScreen), app.screen_stack
        await until(pilot, lambda: app.screen.keys_ready)  # type: ignore[attr-defined]
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.is_running
        assert not any(asking_to_quit(s) for s in app.screen_stack)
        await pilot.press("escape")  # keep planning: the turn ends
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await idle(pilot, chat)
        assert mode(app) == "plan"
        assert not any(asking_to_quit(s) for s in app.screen_stack)
        assert app.is_running


async def test_quit_question_over_the_review_answers_no_back_to_the_review(
    project: Path,
) -> None:
    replies = [Reply(calls=[WRITE]), Reply(calls=[EXIT]), Reply(text="Ok.")]
    app = make_app(project, replies, plan=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "plan caching")
        review = await until_screen(pilot, ReviewScreen)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: asking_to_quit(app.screen))
        assert app.screen_stack[-2] is review
        await pilot.press("n")
        await until(pilot, lambda: app.screen is review)
        assert app.is_running


async def until_screen(pilot: Pilot[Any], kind: type) -> Screen[Any]:
    await until(pilot, lambda: isinstance(pilot.app.screen, kind))
    return pilot.app.screen


async def test_pending_quit_question_is_dropped_when_the_turn_ends(project: Path) -> None:
    gate = asyncio.Event()
    app = make_app(project, [Reply(text="Working on it.", hold=gate)])
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: app.runtime is not None and app.runtime.agent.busy)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: asking_to_quit(app.screen))
        gate.set()  # the turn ends while the question is up
        await until(pilot, lambda: app.screen is chat)
        await idle(pilot, chat)
        assert app.is_running
        assert not any(asking_to_quit(s) for s in app.screen_stack)
        # ctrl+q now quits at once: nothing runs to ask about
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running)
