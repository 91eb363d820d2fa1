"""Wire cases real servers send, replayed by a real HTTP server on 127.0.0.1.

Each fixture follows the shape of a payload seen from a real provider or
server (OpenAI, Anthropic, Mistral, vLLM, Gemini's OpenAI endpoint,
llama-cpp-python), written here by hand rather than copied.
"""

from __future__ import annotations

import json
import logging
import ssl
from typing import Any

import pytest

from planshell.llm.anthropic import AnthropicProvider
from planshell.llm.http import build_client
from planshell.llm.openai_compat import OpenAICompatProvider
from planshell.llm.types import (
    Message,
    StreamEnd,
    ThinkingBlock,
    ThinkingChunk,
    ToolCall,
    ToolSpec,
    Usage,
    UsageReport,
)
from tests.provider_helpers import calls_of, collect, failure, record_waits, text_of
from tests.sse_server import (
    Response,
    SSEServer,
    sse_event,
)

DONE = sse_event("[DONE]")
TOOL = ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})


def openai(server: SSEServer, **kwargs: Any) -> OpenAICompatProvider:
    options: dict[str, Any] = {"api_key": "sk-test", "backoff_base": 0.01}
    options.update(kwargs)
    return OpenAICompatProvider(model="m", base_url=f"{server.url}/v1", **options)


def anthropic(server: SSEServer, **kwargs: Any) -> AnthropicProvider:
    options: dict[str, Any] = {"api_key": "sk-ant-test", "backoff_base": 0.01}
    options.update(kwargs)
    return AnthropicProvider(model="claude-sonnet-4-5", base_url=server.url, **options)


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    """One Chat Completions chunk as OpenAI sends it (id, object, model, choices)."""
    return sse_event(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
    )


def usage_chunk(prompt: int, completion: int) -> bytes:
    return sse_event(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
    )


def ant(kind: str, **payload: Any) -> bytes:
    return sse_event({"type": kind, **payload}, kind)


def message_start(msg_id: str = "msg_1", output_tokens: int = 1) -> bytes:
    return ant(
        "message_start",
        message={
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-4-5",
            "stop_reason": None,
            "usage": {"input_tokens": 25, "output_tokens": output_tokens},
        },
    )


def message_end(reason: str, output_tokens: int = 9) -> list[bytes]:
    return [
        ant(
            "message_delta",
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        ant("message_stop"),
    ]


# --- refusals -----------------------------------------------------------------------


async def test_openai_refusal_delta_is_shown_and_stops_as_refusal(sse_server: SSEServer) -> None:
    # Structured outputs / safety: content stays null, the text comes as delta.refusal.
    sse_server.add(
        Response.sse(
            [
                chunk({"role": "assistant", "content": None, "refusal": ""}),
                chunk({"refusal": "I'm sorry, "}),
                chunk({"refusal": "I can't help with that."}),
                chunk({}, "stop"),
                usage_chunk(20, 8),
                DONE,
            ]
        )
    )
    events = await collect(openai(sse_server))
    assert text_of(events) == "I'm sorry, I can't help with that."
    assert events[-1] == StreamEnd("refusal")


async def test_openai_content_filter_is_a_refusal(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "Par"}), chunk({}, "content_filter"), DONE]))
    events = await collect(openai(sse_server))
    assert events[-1] == StreamEnd("refusal")


async def test_anthropic_refusal_stop_reason(sse_server: SSEServer) -> None:
    # Claude's streaming classifiers end the message with stop_reason "refusal".
    sse_server.add(
        Response.sse(
            [
                message_start(),
                ant("content_block_start", index=0, content_block={"type": "text", "text": ""}),
                ant(
                    "content_block_delta",
                    index=0,
                    delta={"type": "text_delta", "text": "Here is how"},
                ),
                ant("content_block_stop", index=0),
                *message_end("refusal"),
            ]
        )
    )
    events = await collect(anthropic(sse_server))
    assert text_of(events) == "Here is how"
    assert events[-1] == StreamEnd("refusal")


async def test_anthropic_pause_turn_is_its_own_stop_reason(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([message_start(), *message_end("pause_turn")]))
    events = await collect(anthropic(sse_server))
    assert events[-1] == StreamEnd("pause_turn")


# --- Mistral typed content -----------------------------------------------------------


