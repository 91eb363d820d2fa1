"""Model-authored names and text never reach the terminal raw (issue 10, section 6)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from textual.widgets import Static

from planshell.config import Settings
from planshell.headless import run_print
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.decider import HeadlessDecider
from planshell.plan.store import PlanStore, PlanStoreError
from planshell.runtime import build_runtime
from tests.ui.review_helpers import ReviewHost, request_for

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
PLAN = "# Plan: x\n\n## Steps\n\n- [ ] one\n"

HOSTILE_NAMES = [
    f"a{OSC52}.md",
    "line\nbreak.md",
    "tab\there.md",
    "evil\u202etxt.md",  # right-to-left override
    "zero\u200bwidth.md",
    "tag\U000e0041.md",
    " leading.md",
    "trailing.md ",
    "bell\x07.md",
    "del\x7f.md",
    "c1\x9b31m.md",
    "sep\u2028ar.md",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_store_refuses_unprintable_plan_names(tmp_path: Path, name: str) -> None:
    store = PlanStore(tmp_path)
    with pytest.raises(PlanStoreError, match="printable"):
        store.resolve(name)


@pytest.mark.parametrize(
    "raw", ["{{ plan_name }}", "my plan.md", "plan$(id).md", "p*an.md", "ünïcode.md", "-rf.md"]
)
async def test_write_plan_creates_files_only_under_slug_names(project: Path, raw: str) -> None:
    runtime = build_runtime(
        Settings(),
        project,
        HeadlessDecider(),
        provider=ScriptedProvider(
            [
                Reply(calls=[("write_plan", {"title": "t", "content": PLAN, "plan_path": raw})]),
                Reply(text="ok"),
            ]
        ),
        plan=True,
    )
    await runtime.agent.submit("go")
    result = next(m for m in runtime.agent.messages if m.role == "tool")
    assert result.is_error, result.content
    assert not list((project / ".planshell" / "plans").glob("*.md"))


async def test_write_plan_may_refine_an_existing_plan_a_person_named(project: Path) -> None:
    store = PlanStore(project)
    store.ensure_dir()
    (store.plans_dir / "My Plan.md").write_text(PLAN)
    runtime = build_runtime(
        Settings(),
        project,
        HeadlessDecider(),
        provider=ScriptedProvider(
            [
                Reply(
                    calls=[
                        (
                            "write_plan",
                            {
                                "title": "t",
                                "content": PLAN + "- [ ] two\n",
                                "plan_path": "My Plan.md",
                            },
                        )
                    ]
                ),
                Reply(text="ok"),
            ]
        ),
        plan=True,
    )
    await runtime.agent.submit("go")
    result = next(m for m in runtime.agent.messages if m.role == "tool")
    assert not result.is_error, result.content
    assert "two" in (store.plans_dir / "My Plan.md").read_text()


async def test_headless_output_carries_no_escape_sequences(project: Path) -> None:
    """A hostile title, answer and plan name: stdout and stderr stay plain text."""
    title = f"Evil{OSC52}\u202eTitle\nsecond line"

    def review(request):
        saved = next(
            m.content.split()[2]
            for m in reversed(request.messages)
            if m.content.startswith("Plan saved")
        )
        return Reply(text=f"Done {OSC52}\x1b[2J", calls=[("exit_plan_mode", {"plan_path": saved})])

    decider = HeadlessDecider()
    runtime = build_runtime(
        Settings(),
        project,
        decider,
        provider=ScriptedProvider(
            [
                Reply(
                    calls=[("write_plan", {"title": title, "content": "## Steps\n\n- [ ] one\n"})]
                ),
                review,
                Reply(text="bye\x1b]0;x\x07"),
            ]
        ),
        plan=True,
    )
    out, err = io.StringIO(), io.StringIO()
    code = await run_print(runtime, decider, "go", out=out, err=err, verbose=True)
    assert code == 3
    for stream in (out.getvalue(), err.getvalue()):
        assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
    assert "Plan awaiting approval: .planshell/plans/" in out.getvalue()


async def test_the_review_flags_hidden_characters_with_a_count() -> None:
    text = "# Plan: ok\n\n## Steps\n\n- [ ] run\u200b tests\u202e\n- [ ] ship\U000e0041\n"
    from planshell.sanitize import count_hidden

    app = ReviewHost(request_for(text, hidden=count_hidden(text)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.review_screen is not None
        notice = app.review_screen.query_one("#review-notice", Static)
        assert notice.display
        shown = str(notice.render())
        assert "3 invisible or bidi characters" in shown


async def test_a_clean_plan_has_no_hidden_warning() -> None:
    app = ReviewHost(request_for(PLAN, hidden=0))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.review_screen is not None
        assert not app.review_screen.query_one("#review-notice", Static).display
