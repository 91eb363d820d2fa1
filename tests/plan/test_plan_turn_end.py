"""A plan-mode turn that ends without a plan says so; headless exits 4."""

from __future__ import annotations

import io
import re
from pathlib import Path

from planshell.agent import events as ev
from planshell.config import load_settings
from planshell.headless import EXIT_AWAITING_APPROVAL, EXIT_NO_PLAN, EXIT_OK, run_print
from planshell.llm.scripted import Reply, ReplySource, Request, ScriptedProvider
from planshell.plan.decider import HeadlessDecider
from planshell.plan.turns import NO_PLAN_NOTICE
from planshell.runtime import Runtime, build_runtime

PLAN = "# Plan: tidy\n\n## Steps\n\n1. [ ] Tidy the readme\n"


def runtime_for(
    root: Path, replies: list[ReplySource], *, plan: bool
) -> tuple[Runtime, HeadlessDecider]:
    decider = HeadlessDecider()
    settings = load_settings(root)
    # No guard-only notice in -v's lines, whether or not this machine has bubblewrap.
    settings.plan.sandbox = "off"
    runtime = build_runtime(
        settings,
        root,
        decider,
        provider=ScriptedProvider(list(replies)),
        persist=False,
        plan=plan,
    )
    return runtime, decider


async def headless(root: Path, replies: list[ReplySource], *, plan: bool) -> tuple[int, str, str]:
    runtime, decider = runtime_for(root, replies, plan=plan)
    out, err = io.StringIO(), io.StringIO()
    code = await run_print(runtime, decider, "tidy up", verbose=True, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def test_plan_turn_without_a_plan_exits_4_with_a_stderr_line(tmp_path: Path) -> None:
    code, out, err = await headless(tmp_path, [Reply(text="You could tidy the readme.")], plan=True)
    assert code == EXIT_NO_PLAN and code not in (0, 3)
    assert "You could tidy the readme." in out
    assert f"warning: {NO_PLAN_NOTICE}" in err
    assert err.splitlines()[2] == "mode: plan"  # -v shows the mode from the start


async def test_plan_turn_with_a_plan_still_awaits_approval(tmp_path: Path) -> None:
    def exit_with_written_plan(request: Request) -> Reply:
        written = re.search(r"\.planshell/plans/\S+?\.md", request.messages[-1].content)
        assert written is not None, request.messages[-1].content
        return Reply(calls=[("exit_plan_mode", {"plan_path": written.group(0)})])

    replies: list[ReplySource] = [
        Reply(calls=[("write_plan", {"title": "tidy", "content": PLAN})]),
        exit_with_written_plan,
        Reply(text="Plan ready."),
    ]
    code, _, err = await headless(tmp_path, replies, plan=True)
    assert code == EXIT_AWAITING_APPROVAL, err
    assert NO_PLAN_NOTICE not in err


async def test_normal_mode_prose_is_success(tmp_path: Path) -> None:
    code, _, err = await headless(tmp_path, [Reply(text="Hello.")], plan=False)
    assert code == EXIT_OK and NO_PLAN_NOTICE not in err
    assert "mode: off" in err


async def test_notice_is_emitted_once_per_turn_and_not_after_an_error(tmp_path: Path) -> None:
    from planshell.llm.types import ProviderError

    runtime, _ = runtime_for(
        tmp_path,
        [Reply(text="prose"), Reply(error=ProviderError("boom")), Reply(text="more prose")],
        plan=True,
    )
    notices: list[str] = []
    runtime.agent.subscribe(
        lambda e: notices.append(e.message) if isinstance(e, ev.Notice) else None
    )
    await runtime.agent.submit("one")
    await runtime.agent.submit("two")  # fails: the error says so, no notice
    await runtime.agent.retry()  # a retried turn is watched too
    runtime.close()
    assert notices.count(NO_PLAN_NOTICE) == 2
