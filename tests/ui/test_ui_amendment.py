"""The amendment review (issue 24 part 5) and the "add to the plan" answer, in the TUI (Pilot).

The engine side is tested headless in tests/plan/test_amend*.py and
tests/permissions/test_permissions_add_to_plan.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from planshell.llm.scripted import Reply
from planshell.plan.decider import ApprovalChoice
from planshell.ui.screens.amendment import AmendmentScreen, word_diff_text
from planshell.ui.screens.approval import ApprovalScreen
from tests.ui.amendment_helpers import (
    AMEND,
    NEW_STEP,
    PLAN,
    ScreenHost,
    amendment_request,
    executing_app,
    start_plan,
    unplanned_request,
)
from tests.ui_helpers import clear_toasts, ready_for_snapshot, screen_text, until

SIZE = (100, 30)


@pytest.fixture(autouse=True)
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AmendmentScreen, "GRACE", 0.0)
    monkeypatch.setattr(ApprovalScreen, "GRACE", 0.0)


def _text(screen: AmendmentScreen, selector: str) -> str:
    widget = screen.query_one(selector, Static)
    content = widget.render()
    return content.plain if isinstance(content, Text) else str(content)


@pytest.mark.parametrize(
    ("keys", "answer"), [(("a",), True), (("n",), False), (("escape",), False)]
)
async def test_a_approves_n_and_escape_decline(keys: tuple[str, ...], answer: bool) -> None:
    app = ScreenHost(lambda: AmendmentScreen(amendment_request()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
    assert app.results == [answer]


async def test_enter_decides_nothing_and_a_dismissal_declines() -> None:
    app = ScreenHost(lambda: AmendmentScreen(amendment_request()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter", "y", "space")
        await pilot.pause()
        assert app.results == [] and isinstance(app.screen, AmendmentScreen)
        app.pop_screen()
        await pilot.pause()
    assert app.results == [False]


async def test_a_during_the_key_grace_approves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(AmendmentScreen, "GRACE", 3600.0)
    app = ScreenHost(lambda: AmendmentScreen(amendment_request()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert app.results == []
        await pilot.press("escape")  # declining acts at once
        await pilot.pause()
    assert app.results == [False]


async def test_it_shows_the_step_the_reason_the_word_diff_and_the_scope() -> None:
    request = amendment_request(reason="moved \x1b[2J\u202eevil", title="Rate\x1b]0;x\x07 limits")
    app = ScreenHost(lambda: AmendmentScreen(request))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AmendmentScreen)
        title = _text(screen, "#amendment-title")
        assert "amend step 2" in title and "\x1b" not in title
        reason = _text(screen, "#amendment-reason")
        assert reason.startswith("Reason: moved") and "\\x1b" in reason and "\x1b" not in reason
        assert "\u202e" not in reason
        assert "src/app/router.py" in _text(screen, "#amendment-scope")
        shown = screen_text(app)
        assert "a approve the amendment" in shown and "n/esc decline" in shown


def test_the_word_diff_strikes_old_words_and_marks_new_ones() -> None:
    text = word_diff_text("Call it from server.py", "Call it from router.py now")
    assert text.plain == "Call it from serverrouter.py now"
    styles = {text.plain[s.start : s.end]: str(s.style) for s in text.spans if s.style}
    assert styles == {"server": "red strike", "router": "bold green", " now": "bold green"}
    assert "\x1b" not in word_diff_text("a", "b \x1b[31mc").plain


async def test_the_approval_prompt_offers_add_to_the_plan_only_for_an_unplanned_file() -> None:
    for offered in (True, False):
        app = ScreenHost(lambda offered=offered: ApprovalScreen(unplanned_request(offered)))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert ("add to the plan (allow" in screen_text(app)) is offered
            await pilot.press("p")
            await pilot.pause()
            if not offered:
                assert app.results == []  # p does nothing where it is not offered
                await pilot.press("escape")
                await pilot.pause()
        expected = ApprovalChoice.ADD_TO_PLAN if offered else ApprovalChoice.DENY
        assert [r.choice for r in app.results] == [expected]


async def _start(pilot: Pilot) -> None:
    chat = await ready_for_snapshot(pilot)
    start_plan(pilot.app)  # type: ignore[arg-type]
    await clear_toasts(pilot)  # "Plan approved: executing …"
    chat.prompt.set_text("Go ahead with the plan.")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(pilot.app.screen, AmendmentScreen))


async def test_the_model_asks_the_person_approves_and_the_plan_file_is_amended(
    project: Path,
) -> None:
    app = executing_app(project, [Reply("The handler moved.", calls=[AMEND]), Reply("ok")])
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot)
        await pilot.press("a")
        chat = app.screen_stack[0]
        await until(pilot, lambda: app.screen is chat and not chat.busy)  # type: ignore[attr-defined]
        runtime = app.runtime
        assert runtime is not None and runtime.plan.plan_path is not None
        text = runtime.plan.plan_path.read_text()
        assert f"- [ ] {NEW_STEP}" in text and "## Amendments" in text
        assert runtime.plan.approval is not None and runtime.plan.approval.text == text


async def test_escape_declines_and_the_plan_file_keeps_its_bytes(project: Path) -> None:
    app = executing_app(project, [Reply("The handler moved.", calls=[AMEND]), Reply("ok")])
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot)
        runtime = app.runtime
        assert runtime is not None and runtime.plan.plan_path is not None
        await pilot.press("escape")
        chat = app.screen_stack[0]
        await until(pilot, lambda: app.screen is chat and not chat.busy)  # type: ignore[attr-defined]
        assert runtime.plan.plan_path.read_text() == PLAN


async def test_add_to_the_plan_from_the_prompt_amends_the_plan(project: Path) -> None:
    write = ("write", {"path": "README.md", "content": "new\n"})
    app = executing_app(project, [Reply(calls=[write]), Reply(calls=[write]), Reply("ok")])
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_for_snapshot(pilot)
        start_plan(app)
        chat.prompt.set_text("Go ahead with the plan.")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert "add to the plan" in screen_text(app)
        await pilot.press("p")
        await until(pilot, lambda: app.screen is chat and not chat.busy)
        runtime = app.runtime
        assert runtime is not None and runtime.plan.plan_path is not None
        assert "added to the plan's scope: `README.md`" in runtime.plan.plan_path.read_text()
        assert (project / "README.md").read_text() == "new\n"  # the second write did not ask


# --- snapshot ---------------------------------------------------------------------------


async def _snapshot_run(pilot: Pilot) -> None:
    await _start(pilot)
    await clear_toasts(pilot)
    # The tool row's spinner frame depends on how many ticks ran before the review
    # appeared (the ticker rests under a dialog): show its first frame.
    chat = pilot.app.screen_stack[0]
    for row in chat.transcript.running_tools:  # type: ignore[attr-defined]
        row.tick(0)
    await pilot.pause()


def test_amendment_review_snapshot(snap_compare, project: Path) -> None:  # type: ignore[no-untyped-def]
    app = executing_app(project, [Reply("Step 2 names the wrong file.", calls=[AMEND])])
    assert snap_compare(app, terminal_size=(80, 24), run_before=_snapshot_run)
