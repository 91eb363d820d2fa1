"""Coverage across the browser review (issue 25.1): sections the page showed whole count in the
terminal's record, and the page's Approve asks "Not viewed: … — approve anyway?" in the terminal.

The page is simulated with real POSTs to the real loopback server the screen's ``w`` starts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from textual.app import App

from planshell.plan.decider import Decision, Review, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.review_coverage import unseen_question
from planshell.plan.store import PlanStore
from planshell.review_web.server import BrowserReview, SeenSection
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.results import push_answering
from planshell.ui.screens.review import ConfirmUnseen, ReviewScreen
from planshell.ui.widgets.gauge import PlanGauge
from planshell.ui.widgets.plan_view import PlanView
from tests.review_web_helpers import Served
from tests.ui.review_helpers import make_plan
from tests.ui_helpers import until

SIZE = (100, 24)
LONG = make_plan(200)  # far more than one screen: the last sections are unseen at first


class Host(App[None]):
    """A review screen over a real plan store (``runtime.store``, as in the chat)."""

    def __init__(self, root: Path, text: str = LONG) -> None:
        super().__init__()
        store = PlanStore(root)
        store.ensure_dir()
        self.text = text
        self.path = store.write(store.plans_dir / "long.md", text)
        self.runtime = SimpleNamespace(store=store)
        self.request = ReviewRequest(self.path, text, parse_plan(text).title)
        self.results: list[Review | None] = []

    def on_mount(self) -> None:
        self.review_screen = ReviewScreen(self.request)
        push_answering(self, self.review_screen, self.results.append)


def view_of(app: Host) -> PlanView:
    return app.review_screen.query_one(PlanView)


async def open_page(app: Host) -> Served:
    await app.review_screen.run_action("browser")
    review = app.review_screen.browser.review
    assert isinstance(review, BrowserReview)
    return Served(review, app.runtime.store, app.path)


async def test_sections_seen_in_the_browser_count_in_the_terminal(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        unseen = view.coverage.unseen()
        assert len(unseen) >= 2
        page = await open_page(app)
        version = await asyncio.to_thread(page.page_version)
        status, _ = await asyncio.to_thread(
            page.post, "api/seen", {"version": version, "sections": [unseen[0], 10_000, -1]}
        )
        assert status == 200
        await until(pilot, lambda: view.coverage.seen(unseen[0]))
        assert view.coverage.unseen() == unseen[1:]  # only that one, nothing out of range
        gauge = app.review_screen.query_one(PlanGauge)
        sections = len(view.sections)
        await until(pilot, lambda: f"{sections - len(unseen) + 1}/{sections} seen" in gauge.plain)
        # The rest seen in the browser: `a` no longer asks, it goes on to how the plan runs.
        status, _ = await asyncio.to_thread(
            page.post, "api/seen", {"version": version, "sections": list(range(sections))}
        )
        assert status == 200
        await until(pilot, lambda: view.coverage.complete)
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, ApproveModeScreen))
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.results == []


async def test_the_pages_approve_asks_about_sections_seen_nowhere(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        unseen = view.coverage.unseen()
        page = await open_page(app)
        version = await asyncio.to_thread(page.page_version)
        # The page saw the first unseen section; the others were seen nowhere.
        await asyncio.to_thread(page.post, "api/seen", {"version": version, "sections": unseen[:1]})
        status, _ = await asyncio.to_thread(page.post, "api/approve", {"version": version})
        assert status == 200
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmUnseen)
        # Seen nowhere: all but the one the browser showed.
        assert dialog.question == unseen_question([view.section_title(i) for i in unseen[1:]])
        await pilot.press("escape")  # dismissing never approves
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        assert app.results == []
        assert view.current_section() == unseen[1]  # the safe choice shows it


async def test_the_pages_approve_after_seeing_everything_approves(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        page = await open_page(app)
        version = await asyncio.to_thread(page.page_version)
        everything = list(range(len(view.sections)))
        await asyncio.to_thread(page.post, "api/seen", {"version": version, "sections": everything})
        status, _ = await asyncio.to_thread(page.post, "api/approve", {"version": version})
        assert status == 200
        await until(pilot, lambda: bool(app.results))
        assert app.results == [Review(Decision.APPROVE, reviewed_text=LONG, permission_mode="ask")]


async def test_the_pages_approve_can_be_taken_anyway(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        page = await open_page(app)
        version = await asyncio.to_thread(page.page_version)
        status, _ = await asyncio.to_thread(page.post, "api/approve", {"version": version})
        assert status == 200
        await until(pilot, lambda: isinstance(app.screen, ConfirmUnseen))
        confirm = app.screen
        assert isinstance(confirm, ConfirmUnseen)
        await until(pilot, lambda: confirm.keys_ready)
        await pilot.press("y")
        await until(pilot, lambda: bool(app.results))
        assert app.results == [Review(Decision.APPROVE, reviewed_text=LONG, permission_mode="ask")]


async def test_a_report_about_other_sections_marks_nothing(tmp_path: Path) -> None:
    """The link marks a section only when the page's one at that index has its level and title."""
    app = Host(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = view_of(app)
        last = len(view.sections) - 1
        assert not view.coverage.seen(last)
        section = view.sections[last]
        link = app.review_screen.browser
        link._seen((SeenSection(last, section.level, section.title + " (another revision)"),))
        link._seen((SeenSection(last, section.level + 1, section.title),))
        link._seen((SeenSection(last + 5, section.level, section.title),))
        assert not view.coverage.seen(last)
        link._seen((SeenSection(last, section.level, section.title),))
        assert view.coverage.seen(last)
