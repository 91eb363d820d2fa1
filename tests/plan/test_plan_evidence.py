"""Steps leave evidence: edits and commands are filed under the current step in ``<plan>.run.json``."""

from __future__ import annotations

import json
from pathlib import Path

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.evidence import Evidence, RunRecord, step_id
from planshell.plan.store import PlanStore, PlanStoreError
from tests.engine_helpers import make_runtime, write_and_review


def approve(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


def steps(*updates: dict) -> Reply:
    return Reply(calls=[("set_plan_steps", {"updates": list(updates)})])


def tool_results(runtime) -> list[str]:
    return [m.content for m in runtime.agent.messages if m.role == "tool"]


def run_file(project: Path) -> Path:
    [found] = (project / ".planshell" / "plans").glob("*.run.json")
    return found


async def test_a_scripted_run_leaves_evidence_per_step(project):
    replies = [
        *write_and_review(),
        Reply(calls=[("write", {"path": "src/app/limiter.py", "content": "BUCKET = 10\n"})]),
        Reply(calls=[("bash", {"command": "exit 3"})]),
        steps({"step": 1, "status": "done", "expected": "Read `src/app/server.py`"}),
        steps({"step": 2, "status": "done"}),
        steps({"step": 3, "status": "skipped"}),
        steps({"step": 3, "status": "skipped", "reason": "no test runner in this checkout"}),
        Reply(text="done"),
    ]
    runtime, _provider, _decider, recorder = make_runtime(project, replies, [approve])
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    assert runtime.plan.mode is Mode.EXECUTE

    results = tool_results(runtime)
    refused = next(r for r in results if "without a reason" in r)
    assert "step 3 is skipped without a reason" in refused

    record = json.loads(run_file(project).read_text())
    plan = runtime.plan.plan_path
    assert record["plan"] == plan.name
    assert run_file(project).name == plan.stem + ".run.json"
    one, two, three = record["steps"]
    assert one["id"] == step_id(1, "Read `src/app/server.py`")
    assert one["status"] == "done" and not one["without_evidence"]
    assert one["evidence"] == [
        {"kind": "edit", "detail": "src/app/limiter.py", "exit_code": None},
        {"kind": "command", "detail": "exit 3", "exit_code": 3},
    ]
    assert two["status"] == "done" and two["evidence"] == [] and two["without_evidence"]
    assert three["status"] == "skipped"
    assert three["reason"] == "no test runner in this checkout"
    assert not three["without_evidence"]

    # The checklist carries the same facts to the views.
    shown = [item.shown() for item in runtime.todos.items]
    assert recorder.of(ev.TodosChanged)[-1].items[1] == ("Add a token bucket", "unverified")
    assert shown[0] == ("Read `src/app/server.py`", "completed")
    assert shown[1] == ("Add a token bucket", "unverified")
    assert shown[2] == ("Test it (skipped: no test runner in this checkout)", "skipped")
    # The plan file itself stays a plain checklist.
    text = plan.read_text()
    assert "- [x] Add a token bucket" in text and "- [x] Test it" in text


async def test_nothing_is_recorded_in_plan_mode(project):
    replies = [
        Reply(calls=[("write_plan", {"title": "Add rate limiting", "content": PLAN_TEXT})]),
        Reply(calls=[("bash", {"command": "ls"})]),
        Reply(text="ok"),
    ]
    runtime, *_ = make_runtime(project, replies)
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    assert runtime.plan.mode is Mode.PLAN
    assert not list((project / ".planshell" / "plans").glob("*.run.json"))


PLAN_TEXT = "# Plan: Add rate limiting\n\n## Steps\n\n- [ ] one\n- [ ] two\n"


async def test_a_hostile_model_cannot_write_the_run_record_in_plan_mode(project):
    store = PlanStore(project)
    plan = store.write("2026-01-01-1200-x.md", PLAN_TEXT)
    record = store.write_run(plan, RunRecord.seed(plan.name, PLAN_TEXT).to_json())
    before = record.read_bytes()
    rel = f".planshell/plans/{record.name}"
    forged = json.dumps({"version": 1, "plan": plan.name, "steps": []})
    replies = [
        Reply(
            calls=[
                ("write_plan", {"title": "x", "content": forged, "plan_path": record.name}),
                ("write_plan", {"title": "x", "content": PLAN_TEXT, "plan_path": record.name}),
                ("write_plan", {"title": "x", "content": PLAN_TEXT, "plan_path": rel}),
                ("write", {"path": rel, "content": forged}),
                ("edit", {"path": rel, "old_string": '"steps"', "new_string": '"x"'}),
                ("bash", {"command": f"echo pwned > {rel}"}),
                ("bash", {"command": f"rm -f {rel}"}),
            ]
        ),
        Reply(text="ok"),
    ]
    runtime, *_ = make_runtime(project, replies)
    runtime.plan.enter_plan(plan_path=plan)
    await runtime.agent.submit("go")
    assert runtime.plan.mode is Mode.PLAN
    assert record.read_bytes() == before
    results = tool_results(runtime)
    assert len(results) == 7 and all(results), results
    assert sum("must be markdown files ending in .md" in r for r in results) == 3


def test_the_run_record_is_refused_through_a_symlink_or_when_huge(project, tmp_path):
    store = PlanStore(project)
    plan = store.write("2026-01-01-1200-x.md", PLAN_TEXT)
    target = tmp_path / "outside.json"
    target.write_text("{}")
    link = store.run_path(plan)
    link.symlink_to(target)
    for call in (lambda: store.write_run(plan, "{}"), lambda: store.read_run(plan)):
        try:
            call()
        except PlanStoreError as exc:
            assert "symlink" in str(exc)
        else:
            raise AssertionError("a symlinked run record was used")
    assert target.read_text() == "{}"
    link.unlink()
    link.write_bytes(b" " * (2 * 1024 * 1024))
    try:
        store.read_run(plan)
    except PlanStoreError as exc:
        assert "bytes" in str(exc) or "large" in str(exc)
    else:
        raise AssertionError("a huge run record was read")


def test_a_saved_record_survives_reapproval_for_steps_that_did_not_change():
    first = RunRecord.seed("p.md", PLAN_TEXT)
    first.record(Evidence("edit", "a.py"))
    first.tick(1, "done")
    again = RunRecord.from_json(first.to_json())
    assert again is not None
    changed = PLAN_TEXT.replace("- [ ] two", "- [ ] two, differently")
    seeded = RunRecord.seed("p.md", changed, again)
    assert seeded.steps[0].evidence[0].detail == "a.py"
    assert seeded.steps[1].status == "open" and seeded.steps[1].text == "two, differently"
    assert RunRecord.from_json("not json") is None
