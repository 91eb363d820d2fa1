"""Plan mode end to end through the real runtime: modes, gate, tools, decisions, resume."""

from __future__ import annotations

from typing import ClassVar

import pytest

from planshell.agent import events as ev
from planshell.agent.session import SessionLog
from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.llm.types import Message
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.document import parse_plan
from planshell.plan.prompts import EXECUTE_MARKER, PLAN_MARKER
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolResult
from planshell.tools.todo import TodoStatus
from tests.engine_helpers import RATE_LIMIT_PLAN as PLAN
from tests.engine_helpers import (
    make_runtime,
    saved_plan_path,
    write_and_review,
)


class NoteArgs(ToolArgs):
    text: str = ""


class NoteTool(Tool[NoteArgs]):
    """A custom read-only tool registered after start-up."""

    name = "note"
    description = "Take a note."
    Args = NoteArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    async def run(self, args: NoteArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult("noted")


class DeployTool(Tool[NoteArgs]):
    """A custom tool with write effects: must never run in plan mode."""

    name = "deploy"
    description = "Deploy."
    Args = NoteArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE, Effect.NETWORK})

    def __init__(self) -> None:
        self.ran = False

    async def run(self, args: NoteArgs, ctx: ToolContext) -> ToolResult:
        self.ran = True
        return ToolResult("deployed")


def test_mode_round_trip_restores_exact_tool_set(project):
    runtime, *_ = make_runtime(project)
    runtime.registry.register(NoteTool())
    runtime.registry.register(DeployTool())
    before = runtime.registry.active
    runtime.plan.enter_plan()
    active = set(runtime.registry.active)
    assert {
        "read",
        "ls",
        "find",
        "grep",
        "bash",
        "todo_write",
        "note",
        "write_plan",
        "exit_plan_mode",
    } <= active
    assert not active & {
        "write",
        "edit",
        "deploy",
        "set_plan_steps",
        "amend_plan",
        "plan_complete",
        "enter_plan_mode",
    }
    runtime.plan.approve(runtime.store.write(runtime.store.new_path("x"), PLAN), PLAN)
    assert runtime.plan.mode is Mode.EXECUTE
    # EXECUTE: the saved set, with the execute-only plan tools in place of nothing else.
    assert runtime.registry.active == (*before, "set_plan_steps", "amend_plan", "plan_complete")
    runtime.plan.leave()
    assert runtime.plan.mode is Mode.OFF and runtime.registry.active == before


def test_each_mode_offers_only_the_plan_tools_that_can_succeed_there(project):
    runtime, *_ = make_runtime(project)
    plan_tools = {
        "enter_plan_mode",
        "write_plan",
        "exit_plan_mode",
        "cancel_plan_mode",
        "set_plan_steps",
        "amend_plan",
        "plan_complete",
    }
    assert plan_tools & set(runtime.registry.active) == {"enter_plan_mode"}
    runtime.plan.enter_plan()
    assert plan_tools & set(runtime.registry.active) == {
        "write_plan",
        "exit_plan_mode",
        "cancel_plan_mode",
    }
    runtime.plan.approve(runtime.store.write(runtime.store.new_path("x"), PLAN), PLAN)
    assert plan_tools & set(runtime.registry.active) == {
        "enter_plan_mode",
        "set_plan_steps",
        "amend_plan",
        "plan_complete",
    }
    runtime.plan.leave()
    assert plan_tools & set(runtime.registry.active) == {"enter_plan_mode"}


def test_allowed_tools_config_replaces_the_default(project):
    settings = Settings.model_validate({"plan": {"allowed_tools": ["read", "edit", "nope"]}})
    runtime, *_ = make_runtime(project, settings=settings)
    runtime.plan.enter_plan()
    assert runtime.registry.active == ("read", "write_plan", "exit_plan_mode")
    warnings = " ".join(runtime.plan.policy.warnings)
    assert "'edit' can change files" in warnings and "'nope'" in warnings


