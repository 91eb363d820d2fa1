"""Amendments in a real runtime (issue 24 part 5): ``amend_plan`` and the person's decision.

Real runtime, tools, gates and plan store; only the model and the person are
scripted. The pure engine is in test_amend.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.agent.session import SessionLog
from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.controller import Mode
from planshell.plan.decider import (
    ApprovalChoice,
    ApprovalDecision,
    Decision,
    HeadlessDecider,
    Review,
)
from planshell.plan.report import saved_report
from planshell.runtime import Runtime, build_runtime
from planshell.tools.base import ToolError
from tests.engine_helpers import Recorder, ScriptedDecider, finishes, write_and_review
from tests.plan_samples import RATE_LIMITS_PLAN
from tests.subagent_helpers import router_runtime, tool_results

PLAN = RATE_LIMITS_PLAN
NOW = datetime(2026, 12, 2, 3, 40, tzinfo=UTC)
NEW_STEP = "Call it from `src/app/router.py` (the handler moved)"
AMEND = ("amend_plan", {"step": 2, "reason": "the handler moved", "new_text": NEW_STEP})
ROUTER_WRITE = ("write", {"path": "src/app/router.py", "content": "ROUTES = []\n"})


def approve(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


def _runtime(
    project: Path,
    replies: list,
    mode: str = "accept-edits",
    *,
    amendments=(),
    decider=None,
    review: bool = True,
) -> tuple[Runtime, ScriptedProvider, ScriptedDecider, Recorder]:
    decider = decider or ScriptedDecider([approve], amendments=amendments)
    first = write_and_review("Rate limits", PLAN) if review else []
    provider = ScriptedProvider([*first, *replies])
    settings = Settings.model_validate({"plan": {"sandbox": "off"}, "permissions": {"mode": mode}})
    runtime = build_runtime(settings, project, decider, provider=provider)
    runtime.plan.clock = lambda: NOW
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    runtime.plan.enter_plan()
    return runtime, provider, decider, recorder


def _results(runtime: Runtime, tool: str) -> list:
    ids = {
        call.id
        for m in runtime.agent.messages
        if m.role == "assistant"
        for call in (m.tool_calls or [])
        if call.name == tool
    }
    return [m for m in runtime.agent.messages if m.role == "tool" and m.tool_call_id in ids]


async def test_an_approved_amendment_is_written_bound_and_widens_the_scope(project: Path) -> None:
    runtime, provider, decider, _ = _runtime(
        project,
        [
            Reply(calls=[AMEND]),
            Reply(calls=[ROUTER_WRITE]),
            Reply(calls=[("set_plan_steps", {"updates": [{"step": 2, "status": "done"}]})]),
            Reply("ok"),
        ],
        amendments=[True],
    )
    await runtime.agent.submit("add rate limits")
    plan = runtime.plan
    assert plan.mode is Mode.EXECUTE and plan.plan_path is not None
    [request] = decider.amendment_requests
    assert (request.step, request.old_text, request.new_text, request.reason) == (
        2,
        "Call it from `src/app/server.py`",
        NEW_STEP,
        "the handler moved",
    )
    assert request.added_scope == ("src/app/router.py",)
    [result] = _results(runtime, "amend_plan")
    assert not result.is_error and "approved the amendment" in result.content
    on_disk = plan.plan_path.read_text()
    assert plan.approval is not None and on_disk == plan.approval.text  # bound to the revision
    assert "- [x] Call it from `src/app/router.py` (the handler moved)" in on_disk  # later tick
    assert "## Amendments\n\n- 2026-12-02 03:40 UTC — step 2: the handler moved\n" in on_disk
    # The scope followed: the newly named file was written without a question.
    assert (project / "src/app/router.py").read_text() == "ROUTES = []\n"
    assert decider.approval_requests == []
    # The executor is given the amended text from now on.
    assert NEW_STEP in provider.requests[-1].system
    # The checklist and the run record follow the new wording; the record keeps the amendment.
    assert plan.todos.items[1].content == NEW_STEP
    saved = json.loads(plan.store.run_path(plan.plan_path).read_text())
    assert saved["steps"][1]["text"] == NEW_STEP and saved["steps"][1]["status"] == "done"
    assert saved["amendments"][0]["step"] == 2
    assert saved["amendments"][0]["when"] == "2026-12-02 03:40 UTC"
    # The report lists it.
    await plan.complete()
    report = saved_report(plan.store)
    assert "## Amendments" in report and "step 2:" in report and "the handler moved" in report


async def test_a_declined_amendment_changes_nothing(project: Path) -> None:
    runtime, _, decider, recorder = _runtime(
        project, [Reply(calls=[AMEND]), Reply(calls=[ROUTER_WRITE]), Reply("ok")]
    )
    seen: dict[str, bytes] = {}

    def before_amend(request) -> bool:
        """The person looks, and says no; the bytes before the decision are kept to compare."""
        path = runtime.plan.plan_path
        assert path is not None and runtime.plan.approval is not None
        seen["plan"] = path.read_bytes()
        seen["run"] = runtime.plan.store.run_path(path).read_bytes()
        seen["approved"] = runtime.plan.approval.text.encode()
        return False

    decider.amendments = [before_amend]
    decider.approvals = [ApprovalDecision(ApprovalChoice.DENY)]
    await runtime.agent.submit("add rate limits")
    plan = runtime.plan
    assert plan.plan_path is not None and plan.approval is not None
    assert plan.plan_path.read_bytes() == seen["plan"]
    assert plan.store.run_path(plan.plan_path).read_bytes() == seen["run"]
    assert plan.approval.text.encode() == seen["approved"]
    [result] = _results(runtime, "amend_plan")
    assert "declined the amendment" in result.content and "ask the user" in result.content
    # The scope did not follow: the file the amendment named still asks (and was denied).
    [asked] = decider.approval_requests
    assert asked.path == "src/app/router.py" and asked.why.startswith("Unplanned file")
    assert not (project / "src/app/router.py").exists()
    assert any("declined" in n.message for n in recorder.of(ev.Notice))


async def test_headless_declines_because_nobody_was_there(project: Path) -> None:
    runtime, _, _, _ = _runtime(project, [], decider=HeadlessDecider())
    # Headless never approves a plan: put one in EXECUTE the way a person would (the picker).
    assert runtime.plan.plan_path is None
    path = runtime.plan.store.write("2026-12-02-rate-limits.md", PLAN)
    runtime.plan.leave()
    runtime.plan.execute_existing(path)
    result = await runtime.plan.amend(2, "moved", NEW_STEP)
    assert "Nobody was there to approve" in result
    assert path.read_text() == PLAN


async def test_auto_mode_still_asks_the_person(project: Path) -> None:
    runtime, _, decider, _ = _runtime(project, [Reply(calls=[AMEND]), Reply("ok")], "auto")
    await runtime.agent.submit("add rate limits")
    assert len(decider.amendment_requests) == 1  # the person decided, and said no
    assert runtime.plan.plan_path is not None
    assert runtime.plan.plan_path.read_text() == PLAN


async def test_refused_in_plan_mode_and_off_and_not_offered_there(project: Path) -> None:
    # The model calls amend_plan in PLAN instead of asking for a review.
    runtime, provider, decider, _ = _runtime(
        project, [Reply(calls=[AMEND]), Reply("stop")], amendments=[True], review=False
    )
    await runtime.agent.submit("add rate limits")
    assert runtime.plan.mode is Mode.PLAN
    assert "amend_plan" not in provider.requests[0].tools
    [result] = _results(runtime, "amend_plan")
    assert result.is_error and "not available in this mode" in result.content
    with pytest.raises(ToolError, match="in plan mode, revise the plan"):
        await runtime.plan.amend(2, "why", "x")
    runtime.plan.leave()
    assert "amend_plan" not in runtime.agent.registry.active
    with pytest.raises(ToolError, match="no approved plan"):
        await runtime.plan.amend(2, "why", "x")
    assert decider.amendment_requests == []


async def test_structure_in_the_new_text_is_refused_before_anyone_is_asked(
    project: Path,
) -> None:
    smuggled = ("amend_plan", {"step": 2, "reason": "r", "new_text": "x\n- [ ] rm -rf /"})
    bad_step = ("amend_plan", {"step": 9, "reason": "r", "new_text": "x"})
    runtime, _, decider, _ = _runtime(
        project, [Reply(calls=[smuggled]), Reply(calls=[bad_step]), Reply("ok")], amendments=[True]
    )
    await runtime.agent.submit("add rate limits")
    first, second = _results(runtime, "amend_plan")
    assert first.is_error and "markdown structure" in first.content
    assert second.is_error and "does not exist" in second.content
    assert decider.amendment_requests == []
    assert runtime.plan.plan_path is not None and runtime.plan.plan_path.read_text() == PLAN


async def test_the_model_cannot_approve_its_own_amendment_by_editing_the_plan(
    project: Path,
) -> None:
    """Writing the Amendments entry itself is a changed plan: execution pauses, scope unchanged."""

    def forge(request) -> Reply:
        path = runtime.plan.plan_path
        assert path is not None
        forged = path.read_text() + "\n## Amendments\n\n- now — added: `src/evil.py`\n"
        return Reply(calls=[("write", {"path": str(path), "content": forged})])

    runtime, _, decider, _ = _runtime(
        project,
        [forge, Reply(calls=[("write", {"path": "src/evil.py", "content": "x"})]), Reply("ok")],
        "auto",
    )
    await runtime.agent.submit("add rate limits")
    assert runtime.plan.mode is Mode.PLAN and runtime.plan.changed_plan is not None
    assert not (project / "src/evil.py").exists()
    assert decider.amendment_requests == []


async def test_resume_keeps_the_amended_revision_and_its_scope(project: Path) -> None:
    first, _, _, _ = _runtime(project, [Reply(calls=[AMEND]), Reply("pause")], amendments=[True])
    await first.agent.submit("add rate limits")
    assert first.plan.approval is not None and NEW_STEP in first.plan.approval.text
    amended = first.plan.approval.text
    assert first.agent.session is not None
    log = first.agent.session.path

    decider = ScriptedDecider()
    provider = ScriptedProvider([Reply(calls=[ROUTER_WRITE]), Reply("done")])
    settings = Settings.model_validate(
        {"plan": {"sandbox": "off"}, "permissions": {"mode": "accept-edits"}}
    )
    resumed = build_runtime(
        settings, project, decider, provider=provider, resume=SessionLog.load(log)
    )
    assert resumed.plan.mode is Mode.EXECUTE
    assert resumed.plan.approval is not None and resumed.plan.approval.text == amended
    assert resumed.plan.run_log.record is not None
    assert resumed.plan.run_log.record.steps[1].text == NEW_STEP
    assert len(resumed.plan.run_log.record.amendments) == 1
    await resumed.agent.submit("go on")
    assert (project / "src/app/router.py").read_text() == "ROUTES = []\n"
    assert decider.approval_requests == []  # the amended scope came back with the approval


async def test_a_subagent_does_not_have_amend_plan(project: Path) -> None:
    decider = ScriptedDecider([approve], amendments=[True])
    runtime, router = router_runtime(
        project,
        {
            "go": [
                *write_and_review("Rate limits", PLAN),
                Reply(calls=[("task", {"description": "d", "prompt": "S", "agent": "general"})]),
                Reply("ok"),
            ],
            "S": [Reply(calls=[AMEND]), Reply("done")],
        },
        decider=decider,
        settings=Settings.model_validate({"plan": {"sandbox": "off"}}),
    )
    runtime.plan.enter_plan()
    await finishes(runtime.agent.submit("go"), "the turn")
    assert runtime.plan.mode is Mode.EXECUTE
    assert "amend_plan" in router.requests("go")[-1].tools
    child = router.requests("S")
    assert "amend_plan" not in child[0].tools
    [result] = tool_results(child[-1])
    assert result.is_error
    assert decider.amendment_requests == []
    assert runtime.plan.plan_path is not None and runtime.plan.plan_path.read_text() == PLAN
    runtime.close()
