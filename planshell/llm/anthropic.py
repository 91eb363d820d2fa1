"""Anthropic Messages API streaming.

The Messages API is stricter than Chat Completions about history: thinking
blocks must be returned with their signatures, tool results travel as
``tool_result`` blocks inside a user message, and roles must alternate, so
the conversion below groups and merges messages accordingly.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from planshell.llm.http import StreamingHTTPProvider, StreamRequest
from planshell.llm.sse import SSEEvent
from planshell.llm.types import (
    Message,
    StopReason,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ThinkingBlock,
    ThinkingChunk,
    ToolCall,
    ToolCallReady,
    ToolSpec,
    Usage,
    UsageReport,
)

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
}


class AnthropicProvider(StreamingHTTPProvider):
    """Streams replies from ``POST {base_url}/v1/messages``."""

    name = "anthropic"
    display_name = "Anthropic"
    key_env = "ANTHROPIC_API_KEY"
    default_base_url = "https://api.anthropic.com"

    def _build_request(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_output: int | None = None,
    ) -> StreamRequest:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._output_budget(max_output) or DEFAULT_MAX_TOKENS,
            "stream": True,
            "messages": to_anthropic_messages(messages),
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [to_anthropic_tool(tool) for tool in tools]
            if self.tool_choice is not None:
                body["tool_choice"] = anthropic_tool_choice(self.tool_choice)
        body.update(self.extra_body)
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        if self.api_key:
            headers["x-api-key"] = self.api_key
        headers.update(self.headers)
        return StreamRequest(self._endpoint(), headers, body)

    def _endpoint(self) -> str:
        # Accept base URLs given with or without the version segment.
        if self.base_url.endswith("/v1"):
            return f"{self.base_url}/messages"
        return f"{self.base_url}/v1/messages"

    async def _parse(self, events: AsyncIterator[SSEEvent]) -> AsyncGenerator[StreamEvent, None]:
        state = _MessageState()
        async for event in events:
            payload = self._event_json(event)
            if not isinstance(payload, dict):
                continue
            kind = payload.get("type") or event.event
            if kind == "error":
                raise self._stream_error(payload)
            if kind == "message_stop":
                state.done = True
                break
            for out in state.apply(kind, payload):
                yield out
        if not state.done and state.stop_reason is None:
            raise self._cut_off()
        calls = state.calls + state.flush_tool_calls()
        stop = state.final_stop_reason()
        # A reply cut off by the token limit has unfinished arguments: never run them.
        if stop != "max_tokens":
            for call in calls:
                yield ToolCallReady(call)
        if state.saw_usage:
            yield UsageReport(Usage(state.input_tokens, state.output_tokens))
        incomplete = tuple(calls) if stop == "max_tokens" else ()
        yield StreamEnd(stop, thinking=tuple(state.thinking), incomplete_calls=incomplete)

    def default_output_budget(self) -> int | None:
        return DEFAULT_MAX_TOKENS


@dataclass
class _Block:
    """A content block still being streamed."""

    type: str
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    tool_id: str = ""
    tool_name: str = ""
    initial_input: Any = None

    def tool_call(self) -> ToolCall:
        arguments = "".join(self.text)
        if not arguments:
            arguments = json.dumps(self.initial_input) if self.initial_input else "{}"
        return ToolCall(id=self.tool_id, name=self.tool_name, arguments=arguments)

    def thinking_block(self) -> ThinkingBlock:
        return ThinkingBlock("".join(self.text), signature=self.signature, redacted=self.redacted)


@dataclass
class _MessageState:
    """Everything learnt from the events of one reply so far."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    thinking: list[ThinkingBlock] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    saw_usage: bool = False
    stop_reason: str | None = None
    saw_tool_use: bool = False
    started: bool = False
    done: bool = False

    def apply(self, kind: str, payload: dict[str, Any]) -> list[StreamEvent]:
        handler = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
        }.get(kind)
        return handler(payload) if handler else []  # ping and future events

    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        if self.started:
            # The server restarted the message: what the abandoned one built
            # (thinking with its signature, half-made tool calls) must not
            # reach the history, where a stale signature would be rejected.
            self.blocks.clear()
            self.thinking.clear()
            self.calls.clear()
            self.saw_tool_use = False
            self.stop_reason = None
        self.started = True
        usage = (payload.get("message") or {}).get("usage") or {}
        self._read_usage(usage)
        return []

    def _read_usage(self, usage: dict[str, Any]) -> None:
        # Cached prompt tokens count towards the context the model saw.
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        if any(isinstance(usage.get(key), int) for key in keys):
            self.input_tokens = sum(int(usage.get(key) or 0) for key in keys)
            self.saw_usage = True
        if isinstance(usage.get("output_tokens"), int):  # 0 is a real count
            self.output_tokens = int(usage["output_tokens"])
            self.saw_usage = True

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        start = payload.get("content_block") or {}
        block = _Block(type=str(start.get("type", "")))
        self.blocks[int(payload.get("index", 0))] = block
        if block.type == "tool_use":
            self.saw_tool_use = True
            block.tool_id = str(start.get("id", ""))
            block.tool_name = str(start.get("name", ""))
            block.initial_input = start.get("input")
        elif block.type == "redacted_thinking":
            block.redacted = str(start.get("data", ""))
        elif block.type == "thinking":
            block.signature = start.get("signature") or None
            return self._add_text(block, start.get("thinking"), ThinkingChunk)
        elif block.type == "text":
            return self._add_text(block, start.get("text"), TextChunk)
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        block = self.blocks.get(int(payload.get("index", 0)))
        delta = payload.get("delta") or {}
        if block is None:
            return []
        kind = delta.get("type")
        if kind == "text_delta":
            return self._add_text(block, delta.get("text"), TextChunk)
        if kind == "thinking_delta":
            return self._add_text(block, delta.get("thinking"), ThinkingChunk)
        if kind == "signature_delta":
            block.signature = (block.signature or "") + str(delta.get("signature", ""))
        elif kind == "input_json_delta":
            block.text.append(str(delta.get("partial_json", "")))
        return []

    @staticmethod
    def _add_text(
        block: _Block, text: Any, chunk: type[TextChunk] | type[ThinkingChunk]
    ) -> list[StreamEvent]:
        if not isinstance(text, str) or not text:
            return []
        block.text.append(text)
        return [chunk(text)]

    def _block_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        block = self.blocks.pop(int(payload.get("index", 0)), None)
        if block is None:
            return []
        if block.type == "tool_use":
            self.calls.append(block.tool_call())  # handed out at the end: see max_tokens
            return []
        if block.type in ("thinking", "redacted_thinking"):
            self.thinking.append(block.thinking_block())
        return []

    def _message_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        reason = (payload.get("delta") or {}).get("stop_reason")
        if reason:
            self.stop_reason = str(reason)
        self._read_usage(payload.get("usage") or {})
        return []

    def flush_tool_calls(self) -> list[ToolCall]:
        """Tool calls whose block never got its stop event (lenient servers)."""
        calls = [b.tool_call() for b in self.blocks.values() if b.type == "tool_use"]
        self.blocks.clear()
        return calls

    def final_stop_reason(self) -> StopReason:
        if self.stop_reason is None:
            return "tool_use" if self.saw_tool_use else "end_turn"
        return _STOP_REASONS.get(self.stop_reason, "end_turn")