async def test_gate_refuses_writes_even_when_called_by_name(project):
    deploy = DeployTool()
    runtime, _, _, _rec = make_runtime(
        project,
        [
            Reply(
                calls=[
                    ("write", {"path": "x.txt", "content": "x"}),
                    ("edit", {"path": "README.md", "old_string": "Widget", "new_string": "W"}),
                    ("deploy", {}),
                    ("bash", {"command": "touch y.txt"}),
                    ("bash", {"command": "cat README.md | head -n 1"}),
                    ("bash", {"command": "git status; rm -rf src"}),
                ]
            ),
            Reply(text="ok"),
        ],
    )
    runtime.registry.register(deploy)
    runtime.plan.enter_plan()
    # A write tool registered while planning lands in the active set; the gate still stops it.
    runtime.registry.set_active([*runtime.registry.active, "deploy"])
    await runtime.agent.submit("try everything")
    results = [m for m in runtime.agent.messages if m.role == "tool"]
    assert [m.is_error for m in results] == [True, True, True, True, False, True]
    assert "not available in this mode" in results[0].content
    assert "Plan mode is read-only: deploy" in results[2].content
    assert "touch" in results[3].content
    assert "# Widget Service" in results[4].content
    assert "rm -rf src" in results[5].content
    assert not deploy.ran
    assert not (project / "x.txt").exists() and not (project / "y.txt").exists()
    assert (project / "src").is_dir()


