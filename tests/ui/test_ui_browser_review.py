"""The review screen's browser review through Pilot: w, the URL line, Esc, decisions from the page."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from textual.widgets import Static

from planshell.plan.decider import Decision, Review, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.store import PlanStore
from planshell.review_web.server import BrowserReview
from planshell.ui.browser_review import review_origin
from planshell.ui.plan_args import parse_plan_argument
from planshell.ui.screens.results import push_answering
from planshell.ui.screens.review import ReviewScreen
from planshell.ui.toasts import ToastLog
from tests.review_web_helpers import PLAN, Served
from tests.ui_helpers import until

WAIT = 30.0


class Host(ToastLog[None]):
    """A review screen over a real plan store, like the chat's (runtime.store)."""

    def __init__(
        self, root: Path, *, from_plan_review: bool = False, browser: bool = False
    ) -> None:
        super().__init__()
        store = PlanStore(root)
        store.ensure_dir()
        self.path = store.write(store.plans_dir / "cache.md", PLAN)
        self.runtime = SimpleNamespace(store=store)
        self.request = ReviewRequest(self.path, PLAN, parse_plan(PLAN).title)
        self.from_plan_review = from_plan_review
        self.browser = browser
        self.results: list[Review | None] = []

    def on_mount(self) -> None:
        if self.from_plan_review:
            with review_origin(open_browser=self.browser):
                self.review_screen = ReviewScreen(self.request)
        else:
            self.review_screen = ReviewScreen(self.request)
        push_answering(self, self.review_screen, self.results.append)


def served(app: Host) -> Served:
    review = app.review_screen.browser.review
    assert isinstance(review, BrowserReview)
    return Served(review, app.runtime.store, app.path)


def line_text(app: Host) -> str:
    return str(app.review_screen.query_one("#browser-line", Static).render())


async def test_w_opens_the_browser_and_shows_the_url(
    tmp_path: Path, browser_opened: list[str]
) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        await app.workers.wait_for_complete()
        link = app.review_screen.browser
        assert link.active and link.review is not None
        assert browser_opened == [link.review.url]
        assert link.review.url.startswith("http://127.0.0.1:")
        assert "reviewing in browser… " + link.review.url in line_text(app)
        assert link.allow_approve  # the agent's exit_plan_mode review