async def test_mistral_typed_content_parts(sse_server: SSEServer) -> None:
    # Magistral streams delta.content as a list: thinking parts (themselves a
    # list of text chunks), then text parts.
    sse_server.add(
        Response.sse(
            [
                chunk({"role": "assistant", "content": ""}),
                chunk(
                    {
                        "content": [
                            {"type": "thinking", "thinking": [{"type": "text", "text": "2+2 is"}]}
                        ]
                    }
                ),
                chunk(
                    {
                        "content": [
                            {"type": "thinking", "thinking": [{"type": "text", "text": " 4."}]}
                        ]
                    }
                ),
                chunk({"content": [{"type": "text", "text": "The answer "}]}),
                chunk({"content": [{"type": "text", "text": "is 4."}]}),
                chunk(
                    {"content": ""}, "stop", usage={"prompt_tokens": 10, "completion_tokens": 30}
                ),
                DONE,
            ]
        )
    )
    events = await collect(openai(sse_server))
    assert text_of(events) == "The answer is 4."
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thinking == "2+2 is 4."
    assert events[-2:] == [
        UsageReport(Usage(10, 30)),
        StreamEnd("end_turn", thinking=(ThinkingBlock("2+2 is 4."),)),
    ]


# --- tool calls cut off by max_tokens -----------------------------------------------------


async def test_openai_tool_call_cut_by_length_is_incomplete(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse(
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "write", "arguments": ""},
                            }
                        ]
                    }
                ),
                chunk(
                    {
                        "tool_calls": [
                            {"index": 0, "function": {"arguments": '{"path": "a.py", "con'}}
                        ]
                    }
                ),
                chunk({}, "length"),
                DONE,
            ]
        )
    )
    events = await collect(openai(sse_server))
    assert calls_of(events) == []  # never handed to the loop to run
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.stop_reason == "max_tokens"
    assert end.incomplete_calls == (ToolCall("call_1", "write", '{"path": "a.py", "con'),)


async def test_anthropic_tool_use_cut_by_max_tokens_is_incomplete(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse(
            [
                message_start(),
                ant(
                    "content_block_start",
                    index=0,
                    content_block={
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "write",
                        "input": {},
                    },
                ),
                ant(
                    "content_block_delta",
                    index=0,
                    delta={"type": "input_json_delta", "partial_json": '{"path": "a.py", "cont'},
                ),
                ant("content_block_stop", index=0),
                *message_end("max_tokens"),
            ]
        )
    )
    events = await collect(anthropic(sse_server))
    assert calls_of(events) == []
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.stop_reason == "max_tokens"
    assert [c.id for c in end.incomplete_calls] == ["toolu_1"]


async def test_raised_budget_applies_to_one_request(sse_server: SSEServer) -> None:
    ok = [message_start(), *message_end("end_turn")]
    sse_server.add(Response.sse(ok), Response.sse(ok), Response.sse(ok))
    provider = anthropic(sse_server, max_tokens=1000)
    await collect(provider)
    assert provider.raise_output_budget() == 2000
    await collect(provider)
    await collect(provider)
    assert [r.json["max_tokens"] for r in sse_server.requests] == [1000, 2000, 1000]
    # The server's own limit (none configured) cannot be raised.
    assert openai(sse_server).raise_output_budget() is None
    assert openai(sse_server, max_tokens=300).raise_output_budget() == 600


async def test_a_per_request_output_cap_never_raises_the_setting(sse_server: SSEServer) -> None:
    """A summary asks for at most N tokens; a lower configured limit still wins."""
    ok = [message_start(), *message_end("end_turn")]
    done = [chunk({"content": "ok"}, "stop"), DONE]
    sse_server.add(Response.sse(ok), Response.sse(done), Response.sse(done), Response.sse(ok))
    await collect(anthropic(sse_server), max_output=600)
    await collect(openai(sse_server), max_output=600)
    await collect(openai(sse_server, max_tokens=300), max_output=600)
    await collect(anthropic(sse_server, max_tokens=5000))
    sent = [r.json.get("max_tokens") for r in sse_server.requests]
    assert sent == [600, 600, 300, 5000]


# --- a restarted Anthropic stream ----------------------------------------------------------


