"""``/mcp`` shows the servers, their state and tools (a real stdio server)."""

from __future__ import annotations

import sys
from pathlib import Path

from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.mcp import McpScreen
from tests.ui_helpers import screen_text, send, until

SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "demo_server.py"


async def test_mcp_screen_lists_servers_tools_and_plan_state(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [str(SERVER)], "plan": "read-only-tools"}
    missing = {"command": str(tmp_path / "nope"), "startup_timeout": 5}
    settings = Settings(mcp={"servers": {"demo": server, "gone": missing}})
    app = PlanshellApp(
        settings, tmp_path, provider=ScriptedProvider([]), project_label="~/proj", persist=False
    )
    async with app.run_test(size=(130, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.ready)
        runtime = app.screen.runtime if isinstance(app.screen, ChatScreen) else None
        assert runtime is not None and runtime.mcp is not None
        states = {s.name: s for s in runtime.mcp.states()}
        await until(pilot, lambda: states["demo"].state == "running", timeout=30)
        await until(pilot, lambda: states["gone"].state == "failed", timeout=30)
        await send(pilot, "/mcp")
        await until(pilot, lambda: isinstance(app.screen, McpScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "demo" in text and "running" in text and "failed" in text
        assert "mcp__demo__lookup" in text and "readOnlyHint" in text
        assert "\x1b" not in text
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