async def test_approve_executes_and_completes(project):
    runtime, provider, decider, rec = make_runtime(
        project,
        [
            *write_and_review(),
            Reply(
                calls=[
                    (
                        "set_plan_steps",
                        {
                            "updates": [
                                {
                                    "step": 1,
                                    "status": "done",
                                    "expected": "Read `src/app/server.py`",
                                }
                            ]
                        },
                    )
                ]
            ),
            Reply(calls=[("plan_complete", {})]),
            Reply(text="finished"),
        ],
        [lambda req: Review(Decision.APPROVE, reviewed_text=req.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    request = decider.requests[0]
    assert request.title == "Add rate limiting" and request.text == PLAN
    plan_path = request.path
    assert plan_path.parent == project / ".planshell" / "plans"
    assert (plan_path.parent / ".gitignore").read_text().strip() == "*"
    results = [m for m in runtime.agent.messages if m.role == "tool"]
    assert results[1].content.startswith("Approved.") and "## Steps" in results[1].content
    # The approved plan rides in the system prompt while executing.
    assert (
        EXECUTE_MARKER in provider.requests[2].system
        and "token bucket" in provider.requests[2].system
    )
    assert PLAN_MARKER in provider.requests[0].system
    assert "Updated 1 step: 1/3 done." in results[2].content
    assert "- [x] Read `src/app/server.py`" in plan_path.read_text()
    assert results[3].content == "Plan complete. Exiting execute mode."
    assert runtime.plan.mode is Mode.OFF and plan_path.exists()
    modes = [(e.previous, e.mode) for e in rec.of(ev.ModeChanged)]
    assert modes == [("off", "plan"), ("plan", "execute"), ("execute", "off")]
    assert runtime.todos.items == []


async def test_approval_seeds_todos_with_verification_last(project):
    runtime, *_ = make_runtime(
        project, write_and_review(), [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    items = runtime.todos.items
    assert [i.content for i in items] == [
        "Read `src/app/server.py`",
        "Add a token bucket",
        "Test it",
        "Verification: make test",
    ]
    assert all(i.status == TodoStatus.PENDING for i in items)


@pytest.mark.parametrize(
    ("decision", "mode", "kept", "says"),
    [
        (
            Decision.REFINE,
            Mode.PLAN,
            True,
            "The user asked for changes to the plan: shorter please",
        ),
        (Decision.KEEP, Mode.PLAN, True, "wants to keep planning"),
        (Decision.EXIT, Mode.OFF, True, "plan file is kept at .planshell/plans/"),
        (Decision.DISCARD, Mode.OFF, False, "discarded the plan"),
    ],
)
async def test_every_decision(project, decision, mode, kept, says):
    runtime, *_ = make_runtime(
        project, [*write_and_review(), Reply(text="ok")], [Review(decision, "shorter please")]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    result = [m for m in runtime.agent.messages if m.role == "tool"][1].content
    assert says in result
    assert runtime.plan.mode is mode
    plans = list((project / ".planshell" / "plans").glob("*.md"))
    assert bool(plans) is kept


async def test_approval_is_bound_to_the_reviewed_text(project):
    def edit_during_review(request):
        request.path.write_text(request.text.replace("token bucket", "leaky bucket"))
        return Review(Decision.APPROVE, reviewed_text=request.text)

    runtime, _, decider, rec = make_runtime(
        project,
        [*write_and_review(), Reply(text="ok")],
        [edit_during_review, lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    assert len(decider.requests) == 2
    assert "changed while you were reviewing" in decider.requests[1].notice
    assert "leaky bucket" in decider.requests[1].text
    assert runtime.plan.mode is Mode.EXECUTE
    assert any("changed while you were reviewing" in n.message for n in rec.of(ev.Notice))


async def test_refinement_reports_changed_sections(project):
    revised = PLAN.replace("Limit requests.", "Limit requests per client.")
    runtime, _, decider, _ = make_runtime(
        project,
        [
            *write_and_review(),
            lambda req: Reply(
                calls=[
                    (
                        "write_plan",
                        {"title": "t", "content": revised, "plan_path": saved_plan_path(req)},
                    )
                ]
            ),
            lambda req: Reply(calls=[("exit_plan_mode", {"plan_path": saved_plan_path(req)})]),
            Reply(text="ok"),
        ],
        [Review(Decision.REFINE, "per client"), Review(Decision.KEEP)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    first, second = decider.requests
    assert first.changed_sections == frozenset()
    assert second.previous_text == PLAN
    sections = parse_plan(second.text).sections
    assert [sections[i].title for i in second.changed_sections] == ["Goal"]
    assert first.path == second.path


async def test_set_plan_steps_is_all_or_nothing(project):
    runtime, *_ = make_runtime(
        project,
        [
            Reply(
                calls=[
                    (
                        "set_plan_steps",
                        {
                            "updates": [
                                {
                                    "step": 1,
                                    "status": "done",
                                    "expected": "Read `src/app/server.py`",
                                },
                                {"step": 2, "status": "done", "expected": "Something else"},
                            ]
                        },
                    )
                ]
            ),
            Reply(calls=[("set_plan_steps", {"updates": [{"step": 9, "status": "done"}]})]),
            Reply(text="ok"),
        ],
    )
    path = runtime.store.write(runtime.store.new_path("p"), PLAN)
    runtime.plan.execute_existing(path)
    await runtime.agent.submit("go")
    results = [m for m in runtime.agent.messages if m.role == "tool"]
    assert "the plan changed" in results[0].content and "nothing was ticked" in results[0].content
    assert "Step 9 does not exist; the plan has 3 steps." in results[1].content
    assert path.read_text() == PLAN


async def test_plan_tools_refuse_outside_their_mode(project):
    runtime, *_ = make_runtime(
        project,
        [
            Reply(
                calls=[
                    ("exit_plan_mode", {"plan_path": "x.md"}),
                    ("write_plan", {"title": "t", "content": "# t"}),
                    ("plan_complete", {}),
                    ("cancel_plan_mode", {}),
                ]
            ),
            Reply(text="ok"),
        ],
    )
    await runtime.agent.submit("go")
    results = [m.content for m in runtime.agent.messages if m.role == "tool"]
    # Not offered outside their mode, so the registry refuses them by name...
    for name, result in zip(
        ("exit_plan_mode", "write_plan", "plan_complete", "cancel_plan_mode"), results, strict=True
    ):
        assert f"'{name}' is not available in this mode" in result
    # ...and the tools themselves still refuse if called directly (defence in depth).
    from planshell.tools.base import ToolError

    with pytest.raises(ToolError, match="works only in plan mode"):
        runtime.plan.write_plan("t", "# t", None)
    with pytest.raises(ToolError, match="plan_complete works only while executing"):
        await runtime.plan.complete()
    with pytest.raises(ToolError, match="Plan mode is not active"):
        await runtime.plan.request_leave("")


async def test_too_many_steps_refused_at_write(project):
    big = "# Plan: big\n\n## Steps\n\n" + "".join(f"- [ ] step {i}\n" for i in range(51))
    runtime, *_ = make_runtime(
        project, [Reply(calls=[("write_plan", {"title": "big", "content": big})]), Reply(text="ok")]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("go")
    result = next(m for m in runtime.agent.messages if m.role == "tool")
    assert result.is_error and "50" in result.content and "51" in result.content
    assert not list(project.glob(".planshell/plans/*.md"))


async def test_enter_plan_mode_tool_asks_the_user(project):
    runtime, _, decider, _ = make_runtime(
        project, [Reply(calls=[("enter_plan_mode", {"reason": "big change"})]), Reply(text="ok")]
    )
    await runtime.agent.submit("refactor everything")
    assert decider.confirm_reasons == ["big change"]
    assert runtime.plan.mode is Mode.PLAN
    declined, _, d2, _ = make_runtime(
        project, [Reply(calls=[("enter_plan_mode", {})]), Reply(text="ok")]
    )
    d2.confirm = False
    await declined.agent.submit("x")
    assert declined.plan.mode is Mode.OFF
    assert "declined" in next(m for m in declined.agent.messages if m.role == "tool").content


async def test_named_plan_and_cleanup_on_complete(project):
    settings = Settings.model_validate({"plan": {"cleanup_on_complete": True}})
    runtime, *_ = make_runtime(
        project,
        [*write_and_review(), Reply(calls=[("plan_complete", {})]), Reply(text="ok")],
        [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
        settings=settings,
    )
    runtime.plan.enter_plan(name="ratelimit")
    await runtime.agent.submit("plan")
    assert runtime.plan.mode is Mode.OFF
    assert not list((project / ".planshell" / "plans").glob("*.md"))


async def test_resume_restores_plan_and_execute(project):
    runtime, *_ = make_runtime(project)
    runtime.plan.enter_plan()
    saved = runtime.plan.saved_tools
    log_path = runtime.agent.session.path
    runtime.close()
    resumed, *_ = make_runtime(project, resume=SessionLog.load(log_path))
    assert resumed.plan.mode is Mode.PLAN and resumed.plan.saved_tools == saved
    assert "write" not in resumed.registry.active
    resumed.plan.leave()
    assert "write" in resumed.registry.active
    resumed.close()

    runtime, *_ = make_runtime(project)
    path = runtime.store.write(runtime.store.new_path("exec"), PLAN)
    runtime.plan.execute_existing(path)
    log_path = runtime.agent.session.path
    runtime.close()
    resumed, *_ = make_runtime(project, resume=SessionLog.load(log_path))
    assert resumed.plan.mode is Mode.EXECUTE and resumed.plan.plan_path == path
    assert EXECUTE_MARKER in resumed.agent.system_prompt()
    assert len(resumed.todos.items) == 4


def test_forced_plan_flag_on_resume(project):
    runtime, *_ = make_runtime(project)
    runtime.agent.session.append_message(Message("user", "earlier"))
    log_path = runtime.agent.session.path
    runtime.close()
    resumed, *_ = make_runtime(project, resume=SessionLog.load(log_path), plan=True)
    assert resumed.plan.mode is Mode.PLAN


async def test_plan_mode_bash_runs_with_git_overrides(project):
    runtime, *_ = make_runtime(
        project,
        [Reply(calls=[("bash", {"command": "printenv GIT_CONFIG_KEY_0"})]), Reply(text="ok")],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("x")
    assert "core.fsmonitor" in next(m for m in runtime.agent.messages if m.role == "tool").content
    runtime.plan.leave()
    assert runtime.agent.ctx.exec_policy.extra_env == {}


async def test_todo_changes_reach_the_event_bus(project):
    runtime, _, _, rec = make_runtime(
        project,
        [
            *write_and_review(),
            Reply(calls=[("set_plan_steps", {"updates": [{"step": 2, "status": "done"}]})]),
            Reply(text="ok"),
        ],
        [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    seeded, ticked = rec.of(ev.TodosChanged)[:2]
    assert [status for _, status in seeded.items] == ["pending"] * 4
    assert ticked.items[1] == ("Add a token bucket", "completed")
    assert ticked.items[-1][0] == "Verification: make test"


# --- issue 12, item 7: approving the user's own edit -------------------------------------


async def test_approving_an_edited_plan_saves_the_edit_then_approves_it(project):
    edited = PLAN.replace("- [ ] Test it", "- [ ] Test it\n- [ ] USER STEP: update the docs")
    runtime, _provider, decider, _rec = make_runtime(
        project,
        [*write_and_review(), Reply(text="on it")],
        [lambda req: Review(Decision.APPROVE, reviewed_text=edited, edited=True)],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    path = decider.requests[0].path
    assert path.read_text() == edited  # on disk: exactly what was approved
    assert runtime.plan.mode is Mode.EXECUTE
    assert "USER STEP: update the docs" in [i.content for i in runtime.todos.items]
    approved = [m.content for m in runtime.agent.messages if m.role == "tool"][1]
    assert approved.startswith("Approved.") and "USER STEP" in approved
    assert not list(path.parent.glob(".*.tmp"))  # the atomic write left nothing behind


async def test_an_invalid_edit_is_not_saved_and_the_review_opens_again(project):
    runtime, _provider, decider, rec = make_runtime(
        project,
        [*write_and_review(), Reply(text="ok")],
        [
            lambda req: Review(Decision.APPROVE, reviewed_text="", edited=True),
            Review(Decision.KEEP),
        ],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    assert len(decider.requests) == 2
    assert decider.requests[0].path.read_text() == PLAN
    assert runtime.plan.mode is Mode.PLAN
    assert any("not saved" in n.message for n in rec.of(ev.Notice))


# --- issue 12, item 16: a plan keeps its file and title ------------------------------------


def test_rewriting_a_plan_keeps_its_title_and_file(project):
    runtime, *_ = make_runtime(project)
    plan = runtime.plan
    plan.enter_plan()
    first = plan.write_plan("Add rate limiting", PLAN, None)
    # The refinement arrives titled after the latest message, with or without an H1.
    retitled = PLAN.replace("# Plan: Add rate limiting", "# Plan: Refine the plan: fewer steps")
    second = plan.write_plan("Refine the plan: fewer steps", retitled, None)
    assert second == first
    assert first.read_text().splitlines()[0] == "# Plan: Add rate limiting"
    body_only = PLAN.split("\n", 2)[2]
    plan.write_plan("Something else entirely", body_only, None)
    assert first.read_text().splitlines()[0] == "# Plan: Add rate limiting"
    assert "## Steps" in first.read_text()


def test_cut_at_word_never_cuts_mid_word():
    from planshell.sanitize import cut_at_word

    assert cut_at_word("add pagination to the widget list", 20) == "add pagination to…"
    assert cut_at_word("short", 20) == "short"
    assert cut_at_word("x" * 30, 10) == "x" * 9 + "…"
    assert cut_at_word("add pagination to the widget list", 20, "") == "add pagination to"