async def test_anthropic_second_message_start_drops_abandoned_thinking(
    sse_server: SSEServer,
) -> None:
    thinking = [
        ant(
            "content_block_start",
            index=0,
            content_block={"type": "thinking", "thinking": "", "signature": ""},
        ),
        ant("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "old"}),
        ant("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "SIG1"}),
        ant("content_block_stop", index=0),
    ]
    fresh = [
        ant(
            "content_block_start",
            index=0,
            content_block={"type": "thinking", "thinking": "", "signature": ""},
        ),
        ant("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "new"}),
        ant("content_block_delta", index=0, delta={"type": "signature_delta", "signature": "SIG2"}),
        ant("content_block_stop", index=0),
    ]
    sse_server.add(
        Response.sse(
            [
                message_start("msg_a"),
                *thinking,
                message_start("msg_b"),
                *fresh,
                *message_end("end_turn"),
            ]
        )
    )
    events = await collect(anthropic(sse_server))
    assert events[-1] == StreamEnd("end_turn", thinking=(ThinkingBlock("new", signature="SIG2"),))


# --- errors inside a 200 ---------------------------------------------------------------------


async def test_vllm_flat_error_object_then_done_is_an_error(sse_server: SSEServer) -> None:
    flat = {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested"
        " 5000 tokens (4000 in the messages, 1000 in the completion).",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    sse_server.add(Response.sse([sse_event(flat), DONE]))
    _, error = await failure(openai(sse_server))
    assert "too long for the context window" in error.message
    assert "maximum context length is 4096" in error.message
    assert not error.retryable


async def test_vllm_flat_error_other_kind(sse_server: SSEServer) -> None:
    flat = {
        "object": "error",
        "message": "guided decoding failed",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    sse_server.add(Response.sse([chunk({"content": ""}), sse_event(flat), DONE]))
    _, error = await failure(openai(sse_server))
    assert "reported an error mid-stream" in error.message
    assert "guided decoding failed" in error.message


async def test_html_page_is_reported_at_once_not_retried(sse_server: SSEServer) -> None:
    page = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>proxy</body></html>"
    sse_server.add(Response(headers={"content-type": "text/html; charset=utf-8"}, chunks=[page]))
    sse_server.repeat_last = True
    provider = openai(sse_server)
    _, error = await failure(provider)
    assert "answered with a web page, not a stream" in error.message
    assert f"{sse_server.url}/v1/chat/completions" in error.message
    assert len(sse_server.requests) == 1


async def test_empty_event_stream_says_server_sent_nothing(sse_server: SSEServer) -> None:
    # llama-cpp-python: a 200 text/event-stream that ends without one event.
    sse_server.add(Response.sse(b""))
    sse_server.repeat_last = True
    _, error = await failure(openai(sse_server))
    assert "sent nothing" in error.message and "check its log" in error.message
    assert "cut off" not in error.message
    assert len(sse_server.requests) == 1


async def test_comment_only_stream_is_also_nothing(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(b": keep-alive\n\n"))
    _, error = await failure(openai(sse_server))
    assert "sent nothing" in error.message


async def test_stream_with_events_then_eof_is_still_a_cut_off(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "Hel"})]))
    sse_server.repeat_last = True
    provider = openai(sse_server, max_attempts=2)
    waits = record_waits(provider)
    _, error = await failure(provider)
    assert "cut off" in error.message  # partial: output reached the caller, not retried
    assert waits == []


# --- Gemini's error bodies ------------------------------------------------------------------


GEMINI_CONTEXT = [
    {
        "error": {
            "code": 400,
            "message": "The input token count (1200000) exceeds the maximum number of tokens"
            " allowed (1048576).",
            "status": "INVALID_ARGUMENT",
        }
    }
]


async def test_gemini_list_wrapped_context_error(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(400, GEMINI_CONTEXT))
    _, error = await failure(openai(sse_server))
    assert "too long for the context window" in error.message
    assert "The input token count (1200000)" in error.message
    assert '"error"' not in error.message  # not raw JSON
    assert not error.retryable


async def test_gemini_quota_exhausted_is_not_retried(sse_server: SSEServer) -> None:
    body = [
        {
            "error": {
                "code": 429,
                "message": "You exceeded your current quota, please check your plan and billing"
                " details. For more information on this error, head to:"
                " https://ai.google.dev/gemini-api/docs/rate-limits.",
                "status": "RESOURCE_EXHAUSTED",
            }
        }
    ]
    sse_server.add(Response.json(429, body))
    sse_server.repeat_last = True
    _, error = await failure(openai(sse_server))
    assert "no quota or credit left" in error.message
    assert "wait a moment" not in error.message
    assert len(sse_server.requests) == 1


async def test_openai_insufficient_quota_is_not_retried(sse_server: SSEServer) -> None:
    body = {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing"
            " details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    sse_server.add(Response.json(429, body))
    sse_server.repeat_last = True
    _, error = await failure(openai(sse_server))
    assert "no quota or credit left" in error.message
    assert len(sse_server.requests) == 1


async def test_gemini_rate_limit_is_still_retried(sse_server: SSEServer) -> None:
    body = [
        {
            "error": {
                "code": 429,
                "message": "Resource exhausted. Please try again later.",
                "status": "RESOURCE_EXHAUSTED",
            }
        }
    ]
    sse_server.add(Response.json(429, body), Response.sse([chunk({"content": "ok"}, "stop"), DONE]))
    events = await collect(openai(sse_server))
    assert text_of(events) == "ok"
    assert len(sse_server.requests) == 2


# --- usage -----------------------------------------------------------------------------------


async def test_anthropic_zero_output_tokens_respected(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([message_start(output_tokens=1), *message_end("end_turn", 0)]))
    events = await collect(anthropic(sse_server))
    assert UsageReport(Usage(25, 0)) in events


async def test_no_usage_is_not_reported_as_zero(sse_server: SSEServer) -> None:
    # llama-cpp-python sends no usage while streaming; some Anthropic-compatible
    # servers leave it out too.
    sse_server.add(Response.sse([chunk({"content": "hi"}, "stop"), DONE]))
    events = await collect(openai(sse_server))
    assert not any(isinstance(e, UsageReport) for e in events)
    start = ant("message_start", message={"id": "m", "role": "assistant", "content": []})
    stop = [ant("message_delta", delta={"stop_reason": "end_turn"}), ant("message_stop")]
    sse_server.add(Response.sse([start, *stop]))
    events = await collect(anthropic(sse_server))
    assert not any(isinstance(e, UsageReport) for e in events)


# --- history the servers accept ----------------------------------------------------------------


async def test_assistant_tool_call_message_sends_empty_string_content(
    sse_server: SSEServer,
) -> None:
    history = [
        Message("user", "read it"),
        Message("assistant", "", tool_calls=[ToolCall("c1", "read", '{"path": "a"}')]),
        Message("tool", "text", tool_call_id="c1", tool_name="read"),
    ]
    sse_server.add(Response.sse([chunk({"content": "ok"}, "stop"), DONE]))
    await collect(openai(sse_server), history, [TOOL])
    assistant = sse_server.requests[0].json["messages"][2]
    assert assistant["role"] == "assistant" and assistant["content"] == ""


# --- server error text ---------------------------------------------------------------------------


async def test_server_error_text_whole_in_log_and_long_on_screen(
    sse_server: SSEServer, caplog: pytest.LogCaptureFixture
) -> None:
    # llama-cpp-python's 500 carries a Python traceback whose useful end is far in.
    trace = "Traceback (most recent call last):\n" + "  File x.py, line 1\n" * 40
    message = trace + 'TypeError: can only concatenate str (not "NoneType") to str'
    sse_server.add(
        Response.json(500, {"error": {"message": message, "type": "internal_server_error"}})
    )
    with caplog.at_level(logging.WARNING, logger="planshell.llm.http"):
        _, error = await failure(openai(sse_server, max_attempts=1))
    assert json.dumps(message)[1:-1] in caplog.text  # the whole body, as the server sent it
    assert len(error.message) > 600 and error.message.count("File x.py") >= 25


# --- request options ----------------------------------------------------------------------------


async def test_request_options_reach_the_body(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "ok"}, "stop"), DONE]))
    provider = openai(
        sse_server,
        tool_choice="auto",
        extra_body={"cache_prompt": True, "top_k": 20},
        stream_options={},
    )
    await collect(provider, tools=[TOOL])
    body = sse_server.requests[0].json
    assert body["tool_choice"] == "auto"
    assert body["cache_prompt"] is True and body["top_k"] == 20
    assert "stream_options" not in body  # an empty table leaves it out


