"""A plan is resumable (issue 24 part 7): ``--continue`` mid-execution brings the whole plan back.

Approve with "accept edits in scope", edit a planned file, tick a step, stop; a new runtime
from the session log must be executing the same approved text, with its evidence, its scope
fence and its checkpoint.
"""

from __future__ import annotations

import json

from planshell.agent.session import SessionLog
from planshell.llm.scripted import Reply
from planshell.plan.controller import Mode
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, Decision, Review
from tests.engine_helpers import make_runtime, write_and_review
from tests.plan.checkpoint_helpers import outside_plans

SERVER = "src/app/server.py"
PLAN = f"""# Plan: Rate limit the handler

## Goal

Limit requests.

## Steps

- [ ] Call the limiter from `{SERVER}`
- [ ] Return 429 from `{SERVER}`

## Verification

```sh
grep -q limiter {SERVER}
```
"""
FIRST = ("    # TODO: rate limiting\n", "    limiter.take()\n")
SECOND = ("    return 'widget'\n", "    return 'widget' if limiter.ok else 429\n")
UNPLANNED = "src/app/cache.py"
DENY = ApprovalDecision(ApprovalChoice.DENY, "not in the plan")


def edit(old_new: tuple[str, str]) -> tuple[str, dict]:
    return ("edit", {"path": SERVER, "old_string": old_new[0], "new_string": old_new[1]})


def tick(step: int) -> Reply:
    return Reply(calls=[("set_plan_steps", {"updates": [{"step": step, "status": "done"}]})])


def approve_in_scope(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text, permission_mode="accept-edits")


async def test_continue_mid_execution_brings_back_mode_text_evidence_scope_and_checkpoint(
    project,
):
    before = outside_plans(project)
    first, *_ = make_runtime(
        project,
        [
            *write_and_review("Rate limit", PLAN),
            Reply(calls=[edit(FIRST)]),
            tick(1),
            Reply("pause"),
        ],
        [approve_in_scope],
    )
    first.plan.enter_plan()
    await first.agent.submit("rate limit the handler")
    assert first.plan.mode is Mode.EXECUTE
    assert first.plan.approval is not None
    approved = first.plan.approval.text  # the approved text, step 1 ticked
    assert "- [x] Call the limiter" in approved and "- [ ] Return 429" in approved
    plan_path = first.plan.plan_path
    assert plan_path is not None
    log = first.agent.session.path

    resumed, _provider, decider, _rec = make_runtime(
        project,
        [
            Reply(calls=[edit(SECOND)]),
            Reply(calls=[("write", {"path": UNPLANNED, "content": "CACHE = {}\n"})]),
            tick(2),
            Reply("done for now"),
        ],
        resume=SessionLog.load(log),
    )
    decider.approvals = [DENY]

    # The mode and the approved revision.
    assert resumed.plan.mode is Mode.EXECUTE
    assert resumed.plan.plan_path == plan_path
    assert resumed.plan.approval is not None and resumed.plan.approval.text == approved
    assert resumed.permissions is not None
    assert str(resumed.permissions.mode.value) == "accept-edits"

    # The evidence so far: step 1 done, with the edit filed under it.
    record = resumed.plan.run_log.record
    assert record is not None
    assert record.steps[0].status == "done"
    assert [(e.kind, e.detail) for e in record.steps[0].evidence] == [("edit", SERVER)]
    assert record.steps[1].status == "open"

    # The scope: the planned edit runs without a question, the unplanned write asks.
    await resumed.agent.submit("go on")
    assert "limiter.ok else 429" in (project / SERVER).read_text()
    [asked] = decider.approval_requests
    assert asked.path == UNPLANNED and asked.why.startswith(f"Unplanned file {UNPLANNED}")
    assert not (project / UNPLANNED).exists()
    saved = json.loads(resumed.plan.store.run_path(plan_path).read_text())
    assert [s["status"] for s in saved["steps"]] == ["done", "done"]
    assert [e["detail"] for e in saved["steps"][0]["evidence"]] == [SERVER]  # kept across resume

    # The checkpoint: taken before the first run's edit, so undo reverts both runs' work.
    await resumed.plan.complete()
    preview = resumed.plan.undo_preview()
    assert {c.path: c.action for c in preview.changes} == {SERVER: "restore"}
    assert "-    limiter.take()" in preview.diff and "+    # TODO: rate limiting" in preview.diff
    assert resumed.plan.undo(plan=preview) == []
    assert outside_plans(project) == before
