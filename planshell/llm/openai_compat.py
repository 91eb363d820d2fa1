"""OpenAI-compatible Chat Completions streaming (OpenAI, Ollama, vLLM, LM Studio, …).

Compatible servers differ in small ways, so parsing is lenient: tool-call
pieces are matched by ``index`` (or position when it is missing), reasoning
may arrive as ``reasoning_content`` or ``reasoning``, ``content`` may be a
string or (Mistral) a list of typed ``text``/``thinking`` parts, a refusal
arrives as ``delta.refusal``, an error may be vLLM's flat ``{"object":
"error"}`` chunk, and a stream that has sent its ``finish_reason`` is complete
even if ``[DONE]`` never comes.
"""

from __future__ import annotations

import json
import uuid
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

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAICompatProvider(StreamingHTTPProvider):
    """Streams replies from ``POST {base_url}/chat/completions``."""

    name = "openai"
    display_name = "OpenAI-compatible"
    key_env = "OPENAI_API_KEY"
    default_base_url = "https://api.openai.com/v1"

    def _build_request(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_output: int | None = None,
    ) -> StreamRequest:
        body: dict[str, Any] = {"model": self.model, "stream": True}
        if self.stream_options:
            body["stream_options"] = dict(self.stream_options)
        body["messages"] = to_openai_messages(system, messages)
        if tools:
            body["tools"] = [to_openai_tool(tool) for tool in tools]
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
        budget = self._output_budget(max_output)
        if budget is not None:
            body["max_tokens"] = budget
        body.update(self.extra_body)
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        headers.update(self.headers)
        return StreamRequest(f"{self.base_url}/chat/completions", headers, body)

    async def _parse(self, events: AsyncIterator[SSEEvent]) -> AsyncGenerator[StreamEvent, None]:
        state = _ReplyState()
        async for event in events:
            if event.data.strip() == "[DONE]":
                state.done = True
                break
            chunk = self._event_json(event)
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error") or chunk.get("object") == "error":
                raise self._stream_error(chunk)  # vLLM: a flat error object, then [DONE]
            for out in state.apply(chunk):
                yield out
        if not state.done and state.finish_reason is None:
            raise self._cut_off()
        stop = state.stop_reason()
        calls = state.calls.finish()
        # A reply cut off by the token limit has unfinished arguments: never run them.
        if stop != "max_tokens":
            for call in calls:
                yield ToolCallReady(call)
        if state.usage is not None:
            yield UsageReport(state.usage)
        incomplete = tuple(calls) if stop == "max_tokens" else ()
        yield StreamEnd(stop, thinking=state.thinking_blocks(), incomplete_calls=incomplete)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def to_call(self) -> ToolCall:
        return ToolCall(
            id=self.id or f"call_{uuid.uuid4().hex[:24]}",
            name=self.name,
            arguments="".join(self.arguments),
        )


@dataclass
class _ToolCallAssembler:
    """Joins tool-call pieces that arrive across many chunks.

    ``slots`` maps the server's index to our call; a piece carrying a new id
    for an index already in use starts a new call (servers that send each
    whole call with index 0 or no index).
    """

    calls: list[_PartialCall] = field(default_factory=list)
    slots: dict[int, int] = field(default_factory=dict)

    def add(self, pieces: list[Any]) -> None:
        for position, piece in enumerate(pieces):
            if isinstance(piece, dict):
                self._add_piece(position, piece)

    def _add_piece(self, position: int, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        key = index if isinstance(index, int) else position
        function = piece.get("function") or {}
        call_id = piece.get("id") or ""
        slot = self.slots.get(key)
        if slot is None or (call_id and self.calls[slot].id and self.calls[slot].id != call_id):
            self.calls.append(_PartialCall())
            slot = self.slots[key] = len(self.calls) - 1
        call = self.calls[slot]
        call.id = call.id or call_id
        call.name = call.name or function.get("name") or ""
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call.arguments.append(arguments)
        elif arguments is not None:  # some servers send the parsed object
            call.arguments.append(json.dumps(arguments))

    def finish(self) -> list[ToolCall]:
        """Hand out the complete calls once; later calls return nothing."""
        done = [call.to_call() for call in self.calls]
        self.calls, self.slots = [], {}
        return done


@dataclass
class _ReplyState:
    """Everything learnt from the chunks of one reply so far."""

    calls: _ToolCallAssembler = field(default_factory=_ToolCallAssembler)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    had_tool_calls: bool = False
    refused: bool = False
    usage: Usage | None = None
    done: bool = False

    def apply(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            )
        out: list[StreamEvent] = []
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                out.extend(self._apply_choice(choice))
        return out

    def _apply_choice(self, choice: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
            out.append(ThinkingChunk(reasoning))
        out.extend(self._content(delta.get("content")))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.refused = True  # OpenAI: the refusal text replaces the content
            out.append(TextChunk(refusal))
        if isinstance(delta.get("tool_calls"), list):
            self.had_tool_calls = True
            self.calls.add(delta["tool_calls"])
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        return out

    def _content(self, content: Any) -> list[StreamEvent]:
        """``content`` as a string, or (Mistral) a list of typed text/thinking parts."""
        if isinstance(content, str):
            return [TextChunk(content)] if content else []
        if not isinstance(content, list):
            return []
        out: list[StreamEvent] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                out.extend(self._content(part["text"]))
            elif part.get("type") == "thinking":
                text = _part_text(part.get("thinking"))
                if text:
                    self.reasoning.append(text)
                    out.append(ThinkingChunk(text))
        return out

    def stop_reason(self) -> StopReason:
        reason = _FINISH_REASONS.get(self.finish_reason or "", "end_turn")
        if self.refused and reason == "end_turn":
            return "refusal"
        if self.had_tool_calls and reason == "end_turn":
            return "tool_use"  # some servers say "stop" after calling tools
        return reason

    def thinking_blocks(self) -> tuple[ThinkingBlock, ...]:
        return (ThinkingBlock("".join(self.reasoning)),) if self.reasoning else ()


def _part_text(value: Any) -> str:
    """The text of a Mistral ``thinking`` part: a string or a list of text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def to_openai_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def to_openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Chat Completions messages: system first, tool results as ``role: tool``."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        out.append(_to_openai_message(message))
    return out


def _to_openai_message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id or "",
            "content": message.content,
        }
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            # "" not null: llama-cpp-python answers HTTP 500 to a null content.
            "content": message.content,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}
