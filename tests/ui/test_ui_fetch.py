"""Plan mode's fetch question, driven through Pilot and the real TUI decider."""

from __future__ import annotations

from textual.app import App

from planshell.plan.decider import FetchRequest
from planshell.ui.decider import TuiDecider
from planshell.ui.screens.fetch import FetchScreen
from tests.engine_helpers import wait_for

# A secret in the path, a terminal escape and a right-to-left override: all shown as escapes.
URL = "https://evil.example/c/AKIA1234?k=s3cr3t\x1b]52;c;aGk=\x07&x=\u202etxt.exe"


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[bool] = []

    def on_mount(self) -> None:
        self.run_worker(self._ask())

    async def _ask(self) -> None:
        request = FetchRequest(URL, "evil.example", has_query=True)
        self.results.append(await TuiDecider(self).approve_fetch(request))


async def test_the_full_url_is_shown_escaped_and_enter_refuses() -> None:
    app = Host()
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, FetchScreen))
        await pilot.pause()
        shown = str(app.screen.query_one("#fetch-url").render())
        assert "AKIA1234?k=s3cr3t\\x1b]52;c;aGk=\\x07&x=\\u202etxt.exe" in shown.replace("\n", "")
        assert "asked every time" in str(app.screen.query_one("#fetch-why").render())
        await pilot.press("enter")  # the safe answer is the default
        await wait_for(lambda: bool(app.results))
    assert app.results == [False]


async def test_y_fetches() -> None:
    app = Host()
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(lambda: isinstance(app.screen, FetchScreen))
        await pilot.pause()
        await pilot.press("y")
        await wait_for(lambda: bool(app.results))
    assert app.results == [True]
