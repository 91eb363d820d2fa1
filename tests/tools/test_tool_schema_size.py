"""The tool list is sent with every request: keep it small.

On a 4k-context local model the normal-mode list once cost about 3.4k
tokens. Measured the way ``planshell doctor`` reports it (characters / 4 of
the JSON each provider sends); the goal is under 1,500 tokens in normal mode.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from planshell.config import load_settings
from planshell.doctor import CHARS_PER_TOKEN
from planshell.llm.anthropic import to_anthropic_tool
from planshell.llm.demo import DemoProvider
from planshell.llm.openai_compat import to_openai_tool
from planshell.plan.decider import HeadlessDecider
from planshell.runtime import build_runtime
from planshell.tools.base import lean_schema

# Issue 14's goal, with the `task` tool (sub-agents) in the list, and `fetch` (issue 27,
# about 75 tokens: the list was at ~1,500 before it).
GOAL_TOKENS = 1600


@pytest.mark.parametrize("wire", [to_openai_tool, to_anthropic_tool])
def test_normal_mode_tool_schema_is_under_the_goal(tmp_path: Path, wire) -> None:  # type: ignore[no-untyped-def]
    runtime = build_runtime(
        load_settings(tmp_path), tmp_path, HeadlessDecider(), provider=DemoProvider(), persist=False
    )
    try:
        specs = runtime.registry.specs()
        names = [s.name for s in specs]
        assert (
            "write_plan" not in names and "exit_plan_mode" not in names
        )  # plan tools only in PLAN
        assert "fetch" in names
        tokens = len(json.dumps([wire(s) for s in specs], ensure_ascii=False)) // CHARS_PER_TOKEN
        assert tokens < GOAL_TOKENS, f"{tokens} tokens for {names}"
    finally:
        runtime.close()


# Plan mode drops edit/write/enter_plan_mode and adds the plan tools, ask_questions and task.
PLAN_GOAL_TOKENS = 1700


@pytest.mark.parametrize("wire", [to_openai_tool, to_anthropic_tool])
def test_plan_mode_tool_schema_is_under_its_goal(tmp_path: Path, wire) -> None:  # type: ignore[no-untyped-def]
    runtime = build_runtime(
        load_settings(tmp_path), tmp_path, HeadlessDecider(), provider=DemoProvider(), persist=False
    )
    try:
        runtime.plan.enter_plan()
        specs = runtime.registry.specs()
        names = [s.name for s in specs]
        assert "write" not in names and "edit" not in names and "task" in names
        assert "fetch" in names  # offered in PLAN; each new domain asks (plan/fetch_gate.py)
        tokens = len(json.dumps([wire(s) for s in specs], ensure_ascii=False)) // CHARS_PER_TOKEN
        assert tokens < PLAN_GOAL_TOKENS, f"{tokens} tokens for {names}"
    finally:
        runtime.close()


def test_lean_schema_drops_titles_not_properties_named_title() -> None:
    schema = {
        "title": "WritePlanArgs",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "Short plan title."},
            "path": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "title": "Path",
                "description": "Existing plan.",
            },
        },
        "required": ["title"],
    }
    assert lean_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Short plan title."},
            "path": {"type": "string", "description": "Existing plan."},
        },
        "required": ["title"],
    }


MCP_SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "demo_server.py"


async def test_mcp_tools_over_the_budget_wait_behind_mcp_search(tmp_path: Path) -> None:
    """Issue 27: MCP schemas beyond mcp.max_schema_chars are found with mcp_search, for a turn."""
    import sys

    from planshell.config import Settings
    from planshell.mcp.tools import McpSearchArgs

    server = {"command": sys.executable, "args": [str(MCP_SERVER)]}
    settings = Settings(mcp={"servers": {"demo": server}, "max_schema_chars": 200})
    runtime = build_runtime(
        settings, tmp_path, HeadlessDecider(), provider=DemoProvider(), persist=False
    )
    assert runtime.mcp is not None
    try:
        runtime.start_mcp()
        await asyncio.wait_for(runtime.mcp.servers["demo"].wait_started(), 30)
        names = [s.name for s in runtime.registry.specs()]
        assert "mcp_search" in names
        assert not [n for n in names if n.startswith("mcp__")]
        tokens = (
            len(json.dumps([to_openai_tool(s) for s in runtime.registry.specs()]))
            // CHARS_PER_TOKEN
        )
        assert tokens < GOAL_TOKENS + 200 // CHARS_PER_TOKEN + 100, names
        search = runtime.registry.get("mcp_search")
        assert search is not None
        found = await search.run(McpSearchArgs(query="ticket"), runtime.agent.ctx)
        assert "mcp__demo__lookup" in found.content
        assert runtime.registry.is_active("mcp__demo__lookup")
        runtime.mcp.end_turn()  # for the turn only
        assert not runtime.registry.is_active("mcp__demo__lookup")
    finally:
        await runtime.mcp.stop()


@asynccontextmanager
async def _many_tools_started(tmp_path: Path, extra: int):  # type: ignore[no-untyped-def]
    """A runtime whose demo server, started, brings ``extra`` more read-only tools, opted in."""
    import sys

    from planshell.config import Settings

    server = {
        "command": sys.executable,
        "args": [str(MCP_SERVER)],
        "env": {"DEMO_EXTRA": str(extra), "DEMO_LOG": str(tmp_path / "server.log")},
        "plan": "read-only-tools",
    }
    settings = Settings(mcp={"servers": {"demo": server}})  # the default budget
    runtime = build_runtime(
        settings, tmp_path, HeadlessDecider(), provider=DemoProvider(), persist=False
    )
    mcp = runtime.mcp
    assert mcp is not None
    try:
        runtime.start_mcp()
        await asyncio.wait_for(mcp.servers["demo"].wait_started(), 30)
        yield runtime, mcp
    finally:
        await mcp.stop()
        runtime.close()


@pytest.mark.parametrize("wire", [to_openai_tool, to_anthropic_tool])
async def test_plan_mode_keeps_many_mcp_tools_within_the_budget(tmp_path: Path, wire) -> None:  # type: ignore[no-untyped-def]
    """Issue 27: plan mode's opted-in MCP tools obey mcp.max_schema_chars as well."""
    from planshell.mcp.tools import McpSearchArgs, schema_chars

    async with _many_tools_started(tmp_path, 40) as (runtime, mcp):
        allowed = [t for t in mcp.tools() if t.plan_permitted]
        assert len(allowed) > 40
        assert schema_chars(allowed) > mcp.settings.max_schema_chars  # they do not all fit
        runtime.plan.enter_plan()
        specs = runtime.registry.specs()
        names = [s.name for s in specs]
        assert "mcp_search" in names and "write_plan" in names
        assert not [n for n in names if n.startswith("mcp__")], names
        tokens = len(json.dumps([wire(s) for s in specs], ensure_ascii=False)) // CHARS_PER_TOKEN
        assert tokens < PLAN_GOAL_TOKENS + 100, f"{tokens} tokens for {names}"
        # Everything plan mode allows is still reachable, for a turn, through mcp_search.
        assert runtime.plan.plan_mcp == {t.name for t in allowed}
        search = runtime.registry.get("mcp_search")
        assert search is not None
        found = await search.run(McpSearchArgs(query="docs_7 "), runtime.agent.ctx)
        assert "mcp__demo__docs_7" in found.content
        assert runtime.registry.is_active("mcp__demo__docs_7")
        mcp.end_turn()
        assert not runtime.registry.is_active("mcp__demo__docs_7")
        # Leaving restores the normal list: still within the budget (mcp_search, no MCP tool).
        runtime.plan.leave()
        normal = runtime.registry.active
        assert "mcp_search" in normal and not [n for n in normal if n.startswith("mcp__")]


async def test_plan_mode_offers_its_mcp_tools_up_front_when_they_fit(tmp_path: Path) -> None:
    """Few tools: plan mode offers its read-only ones directly and no mcp_search."""
    async with _many_tools_started(tmp_path, 0) as (runtime, _mcp):
        runtime.plan.enter_plan()
        names = runtime.registry.active
        assert "mcp__demo__lookup" in names and "mcp__demo__crash" in names
        assert "mcp__demo__update_ticket" not in names and "mcp_search" not in names