async def test_approve_in_the_page_takes_the_a_path(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        page = served(app)
        status, _ = await asyncio.to_thread(
            page.post, "api/approve", {"version": page.page_version()}
        )
        assert status == 200
        for _ in range(200):
            if app.results:
                break
            await pilot.pause(0.02)
        # The page's Approve runs the plan in the dialog's default: ask, never auto.
        assert app.results == [Review(Decision.APPROVE, reviewed_text=PLAN, permission_mode="ask")]
        assert await asyncio.to_thread(page.review.wait_closed, WAIT)


async def test_save_in_the_page_refines(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        page = served(app)
        steps = {"start": 8, "end": 10, "text": "Which tests?"}  # the list under ## Steps
        status, _ = await asyncio.to_thread(
            page.post, "api/save", {"version": page.page_version(), "comments": [steps]}
        )
        assert status == 200
        for _ in range(200):
            if app.results:
                break
            await pilot.pause(0.02)
        [review] = app.results
        assert review is not None and review.decision is Decision.REFINE
        assert "Which tests?" in review.feedback
        assert "> [!REVIEW] Which tests?" in app.path.read_text()


async def test_escape_closes_the_browser_review_first(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        page = served(app)
        await pilot.press("escape")
        assert await asyncio.to_thread(page.review.wait_closed, WAIT)
        assert not app.results  # the review itself is still open
        assert not app.review_screen.query_one("#browser-line").display
        await pilot.press("escape")
        assert app.results == [Review(Decision.KEEP)]


async def test_terminal_decision_closes_the_browser_review(tmp_path: Path) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        page = served(app)
        await pilot.press("a", "2")
        assert app.results == [
            Review(Decision.APPROVE, reviewed_text=PLAN, permission_mode="accept-edits")
        ]
        assert await asyncio.to_thread(page.review.wait_closed, WAIT)


async def test_plan_review_browser_opens_at_once_without_approval(
    tmp_path: Path, browser_opened: list[str]
) -> None:
    app = Host(tmp_path, from_plan_review=True, browser=True)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        link = app.review_screen.browser
        assert link.active and not link.allow_approve
        assert browser_opened and browser_opened[0] == link.review.url  # type: ignore[union-attr]
        page = served(app)
        status, _ = await asyncio.to_thread(
            page.post, "api/approve", {"version": page.page_version()}
        )
        assert status == 403
        assert not app.results


def test_origin_is_consumed_by_the_first_screen() -> None:
    request = ReviewRequest(Path("/tmp/x.md"), PLAN, "x")
    with review_origin(open_browser=True):
        first, second = ReviewScreen(request), ReviewScreen(request)
    outside = ReviewScreen(request)
    assert first.browser.open_at_start and not second.browser.open_at_start
    assert not first.browser.allow_approve and not second.browser.allow_approve
    assert outside.browser.allow_approve and not outside.browser.open_at_start


def test_plan_review_browser_argument() -> None:
    assert parse_plan_argument("review --browser") == ("review-browser", "")
    assert parse_plan_argument("review --browser plans/x.md") == ("review-browser", "plans/x.md")
    assert parse_plan_argument("review x.md") == ("review", "x.md")
    assert parse_plan_argument("review --browser now please")[0] == "request"


def footer_esc(app: Host) -> str:
    from planshell.ui.widgets.review_footer import ReviewFooter

    footer = app.review_screen.query_one(ReviewFooter)
    return next(str(hint) for hint in footer.shown if hint.key == "Esc")


async def test_header_and_footer_agree_on_what_esc_does(tmp_path: Path) -> None:
    """Issue 26 item 19: after w the header said "Esc closes it", the footer "Esc keep planning"."""
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        assert footer_esc(app) == "Esc keep planning"
        await pilot.press("w")
        page = served(app)
        await pilot.pause()
        assert "Esc closes it" in line_text(app)
        assert footer_esc(app) == "Esc close browser"
        await pilot.press("escape")  # what both say: the browser review ends, the review stays
        assert await asyncio.to_thread(page.review.wait_closed, WAIT)
        await pilot.pause()
        assert not app.results
        assert footer_esc(app) == "Esc keep planning"


# --- issue 26, item 9: a closed tab is not the end; the end is said -----------------------


def notices(app: Host) -> list[str]:
    return [toast.message for toast in app.toasts]


async def test_the_browser_review_outlives_a_closed_tab(tmp_path: Path) -> None:
    import socket

    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        app.review_screen.browser.page_grace = 0.1  # seconds, instead of 10
        await pilot.press("w")
        page = served(app)

        def tab_opened_and_closed() -> None:
            sock = socket.create_connection(("127.0.0.1", page.review.port), timeout=WAIT)
            request = f"GET {page.base}events HTTP/1.1\r\nHost: {page.host}\r\n\r\n"
            sock.sendall(request.encode())
            assert b"text/event-stream" in sock.recv(4096)
            sock.close()

        await asyncio.to_thread(tab_opened_and_closed)
        await until(pilot, lambda: "browser page closed" in line_text(app))
        assert page.review.url in line_text(app)
        await pilot.pause(0.3)  # well past the grace
        assert app.review_screen.browser.active
        status, _, _ = await asyncio.to_thread(page.request, "GET", page.base)  # the reload
        assert status == 200
        assert not app.results and not notices(app)


async def test_closing_the_review_screen_ends_the_browser_review_and_says_so(
    tmp_path: Path,
) -> None:
    app = Host(tmp_path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        page = served(app)
        await pilot.press("x")  # exit plan mode: the review screen closes
        assert app.results == [Review(Decision.EXIT)]
        assert await asyncio.to_thread(page.review.wait_closed, WAIT)
        await pilot.pause()
        [notice] = notices(app)
        assert "Browser review ended (the review screen closed)" in notice
        assert page.review.url in notice
