"""``[mcp.servers.NAME]``: the MCP servers planshell starts (issue 27).

A server is either a program on stdio (``command``, ``args``, ``env``) or a
streamable-HTTP endpoint (``url``, ``headers``). ``plan = "read-only-tools"``
is the person's opt-in that lets the server's ``readOnlyHint`` tools run in
plan mode; only the user's own config can set it (``USER_ONLY_KEYS``), and a
project layer that touches a server drops it (``drop_project_opt_ins``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def _server_names(servers: dict[str, Any]) -> dict[str, Any]:
    for name in servers:
        if not _SERVER_NAME.match(name):
            raise ValueError(
                f"mcp.servers: {name!r} is not a server name (letters, digits, _ and -, "
                "at most 32): it becomes part of tool names"
            )
    return servers


class McpServerConfig(BaseModel):
    """One server: stdio or streamable HTTP, its timeouts and its plan-mode opt-in."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, description="Program to start (stdio).")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment.")
    url: str | None = Field(None, description="Streamable-HTTP endpoint.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers.")
    plan: Literal["off", "read-only-tools"] = Field(
        "off",
        description='"read-only-tools": its readOnlyHint tools may run in plan mode (user config).',
    )
    startup_timeout: float = Field(20.0, gt=0, description="Seconds to start and list tools.")
    call_timeout: float = Field(60.0, gt=0, description="Seconds one tool call may take.")
    enabled: bool = Field(True, description="false: listed, never started.")
    # Set by load_settings: "project" when a project layer defined or changed it.
    origin: Literal["user", "project"] = Field("user", exclude=True)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of command (stdio) or url (HTTP)")
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError("mcp url must start with http:// or https://")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: Annotated[dict[str, McpServerConfig], AfterValidator(_server_names)] = Field(
        default_factory=dict, description="MCP servers by name (see docs/mcp.md)."
    )
    max_schema_chars: int = Field(
        4_000,
        gt=0,
        description="MCP tool schemas offered up front; beyond it, mcp_search finds the rest.",
    )


def drop_project_opt_ins(mcp: McpSettings, project_data: dict[str, Any]) -> None:
    """Mark servers a project layer touched; such a server never runs in plan mode.

    A trusted project may add servers, but a project that redefined the
    user's opted-in server (a new ``command`` under the same name) would
    otherwise inherit the person's ``plan = "read-only-tools"``.
    """
    section = project_data.get("mcp")
    touched = section.get("servers") if isinstance(section, dict) else None
    if not isinstance(touched, dict):
        return
    for name in touched:
        server = mcp.servers.get(name)
        if server is not None:
            mcp.servers[name] = server.model_copy(update={"origin": "project", "plan": "off"})
