"""The task tool: sub-agents with a fresh context, read-only in plan mode, run in parallel."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.agent.events import Mode
from planshell.agent.loop import CANCELLED_RESULT
from planshell.config import AgentProfile, Settings
from planshell.llm.scripted import Reply, Request
from planshell.llm.types import ProviderError, Usage
from tests.engine_helpers import Recorder, ScriptedDecider, finishes, wait_for
from tests.subagent_helpers import router_runtime, tool_results

WRITE_ATTEMPTS: list[tuple[str, dict[str, object] | str]] = [
    ("write", {"path": "new.txt", "content": "pwned"}),
    ("edit", {"path": "keep.txt", "old_string": "original", "new_string": "pwned"}),
    ("bash", {"command": "echo pwned > viabash.txt"}),
    ("bash", {"command": "sed -i s/original/pwned/ keep.txt"}),
    ("wirte", {"path": "new.txt", "content": "pwned"}),  # a misspelled tool
    ("Write", {"path": "new.txt", "content": "pwned"}),
    ("write_plan", {"title": "x", "content": "# Plan: x"}),
    ("enter_plan_mode", {}),
    ("cancel_plan_mode", {}),
    ("exit_plan_mode", {"plan_path": "x.md"}),
    ("task", {"description": "again", "prompt": "recurse", "agent": "general"}),
]


def _task(
    prompt: str, agent: str = "explore", what: str = "look around"
) -> tuple[str, dict[str, object]]:
    return ("task", {"description": what, "prompt": prompt, "agent": agent})


def _unchanged(root: Path) -> None:
    assert (root / "keep.txt").read_text() == "original\n"
    assert not (root / "new.txt").exists()
    assert not (root / "viabash.txt").exists()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "keep.txt").write_text("original\n")
    return tmp_path


# --- plan mode: every sub-agent is read-only -------------------------------------------


async def test_general_subagent_in_plan_cannot_write(project: Path) -> None:
    runtime, router = router_runtime(
        project,
        {
            "change it": [Reply(calls=[_task("do it", "general")]), Reply("ok")],
            "do it": [Reply(calls=list(WRITE_ATTEMPTS)), Reply("I could not change anything.")],
        },
        plan=True,
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    assert "task" in runtime.registry.active  # offered in PLAN: it declares only `read`
    await finishes(runtime.agent.submit("change it"), "the turn")
    _unchanged(project)
    assert runtime.plan.mode is Mode.PLAN
    child_request = router.requests("do it")[0]
    assert set(child_request.tools) <= {"read", "ls", "find", "grep", "bash", "todo_write"}
    assert "Read-only" in child_request.system
    results = tool_results(router.requests("do it")[1])
    assert len(results) == len(WRITE_ATTEMPTS)
    assert all(r.is_error for r in results), [r.content for r in results]
    # The parent's tool result is the child's final answer.
    finished = [e for e in recorder.of(ev.ToolFinished) if e.name == "task"]
    assert finished[0].content == "I could not change anything." and not finished[0].is_error
    assert finished[0].data["read_only"] is True
    # Its tool calls streamed as progress lines under the task call.
    progress = [e.line for e in recorder.of(ev.ToolProgress) if e.call_id == finished[0].call_id]
    assert any(line.startswith("write") for line in progress)
    assert any(line.startswith("✗ write") for line in progress)
    runtime.close()


async def test_child_keeps_the_read_only_set_after_the_parent_leaves_plan(project: Path) -> None:
    holder: dict[str, object] = {}

    def leave_then_write(request: Request) -> Reply:
        runtime = holder["runtime"]
        runtime.plan.leave()  # type: ignore[attr-defined]  # a person leaves PLAN meanwhile
        return Reply(calls=WRITE_ATTEMPTS[:4])

    runtime, router = router_runtime(
        project,
        {
            "change it": [Reply(calls=[_task("do it", "general")]), Reply("ok")],
            "do it": [leave_then_write, Reply("done")],
        },
        plan=True,
    )
    holder["runtime"] = runtime
    await finishes(runtime.agent.submit("change it"), "the turn")
    assert runtime.plan.mode is Mode.OFF
    _unchanged(project)
    assert all(r.is_error for r in tool_results(router.requests("do it")[1]))
    runtime.close()


async def test_a_general_child_follows_the_parent_into_plan(project: Path) -> None:
    holder: dict[str, object] = {}

    def enter_then_write(request: Request) -> Reply:
        holder["runtime"].plan.enter_plan()  # type: ignore[attr-defined]  # a person enters PLAN
        return Reply(calls=WRITE_ATTEMPTS[:4])

    runtime, router = router_runtime(
        project,
        {
            "change it": [Reply(calls=[_task("do it", "general")]), Reply("ok")],
            "do it": [enter_then_write, Reply("done")],
        },
    )
    holder["runtime"] = runtime
    await finishes(runtime.agent.submit("change it"), "the turn")
    _unchanged(project)
    assert all(r.is_error for r in tool_results(router.requests("do it")[1]))
    runtime.close()


async def test_explore_is_read_only_in_normal_mode_too(project: Path) -> None:
    runtime, router = router_runtime(
        project,
        {
            "look": [Reply(calls=[_task("find it")]), Reply("ok")],
            "find it": [Reply(calls=WRITE_ATTEMPTS[:4]), Reply("found nothing")],
        },
    )
    assert runtime.plan.mode is Mode.OFF
    await finishes(runtime.agent.submit("look"), "the turn")
    _unchanged(project)
    assert router.requests("find it")[0].tools == ["read", "ls", "find", "grep", "bash"]
    assert all(r.is_error for r in tool_results(router.requests("find it")[1]))
    runtime.close()


async def test_general_child_writes_outside_plan(project: Path) -> None:
    """The control for the tests above: the same calls do write when the person allows them."""
    decider = ScriptedDecider()  # answers every approval "yes, once"
    runtime, router = router_runtime(
        project,
        {
            "change it": [Reply(calls=[_task("do it", "general")]), Reply("ok")],
            "do it": [Reply(calls=[WRITE_ATTEMPTS[0]]), Reply("done")],
        },
        decider=decider,
    )
    await finishes(runtime.agent.submit("change it"), "the turn")
    assert (project / "new.txt").read_text() == "pwned"
    assert [r.tool for r in decider.approval_requests] == [
        "write"
    ]  # the child's call was asked about
    assert "task" not in router.requests("do it")[0].tools
    assert "write_plan" not in router.requests("do it")[0].tools
    runtime.close()


# --- concurrency, cancellation, errors, usage ----------------------------------------------


async def test_two_task_calls_run_at_the_same_time_and_keep_call_order(project: Path) -> None:
    runtime, router = router_runtime(
        project,
        {
            "survey": [Reply(calls=[_task("A"), _task("B")]), Reply("both done")],
            "A": [Reply(calls=[("ls", {"path": "."})]), Reply("answer A")],
            "B": [Reply("answer B")],
        },
        # A's first model call waits until B has finished: one after the other, it never would.
        waits={"A": "end B"},
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    await finishes(runtime.agent.submit("survey"), "the turn")
    tasks = [e for e in recorder.events if isinstance(e, ev.ToolStarted | ev.ToolFinished)]
    kinds = [(type(e).__name__, e.call_id) for e in tasks]
    first, second = tasks[0].call_id, tasks[1].call_id
    assert kinds == [
        ("ToolStarted", first),
        ("ToolStarted", second),
        ("ToolFinished", second),
        ("ToolFinished", first),
    ]
    # The history keeps the order of the calls, not of their completion.
    results = tool_results(router.requests("survey")[1])
    assert [r.content for r in results] == ["answer A", "answer B"]
    runtime.close()


async def test_parallel_tasks_bounds_how_many_run_at_once(project: Path) -> None:
    settings = Settings(agent={"parallel_tasks": 1})  # type: ignore[arg-type]
    runtime, router = router_runtime(
        project,
        {
            "survey": [Reply(calls=[_task("A"), _task("B")]), Reply("done")],
            "A": [Reply(calls=[("ls", {"path": "."})]), Reply("answer A")],
            "B": [Reply("answer B")],
        },
        settings=settings,
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    await finishes(runtime.agent.submit("survey"), "the turn")
    tasks = [e for e in recorder.events if isinstance(e, ev.ToolStarted | ev.ToolFinished)]
    assert [type(e).__name__ for e in tasks] == ["ToolStarted", "ToolFinished"] * 2
    assert router.log.index("end A") < router.log.index("start B")
    runtime.close()


async def test_cancelling_the_parent_cancels_its_children(project: Path) -> None:
    slow = Reply("x" * 50, chunk=1, delay=5.0)  # a stream that takes minutes
    runtime, router = router_runtime(
        project,
        {
            "survey": [Reply(calls=[_task("A"), _task("B")])],
            "A": [slow],
            "B": [Reply("x" * 50, chunk=1, delay=5.0)],
        },
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    turn = asyncio.ensure_future(runtime.agent.submit("survey"))
    await wait_for(lambda: "start A" in router.log and "start B" in router.log)
    assert runtime.agent.cancel()
    await finishes(turn, "the cancelled turn")
    assert sorted(router.cancelled) == ["A", "B"]
    assert recorder.of(ev.TurnDone)[-1].cancelled
    finished = [e for e in recorder.of(ev.ToolFinished) if e.name == "task"]
    assert [e.content for e in finished] == [CANCELLED_RESULT, CANCELLED_RESULT]
    # The history stays consistent: every call has its (cancelled) result.
    tools = [m for m in runtime.agent.messages if m.role == "tool"]
    assert [m.content for m in tools] == [CANCELLED_RESULT, CANCELLED_RESULT]
    runtime.close()


async def test_a_child_error_is_a_tool_result_not_a_crash(project: Path) -> None:
    runtime, router = router_runtime(
        project,
        {
            "survey": [
                Reply(calls=[_task("A"), _task("B", agent="nonexistent")]),
                Reply("carried on"),
            ],
            "A": [Reply(error=ProviderError("the server fell over"))],
        },
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    await finishes(runtime.agent.submit("survey"), "the turn")
    results = tool_results(router.requests("survey")[1])
    assert results[0].is_error and "the server fell over" in results[0].content
    assert results[1].is_error and "nonexistent" in results[1].content
    assert recorder.of(ev.TurnDone)[-1].stop_reason == "end_turn"
    assert recorder.of(ev.ErrorEvent) == []  # the child's error is not the parent's
    runtime.close()


async def test_child_tokens_are_added_to_the_session_usage(project: Path) -> None:
    runtime, _router = router_runtime(
        project,
        {
            "survey": [Reply(calls=[_task("A"), _task("B")]), Reply("done")],
            "A": [Reply("a", usage=Usage(100, 20))],
            "B": [Reply("b", usage=Usage(30, 5))],
        },
    )
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    await finishes(runtime.agent.submit("survey"), "the turn")
    assert [e.total for e in recorder.of(ev.SubagentUsage)] in ([120, 155], [35, 155])
    runtime.close()


# --- profiles ----------------------------------------------------------------------------


async def test_a_configured_profile_gets_its_tools_and_plan_mode_still_wins(project: Path) -> None:
    settings = Settings(
        agents={
            "reviewer": AgentProfile(
                description="reads diffs",
                system_prompt="You review code.",
                tools=["read", "grep", "write"],
                read_only=False,
            )
        }
    )
    scripts = {
        "go": [Reply(calls=[_task("R", "reviewer")]), Reply("ok")],
        "R": [Reply(calls=[WRITE_ATTEMPTS[0]]), Reply("reviewed")],
    }
    runtime, router = router_runtime(project, scripts, settings=settings, decider=ScriptedDecider())
    assert "reviewer (reads diffs)" in runtime.registry.get("task").spec().description  # type: ignore[union-attr]
    await finishes(runtime.agent.submit("go"), "the turn")
    request = router.requests("R")[0]
    assert request.tools == ["read", "grep", "write"]
    assert request.system.startswith("You review code.")
    assert (project / "new.txt").exists()  # not read-only outside PLAN: it may write
    runtime.close()
    (project / "new.txt").unlink()

    runtime, router = router_runtime(project, scripts, settings=settings, plan=True)
    await finishes(runtime.agent.submit("go"), "the turn")
    assert router.requests("R")[0].tools == ["read", "grep"]
    _unchanged(project)
    runtime.close()


def test_a_profile_cannot_redefine_a_builtin() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="built-in profile"):
        Settings(agents={"explore": AgentProfile(tools=["write"], read_only=False)})


async def test_a_profile_never_gets_task_or_plan_tools(project: Path) -> None:
    settings = Settings(
        agents={"sneaky": AgentProfile(tools=["task", "write_plan", "exit_plan_mode", "ls"])}
    )
    runtime, router = router_runtime(
        project,
        {"go": [Reply(calls=[_task("S", "sneaky")]), Reply("ok")], "S": [Reply("done")]},
        settings=settings,
    )
    assert any("agents.sneaky.tools: 'task'" in p for p in runtime.problems)
    await finishes(runtime.agent.submit("go"), "the turn")
    assert router.requests("S")[0].tools == ["ls"]
    runtime.close()


def test_an_untrusted_repository_cannot_define_profiles(tmp_path: Path) -> None:
    from planshell.config import load_settings
    from planshell.config.trust import trust

    (tmp_path / ".planshell").mkdir()
    (tmp_path / ".planshell" / "config.toml").write_text(
        "[agent]\nparallel_tasks = 16\n\n"
        '[agents.wide]\ndescription = "x"\ntools = ["write", "bash"]\nread_only = false\n'
    )
    trust_file = tmp_path / "trusted.json"
    user_file = tmp_path / "user.toml"
    settings = load_settings(tmp_path, environ={}, user_file=user_file, trust_file=trust_file)
    assert settings.agents == {} and settings.agent.parallel_tasks == 3
    assert settings.untrusted_project is not None
    assert {"agents.wide.tools", "agents.wide.read_only", "agent.parallel_tasks"} <= set(
        settings.untrusted_project.key_names
    )
    trust(settings.untrusted_project.file, trust_file)
    trusted = load_settings(tmp_path, environ={}, user_file=user_file, trust_file=trust_file)
    assert trusted.agents["wide"].read_only is False and trusted.agent.parallel_tasks == 16


async def test_headless_verbose_prints_subagent_progress(project: Path) -> None:
    import io

    from planshell.headless import run_print
    from planshell.plan.decider import HeadlessDecider

    decider = HeadlessDecider()
    runtime, _router = router_runtime(
        project,
        {
            "look": [Reply(calls=[_task("find it")]), Reply("the answer")],
            "find it": [Reply(calls=[("ls", {"path": "."})]), Reply("found keep.txt")],
        },
        decider=decider,
    )
    out, err = io.StringIO(), io.StringIO()
    code = await run_print(runtime, decider, "look", verbose=True, out=out, err=err)
    assert code == 0
    assert "→ task explore: look around\n  ↳ ls .\n" in err.getvalue()
    assert out.getvalue().strip() == "the answer"


async def test_general_subagent_outside_plan_goes_through_the_permission_prompt(
    project: Path,
) -> None:
    """Found in review: a `general` child in OFF wrote files without the parent's approval.

    Headless `ask` mode denies every call that would ask, so nothing may change.
    """
    runtime, router = router_runtime(
        project,
        {
            "change it": [Reply(calls=[_task("do it", "general")]), Reply("ok")],
            "do it": [Reply(calls=list(WRITE_ATTEMPTS[:4])), Reply("done")],
        },
    )
    assert runtime.plan.mode is Mode.OFF
    await finishes(runtime.agent.submit("change it"), "the turn")
    _unchanged(project)
    results = tool_results(router.requests("do it")[1])
    assert len(results) == 4 and all(r.is_error for r in results), [r.content for r in results]
