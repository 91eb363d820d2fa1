"""Key grace: a key typed before a decision screen was ready is not the user's answer (Pilot).

Every test here turns the grace on and never measures time: an early key is
pressed right after the screen is pushed and the test asserts the decision did
*not* happen; then the screen becomes ready and the test shows the same key now
decides. Most tests make the grace outlast them (``long_grace``) and end it by
hand, as the grace timer would; the stale-key and paste tests keep the real
grace (``key_grace``) and wait until its timer says ready (``keys_ready``, polled). A key
created before the screen was pushed and delivered only after the screen is
ready stands for a key queued while the event loop was busy: it is ignored too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from textual import events
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Button, Static

from planshell.plan.decider import (
    ApprovalChoice,
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Review,
)
from planshell.plan.undo import Change, UndoPlan
from planshell.ui.decider import LEAVE_PLAN_QUESTION
from planshell.ui.keygrace import DEFAULT_GRACE, HELD_KEY, KeyGrace
from planshell.ui.screens.approval import ApprovalScreen
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.handoff import HandoffScreen
from planshell.ui.screens.plan_actions import PlanActionScreen
from planshell.ui.screens.plan_diff import PlanDiffScreen
from planshell.ui.screens.plan_picker import CreatePlanScreen
from planshell.ui.screens.plan_report import UNDO, PlanReportScreen
from planshell.ui.screens.questions import QuestionsScreen
from planshell.ui.screens.results import push_answering
from planshell.ui.screens.review import ConfirmDiscard, ReviewScreen
from planshell.ui.screens.undo import UndoScreen
from planshell.ui.widgets.plan_view import PlanView
from planshell.ui.widgets.review_footer import ReviewFooter
from tests.ui.review_helpers import make_plan, request_for
from tests.ui_helpers import read_whole_plan, until

UNANSWERED = object()
S = TypeVar("S", bound=Screen[Any])


@pytest.fixture(autouse=True)
def key_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real grace (conftest turns it off for every other UI test)."""
    monkeypatch.setattr(KeyGrace, "GRACE", DEFAULT_GRACE)


@pytest.fixture
def long_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grace that outlasts the test: it ends when the test calls ``end_grace()``."""
    monkeypatch.setattr(KeyGrace, "GRACE", 3600.0)


class Host(App[None]):
    """Pushes one screen and records its answer."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[Any] = []

    def show(self, screen: Screen[Any]) -> None:
        push_answering(self, screen, self.results.append)

    @property
    def answer(self) -> Any:
        return self.results[0] if self.results else UNANSWERED


async def early_then_ready(pilot: Pilot, screen: Screen[Any], key: str) -> None:
    """Push ``screen``, press ``key`` at once: nothing may be decided. Then end the grace.

    Used under ``long_grace``: the early key is inside the grace however slow the
    machine, and the test ends it by hand (what the grace timer calls) instead of
    waiting it out. The timer itself ending the grace is covered by the tests that
    keep the real grace.
    """
    app = pilot.app
    assert isinstance(app, Host) and isinstance(screen, KeyGrace)
    app.show(screen)
    await pilot.press(key)  # the key arrives with the screen, before it is ready
    await pilot.pause()
    assert app.answer is UNANSWERED, f"{key!r} decided during the grace"
    assert app.screen is screen
    assert not screen.keys_ready
    screen.end_grace()
    await until(pilot, lambda: screen.keys_ready)


async def choose_in_dialog(pilot: Pilot, review: ReviewScreen) -> None:
    """The approve dialog the review's a opened: an early Enter does nothing, then it chooses."""
    app = pilot.app
    assert isinstance(app, Host)
    await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
    dialog = app.screen
    assert isinstance(dialog, ApproveModeScreen)
    await pilot.press("enter")  # at once: the dialog holds it, as every decision screen does
    await pilot.pause()
    assert app.answer is UNANSWERED and app.screen is dialog
    dialog.end_grace()
    await until(pilot, lambda: dialog.keys_ready)
    await pilot.press("enter")
    await until(pilot, lambda: app.answer is not UNANSWERED)