async def test_tool_choice_only_with_tools_and_mapped_for_anthropic(sse_server: SSEServer) -> None:
    ok = [message_start(), *message_end("end_turn")]
    sse_server.add(Response.sse(ok), Response.sse(ok))
    provider = anthropic(sse_server, tool_choice="required")
    await collect(provider)
    await collect(provider, tools=[TOOL])
    first, second = (r.json for r in sse_server.requests)
    assert "tool_choice" not in first
    assert second["tool_choice"] == {"type": "any"}


# --- TLS for http:// ------------------------------------------------------------------------------


def _ssl_context(client: Any) -> ssl.SSLContext:
    context = client._transport._pool._ssl_context  # httpx internals: test-only probe
    assert isinstance(context, ssl.SSLContext)
    return context


async def test_http_base_url_loads_no_certificates() -> None:
    plain = build_client(1, 1, "http://127.0.0.1:8080/v1")
    secure = build_client(1, 1, "https://api.openai.com/v1")
    try:
        assert _ssl_context(plain).cert_store_stats()["x509_ca"] == 0
        assert _ssl_context(plain).verify_mode == ssl.CERT_REQUIRED  # fails closed
        assert _ssl_context(secure).cert_store_stats()["x509_ca"] > 0
    finally:
        await plain.aclose()
        await secure.aclose()
