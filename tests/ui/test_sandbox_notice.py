"""Guard only, no sandbox: the user is told once per session and the marker keeps saying it.

Bubblewrap's absence is simulated the way the other sandbox tests do it, by
replacing ``bwrap.find_bwrap``.
"""

from __future__ import annotations

import io

import pytest

from planshell.agent import events as ev
from planshell.config import Settings
from planshell.headless import run_print
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.decider import HeadlessDecider
from planshell.runtime import build_runtime
from planshell.sandbox import bwrap
from tests.engine_helpers import make_runtime
from tests.sandbox_helpers import needs_bwrap
from tests.ui.plan_helpers import SIZE, make_app, toasts
from tests.ui_helpers import ready, until

GUARD_ONLY = "Plan mode runs shell commands with the bash guard only, no sandbox"


def auto() -> Settings:
    return Settings.model_validate({"plan": {"sandbox": "auto"}})


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: None)


def warnings(recorder) -> list[str]:
    return [e.message for e in recorder.of(ev.Notice) if e.level == "warning"]


def test_one_notice_per_session(project, no_bwrap):
    runtime, _, _, recorder = make_runtime(project, settings=auto())
    runtime.plan.enter_plan()
    [notice] = warnings(recorder)
    assert notice.startswith(GUARD_ONLY)
    assert "bubblewrap (bwrap) is not installed" in notice and "apt install bubblewrap" in notice
    runtime.plan.leave()
    runtime.plan.enter_plan()
    assert len(warnings(recorder)) == 1
    runtime.close()


@pytest.mark.parametrize(
    "mode",
    ["off", pytest.param("auto", marks=[needs_bwrap, pytest.mark.bwrap], id="auto-with-bwrap")],
)
def test_no_notice_when_the_sandbox_runs_or_was_switched_off(project, mode):
    runtime, _, _, recorder = make_runtime(
        project, settings=Settings.model_validate({"plan": {"sandbox": mode}})
    )
    runtime.plan.enter_plan()
    assert warnings(recorder) == []
    runtime.close()


async def _headless(project, *, plan: bool, replies: list) -> str:
    decider = HeadlessDecider()
    runtime = build_runtime(
        auto(), project, decider, provider=ScriptedProvider(replies), persist=False, plan=plan
    )
    out, err = io.StringIO(), io.StringIO()
    await run_print(runtime, decider, "look around", out=out, err=err)
    return err.getvalue()


async def test_headless_prints_the_notice_on_stderr(project, no_bwrap):
    err = await _headless(project, plan=True, replies=[Reply(text="ok")])
    lines = [ln for ln in err.splitlines() if GUARD_ONLY in ln]
    assert len(lines) == 1 and lines[0].startswith("warning: "), err


async def test_headless_prints_a_notice_emitted_during_the_run(project, no_bwrap):
    decider = HeadlessDecider()
    runtime = build_runtime(
        auto(), project, decider, provider=ScriptedProvider([Reply(text="ok")]), persist=False
    )
    err = io.StringIO()
    runtime.agent.prompt_parts.append(lambda: runtime.plan.enter_plan())  # enters mid-run
    await run_print(runtime, decider, "look", out=io.StringIO(), err=err)
    lines = [ln for ln in err.getvalue().splitlines() if GUARD_ONLY in ln]
    assert len(lines) == 1 and lines[0].startswith("warning: " + GUARD_ONLY), err.getvalue()


async def test_marker_says_guard_only_and_the_notice_shows_once(project, no_bwrap):
    app = make_app(project, [], auto())
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("f2")
        marker = screen.status.marker
        await until(pilot, lambda: str(marker.render()) == "⚠ guard only — no sandbox")
        assert marker.display and marker.has_class("-guarded")
        await until(pilot, lambda: any(GUARD_ONLY in t for t in toasts(app)))
        await pilot.press("f2")  # leave
        await until(pilot, lambda: not marker.display)
        await pilot.press("f2")  # and enter again: the marker is back, the notice is not
        await until(
            pilot, lambda: marker.display and str(marker.render()) == "⚠ guard only — no sandbox"
        )
        assert sum(GUARD_ONLY in t for t in toasts(app)) == 1