@pytest.mark.usefixtures("long_grace")
async def test_the_review_a_is_held_then_opens_the_dialog() -> None:
    """An early a opens nothing; once ready a opens the dialog, whose early keys decide nothing."""
    async with showing(lambda: ReviewScreen(plan_request())) as (app, pilot, screen):
        await pilot.press("a", "1", "2", "enter")  # typed as the review appears
        await pilot.pause()
        assert app.screen is screen and app.answer is UNANSWERED
        await read_whole_plan(pilot)  # else a first asks about the sections not viewed
        screen.end_grace()
        await until(pilot, lambda: screen.keys_ready)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
        dialog = app.screen
        await pilot.press("2", "3", "enter")  # typed before the dialog was ready
        await pilot.pause()
        assert app.answer is UNANSWERED and app.screen is dialog
        await pilot.press("escape")  # back to the review: safe, so at once
        await until(pilot, lambda: app.screen is screen)
        await pilot.pause()
        assert app.answer is UNANSWERED  # Esc approved nothing


@asynccontextmanager
async def showing(
    make: Callable[[], S], size: tuple[int, int] = (100, 30)
) -> AsyncIterator[tuple[Host, Pilot, S]]:
    """A Host running at ``size``, with the screen ``make`` builds pushed on it."""
    app = Host()
    async with app.run_test(size=size) as pilot:
        screen = make()
        app.show(screen)
        yield app, pilot, screen


def plan_request() -> Any:
    return request_for(make_plan(200))


APPROVAL = ApprovalRequest(
    tool="bash",
    headline="touch made",
    kind="bash",
    why="bash needs approval in ask mode",
    command="touch made",
    segments=("touch made",),
    session_rules=("bash(touch *)",),
    project_rules=("bash(touch *)",),
    project_file=".planshell/config.toml",
)


def undo_plan() -> UndoPlan:
    """What undo would restore (the screen shows only the changes and their diff)."""
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-new\n+old\n"
    return UndoPlan(None, [Change("x.py", "restore", diff, False)], [], [], [], [])  # type: ignore[arg-type]


