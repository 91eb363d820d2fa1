"""Plan lint chips, the `l` list, approve-with-errors and the blast-radius card (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, OptionList, Static

from planshell.plan.blast_radius import blast_radius
from planshell.plan.decider import Decision, ReviewRequest
from planshell.plan.lint import lint_plan
from planshell.ui.screens.approve_mode import ApproveModeScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.plan_lint import PlanLintScreen
from planshell.ui.screens.review import ReviewScreen
from tests.plan.blast_helpers import read_only_or_ask, scoped_repo
from tests.ui.review_helpers import ReviewHost, request_for
from tests.ui_helpers import screen_text

PLAN = """# Plan: Cache the widget list

## Context
`src/app/server.py` serves widgets.

## Steps
- [ ] In `src/app/server.py`, wrap `list_widgets` in an LRU cache
- [ ] Create `src/app/cache.py` with the settings
- [ ] Improve performance

## Verification
```sh
git status
make test
```
"""
NO_CHECKS = PLAN.split("## Verification")[0]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return scoped_repo(tmp_path)


def host(text: str, root: Path | None = None, **request: object) -> ReviewHost:
    return ReviewHost(
        request_for(
            text,
            lint=lint_plan(text, root),
            relint=lambda edited: lint_plan(edited, root),
            **request,
        )
    )


def chips(app: ReviewHost) -> list[tuple[str, set[str]]]:
    assert app.review_screen is not None
    return [
        (str(chip.render()).strip(), set(chip.classes))
        for chip in app.review_screen.query(".lint-chip").results(Static)
    ]


async def test_a_plan_without_verification_shows_an_error_chip() -> None:
    app = host(NO_CHECKS)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        shown = chips(app)
        assert ("no Verification", {"lint-chip", "-error"}) in shown
        assert ("vague step", {"lint-chip", "-warning"}) in shown
        assert "no Verification" in screen_text(app)
        assert app.review_screen is not None
        assert app.review_screen.query_one("#lint-chips").display


async def test_a_clean_plan_shows_no_chips(repo: Path) -> None:
    text = PLAN.replace("- [ ] Improve performance\n", "")
    app = host(text, repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert chips(app) == []
        assert app.review_screen is not None
        assert not app.review_screen.query_one("#lint-chips").display


async def test_l_lists_the_findings_and_closes() -> None:
    app = host(NO_CHECKS)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, PlanLintScreen)
        text = screen_text(app)
        assert "Plan lint: 1 error · 1 warning" in text
        assert "no Verification section" in text and "step 3 is too vague" in text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.results == []


async def test_approving_with_errors_asks_with_the_safe_choice_focused() -> None:
    app = host(NO_CHECKS)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "1 lint error" in screen_text(app)
        focused = app.focused
        assert isinstance(focused, Button) and focused.id == "no"
        await pilot.press("escape")  # Esc approves nothing
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.results == []
        await pilot.press("a", "enter")  # Enter on the focused "Back to the plan"
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.results == []
        await pilot.press("a", "y")  # an explicit yes goes on to how it runs
        await pilot.pause()
        assert isinstance(app.screen, ApproveModeScreen)
        await pilot.press("1")
        await pilot.pause()
    [review] = app.results
    assert review is not None and review.decision is Decision.APPROVE


async def test_warnings_alone_do_not_ask(repo: Path) -> None:
    app = host(PLAN, repo)  # only the vague step: a warning
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ApproveModeScreen)


async def test_the_persons_edit_is_linted_again() -> None:
    app = host(NO_CHECKS)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.review_screen is not None
        app.review_screen.apply_edit(PLAN.replace("- [ ] Improve performance\n", ""))
        await pilot.pause()
        assert chips(app) == []
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ApproveModeScreen)  # no error left: no question


async def test_the_blast_card_shows_scope_files_sizes_and_commands_per_mode(repo: Path) -> None:
    blast = blast_radius(PLAN, repo, check=read_only_or_ask)
    app = host(PLAN, repo, blast=blast, allow_auto=True)
    async with app.run_test(size=(110, 44)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ApproveModeScreen)
        card = str(app.screen.query_one("#blast", Static).render())
        assert "src/app/server.py  700 B" in card
        assert "src/app/cache.py  new" in card
        assert "Commands that will ask in this mode: 1 of 2" in card
        assert "$ make test" in card and "git status" not in card
        assert "Estimate" in card and "tokens" in card
        options = app.screen.query_one("#choices", OptionList)
        options.highlighted = 2  # auto
        await pilot.pause()
        card = str(app.screen.query_one("#blast", Static).render())
        assert "all 2 run without asking in this mode" in card
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == []


async def test_a_hostile_symlink_is_shown_outside_and_not_sized(repo: Path) -> None:
    (repo / "src" / "app" / "server.py").unlink()
    (repo / "src" / "app" / "server.py").symlink_to("/etc/passwd")
    text = PLAN.replace("- [ ] Improve performance\n", "")
    blast = blast_radius(text, repo, check=read_only_or_ask)
    app = host(text, repo, blast=blast)
    async with app.run_test(size=(110, 44)) as pilot:
        assert ("path outside project", {"lint-chip", "-error"}) in chips(app)
        await pilot.press("a", "y")
        await pilot.pause()
        assert isinstance(app.screen, ApproveModeScreen)
        card = str(app.screen.query_one("#blast", Static).render())
        assert "src/app/server.py  outside the project (a symlink): not read" in card
        assert " B\n" not in card.split("Commands")[0]  # no size shown for any file


def test_planshell_review_lints_in_the_plans_project(tmp_path: Path) -> None:
    from planshell.ui.review_app import plan_project

    plans = tmp_path / "proj" / ".planshell" / "plans"
    plans.mkdir(parents=True)
    assert plan_project(plans / "x.md") == (tmp_path / "proj").resolve()
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "docs").mkdir()
    assert plan_project(tmp_path / "repo" / "docs" / "x.md") == (tmp_path / "repo").resolve()
    assert plan_project(tmp_path / "loose.md") is None  # no project: paths are not checked


async def test_approve_in_the_browser_also_asks_while_errors_remain(tmp_path: Path) -> None:
    import asyncio
    from types import SimpleNamespace

    from textual.app import App

    from planshell.plan.store import PlanStore
    from planshell.review_web.server import BrowserReview
    from planshell.ui.screens.results import push_answering
    from tests.review_web_helpers import Served

    class Host(App[None]):
        def __init__(self) -> None:
            super().__init__()
            store = PlanStore(tmp_path)
            store.ensure_dir()
            self.path = store.write(store.plans_dir / "cache.md", NO_CHECKS)
            self.runtime = SimpleNamespace(store=store)
            self.results: list[object] = []

        def on_mount(self) -> None:
            request = ReviewRequest(
                self.path, NO_CHECKS, "Cache the widget list", lint=lint_plan(NO_CHECKS)
            )
            self.review_screen = ReviewScreen(request)
            push_answering(self, self.review_screen, self.results.append)

    app = Host()
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("w")
        review = app.review_screen.browser.review
        assert isinstance(review, BrowserReview)
        page = Served(review, app.runtime.store, app.path)
        status, _ = await asyncio.to_thread(
            page.post, "api/approve", {"version": page.page_version()}
        )
        assert status == 200
        for _ in range(200):
            if isinstance(app.screen, ConfirmScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, ConfirmScreen) and app.results == []
        await pilot.press("y")
        await pilot.pause()
        assert [getattr(r, "decision", None) for r in app.results] == [Decision.APPROVE]
