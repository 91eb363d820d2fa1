"""Untrusted server text: names, schemas and the /mcp page cannot smuggle controls or markup."""

from __future__ import annotations

from planshell.config.mcp import McpSettings
from planshell.mcp.manager import McpManager
from planshell.mcp.report import mcp_report
from planshell.mcp.tools import NAME_MAX, Hints, McpTool, clean_schema, tool_name
from planshell.tools.registry import ToolRegistry


def test_names_are_sanitised_capped_and_unique() -> None:
    taken: set[str] = set()
    first = tool_name("jira", "get issue;rm -rf", taken)
    assert first == "mcp__jira__get_issue_rm_-rf"
    taken.add(first)
    assert tool_name("jira", "get issue;rm -rf", taken) == first + "_2"
    long = tool_name("s", "x" * 200, set())
    assert len(long) == NAME_MAX


def test_schemas_must_be_small_objects() -> None:
    assert clean_schema({"type": "object", "properties": {"a": {"type": "string"}}}) is not None
    assert clean_schema({"type": "string"}) is None
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(500)}}
    assert clean_schema(huge) is None


async def _call(name: str, args: dict) -> tuple[str, bool]:  # type: ignore[type-arg]
    return "", False


def test_the_mcp_page_escapes_server_text() -> None:
    settings = McpSettings.model_validate({"servers": {"s": {"command": "x"}}})
    manager = McpManager(
        settings,
        ToolRegistry(),
        on_notice=lambda t: None,
        on_added=lambda n, o: None,
        in_plan=lambda: False,
        plan_names=frozenset,
    )
    info = manager.servers["s"].info
    info.state, info.last_error = "failed", "boom | \x1b[31mred\x1b[0m\nsecond line"
    info.tools = [
        McpTool(
            name="mcp__s__t",
            server="s",
            remote_name="t",
            description="d",
            schema={"type": "object"},
            hints=Hints(read_only=True),
            plan_opt_in=False,
            call=_call,
        )
    ]
    page = mcp_report(manager)
    assert "\x1b" not in page and "boom \\| red" in page
    assert "| `mcp__s__t` | readOnlyHint, openWorldHint | no |" in page
    assert "No MCP server" in mcp_report(None)