# (screen factory, decision key, the answer once ready)
CASES: dict[str, tuple[Callable[[], Screen[Any]], str, Any]] = {
    # The review's a opens the approve dialog (test_the_review_a_is_held_then_opens_the_dialog);
    # the dialog's Enter (on the focused, safe choice) and its numbers are the decision.
    "approve dialog enter": (lambda: ApproveModeScreen(), "enter", "ask"),
    "approve dialog 2": (lambda: ApproveModeScreen(), "2", "accept-edits"),
    "review exit plan mode": (lambda: ReviewScreen(plan_request()), "x", Review(Decision.EXIT)),
    "leave plan mode y": (
        lambda: ConfirmScreen(LEAVE_PLAN_QUESTION, yes="Allow", no="Keep planning"),
        "y",
        True,
    ),
    "enter on a focused yes": (
        lambda: ConfirmScreen("Plan first?", yes="Plan first", no="Not now", default=True),
        "enter",
        True,
    ),
    "delete plan y": (lambda: ConfirmDiscard(Path("/tmp/p.md")), "y", True),
    "plan actions execute": (
        lambda: PlanActionScreen(Path("/tmp/p.md"), make_plan(40)),
        "e",
        "execute",
    ),
    "approval y": (lambda: ApprovalScreen(APPROVAL), "y", ApprovalDecision(ApprovalChoice.ONCE)),
    "approval always": (
        lambda: ApprovalScreen(APPROVAL),
        "a",
        ApprovalDecision(ApprovalChoice.ALWAYS),
    ),
    "plan report u": (lambda: PlanReportScreen("# Plan report: x\n"), "u", UNDO),
    "undo enter": (lambda: UndoScreen(undo_plan()), "enter", True),
    "handoff compact": (lambda: HandoffScreen({}, "keep"), "c", "compact"),
    "handoff enter on fresh": (lambda: HandoffScreen({}, "fresh"), "enter", "fresh"),
    "questions send": (lambda: QuestionsScreen(["Which port?"]), "ctrl+s", [""]),
    "create plan enter": (lambda: CreatePlanScreen("limits"), "enter", "limits"),
    # A changed plan's diff: an early Enter must not skip it on the way to the review.
    "changed plan diff enter": (
        lambda: PlanDiffScreen(request_for(make_plan(20), diff="+- [ ] curl | sh")),
        "enter",
        True,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.usefixtures("long_grace")
async def test_an_early_key_decides_nothing_the_same_key_works_once_ready(case: str) -> None:
    make, key, expected = CASES[case]
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = make()
        await early_then_ready(pilot, screen, key)
        await pilot.press(key)
        await until(pilot, lambda: app.answer is not UNANSWERED)
    assert app.answer == expected


@pytest.mark.parametrize(
    "case", ["approve dialog enter", "approve dialog 2", "leave plan mode y", "approval y"]
)
async def test_a_key_typed_before_the_screen_appeared_is_ignored_even_when_handled_later(
    case: str,
) -> None:
    """The key event's time, not when the loop gets to it, decides: a stall cannot approve."""
    make, key, expected = CASES[case]
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        stale = events.Key(key, key)  # typed now, before the screen exists
        screen = make()
        assert isinstance(screen, KeyGrace)
        app.show(screen)
        await until(pilot, lambda: screen.keys_ready)  # the real grace timer ended it
        app.post_message(stale)  # ...and handled only after the screen said ready
        await pilot.pause()
        assert app.answer is UNANSWERED
        screen.end_grace()  # if the stale key started the grace again, end it as its timer would
        await until(pilot, lambda: screen.keys_ready)
        await pilot.press(key)
        await until(pilot, lambda: app.answer is not UNANSWERED)
    assert app.answer == expected


@pytest.mark.usefixtures("long_grace")
async def test_a_held_key_keeps_the_review_waiting_until_it_stops() -> None:
    """Key repeat (or a paste arriving as keys) restarts the grace: a held key never approves.

    The grace is made to outlast the test and ended by hand, so the repeat that
    arrives after it ended is exactly "typed before ready, handled after".
    """
    async with showing(lambda: ReviewScreen(plan_request())) as (app, pilot, screen):
        await pilot.press(*"aaaa")  # the key is held down as the review appears
        repeat = events.Key("a", "a")  # ...and still repeating
        screen.end_grace()
        assert screen.keys_ready
        app.post_message(repeat)
        await pilot.pause()
        assert app.answer is UNANSWERED
        assert not screen.keys_ready  # the repeat started the grace again
        assert app.screen is screen  # ...and never opened the approve dialog
        await read_whole_plan(pilot)
        screen.end_grace()
        await pilot.press("a")  # a fresh press, after the screen said ready
        await choose_in_dialog(pilot, screen)
    assert app.answer == Review(
        Decision.APPROVE, reviewed_text=make_plan(200), permission_mode="ask"
    )


async def test_a_paste_never_decides() -> None:
    """A bracketed paste is text, not keys: pasting "a", "y" or "x" into the review does nothing."""
    async with showing(lambda: ReviewScreen(plan_request())) as (app, pilot, screen):
        await until(pilot, lambda: screen.keys_ready)
        for text in ("a", "y", "x", "D", "a\r"):
            screen.query_one(PlanView).post_message(events.Paste(text))
        await pilot.pause()
        assert app.answer is UNANSWERED and app.screen is screen


@pytest.mark.parametrize(
    ("make", "key", "expected"),
    [
        (lambda: ReviewScreen(plan_request()), "escape", Review(Decision.KEEP)),
        (lambda: ConfirmScreen(LEAVE_PLAN_QUESTION, yes="Allow", no="Keep planning"), "n", False),
        (
            lambda: ConfirmScreen(LEAVE_PLAN_QUESTION, yes="Allow", no="Keep planning"),
            "enter",
            False,
        ),
        (lambda: ApprovalScreen(APPROVAL), "escape", ApprovalDecision(ApprovalChoice.DENY)),
        (lambda: HandoffScreen({}, "compact"), "k", "keep"),
        (lambda: PlanActionScreen(Path("/tmp/p.md"), make_plan(40)), "escape", None),
        (lambda: QuestionsScreen(["Which port?"]), "escape", None),
    ],
    ids=[
        "review esc",
        "confirm n",
        "confirm enter on no",
        "approval esc",
        "handoff k",
        "plan actions esc",
        "questions esc",
    ],
)
@pytest.mark.usefixtures("long_grace")
async def test_the_safe_answers_act_at_once(
    make: Callable[[], Screen[Any]], key: str, expected: Any
) -> None:
    """Keep planning, no, deny, keep: never held, and never an approval."""
    async with showing(make) as (app, pilot, screen):
        await pilot.press(key)
        await until(pilot, lambda: app.answer is not UNANSWERED)
        assert isinstance(screen, KeyGrace) and not screen.keys_ready  # it was still the grace
    assert app.answer == expected


@pytest.mark.usefixtures("long_grace")
async def test_scrolling_and_sections_work_during_the_grace() -> None:
    async with showing(lambda: ReviewScreen(plan_request())) as (app, pilot, screen):
        await pilot.press("n", "j", "space", "a")
        assert not screen.keys_ready
        assert screen.query_one(PlanView).scroll_y > 0
        assert app.answer is UNANSWERED


@pytest.mark.usefixtures("long_grace")
async def test_a_click_before_the_dialog_is_ready_does_not_confirm() -> None:
    async with showing(
        lambda: ConfirmScreen("Delete this plan file?", yes="Delete", no="Keep")
    ) as (app, pilot, screen):
        await pilot.pause()
        await pilot.click("#yes")
        await pilot.pause()
        assert app.answer is UNANSWERED
        screen.end_grace()
        yes = screen.query_one("#yes", Button)
        await until(pilot, lambda: not yes.has_class("-active"))  # its press animation is over
        await pilot.click("#yes")
        await until(pilot, lambda: app.answer is not UNANSWERED)
    assert app.answer is True


@pytest.mark.usefixtures("long_grace")
async def test_the_review_footer_shows_a_decision_key_once_it_works() -> None:
    """Held keys show as a dimmed dot; Esc and n/p are shown (and work) from the start."""
    async with showing(lambda: ReviewScreen(plan_request()), (120, 30)) as (_, pilot, screen):
        await pilot.pause()
        footer = screen.query_one(ReviewFooter)
        held = footer.render().plain
        assert screen.has_class("-keys-held")
        assert "Esc keep planning" in held and "n/p sections" in held
        assert f"{HELD_KEY} approve & run" in held and "a approve" not in held
        screen.end_grace()
        await pilot.pause()
        ready = footer.render().plain
        assert "a approve & run" in ready and HELD_KEY not in ready
        assert len(ready) == len(held)  # nothing moves when the keys arrive
        assert screen.has_class("-keys-ready") and not screen.has_class("-keys-held")


@pytest.mark.parametrize(
    ("make", "keys_id", "held", "ready"),
    [
        (
            lambda: PlanReportScreen("# Plan report: x\n"),
            "#report-keys",
            f"d diff of the plan   {HELD_KEY} undo it",
            "d diff of the plan   u undo it",
        ),
        (
            lambda: UndoScreen(undo_plan()),
            "#undo-keys",
            f"{HELD_KEY * 5} undo (restore",
            "Enter undo (restore",
        ),
    ],
)
@pytest.mark.usefixtures("long_grace")
async def test_the_report_and_undo_show_their_decision_key_once_it_works(
    make: Callable[[], Screen[Any]], keys_id: str, held: str, ready: str
) -> None:
    """A person sees when u (report) and Enter (undo) will act: an early one does nothing."""
    async with showing(make) as (_, pilot, screen):
        assert isinstance(screen, KeyGrace)
        await pilot.pause()
        shown = str(screen.query_one(keys_id, Static).render())
        assert held in shown and ready not in shown
        screen.end_grace()
        await pilot.pause()
        shown = str(screen.query_one(keys_id, Static).render())
        assert ready in shown and HELD_KEY not in shown


@pytest.mark.usefixtures("long_grace")
async def test_dialog_buttons_show_their_key_once_it_works() -> None:
    async with showing(
        lambda: ConfirmScreen(LEAVE_PLAN_QUESTION, yes="Allow", no="Keep planning")
    ) as (_, pilot, screen):
        await pilot.pause()
        yes, no = screen.query_one("#yes", Button), screen.query_one("#no", Button)
        assert str(yes.label) == f"Allow ({HELD_KEY})" and str(no.label) == "Keep planning (n)"
        screen.end_grace()
        assert str(yes.label) == "Allow (y)"


@pytest.mark.usefixtures("long_grace")
async def test_the_grace_starts_again_when_the_review_comes_back() -> None:
    """After the delete question is answered "keep", the review holds its keys again."""
    async with showing(lambda: ReviewScreen(plan_request())) as (app, pilot, screen):
        await pilot.pause()
        screen.end_grace()
        await pilot.press("D")
        await until(pilot, lambda: isinstance(app.screen, ConfirmDiscard))
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("a")
        await pilot.pause()
        assert app.answer is UNANSWERED and not screen.keys_ready
        assert app.screen is screen
        await read_whole_plan(pilot)
        screen.end_grace()
        await pilot.press("a")
        await choose_in_dialog(pilot, screen)
    assert app.answer.decision is Decision.APPROVE
