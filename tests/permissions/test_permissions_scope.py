"""The plan's scope is a fence (issue 24.4): edits and writes outside it, while the plan executes.

Real runtime, real tools and gates; only the model and the person are scripted.
"""

from __future__ import annotations

import json
from pathlib import Path

from planshell.agent import events as ev
from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.controller import Mode
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, Decision, Review
from planshell.runtime import Runtime, build_runtime
from tests.engine_helpers import Recorder, ScriptedDecider, saved_plan_path, write_and_review
from tests.plan_samples import RATE_LIMITS_PLAN

PLAN = RATE_LIMITS_PLAN
DENY = ApprovalDecision(ApprovalChoice.DENY, "that file is not part of the plan")
OUT_OF_SCOPE = ("write", {"path": "README.md", "content": "rewritten\n"})


def approve(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


def _runtime(
    project: Path, replies: list, mode: str, approvals=()
) -> tuple[Runtime, ScriptedProvider, ScriptedDecider, Recorder]:
    decider = ScriptedDecider([approve], approvals=approvals)
    provider = ScriptedProvider([*write_and_review("Rate limits", PLAN), *replies])
    settings = Settings.model_validate({"plan": {"sandbox": "off"}, "permissions": {"mode": mode}})
    runtime = build_runtime(settings, project, decider, provider=provider)
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    runtime.plan.enter_plan()
    return runtime, provider, decider, recorder


def _tool_results(runtime: Runtime) -> list:
    return [m for m in runtime.agent.messages if m.role == "tool"]


def _log(runtime: Runtime) -> list[dict]:
    assert runtime.agent.session is not None
    lines = runtime.agent.session.path.read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_in_scope_edits_and_new_files_run_without_a_question(project: Path) -> None:
    runtime, _, decider, recorder = _runtime(
        project,
        [
            Reply(calls=[("write", {"path": "src/app/limits.py", "content": "BUCKET = 10\n"})]),
            Reply(calls=[("write", {"path": "./src/app/server.py", "content": "import limits\n"})]),
            Reply("done"),
        ],
        "accept-edits",
    )
    await runtime.agent.submit("add rate limits")
    assert runtime.plan.mode is Mode.EXECUTE
    assert (project / "src/app/limits.py").read_text() == "BUCKET = 10\n"
    assert (project / "src/app/server.py").read_text() == "import limits\n"
    assert decider.approval_requests == []
    assert not [n for n in recorder.of(ev.Notice) if "Unplanned" in n.message]


async def test_an_out_of_scope_write_asks_in_accept_edits_and_a_no_leaves_the_file(
    project: Path,
) -> None:
    before = (project / "README.md").read_text()
    runtime, _, decider, _ = _runtime(
        project, [Reply(calls=[OUT_OF_SCOPE]), Reply("ok")], "accept-edits", approvals=[DENY]
    )
    await runtime.agent.submit("add rate limits")
    assert (project / "README.md").read_text() == before
    [request] = decider.approval_requests
    assert request.path == "README.md" and request.kind == "write"
    assert request.why.startswith("Unplanned file README.md — allow once / add to the plan / deny")
    assert request.add_to_plan
    assert request.session_rules == () and request.project_rules == ()  # once or no: no rule
    result = _tool_results(runtime)[-1]
    assert result.is_error and "that file is not part of the plan" in result.content
    denied = [e for e in _log(runtime) if e.get("type") == "permission" and e["tool"] == "write"]
    assert denied[-1]["decision"] == "deny"


async def test_allow_once_writes_the_unplanned_file_and_asks_again_next_time(
    project: Path,
) -> None:
    runtime, _, decider, _ = _runtime(
        project,
        [
            Reply(calls=[OUT_OF_SCOPE]),
            Reply(calls=[("write", {"path": "README.md", "content": "again\n"})]),
            Reply("ok"),
        ],
        "accept-edits",
        approvals=[ApprovalDecision(ApprovalChoice.ONCE), DENY],
    )
    await runtime.agent.submit("add rate limits")
    assert (project / "README.md").read_text() == "rewritten\n"
    assert len(decider.approval_requests) == 2


async def test_auto_mode_runs_an_out_of_scope_write_and_flags_it(project: Path) -> None:
    runtime, _, decider, recorder = _runtime(
        project, [Reply(calls=[OUT_OF_SCOPE]), Reply("ok")], "auto"
    )
    await runtime.agent.submit("add rate limits")
    assert (project / "README.md").read_text() == "rewritten\n"
    assert decider.approval_requests == []
    [flag] = [n for n in recorder.of(ev.Notice) if "Unplanned file README.md" in n.message]
    assert flag.level == "warning"
    allowed = [e for e in _log(runtime) if e.get("type") == "permission" and e["tool"] == "write"]
    assert allowed[-1]["decision"] == "allow"
    assert allowed[-1]["reason"] == "outside the approved plan's scope: README.md"


async def test_ask_mode_asks_as_it_always_did(project: Path) -> None:
    runtime, _, decider, _ = _runtime(
        project,
        [
            Reply(calls=[("write", {"path": "src/app/limits.py", "content": "x\n"})]),
            Reply(calls=[OUT_OF_SCOPE]),
            Reply("ok"),
        ],
        "ask",
    )
    await runtime.agent.submit("add rate limits")
    assert [r.path for r in decider.approval_requests] == ["src/app/limits.py", "README.md"]
    assert all("Unplanned" not in r.why for r in decider.approval_requests)
    assert decider.approval_requests[1].session_rules == ("write",)


async def test_no_fence_outside_execute(project: Path) -> None:
    settings = Settings.model_validate({"permissions": {"mode": "accept-edits"}})
    runtime = build_runtime(
        settings,
        project,
        ScriptedDecider(),
        provider=ScriptedProvider([Reply(calls=[OUT_OF_SCOPE]), Reply("ok")]),
    )
    await runtime.agent.submit("rewrite the readme")
    assert (project / "README.md").read_text() == "rewritten\n"


def _write_verdict(runtime: Runtime, path: str) -> str:
    assert runtime.permissions is not None
    tool = runtime.registry.get("write")
    assert tool is not None
    verdict = runtime.permissions.evaluate(
        tool, tool.Args.model_validate({"path": path, "content": "x"})
    )
    return verdict.action


async def test_widening_the_plan_file_on_disk_does_not_widen_the_fence(project: Path) -> None:
    """The scope comes from the approval record: a plan file changed after approval is ignored."""
    runtime, _, _, _ = _runtime(project, [Reply("approved")], "accept-edits")
    await runtime.agent.submit("add rate limits")
    assert runtime.plan.mode is Mode.EXECUTE and runtime.plan.plan_path is not None
    assert _write_verdict(runtime, "src/evil.py") == "ask"
    plan = runtime.plan.plan_path
    plan.write_text(plan.read_text().replace("## Steps\n", "## Steps\n\n- [ ] `src/evil.py`\n"))
    assert _write_verdict(runtime, "src/evil.py") == "ask"
    assert _write_verdict(runtime, "src/app/limits.py") == "allow"


async def test_the_model_adding_a_path_to_its_plan_cannot_then_write_it(project: Path) -> None:
    """The model edits the plan file (a person lets that edit run), then writes the new path."""

    def widen(request) -> Reply:
        return Reply(
            calls=[
                (
                    "edit",
                    {
                        "path": saved_plan_path(request),
                        "old_string": "## Steps\n",
                        "new_string": "## Steps\n\n- [ ] Also `src/evil.py`\n",
                    },
                ),
                ("write", {"path": "src/evil.py", "content": "pwned\n"}),
            ]
        )

    runtime, _, decider, _ = _runtime(
        project,
        [widen, Reply("ok")],
        "accept-edits",
        approvals=[ApprovalDecision(ApprovalChoice.ONCE), DENY],
    )
    await runtime.agent.submit("add rate limits")
    assert not (project / "src/evil.py").exists()
    # The plan file edit was itself unplanned, so it asked; the person let it run.
    [asked] = decider.approval_requests
    assert asked.why.startswith("Unplanned file .planshell/plans/")
    # The changed plan pauses execution before the write; the gate-level test above shows the
    # fence itself would still ask (it reads the approved text, not the file).
    refused = _tool_results(runtime)[-1]
    assert refused.is_error and "execution is paused" in refused.content
