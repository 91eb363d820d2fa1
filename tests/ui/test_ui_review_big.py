"""A 100k-line plan in the review screen (issue 28.4): what is deferred still arrives.

The first frame no longer waits for the O(plan) work (the revision diff, lint in
``planshell review``, the unshown-lines check); these tests check that each of
them still reaches the screen, and that ``n`` reaches the very last heading.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from planshell.plan.lint import lint_plan
from planshell.ui.review_app import review_app_for
from planshell.ui.screens.review import ReviewScreen
from planshell.ui.widgets.plan_view import PlanView
from tests.engine_helpers import HANG_GUARD
from tests.fresh_python import fresh_python
from tests.ui.review_helpers import ReviewHost, make_plan, request_for
from tests.ui_helpers import until

HUGE = make_plan(100_000)
SLOW_GUARD = 4 * HANG_GUARD  # the check of a 100k-line plan under a busy CI (see below)


def top_row(view: PlanView) -> str:
    return view.render_line(0).text.rstrip()[2:]


async def test_n_visits_every_heading_while_the_layout_is_still_deferred() -> None:
    # 5,000 lines: big enough that the first frame comes before the layout (the same
    # estimated-offsets path as 100k), small enough to walk every heading in well under a
    # second. Walking 100k lines renders all of them (~15 s of CPU here, over the CI's
    # per-test limit on a loaded machine).
    app = ReviewHost(request_for(make_plan(5_000)))
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.review_screen is not None
        view = app.review_screen.query_one(PlanView)
        assert not view.layout_complete
        await pilot.press("n")
        assert top_row(view) == view.sections[1].title
        visited = [view.current_section()]
        while view.next_heading():  # the widget's own step, once per heading
            visited.append(view.current_section())
            assert top_row(view) == view.sections[visited[-1]].title
        assert visited == [i for i, section in enumerate(view.sections) if section.level][1:]


@pytest.mark.timeout(SLOW_GUARD + HANG_GUARD)
async def test_n_reaches_the_last_heading_of_a_100k_line_plan() -> None:
    app = ReviewHost(request_for(HUGE))
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.review_screen is not None
        view = app.review_screen.query_one(PlanView)
        await pilot.press("n")
        assert top_row(view) == view.sections[1].title
        headings = [i for i, section in enumerate(view.sections) if section.level]
        last, before_last = headings[-1], headings[-2]
        # Reaching the end measures every section above it (heights only).
        view.jump_to_section(before_last)
        assert top_row(view) == view.sections[before_last].title
        await pilot.press("n")
        assert view.current_section() == last
        assert top_row(view) == view.sections[last].title
        await pilot.press("p", "n")
        assert top_row(view) == view.sections[last].title
        await pilot.press("n")  # nothing after the last heading: it stays
        assert top_row(view) == view.sections[last].title
        # The unshown-lines check started after the first frame still reports. It is ~5 s of
        # CPU at 100k lines, in 2 ms slices between timer ticks: on a loaded 2-core machine
        # with four test workers that outlasted the default hang guard (not a speed budget).
        await until(pilot, lambda: view.unshown is not None, timeout=SLOW_GUARD)
        assert view.unshown == ()


async def test_a_long_revision_diff_arrives_after_the_first_frame() -> None:
    previous = make_plan(4_000)  # over the size diffed before the first frame
    text = previous.replace("## Phase 7: change module 7", "## Phase 7: change module seven")
    app = ReviewHost(request_for(text, previous_text=previous))
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.review_screen is not None
        view = app.review_screen.query_one(PlanView)
        await app.workers.wait_for_complete()
        await until(pilot, lambda: not view.diff.empty)
        assert view.diff.places == 1
        await pilot.press("d")
        assert view.diff_shown


@pytest.mark.parametrize("lines", [60, 3_000])
async def test_planshell_review_lints_after_the_first_frame(tmp_path: Path, lines: int) -> None:
    path = tmp_path / "plan.md"
    path.write_text(make_plan(lines))  # no Verification section: lint has a finding
    assert lint_plan(path.read_text(), None)
    app = review_app_for(path)
    assert app.request.lint == ()  # nothing linted before the first frame
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await until(pilot, lambda: bool(screen.query(".lint-chip")))
        assert screen.query_one("#lint-chips").display
        shown = [str(chip.render()) for chip in screen.query(".lint-chip").results(Static)]
        assert shown and shown[-1].strip() == "l lists them"


def test_the_first_frame_of_planshell_review_loads_no_lint_engine_or_web_server(
    tmp_path: Path,
) -> None:
    """What ``planshell review`` needs before its first frame: not the lint (and through it
    the report, scope and tool modules, pydantic), the browser review's server or the chat
    app. Lint is switched off here so its thread cannot load them meanwhile."""
    path = tmp_path / "plan.md"
    path.write_text(make_plan(60))
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "import planshell.cli\n"
        "from planshell.ui.review_app import review_app_for\n"
        f"app = review_app_for(Path({str(path)!r}))\n"
        "app.lint_later = False\n"
        "async def first_frame():\n"
        "    async with app.run_test(size=(120, 40)) as pilot:\n"
        "        await pilot.pause()\n"
        "        assert type(app.screen).__name__ == 'ReviewScreen', app.screen\n"
        "asyncio.run(first_frame())\n"
        "heavy = ('pydantic', 'planshell.plan.lint', 'planshell.plan.report',\n"
        "         'planshell.tools.base', 'planshell.review_web.server', 'planshell.ui.app',\n"
        "         'planshell.config', 'webbrowser')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    assert fresh_python(code).strip() == "[]"
