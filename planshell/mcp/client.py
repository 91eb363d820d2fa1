"""Running MCP servers with the official SDK: start in the background, list, call, restart once.

Each server lives in one asyncio task that holds the SDK's transport and
``ClientSession`` contexts (anyio scopes must close in the task that opened
them); calls from the agent go through that session with a per-call timeout,
so a dead or stuck server gives a tool error, never a hung turn.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from planshell.config.mcp import McpServerConfig
from planshell.mcp.tools import (
    DESCRIPTION_MAX,
    Hints,
    McpTool,
    clean_schema,
    clean_text,
    tool_name,
)

RESTART_BACKOFF = 1.0  # seconds before the one restart
# JSON-RPC codes of the SDK's MCPError (mcp.types; literals: no SDK import at start-up).
REQUEST_TIMEOUT = -32001
CONNECTION_CLOSED = -32000


@dataclass
class ServerState:
    """What /mcp and doctor show for one server."""

    name: str
    config: McpServerConfig
    # not started, untrusted, disabled, starting, running, closing, failed
    state: str = "not started"
    last_error: str = ""
    tools: list[McpTool] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tools refused (schema too big)


class McpServer:
    """One configured server and its SDK session."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        on_tools: Callable[[McpServer], None],
        on_notice: Callable[[str], None],
        root: str | None = None,
    ) -> None:
        self.info = ServerState(name, config)
        self._on_tools = on_tools
        self._notice = on_notice
        self._root = root
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._restarted = False
        self._refresh: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.info.name

    def start(self) -> None:
        """Start in the background (never awaited by start-up: the first frame is not held)."""
        if self._task is None:
            self.info.state = "starting"
            self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")

    async def wait_started(self, timeout: float | None = None) -> None:
        """For tests and doctor: until the server is running or failed."""
        limit = timeout if timeout is not None else self.info.config.startup_timeout + 5
        async with asyncio.timeout(limit):
            while self.info.state in ("starting", "not started", "closing"):
                await asyncio.sleep(0.02)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except BaseException:
                pass

    async def _run(self) -> None:
        while True:
            try:
                await self._serve()
                return
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                self._session = None
                self.info.last_error = clean_text(_describe(exc), 300)
                if self._stop.is_set() or self._restarted:
                    self.info.state = "failed"
                    self._notice(f"MCP server {self.name} stopped: {self.info.last_error}")
                    return
                self._restarted = True
                self.info.state = "starting"
                await asyncio.sleep(RESTART_BACKOFF)

    async def _serve(self) -> None:
        from mcp import ClientSession

        cfg = self.info.config
        async with AsyncExitStack() as stack:
            async with asyncio.timeout(cfg.startup_timeout):
                streams = await stack.enter_async_context(self._transport(stack))
                read, write = streams[0], streams[1]
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message)
                )
                await session.initialize()
                self._session = session
                await self._list_tools()
            self.info.state = "running"
            self.info.last_error = ""
            closed = asyncio.Event()
            self._closed = closed
            await closed.wait()
            raise ConnectionError(self._closed_reason)

    _closed_reason = "the server closed the connection"

    def _transport(self, stack: AsyncExitStack) -> Any:
        cfg = self.info.config
        if cfg.command is not None:
            from mcp.client.stdio import (
                StdioServerParameters,
                get_default_environment,
                stdio_client,
            )

            params = StdioServerParameters(
                command=cfg.command,
                args=list(cfg.args),
                # The SDK's safe subset (PATH, HOME, …), never planshell's API keys.
                env={**get_default_environment(), **cfg.env},
                cwd=self._root,
            )
            errlog = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
            return stdio_client(params, errlog=errlog)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        assert cfg.url is not None
        client = create_mcp_http_client(headers=dict(cfg.headers))
        return streamable_http_client(cfg.url, http_client=client)

    async def _on_message(self, message: Any) -> None:
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._refresh = asyncio.create_task(self._relist())
        elif isinstance(message, Exception):
            self.info.last_error = clean_text(_describe(message), 300)

    async def _relist(self) -> None:
        try:
            await self._list_tools()
        except Exception as exc:
            self.info.last_error = clean_text(_describe(exc), 300)

    async def _list_tools(self) -> None:
        session = self._session
        if session is None:
            return
        listed = await session.list_tools()
        tools: list[McpTool] = []
        skipped: list[str] = []
        taken: set[str] = set()
        for remote in listed.tools:
            schema = clean_schema(remote.input_schema)
            if schema is None:
                skipped.append(clean_text(remote.name, 64))
                continue
            notes = remote.annotations
            hints = Hints(
                read_only=bool(notes and notes.read_only_hint is True),
                destructive=notes.destructive_hint if notes else None,
                open_world=notes.open_world_hint if notes else None,
            )
            name = tool_name(self.name, remote.name, taken)
            taken.add(name)
            described = clean_text(remote.description or "", DESCRIPTION_MAX)
            tools.append(
                McpTool(
                    name=name,
                    server=self.name,
                    remote_name=remote.name,
                    description=f"[MCP {self.name}; untrusted server text] {described}",
                    schema=schema,
                    hints=hints,
                    plan_opt_in=self.info.config.plan == "read-only-tools",
                    call=self.call,
                )
            )
        self.info.tools, self.info.skipped = tools, skipped
        self._on_tools(self)

    async def call(self, remote: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """One tools/call: (text content, is_error). Raises ToolError-worthy RuntimeError."""
        from planshell.tools.base import ToolError

        session = self._session
        if session is None or self.info.state != "running":
            raise ToolError(f"MCP server {self.name} is not running ({self.info.state}).")
        timeout = self.info.config.call_timeout
        try:
            async with asyncio.timeout(timeout + 1):
                result = await session.call_tool(remote, arguments, read_timeout_seconds=timeout)
        except Exception as exc:
            if not (isinstance(exc, TimeoutError) or _error_code(exc) == REQUEST_TIMEOUT):
                reason = clean_text(_describe(exc), 300)
                self._failed(reason, close=_error_code(exc) == CONNECTION_CLOSED)
                raise ToolError(
                    f"MCP server {self.name} failed during the call: {reason}"
                ) from None
            # A stdio server that let a call time out is likely wedged (one process,
            # one session): close it and restart it, the same way as a closed connection.
            restart = self.info.config.command is not None
            then = "; restarting it" if restart else ""
            self._failed(
                f"no answer from {clean_text(remote, 64)} within {timeout:g}s{then}", close=restart
            )
            raise ToolError(
                f"MCP server {self.name} did not answer within {timeout:g}s{then}."
            ) from None
        texts = [getattr(block, "text", "") for block in result.content]
        other = sum(1 for block in result.content if getattr(block, "type", "") != "text")
        text = "\n".join(t for t in texts if t)
        if other:
            text += f"\n[{other} non-text content block(s) not shown]"
        return text, bool(result.is_error)

    def _failed(self, reason: str, *, close: bool = False) -> None:
        """A call failed: the person is told; ``close`` ends the session (one restart)."""
        self.info.last_error = reason
        self._notice(f"MCP server {self.name}: {reason}")
        closed = getattr(self, "_closed", None)
        if closed is not None and (close or "Connection closed" in reason):
            self._closed_reason = reason
            self._session = None  # no further call reaches the wedged session
            self.info.state = "closing"  # then starting again (once) or failed: see _run
            closed.set()


def _error_code(exc: BaseException) -> int | None:
    """The JSON-RPC error code of the SDK's MCPError (timeout, connection closed), else None."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    return code if isinstance(code, int) else None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, TimeoutError):
        return "did not start in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
