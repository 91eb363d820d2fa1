"""``planshell doctor`` lists MCP servers and whether each started (a real server, a missing one)."""

from __future__ import annotations

import sys
from pathlib import Path

from planshell.config import Settings
from planshell.doctor import _mcp

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def test_doctor_rows_say_which_servers_started(tmp_path: Path) -> None:
    servers = {
        "demo": {"command": sys.executable, "args": [str(SERVER)], "plan": "read-only-tools"},
        "gone": {"command": str(tmp_path / "no-such-program"), "startup_timeout": 5},
        "off": {"command": "x", "enabled": False},
    }
    rows = dict(_mcp(Settings(mcp={"servers": servers}), tmp_path))
    assert rows["demo"] == "started: 4 tools, 2 allowed in plan mode"
    assert rows["gone"].startswith("NOT started (failed)")
    assert rows["off"] == "not started: enabled = false"


def test_doctor_without_servers(tmp_path: Path) -> None:
    assert _mcp(Settings(), tmp_path) == [("servers", "none configured (see docs/mcp.md)")]
