"""MCP servers as tools, against real servers (tests/mcp/servers/demo_server.py, the SDK's server).

Plan mode offers only an opted-in server's readOnlyHint tools; the writing tool
is refused by name at the controller's gate; a tool that appears after plan
mode was entered is not active; a crash mid-call is a tool error, not a hang.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.mcp.tools import McpArgs
from planshell.plan.controller import Mode
from planshell.plan.decider import ApprovalChoice, ApprovalDecision
from planshell.tools.base import ToolError
from tests.engine_helpers import Recorder, finishes, make_runtime, wait_for

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def _settings(
    log: Path, plan: str = "read-only-tools", call_timeout: float = 20.0, **extra: object
) -> Settings:
    server = {
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"DEMO_LOG": str(log)},
        "plan": plan,
        "call_timeout": call_timeout,
    }
    return Settings(mcp={"servers": {"demo": server}}, **extra)


async def _started(tmp_path: Path, replies: Sequence[Reply] = (), **kw: object):
    """A runtime with the demo server configured (``kw``: its settings) and started."""
    log = tmp_path / "server.log"
    runtime, _provider, decider, _recorder = make_runtime(
        tmp_path, replies, settings=_settings(log, **kw), persist=False
    )
    assert runtime.mcp is not None
    runtime.start_mcp()
    server = runtime.mcp.servers["demo"]
    await finishes(server.wait_started(), "the demo server starting")
    assert server.info.state == "running", server.info.last_error
    return runtime, decider, log


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


async def test_plan_mode_offers_only_the_opted_in_read_only_tool(tmp_path: Path) -> None:
    runtime, _, log = await _started(tmp_path)
    try:
        registry, controller = runtime.registry, runtime.plan
        assert {"mcp__demo__lookup", "mcp__demo__update_ticket"} <= set(registry.active)
        controller.enter_plan()
        active = set(registry.active)
        assert "mcp__demo__lookup" in active
        assert "mcp__demo__update_ticket" not in active
        lookup = registry.get("mcp__demo__lookup")
        assert lookup is not None
        # The server's description is untrusted: no terminal controls reach the model.
        assert "\x1b" not in lookup.description and "untrusted" in lookup.description
        args = McpArgs.model_validate({"key": "A-1"})
        assert await controller.gate(lookup, args) is None
        result = await finishes(lookup.run(args, runtime.agent.ctx), "lookup")
        assert result.content.startswith("ticket A-1: open")
        assert "\x1b" not in result.content

        # The writing tool, called by name: the controller's gate refuses it.
        write = registry.get("mcp__demo__update_ticket")
        assert write is not None
        refusal = await controller.gate(write, McpArgs.model_validate({"key": "A", "status": "x"}))
        assert refusal and "read-only" in refusal

        # lookup made the server add late_tool (tools/list_changed): registered, not active.
        await wait_for(lambda: registry.get("mcp__demo__late_tool") is not None)
        late = registry.get("mcp__demo__late_tool")
        assert late is not None and late.plan_permitted  # read-only and opted in, still waits
        assert "mcp__demo__late_tool" not in registry.active
        assert await controller.gate(late, McpArgs.model_validate({"text": "t"}))
        assert _lines(log) == ["lookup A-1"]  # neither the write nor the late tool ran

        # The review says which MCP tools ran while planning (the agent's result hook).
        assert controller.mcp_notice() is None
        controller.record_result(lookup, args, result)
        assert "mcp__demo__lookup" in (controller.mcp_notice() or "")

        # Left and entered again: now the late tool is offered.
        controller.leave()
        assert "mcp__demo__late_tool" in registry.active
        controller.enter_plan()
        assert "mcp__demo__late_tool" in registry.active
        assert "mcp__demo__update_ticket" not in registry.active
    finally:
        await runtime.mcp.stop()


async def test_a_tool_that_arrives_while_a_plan_executes_stays_when_it_ends(
    tmp_path: Path,
) -> None:
    """A saved plan run from normal mode keeps the tools it started with, to restore them at
    the end: a tool a server adds meanwhile is offered now and stays offered afterwards."""
    runtime, _, _log = await _started(tmp_path)
    try:
        registry, controller = runtime.registry, runtime.plan
        path = runtime.store.write(
            runtime.store.new_path("p"), "# Plan: look\n\n## Steps\n\n1. [ ] Look A-1 up\n"
        )
        controller.execute_existing(path)
        assert controller.mode is Mode.EXECUTE
        assert "mcp__demo__late_tool" not in registry.active
        lookup = registry.get("mcp__demo__lookup")
        assert lookup is not None
        await finishes(
            lookup.run(McpArgs.model_validate({"key": "A-1"}), runtime.agent.ctx), "lookup"
        )
        await wait_for(lambda: "mcp__demo__late_tool" in registry.active)  # offered while executing
        controller.leave(why="Plan complete")
        assert controller.mode is Mode.OFF
        assert "mcp__demo__late_tool" in registry.active
        assert "mcp__demo__lookup" in registry.active
    finally:
        await runtime.mcp.stop()


async def test_without_the_users_opt_in_nothing_runs_in_plan_mode(tmp_path: Path) -> None:
    runtime, _, _log = await _started(tmp_path, plan="off")
    try:
        runtime.plan.enter_plan()
        assert not [n for n in runtime.registry.active if n.startswith("mcp__")]
        lookup = runtime.registry.get("mcp__demo__lookup")
        assert lookup is not None
        assert await runtime.plan.gate(lookup, McpArgs.model_validate({"key": "A"}))
    finally:
        await runtime.mcp.stop()


async def test_outside_plan_mode_calls_ask_and_show_the_hints(tmp_path: Path) -> None:
    runtime, decider, _log = await _started(tmp_path)
    try:
        assert runtime.plan.mode is Mode.OFF
        perms = runtime.permissions
        assert perms is not None
        write = runtime.registry.get("mcp__demo__update_ticket")
        assert write is not None
        args = McpArgs.model_validate({"key": "A-2", "status": "done"})
        decider.approvals.append(ApprovalDecision(ApprovalChoice.DENY))
        assert await perms.gate(write, args)
        request = decider.approval_requests[-1]
        assert "destructiveHint" in request.warning and "openWorldHint" in request.warning
        assert "demo" in request.why
        # Even the read-only tool asks outside plan mode (a hint never allows).
        lookup = runtime.registry.get("mcp__demo__lookup")
        assert lookup is not None
        assert perms.evaluate(lookup, McpArgs.model_validate({"key": "A"})).action == "ask"
    finally:
        await runtime.mcp.stop()


async def test_rules_allow_a_server_and_deny_wins(tmp_path: Path) -> None:
    permissions = {"allow": ["mcp__demo__*"], "deny": ["mcp__demo__update_*"]}
    runtime, decider, _log = await _started(tmp_path, permissions=permissions)
    try:
        perms = runtime.permissions
        assert perms is not None and not perms.warnings
        lookup = runtime.registry.get("mcp__demo__lookup")
        write = runtime.registry.get("mcp__demo__update_ticket")
        assert lookup is not None and write is not None
        assert await perms.gate(lookup, McpArgs.model_validate({"key": "B"})) is None
        refusal = await perms.gate(write, McpArgs.model_validate({"key": "B", "status": "x"}))
        assert refusal and "mcp__demo__update_*" in refusal
        assert decider.approval_requests == []
    finally:
        await runtime.mcp.stop()


async def test_a_server_that_dies_mid_call_is_a_tool_error_not_a_hang(tmp_path: Path) -> None:
    runtime, _, _log = await _started(tmp_path)
    notices: list[str] = []
    runtime.agent.subscribe(lambda e: notices.append(getattr(e, "message", "")))
    try:
        crash = runtime.registry.get("mcp__demo__crash")
        assert crash is not None
        with pytest.raises(ToolError, match="demo"):
            await finishes(crash.run(McpArgs(), runtime.agent.ctx), "the crashing call")
        assert any("MCP server demo" in n for n in notices)
        lookup = runtime.registry.get("mcp__demo__lookup")
        assert lookup is not None
        # The next call fails fast or succeeds after the one restart; it never hangs.
        try:
            await finishes(
                lookup.run(McpArgs.model_validate({"key": "C"}), runtime.agent.ctx), "after"
            )
        except ToolError:
            pass
    finally:
        await runtime.mcp.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_streamable_http_server_on_loopback(tmp_path: Path) -> None:
    port = _free_port()
    log = tmp_path / "http.log"
    env = {"DEMO_LOG": str(log), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        settings = Settings(mcp={"servers": {"web": {"url": url, "headers": {"X-T": "1"}}}})
        runtime, *_ = make_runtime(tmp_path, settings=settings, persist=False)
        assert runtime.mcp is not None
        server = runtime.mcp.servers["web"]
        for _ in range(100):  # the server process may still be binding its port
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await __import__("asyncio").sleep(0.05)
        runtime.start_mcp()
        await finishes(server.wait_started(), "the HTTP server starting")
        assert server.info.state == "running", server.info.last_error
        lookup = runtime.registry.get("mcp__web__lookup")
        assert lookup is not None
        result = await finishes(
            lookup.run(McpArgs.model_validate({"key": "H"}), runtime.agent.ctx), "call"
        )
        assert result.content.startswith("ticket H: open")
        await runtime.mcp.stop()
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_model_in_plan_mode_cannot_call_the_writing_tool(tmp_path: Path) -> None:
    """Through the whole loop: the model names the write, and mcp_search cannot unlock it."""
    from planshell.mcp.tools import McpSearchArgs

    replies = [
        Reply(calls=[("mcp__demo__update_ticket", {"key": "J-1", "status": "done"})]),
        Reply(calls=[("mcp__demo__lookup", {"key": "J-1"})]),
        Reply(text="planned"),
    ]
    runtime, _, log = await _started(tmp_path, replies)
    provider = runtime.provider
    assert isinstance(provider, ScriptedProvider)
    try:
        runtime.plan.enter_plan()
        await finishes(runtime.agent.submit("plan the ticket"), "the turn")
        results = [m for m in runtime.agent.messages if m.role == "tool"]
        assert results[0].is_error and "not available" in results[0].content
        assert not results[1].is_error and "ticket J-1" in results[1].content
        assert _lines(log) == ["lookup J-1"]
        offered = provider.requests[0].tools
        assert "mcp__demo__lookup" in offered and "mcp__demo__update_ticket" not in offered
        # mcp_search in plan mode activates only what plan mode allows.
        assert not runtime.registry.is_active("mcp__demo__update_ticket")
        search = runtime.mcp.search
        found = await search.run(McpSearchArgs(query="ticket"), runtime.agent.ctx)
        assert "update_ticket" not in found.content  # plan mode lists only what it allows
        assert runtime.plan.mcp_ran == ["mcp__demo__lookup"]
    finally:
        await runtime.mcp.stop()


async def test_sub_agents_never_get_mcp_tools(tmp_path: Path) -> None:
    runtime, _, _log = await _started(tmp_path)
    try:
        from planshell.agents.subagents import TaskTool

        task = runtime.registry.get("task")
        assert isinstance(task, TaskTool)
        assert task.profiles
        for profile in task.profiles.values():
            child, _ = task.build(profile)
            assert not [n for n in child.registry.names() if n.startswith("mcp")]
    finally:
        await runtime.mcp.stop()


async def test_the_review_request_counts_the_mcp_tools_that_ran(tmp_path: Path) -> None:
    """Through the loop: two lookups ran, the refused write did not; the review gets the counts."""
    from tests.plan_samples import generated_plan

    plan = generated_plan(10, title="Fix J-1", intro="i", last_line="end")
    replies = [
        Reply(calls=[("mcp__demo__lookup", {"key": "J-1"})]),
        Reply(calls=[("mcp__demo__update_ticket", {"key": "J-1", "status": "done"})]),
        Reply(calls=[("mcp__demo__lookup", {"key": "J-2"})]),
        Reply(calls=[("write_plan", {"title": "Fix J-1", "content": plan, "plan_path": "j.md"})]),
        Reply(calls=[("exit_plan_mode", {"plan_path": "j.md"})]),
        Reply(text="kept"),
    ]
    runtime, decider, _log = await _started(tmp_path, replies)
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    try:
        runtime.plan.enter_plan()
        await finishes(runtime.agent.submit("plan the ticket"), "the turn")
        (request,) = decider.requests
        assert request.mcp_ran == (("mcp__demo__lookup", 2),)
        line = request.mcp_line()
        assert line.startswith("MCP tools ran while planning: mcp__demo__lookup (2×)")
        assert "update_ticket" not in line and "not in the receipt" in line
        notices = [getattr(e, "message", "") for e in recorder.events]
        assert any(n.startswith("MCP tools ran while planning") for n in notices)
        # A new planning session starts with none; outside plan mode there is none.
        runtime.plan.leave()
        assert runtime.plan.mcp_calls() == ()
        runtime.plan.enter_plan()
        assert runtime.plan.mcp_calls() == ()
    finally:
        await runtime.mcp.stop()


async def test_mcp_search_in_plan_mode_cannot_unlock_a_write_or_a_late_tool(tmp_path: Path) -> None:
    """Over the budget, plan mode's tools wait behind mcp_search; a hostile model using it
    to reach the writing tool or a tool that appeared after entry gets neither."""

    log = tmp_path / "server.log"
    settings = _settings(log)
    settings.mcp.max_schema_chars = 100  # nothing fits: everything goes behind mcp_search
    replies = [
        Reply(calls=[("mcp_search", {"query": "ticket status change update"})]),
        Reply(calls=[("mcp__demo__update_ticket", {"key": "J-1", "status": "done"})]),
        Reply(calls=[("mcp__demo__lookup", {"key": "J-1"})]),  # the server adds late_tool
        Reply(text="looked"),
        Reply(calls=[("mcp_search", {"query": "late"})]),
        Reply(calls=[("mcp__demo__late_tool", {"text": "x"})]),
        Reply(calls=[("mcp__demo__update_ticket", {"key": "J-2", "status": "done"})]),
        Reply(text="done"),
    ]
    runtime, provider, _, _ = make_runtime(tmp_path, replies, settings=settings, persist=False)
    mcp = runtime.mcp
    assert mcp is not None
    try:
        runtime.start_mcp()
        await finishes(mcp.servers["demo"].wait_started(), "start")
        runtime.plan.enter_plan()
        offered = runtime.registry.active
        assert "mcp_search" in offered and not [n for n in offered if n.startswith("mcp__")]
        await finishes(runtime.agent.submit("plan the ticket"), "the first turn")
        results = [m.content for m in runtime.agent.messages if m.role == "tool"]
        # "ticket" matches lookup's description: activated; the write is not even listed.
        assert "mcp__demo__lookup" in results[0] and "update_ticket" not in results[0]
        assert "not available" in results[1]  # called by name anyway: refused
        assert results[2].startswith("ticket J-1: open")
        await wait_for(lambda: runtime.registry.get("mcp__demo__late_tool") is not None)

        await finishes(runtime.agent.submit("go on"), "the second turn")
        results = [m.content for m in runtime.agent.messages if m.role == "tool"][3:]
        assert "late_tool" not in results[0]
        assert "not available" in results[1] and "not available" in results[2]
        # Asking the manager directly changes nothing either.
        assert mcp._activate(["mcp__demo__update_ticket", "mcp__demo__late_tool"]) == []
        assert not runtime.registry.is_active("mcp__demo__update_ticket")
        assert _lines(log) == ["lookup J-1"]
        first = provider.requests[0].tools
        assert "mcp_search" in first and not [n for n in first if n.startswith("mcp__")]
        assert all(
            "update_ticket" not in request.tools and "late_tool" not in request.tools
            for request in provider.requests
        )
    finally:
        await mcp.stop()


def _gone(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_stdio_server_whose_call_timed_out_is_restarted_once(tmp_path: Path) -> None:
    """A timed-out call leaves the session likely wedged: the model gets a tool error, the
    person a notice, and the server is closed and started again (once; then it stays failed)."""
    from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    from planshell.mcp import client

    assert (client.REQUEST_TIMEOUT, client.CONNECTION_CLOSED) == (
        REQUEST_TIMEOUT,
        CONNECTION_CLOSED,
    )
    runtime, _, log = await _started(tmp_path, call_timeout=0.3)
    assert runtime.mcp is not None
    notices: list[str] = []
    runtime.agent.subscribe(lambda e: notices.append(getattr(e, "message", "")))
    server = runtime.mcp.servers["demo"]
    try:
        slow = runtime.registry.get("mcp__demo__slow")
        assert slow is not None
        with pytest.raises(ToolError, match=r"did not answer within 0\.3s; restarting it"):
            await finishes(slow.run(McpArgs(), runtime.agent.ctx), "the timed-out call")
        assert any("MCP server demo: no answer from slow" in n for n in notices)
        (first,) = [int(line.split()[1]) for line in _lines(log) if line.startswith("slow ")]
        await wait_for(lambda: _gone(first))  # the wedged process was closed
        await wait_for(lambda: server.info.state == "running")  # and started again
        lookup = runtime.registry.get("mcp__demo__lookup")
        assert lookup is not None
        result = await finishes(
            lookup.run(McpArgs.model_validate({"key": "R"}), runtime.agent.ctx), "after restart"
        )
        assert result.content.startswith("ticket R: open")

        # The one restart is spent: a second timeout leaves the server failed, not looping.
        with pytest.raises(ToolError, match="did not answer"):
            await finishes(slow.run(McpArgs(), runtime.agent.ctx), "the second timeout")
        await wait_for(lambda: server.info.state == "failed")
        assert any("MCP server demo stopped" in n for n in notices)
        with pytest.raises(ToolError, match="not running"):
            await finishes(lookup.run(McpArgs.model_validate({"key": "S"}), runtime.agent.ctx), "x")
    finally:
        await runtime.mcp.stop()


async def test_a_session_that_starts_in_plan_mode_is_told_how_to_get_its_mcp_tools(
    tmp_path: Path,
) -> None:
    """Servers start after a --plan / ui.start_mode session entered PLAN: their tools wait
    (the set is fixed at entry), and a notice says so and how to offer them."""
    from planshell.agent import events as ev

    log = tmp_path / "server.log"
    runtime, _, _, recorder = make_runtime(
        tmp_path, settings=_settings(log), persist=False, plan=True
    )
    assert runtime.mcp is not None and runtime.plan.mode is Mode.PLAN
    try:
        runtime.start_mcp()
        await finishes(runtime.mcp.servers["demo"].wait_started(), "start")
        assert "mcp__demo__lookup" not in runtime.registry.active
        notices = [n.message for n in recorder.of(ev.Notice) if "MCP tools arrived" in n.message]
        assert len(notices) == 1 and "mcp__demo__lookup" in notices[0]
        assert "update_ticket" not in notices[0]  # a writing tool is never offered in PLAN
        assert "/plan off, /plan on" in notices[0]
        runtime.plan.leave()
        runtime.plan.enter_plan()
        assert "mcp__demo__lookup" in runtime.registry.active
    finally:
        await runtime.mcp.stop()
