"""Undo an executed plan through the engine (issue 24 part 2, wiring): approve, edit, complete, undo."""

from __future__ import annotations

import hashlib

import pytest

from planshell.agent import events as ev
from planshell.agent.session import SessionLog
from planshell.llm.scripted import Reply
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.undo_keeper import UndoRefused
from tests.engine_helpers import make_runtime, write_and_review
from tests.plan.checkpoint_helpers import git, outside_plans, state

SERVER = "src/app/server.py"
OLD = "    # TODO: rate limiting\n"
NEW = "    limiter.take()\n"


def executing_replies():
    return [
        *write_and_review(),
        Reply(
            calls=[
                ("edit", {"path": SERVER, "old_string": OLD, "new_string": NEW}),
                ("write", {"path": "src/app/limit.py", "content": "limiter = object()\n"}),
                ("write", {"path": "src/new/deep.txt", "content": "new folder\n"}),
            ]
        ),
        Reply(calls=[("plan_complete", {})]),
        Reply(text="done"),
    ]


async def run_plan(project):
    runtime, _provider, _decider, rec = make_runtime(
        project,
        executing_replies(),
        [lambda req: Review(Decision.APPROVE, reviewed_text=req.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    assert runtime.plan.mode is Mode.OFF
    return runtime, rec


@pytest.mark.parametrize("use_git", [False, True], ids=["copies", "git"])
async def test_undo_restores_every_file_after_a_completed_plan(project, use_git):
    if use_git:
        git(project, "init", "-q")
        git(project, "add", "-A")
        git(project, "commit", "-qm", "start")
    before = outside_plans(project)
    runtime, rec = await run_plan(project)
    assert NEW in (project / SERVER).read_text()
    assert (project / "src/app/limit.py").exists() and (project / "src/new/deep.txt").exists()
    cp = runtime.plan.undo_keeper.checkpoint
    assert cp is not None and cp.after is not None  # taken at approval, ended at completion
    assert (cp.tree is not None) is use_git

    preview = runtime.plan.undo_preview()
    actions = {c.path: c.action for c in preview.changes}
    assert actions == {
        SERVER: "restore",
        "src/app/limit.py": "delete",
        "src/new/deep.txt": "delete",
    }
    assert "-    limiter.take()" in preview.diff and preview.hand_edited == []
    own = {k: v for k, v in state(project).items() if k.startswith(".planshell")}
    assert any(k.endswith(".run.json") for k in own)  # the plan's evidence, written meanwhile
    assert runtime.plan.undo(plan=preview) == []
    assert outside_plans(project) == before
    # The plan and its run record are planshell's, not the plan's work: undo keeps them.
    assert {k: v for k, v in state(project).items() if k.startswith(".planshell")} == own
    assert runtime.plan.undo_preview().changes == []
    assert not [n for n in rec.of(ev.Notice) if n.level == "error"]


async def test_undo_survives_continue_and_asks_about_hand_edits(project):
    before = outside_plans(project)
    runtime, _rec = await run_plan(project)
    log = runtime.agent.session.path
    (project / "src/app/limit.py").write_text("edited by hand\n")

    resumed, *_ = make_runtime(project, resume=SessionLog.load(log))
    preview = resumed.plan.undo_preview()
    assert preview.hand_edited == ["src/app/limit.py"]
    assert resumed.plan.undo(overwrite_hand_edits=False, plan=preview) == []
    assert (project / "src/app/limit.py").read_text() == "edited by hand\n"  # kept: not asked
    assert resumed.plan.undo(overwrite_hand_edits=True) == []
    assert outside_plans(project) == before


async def test_undo_refuses_in_plan_mode_and_writes_nothing(project):
    runtime, _rec = await run_plan(project)
    runtime.plan.enter_plan()
    after_plan = state(project)
    with pytest.raises(UndoRefused, match="Plan mode is read-only"):
        runtime.plan.undo_preview()
    with pytest.raises(UndoRefused, match="Plan mode is read-only"):
        runtime.plan.undo(overwrite_hand_edits=True)
    assert state(project) == after_plan
    assert "undo" not in runtime.registry.names()  # not a tool: a model cannot ask for it


async def test_undo_without_a_checkpoint_says_so(project):
    runtime, *_ = make_runtime(project)
    with pytest.raises(UndoRefused, match="Nothing to undo"):
        runtime.plan.undo_preview()


BIG = "src/app/big_table.py"


async def test_a_file_over_the_cap_is_copied_before_its_first_edit_and_undo_restores_it(project):
    """Outside git, the snapshot skips a file over its cap; the edit tool's first write copies it."""
    big = "".join(f"ROW_{n} = {n * n}  # value\n" for n in range(400)).encode()
    (project / BIG).write_bytes(big)
    before = outside_plans(project)

    def edit_big(old: str, new: str) -> Reply:
        return Reply(calls=[("edit", {"path": BIG, "old_string": old, "new_string": new})])

    runtime, _provider, _decider, rec = make_runtime(
        project,
        [
            *write_and_review(),
            edit_big("ROW_7 = 49", "ROW_7 = 0"),
            edit_big("ROW_8 = 64", "ROW_8 = 0"),  # the second write must not copy again
            Reply(text="pausing mid-plan"),
        ],
        [lambda req: Review(Decision.APPROVE, reviewed_text=req.text)],
    )
    runtime.plan.undo_keeper.max_bytes = 1000  # the small files fit, the table does not
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    assert runtime.plan.mode is Mode.EXECUTE
    edited = (project / BIG).read_bytes()
    assert b"ROW_7 = 0" in edited and b"ROW_8 = 0" in edited
    cp = runtime.plan.undo_keeper.checkpoint
    assert cp is not None and cp.tree is None and BIG not in cp.skipped and cp.after is None
    assert any(BIG in n.message for n in rec.of(ev.Notice))  # the cap was warned about

    # planshell stops mid-plan; the resumed session ends the plan and undoes it: the copy
    # was written into the manifest when it was made, not only at the plan's end.
    resumed, *_ = make_runtime(project, resume=SessionLog.load(runtime.agent.session.path))
    assert resumed.plan.mode is Mode.EXECUTE
    resumed.plan.leave()
    preview = resumed.plan.undo_preview()
    assert {c.path: c.action for c in preview.changes}[BIG] == "restore"
    assert resumed.plan.undo(plan=preview) == []
    assert (
        hashlib.sha256((project / BIG).read_bytes()).hexdigest() == hashlib.sha256(big).hexdigest()
    )
    assert outside_plans(project) == before