def anthropic_tool_choice(choice: str | dict[str, Any]) -> dict[str, Any]:
    """The Messages API's ``tool_choice`` object from a Chat Completions-style setting."""
    if isinstance(choice, dict):
        return choice
    names = {"auto": "auto", "required": "any", "any": "any", "none": "none"}
    return {"type": names.get(choice, "auto")}


def to_anthropic_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def to_anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages API history: tool results grouped, same-role turns merged."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _content_blocks(message)
        if not blocks:
            continue  # empty text blocks are rejected by the API
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for entry in out:
        if entry["role"] == "user":
            # tool_result blocks must come before any text in a user turn
            entry["content"].sort(key=lambda block: block["type"] != "tool_result")
    return out


def _content_blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.role == "assistant":
        blocks.extend(_thinking_block(t) for t in message.thinking if t.signature or t.redacted)
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    if message.role == "assistant":
        blocks.extend(_tool_use_block(call) for call in message.tool_calls)
    return blocks


def _thinking_block(block: ThinkingBlock) -> dict[str, Any]:
    # Unsigned thinking (e.g. from another provider) would be rejected, so the
    # caller filters it out; redacted blocks are sent back verbatim.
    if block.redacted:
        return {"type": "redacted_thinking", "data": block.redacted}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def _tool_use_block(call: ToolCall) -> dict[str, Any]:
    try:
        arguments = json.loads(call.arguments, strict=False) if call.arguments else {}
    except ValueError:
        arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments}
