"""AnthropicProvider against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from planshell.llm.anthropic import AnthropicProvider, to_anthropic_messages
from planshell.llm.types import (
    Message,
    Provider,
    StreamEnd,
    TextChunk,
    ThinkingBlock,
    ThinkingChunk,
    ToolCall,
    ToolSpec,
    Usage,
    UsageReport,
)
from tests.engine_helpers import HANG_GUARD, finishes
from tests.provider_helpers import USER, calls_of, collect, failure, record_waits, text_of
from tests.sse_server import (
    Response,
    SSEServer,
    closed_port,
    load_transcript,
    sse_event,
)

MESSAGE_START = sse_event(
    {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}},
    "message_start",
)


def make(server: SSEServer, **kwargs: Any) -> AnthropicProvider:
    options: dict[str, Any] = {"api_key": "sk-ant-test", "backoff_base": 0.01}
    options.update(kwargs)
    return AnthropicProvider(model="claude-sonnet-4-5", base_url=server.url, **options)


def text_delta(text: str, index: int = 0) -> bytes:
    payload = {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }
    return sse_event(payload, "content_block_delta")


def block_start(block: dict[str, Any], index: int = 0) -> bytes:
    payload = {"type": "content_block_start", "index": index, "content_block": block}
    return sse_event(payload, "content_block_start")


def json_delta(partial: str, index: int = 0) -> bytes:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return sse_event(
        {"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta"
    )


def block_stop(index: int = 0) -> bytes:
    return sse_event({"type": "content_block_stop", "index": index}, "content_block_stop")


def message_end(reason: str) -> list[bytes]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason},
        "usage": {"output_tokens": 3},
    }
    return [sse_event(delta, "message_delta"), sse_event({"type": "message_stop"}, "message_stop")]


def overloaded() -> bytes:
    payload = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return sse_event(payload, "error")


# --- streaming -----------------------------------------------------------------


async def test_text_only(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_text.txt")))
    events = await collect(make(sse_server))
    assert text_of(events) == "Hello, wörld ✓"
    assert events[-2:] == [UsageReport(Usage(25, 15)), StreamEnd("end_turn")]
    request = sse_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    body = request.json
    assert body["system"] == "be brief"
    assert body["max_tokens"] == 8192 and body["stream"] is True
    assert body["model"] == "claude-sonnet-4-5"
    assert "tools" not in body


async def test_tool_use_split_into_tiny_writes(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_tool_use.txt"), chunk_size=3))
    events = await collect(make(sse_server))
    assert text_of(events) == "Let me look."
    assert calls_of(events) == [
        ToolCall("toolu_01", "read_file", '{"path": "README.md"}'),
        ToolCall("toolu_02", "list_dir", "{}"),  # no input_json_delta at all
    ]
    assert events[-2:] == [UsageReport(Usage(472, 89)), StreamEnd("tool_use")]


async def test_thinking_with_signature_and_redacted(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_thinking.txt")))
    events = await collect(make(sse_server))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thinking == "Let me solve this step by step:\n\n1. First break down 27 * 453"
    assert text_of(events) == "27 * 453 = 12,231"
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.stop_reason == "max_tokens"
    assert end.thinking == (
        ThinkingBlock(thinking, signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"),
        ThinkingBlock(
            "", redacted="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
        ),
    )
    assert events[-2] == UsageReport(Usage(100, 100))  # cached input tokens count


async def test_crlf_keepalive_and_split_utf8(sse_server: SSEServer) -> None:
    raw = load_transcript("anthropic_text.txt").replace(b"\n\n", b"\n\n: keep-alive\n\n")
    raw = raw.replace(b"\n", b"\r\n")
    split = raw.index("ö".encode()) + 1  # inside the two-byte ö
    sse_server.add(Response.sse([raw[:split], 0.05, raw[split:]]))
    events = await collect(make(sse_server))
    assert text_of(events) == "Hello, wörld ✓"
    assert events[-1] == StreamEnd("end_turn")


async def test_malformed_tool_json_arrives_as_is(sse_server: SSEServer) -> None:
    tool = {"type": "tool_use", "id": "toolu_x", "name": "edit", "input": {}}
    body = [MESSAGE_START, block_start(tool), json_delta('{"path": '), json_delta('"a.py", }')]
    sse_server.add(Response.sse([*body, block_stop(), *message_end("tool_use")]))
    events = await collect(make(sse_server))
    assert calls_of(events) == [ToolCall("toolu_x", "edit", '{"path": "a.py", }')]


async def test_base_url_with_v1_suffix(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_text.txt")))
    provider = AnthropicProvider(model="m", base_url=f"{sse_server.url}/v1/", api_key=None)
    await collect(provider)
    assert sse_server.requests[0].path == "/v1/messages"
    assert "x-api-key" not in sse_server.requests[0].headers


def test_label_and_protocol() -> None:
    provider = AnthropicProvider(model="claude-sonnet-4-5")
    assert provider.label == "anthropic · claude-sonnet-4-5"
    assert provider.base_url == "https://api.anthropic.com"
    assert isinstance(provider, Provider)


# --- request body -------------------------------------------------------------


HISTORY = [
    Message("user", "fix the bug"),
    Message(
        "assistant",
        "Looking.",
        tool_calls=[
            ToolCall("toolu_1", "read_file", '{"path": "a.py"}'),
            ToolCall("toolu_2", "grep", '{"pattern": '),  # invalid JSON -> {}
        ],
        thinking=[
            ThinkingBlock("plan it", signature="sig-1"),
            ThinkingBlock("", redacted="opaque"),
            ThinkingBlock("from another provider"),  # unsigned: dropped
        ],
    ),
    Message("tool", "print('hi')", tool_call_id="toolu_1", tool_name="read_file"),
    Message("tool", "bad regex", tool_call_id="toolu_2", tool_name="grep", is_error=True),
    Message("user", "also check b.py"),
    Message("assistant", "Done."),
    Message("assistant", ""),
    Message("assistant", "And more."),
]

EXPECTED = [
    {"role": "user", "content": [{"type": "text", "text": "fix the bug"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan it", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "print('hi')",
                "is_error": False,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": "bad regex",
                "is_error": True,
            },
            {"type": "text", "text": "also check b.py"},
        ],
    },
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Done."}, {"type": "text", "text": "And more."}],
    },
]


def test_message_conversion() -> None:
    assert to_anthropic_messages(HISTORY) == EXPECTED


async def test_request_body_round_trip(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_text.txt")))
    tool = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {}}})
    provider = make(sse_server, max_tokens=1024, headers={"anthropic-beta": "x"})
    await collect(provider, HISTORY, [tool])
    request = sse_server.requests[0]
    assert request.headers["anthropic-beta"] == "x"
    assert request.json["max_tokens"] == 1024
    assert request.json["messages"] == EXPECTED
    assert request.json["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {}}},
        }
    ]


# --- retries and failures ---------------------------------------------------------


async def test_error_event_mid_stream_is_partial(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("anthropic_error.txt")))
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("Partial answ")]
    assert error.partial and not error.retryable
    assert "Overloaded" in error.message
    assert len(sse_server.requests) == 1


async def test_overloaded_before_output_is_retried(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse([MESSAGE_START, overloaded()]),
        Response.sse(load_transcript("anthropic_text.txt")),
    )
    events = await collect(make(sse_server))
    assert len(sse_server.requests) == 2
    assert text_of(events) == "Hello, wörld ✓"


async def test_overloaded_before_output_stays_retryable(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([MESSAGE_START, overloaded()]))
    seen, error = await failure(make(sse_server, max_attempts=1))
    assert seen == [] and error.retryable and not error.partial


async def test_529_and_429_with_retry_after_ms_then_success(sse_server: SSEServer) -> None:
    overloaded_body = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    sse_server.add(
        Response.json(529, overloaded_body),
        Response.json(
            429, {"type": "error", "error": {"message": "rate"}}, {"retry-after-ms": "200"}
        ),
        Response.sse(load_transcript("anthropic_text.txt")),
    )
    provider = make(sse_server)
    waits = record_waits(provider)
    events = await collect(provider)
    assert len(waits) == 2 and waits[1] == 0.2  # 529: backoff; 429: its retry-after-ms
    assert len(sse_server.requests) == 3
    assert events[-1] == StreamEnd("end_turn")


async def test_401_names_the_env_var(sse_server: SSEServer) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    sse_server.add(Response.json(401, body))
    _, error = await failure(make(sse_server))
    assert "ANTHROPIC_API_KEY" in error.message and "invalid x-api-key" in error.message
    assert len(sse_server.requests) == 1


async def test_404_names_model_and_url(sse_server: SSEServer) -> None:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-nope"}}
    sse_server.add(Response.json(404, body))
    _, error = await failure(make(sse_server))
    assert "claude-sonnet-4-5" in error.message
    assert f"{sse_server.url}/v1/messages" in error.message


async def test_400_prompt_too_long(sse_server: SSEServer) -> None:
    message = "prompt is too long: 210000 tokens > 200000 maximum"
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    sse_server.add(Response.json(400, body))
    _, error = await failure(make(sse_server))
    assert "too long for the context window" in error.message and message in error.message
    assert not error.retryable


async def test_connection_refused() -> None:
    url = f"http://localhost:{closed_port()}"
    provider = AnthropicProvider(model="m", base_url=url, max_attempts=1)
    _, error = await failure(provider)
    assert url in error.message and "running" in error.message


async def test_cut_mid_event_is_partial(sse_server: SSEServer) -> None:
    start = block_start({"type": "text", "text": ""})
    sse_server.add(
        Response.sse([MESSAGE_START, start, text_delta("Hi"), b"event: content_blo"], cut=True)
    )
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("Hi")]
    assert error.partial and "cut off" in error.message


async def test_stream_without_message_stop_is_cut_off(sse_server: SSEServer) -> None:
    start = block_start({"type": "text", "text": ""})
    sse_server.add(Response.sse([MESSAGE_START, start, text_delta("Hi")]))
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("Hi")] and error.partial and "cut off" in error.message


# --- cancellation --------------------------------------------------------------------


async def test_cancel_mid_stream_closes_the_connection(sse_server: SSEServer) -> None:
    start = block_start({"type": "text", "text": ""})
    sse_server.add(Response.sse([MESSAGE_START, start, text_delta("first")], hold=10))
    provider = make(sse_server)
    got_first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider.stream("", USER, []):
            got_first.set()

    task = asyncio.create_task(consume())
    await finishes(got_first.wait(), "the first chunk")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Before the provider's own aclose: the cancel itself hung up, mid-answer.
    request = await sse_server.wait_for_close(timeout=HANG_GUARD)
    assert request.client_closed_early, "the server finished its 10 s answer: no hang-up"
    await provider.aclose()
