"""The review's approve names how the plan runs: the ApproveModeScreen dialog (Pilot).

The key grace of the dialog (an early key decides nothing) is tested with every
decision screen in tests/ui/test_ui_keygrace.py ("approve dialog" cases and
test_the_review_a_is_held_then_opens_the_dialog).
"""

from __future__ import annotations

from textual.widgets import OptionList

from planshell.plan.decider import Decision, Review
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.review import ReviewScreen
from tests.ui.review_helpers import SHORT, ReviewHost, request_for
from tests.ui_helpers import read_whole_plan


def dialog_of(app: ReviewHost) -> ApproveModeScreen:
    screen = app.screen
    assert isinstance(screen, ApproveModeScreen)
    return screen


def option_ids(dialog: ApproveModeScreen) -> list[str | None]:
    options = dialog.query_one("#choices", OptionList)
    return [options.get_option_at_index(i).id for i in range(options.option_count)]


def shown(dialog: ApproveModeScreen) -> str:
    options = dialog.query_one("#choices", OptionList)
    return "\n".join(
        str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
    )


async def test_a_opens_the_choices_in_words_with_ask_focused() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await read_whole_plan(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog = dialog_of(app)
        assert option_ids(dialog) == ["ask", "accept-edits"]
        assert "Ask me before each edit" in shown(dialog)
        assert "Accept edits inside the plan's scope" in shown(dialog)
        assert isinstance(app.focused, OptionList)
        assert dialog.highlighted_mode == "ask"  # the safe choice is the focused one
        assert app.results == []  # opening the dialog approves nothing


async def test_auto_is_hidden_unless_the_users_config_allows_it() -> None:
    for allow_auto, expected in ((False, ["ask", "accept-edits"]), (True, None)):
        app = ReviewHost(request_for(SHORT, allow_auto=allow_auto))
        async with app.run_test(size=(100, 30)) as pilot:
            await read_whole_plan(pilot)
            await pilot.press("a")
            await pilot.pause()
            dialog = dialog_of(app)
            if expected is not None:
                assert option_ids(dialog) == expected
                assert "Auto" not in shown(dialog)
            else:
                assert option_ids(dialog) == ["ask", "accept-edits", "auto"]
                assert "Auto — run everything without asking" in shown(dialog)
                assert dialog.highlighted_mode == "ask"  # auto is never the focused default


async def test_auto_is_never_the_focused_default() -> None:
    app = ReviewHost(request_for(SHORT, allow_auto=True, approve_mode="auto"))
    async with app.run_test(size=(100, 30)) as pilot:
        await read_whole_plan(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert dialog_of(app).highlighted_mode == "ask"


async def test_escape_returns_to_the_review_and_approves_nothing() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await read_whole_plan(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog_of(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)  # back to the plan
        assert app.results == []
        await pilot.press("a", "2")  # the review still works afterwards
        await pilot.pause()
    assert app.results == [
        Review(Decision.APPROVE, reviewed_text=SHORT, permission_mode="accept-edits")
    ]


async def test_dismissing_the_dialog_approves_nothing() -> None:
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await read_whole_plan(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog_of(app)
        app.pop_screen()
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert app.results == []


async def test_auto_cannot_be_approved_when_not_offered() -> None:
    """Even called directly, the review refuses auto when the config did not offer it."""
    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        await read_whole_plan(pilot)
        await pilot.pause()
        assert app.review_screen is not None
        app.review_screen.approve_in("auto")
        await pilot.pause()
        assert app.results == []


async def test_the_dialog_says_which_model_will_run_the_plan() -> None:
    """With [plan] model set, the approve card names the executing model (issue 29)."""
    from textual.widgets import Static

    app = ReviewHost(request_for(SHORT))
    async with app.run_test(size=(100, 30)) as pilot:
        runner = "Runs with openai · exec-model (planned with anthropic · \x1b[31mplan-model)."
        app.push_screen(ApproveModeScreen(runner=runner))
        await pilot.pause()
        dialog = dialog_of(app)
        text = str(dialog.query_one("#runner", Static).render())
        assert "Runs with openai · exec-model" in text and "\x1b" not in text
        app.pop_screen()
        app.push_screen(ApproveModeScreen())
        await pilot.pause()
        assert not dialog_of(app).query("#runner")  # one model for both: nothing to say
