"""The "add to the plan" answer (issue 24 part 4): an unplanned file joins the approved plan.

Real runtime, tools, gates and plan store; only the model and the person are scripted.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.controller import Mode
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, Decision, Review
from planshell.plan.scope import plan_scope
from planshell.runtime import Runtime, build_runtime
from tests.engine_helpers import ScriptedDecider, saved_plan_path, write_and_review

PLAN = """# Plan: Rate limits

## Steps

- [ ] Create `src/app/limits.py` with a token bucket

## Verification

```sh
make test
```
"""
ADD = ApprovalDecision(ApprovalChoice.ADD_TO_PLAN)
NOW = datetime(2026, 12, 2, 3, 40, tzinfo=UTC)


def approve(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


def write(path: str, content: str) -> Reply:
    return Reply(calls=[("write", {"path": path, "content": content})])


def _runtime(
    project: Path, replies: list, mode: str = "accept-edits", approvals=()
) -> tuple[Runtime, ScriptedDecider]:
    decider = ScriptedDecider([approve], approvals=approvals)
    provider = ScriptedProvider([*write_and_review("Rate limits", PLAN), *replies])
    settings = Settings.model_validate({"plan": {"sandbox": "off"}, "permissions": {"mode": mode}})
    runtime = build_runtime(settings, project, decider, provider=provider)
    runtime.plan.clock = lambda: NOW
    runtime.plan.enter_plan()
    return runtime, decider


async def test_add_to_the_plan_allows_the_call_and_later_edits_no_longer_ask(
    project: Path,
) -> None:
    runtime, decider = _runtime(
        project,
        [
            write("README.md", "first\n"),
            write("README.md", "second\n"),
            Reply(calls=[("set_plan_steps", {"updates": [{"step": 1, "status": "done"}]})]),
            Reply("ok"),
        ],
        approvals=[ADD],
    )
    await runtime.agent.submit("add rate limits")
    assert (project / "README.md").read_text() == "second\n"
    [asked] = decider.approval_requests  # the second write did not ask
    assert asked.path == "README.md" and asked.add_to_plan
    assert "add to the plan" in asked.why
    plan = runtime.plan
    assert plan.mode is Mode.EXECUTE and plan.plan_path is not None and plan.approval is not None
    on_disk = plan.plan_path.read_text()
    assert on_disk == plan.approval.text  # the approval is bound to the amended revision
    assert on_disk.endswith(
        "## Amendments\n\n"
        "- 2026-12-02 03:40 UTC — added to the plan's scope: `README.md` (added by the user)\n"
    )
    assert "- [x] Create `src/app/limits.py`" in on_disk  # a later tick still works
    assert plan_scope(plan.approval.text).covers("README.md")
    saved = json.loads(plan.store.run_path(plan.plan_path).read_text())
    assert [(a["kind"], a["path"]) for a in saved["amendments"]] == [("scope", "README.md")]
    log = [json.loads(line) for line in runtime.agent.session.path.read_text().splitlines()]
    assert [e["by"] for e in log if e.get("type") == "permission" and e["tool"] == "write"] == [
        "user:add_to_plan",
        "mode",
    ]


async def test_the_answer_is_not_offered_in_ask_mode_and_counts_as_once_there(
    project: Path,
) -> None:
    runtime, decider = _runtime(
        project,
        [write("README.md", "first\n"), write("README.md", "second\n"), Reply("ok")],
        "ask",
        approvals=[ADD, ApprovalDecision(ApprovalChoice.DENY)],
    )
    await runtime.agent.submit("add rate limits")
    first, second = decider.approval_requests
    assert not first.add_to_plan and not second.add_to_plan
    assert (project / "README.md").read_text() == "first\n"  # allowed once, then denied
    assert runtime.plan.plan_path is not None
    assert runtime.plan.plan_path.read_text() == PLAN  # the plan was not amended


async def test_the_plan_file_itself_is_never_offered_for_the_plan(project: Path) -> None:
    """A model that writes its own plan file cannot get the plan's files into the scope."""

    def widen(request) -> Reply:
        return write(saved_plan_path(request), PLAN + "\n- [ ] `src/evil.py`\n")

    runtime, decider = _runtime(
        project, [widen, Reply("ok")], approvals=[ApprovalDecision(ApprovalChoice.DENY)]
    )
    await runtime.agent.submit("add rate limits")
    [asked] = decider.approval_requests
    assert asked.path.startswith(".planshell/plans/") and not asked.add_to_plan
    assert "add to the plan" not in asked.why
    assert runtime.plan.add_to_plan(asked.path) is not None  # refused by the engine too
    assert runtime.plan.plan_path is not None and runtime.plan.plan_path.read_text() == PLAN


async def test_add_to_plan_does_nothing_outside_execution(project: Path) -> None:
    runtime, _ = _runtime(project, [])
    assert runtime.plan.mode is Mode.PLAN
    in_plan = runtime.plan.add_to_plan("README.md") or ""
    assert "works only while an approved plan executes" in in_plan
    runtime.plan.leave()
    assert "no approved plan" in (runtime.plan.add_to_plan("README.md") or "")
