"""OpenAICompatProvider against a real HTTP server on 127.0.0.1.

Also covers the shared HTTP behaviour (retries, timeouts, error messages,
cancellation) that both providers get from ``planshell.llm.http``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import aclosing
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from planshell.llm.http import (
    ErrorContext,
    RetryPolicy,
    parse_retry_after,
    server_message,
    status_error,
)
from planshell.llm.openai_compat import OpenAICompatProvider
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
from tests.paths import REPO
from tests.provider_helpers import USER, calls_of, collect, failure, record_waits, text_of
from tests.sse_server import (
    Response,
    SSEServer,
    closed_port,
    load_transcript,
    sse_event,
)


def make(server: SSEServer, **kwargs: Any) -> OpenAICompatProvider:
    options: dict[str, Any] = {"api_key": "sk-test", "backoff_base": 0.01}
    options.update(kwargs)
    return OpenAICompatProvider(model="gpt-4o-mini", base_url=f"{server.url}/v1", **options)


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return sse_event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


DONE = sse_event("[DONE]")


# --- streaming -----------------------------------------------------------------


async def test_text_only(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("openai_text.txt")))
    events = await collect(make(sse_server))
    assert text_of(events) == "Hello, world! Ünïcødé ✓ 🚀"
    assert events[-2:] == [UsageReport(Usage(12, 7)), StreamEnd("end_turn")]
    request = sse_server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json["stream"] is True
    assert request.json["stream_options"] == {"include_usage": True}
    assert "tools" not in request.json and "max_tokens" not in request.json


async def test_two_tool_calls_split_across_many_chunks(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("openai_tool_calls.txt"), chunk_size=5))
    events = await collect(make(sse_server))
    assert calls_of(events) == [
        ToolCall("call_read", "read_file", '{"path": "src/main.py"}'),
        ToolCall("call_grep", "grep", '{"pattern": "def \\\\w+", "path": "é"}'),
    ]
    assert json.loads(calls_of(events)[1].arguments)["pattern"] == "def \\w+"
    assert text_of(events) == ""
    assert events[-2:] == [UsageReport(Usage(200, 40)), StreamEnd("tool_use")]


async def test_whole_tool_call_in_one_chunk_without_index(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("openai_tool_call_whole.txt")))
    events = await collect(make(sse_server))
    assert calls_of(events) == [ToolCall("call_ls", "list_dir", '{"path":"."}')]
    assert events[-1] == StreamEnd("tool_use")  # finish_reason "stop", but it called a tool


async def test_whole_calls_sharing_index_zero_stay_separate(sse_server: SSEServer) -> None:
    pieces = [
        {"index": 0, "id": "a", "function": {"name": "one", "arguments": "{}"}},
        {"index": 0, "id": "b", "function": {"name": "two", "arguments": {"x": 1}}},
    ]
    body = [chunk({"tool_calls": [p]}) for p in pieces]
    sse_server.add(Response.sse([*body, chunk({}, "tool_calls"), DONE]))
    events = await collect(make(sse_server))
    assert calls_of(events) == [ToolCall("a", "one", "{}"), ToolCall("b", "two", '{"x": 1}')]


async def test_reasoning_is_thinking_not_text(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("openai_reasoning.txt")))
    events = await collect(make(sse_server))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingChunk))
    assert thinking == "The user wants a greeting. Keep it short."
    assert text_of(events) == "Hi!"
    assert events[-2:] == [
        UsageReport(Usage(9, 30)),
        StreamEnd("max_tokens", thinking=(ThinkingBlock(thinking),)),
    ]


async def test_crlf_and_keepalive_comments(sse_server: SSEServer) -> None:
    raw = load_transcript("openai_text.txt").replace(b"\n\n", b"\n\n: keep-alive\n\n")
    sse_server.add(Response.sse(raw.replace(b"\n", b"\r\n"), chunk_size=3))
    events = await collect(make(sse_server))
    assert text_of(events) == "Hello, world! Ünïcødé ✓ 🚀"
    assert events[-1] == StreamEnd("end_turn")


async def test_utf8_character_split_across_tcp_writes(sse_server: SSEServer) -> None:
    raw = chunk({"content": "rocket 🚀 ü"})
    split = raw.index("🚀".encode()) + 2
    sse_server.add(
        Response.sse([raw[:split], 0.05, raw[split:], chunk({}, "stop"), DONE], delay=0.01)
    )
    events = await collect(make(sse_server))
    assert text_of(events) == "rocket 🚀 ü"


async def test_malformed_tool_json_arrives_as_is(sse_server: SSEServer) -> None:
    bad = '{"path": "a.py", '
    piece = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": bad}}
    sse_server.add(Response.sse([chunk({"tool_calls": [piece]}), chunk({}, "tool_calls"), DONE]))
    events = await collect(make(sse_server))
    assert calls_of(events) == [ToolCall("c1", "read_file", bad)]


async def test_finish_reason_without_done_is_complete(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "ok"}), chunk({}, "stop")]))
    events = await collect(make(sse_server))
    assert events == [TextChunk("ok"), StreamEnd("end_turn")]


async def test_request_body_shape(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse(load_transcript("openai_text.txt")))
    history = [
        Message("user", "list files"),
        Message(
            "assistant",
            "",
            tool_calls=[ToolCall("c1", "ls", '{"path": "."}'), ToolCall("c2", "pwd", "{}")],
            thinking=[ThinkingBlock("hmm", signature="sig")],
        ),
        Message("tool", "a.py", tool_call_id="c1", tool_name="ls"),
        Message("tool", "no such dir", tool_call_id="c2", tool_name="pwd", is_error=True),
        Message("assistant", "There is a.py."),
    ]
    tool = ToolSpec("ls", "List a directory.", {"type": "object", "properties": {}})
    provider = make(sse_server, api_key=None, headers={"x-extra": "1"}, max_tokens=100)
    await collect(provider, history, [tool])
    request = sse_server.requests[0]
    assert "authorization" not in request.headers
    assert request.headers["x-extra"] == "1"
    body = request.json
    assert body["model"] == "gpt-4o-mini" and body["max_tokens"] == 100
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "ls",
                "description": "List a directory.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "",  # llama-cpp-python answers 500 to null
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"path": "."}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "pwd", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "tool", "tool_call_id": "c2", "content": "no such dir"},
        {"role": "assistant", "content": "There is a.py."},
    ]


def test_label_and_protocol() -> None:
    provider = OpenAICompatProvider(model="gpt-4o-mini", base_url="http://x/v1")
    assert provider.label == "openai · gpt-4o-mini"
    assert provider.name == "openai"
    assert isinstance(provider, Provider)


# --- retries ---------------------------------------------------------------------


async def test_429_honours_retry_after_then_succeeds(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}),
        Response.sse(load_transcript("openai_text.txt")),
    )
    provider = make(sse_server)
    waits = record_waits(provider)
    events = await collect(provider)
    assert waits == [1.0]
    assert len(sse_server.requests) == 2
    assert text_of(events).startswith("Hello")


async def test_500_twice_then_success(sse_server: SSEServer) -> None:
    error = Response.json(500, {"error": {"message": "boom"}})
    sse_server.add(error, error, Response.sse(load_transcript("openai_text.txt")))
    events = await collect(make(sse_server))
    assert len(sse_server.requests) == 3
    assert events[-1] == StreamEnd("end_turn")


async def test_retries_give_up_after_max_attempts(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(503, {"error": {"message": "busy"}}))
    sse_server.repeat_last = True
    _, error = await failure(make(sse_server, max_attempts=3))
    assert len(sse_server.requests) == 3
    assert error.retryable and not error.partial
    assert "503" in error.message and "busy" in error.message and "3 attempts" in error.message


async def test_retry_wait_is_capped(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(429, {"error": {"message": "later"}}, {"retry-after": "3600"}),
        Response.sse(load_transcript("openai_text.txt")),
    )
    provider = make(sse_server, max_retry_wait=0.1)
    waits = record_waits(provider)
    await finishes(collect(provider), "the capped retry")  # uncapped, it waits an hour
    assert waits == [0.1]
    assert len(sse_server.requests) == 2


async def test_cut_before_any_output_is_retried(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse([chunk({"role": "assistant", "content": ""}), b'data: {"cho'], cut=True),
        Response.sse(load_transcript("openai_text.txt")),
    )
    events = await collect(make(sse_server))
    assert len(sse_server.requests) == 2
    assert text_of(events).startswith("Hello")


async def test_timeout_before_first_byte_is_retried(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse([30.0, chunk({"content": "late"})]),
        Response.sse(load_transcript("openai_text.txt")),
    )
    # 1 s, not less: a stalled test process must not time out the good second reply.
    events = await collect(make(sse_server, idle_timeout=1.0))
    assert len(sse_server.requests) == 2
    assert text_of(events).startswith("Hello")


# --- failures --------------------------------------------------------------------


async def test_401_names_the_env_var(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(401, {"error": {"message": "Incorrect API key provided"}}))
    _, error = await failure(make(sse_server))
    assert "OPENAI_API_KEY" in error.message
    assert "Incorrect API key provided" in error.message
    assert not error.retryable and len(sse_server.requests) == 1


async def test_401_without_key_asks_for_one(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(401, {"message": "missing key"}))
    _, error = await failure(make(sse_server, api_key=None, api_key_env="OPENROUTER_API_KEY"))
    assert "requires an API key" in error.message and "OPENROUTER_API_KEY" in error.message


async def test_404_names_model_and_url(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(404, {"error": {"message": "model 'gpt-4o-mini' not found"}}))
    _, error = await failure(make(sse_server))
    assert "gpt-4o-mini" in error.message
    assert f"{sse_server.url}/v1/chat/completions" in error.message
    assert "not found" in error.message


async def test_400_context_length(sse_server: SSEServer) -> None:
    reason = "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens."
    sse_server.add(
        Response.json(400, {"error": {"message": reason, "code": "context_length_exceeded"}})
    )
    _, error = await failure(make(sse_server))
    assert "too long for the context window" in error.message
    assert "maximum context length is 128000 tokens" in error.message
    assert not error.retryable


async def test_400_shows_the_servers_reason(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(400, {"detail": "Unknown field 'stream_options'"}))
    _, error = await failure(make(sse_server))
    assert "rejected the request" in error.message
    assert "Unknown field 'stream_options'" in error.message


async def test_non_json_error_body_is_shown(sse_server: SSEServer) -> None:
    sse_server.add(
        Response(
            status=502,
            headers={"content-type": "text/html"},
            chunks=[b"<h1>Bad gateway</h1>"],
            framing="length",
        )
    )
    _, error = await failure(make(sse_server, max_attempts=1))
    assert "502" in error.message and "Bad gateway" in error.message


async def test_connection_refused_names_the_url() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    provider = OpenAICompatProvider(model="llama3", base_url=url, max_attempts=2, backoff_base=0.01)
    _, error = await failure(provider)
    assert url in error.message
    assert "connection refused" in error.message and "running" in error.message
    assert error.retryable and not error.partial


async def test_json_instead_of_stream(sse_server: SSEServer) -> None:
    sse_server.add(Response.json(200, {"choices": [{"message": {"content": "hi"}}]}))
    _, error = await failure(make(sse_server))
    assert "instead of a stream" in error.message


async def test_cut_mid_event_after_output_is_partial(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.sse([chunk({"content": "Hel"}), b'data: {"choices":[{"index":0,"del'], cut=True)
    )
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("Hel")]
    assert error.partial and not error.retryable
    assert "cut off" in error.message
    assert len(sse_server.requests) == 1  # never retried once output started


async def test_clean_close_without_finish_is_cut_off(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "Hel"})], framing="close"))
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("Hel")] and error.partial
    assert "cut off" in error.message


async def test_error_object_inside_stream(sse_server: SSEServer) -> None:
    error_chunk = sse_event({"error": {"message": "upstream exploded", "type": "server_error"}})
    sse_server.add(Response.sse([chunk({"content": "a"}), error_chunk]))
    seen, error = await failure(make(sse_server))
    assert seen == [TextChunk("a")]
    assert "upstream exploded" in error.message and error.partial


async def test_idle_timeout_mid_stream(sse_server: SSEServer) -> None:
    # The server would finish the reply after 30 s; failing first is the timeout.
    sse_server.add(Response.sse([chunk({"content": "a"}), 30.0, chunk({}, "stop")]))
    seen, error = await failure(make(sse_server, idle_timeout=1.0))
    assert seen == [TextChunk("a")] and error.partial
    assert "sent nothing for 1 s" in error.message


# --- cancellation ------------------------------------------------------------------


async def test_cancel_mid_stream_closes_the_connection(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "first"})], hold=10))
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


async def test_closing_the_generator_closes_the_connection(sse_server: SSEServer) -> None:
    sse_server.add(Response.sse([chunk({"content": "first"})], hold=10))
    provider = make(sse_server)
    async with aclosing(provider.stream("", USER, [])) as stream:
        async for _ in stream:
            break
    # Before the provider's own aclose: closing the generator hung up, mid-answer.
    request = await sse_server.wait_for_close(timeout=HANG_GUARD)
    assert request.client_closed_early, "the server finished its 10 s answer: no hang-up"
    await provider.aclose()


# --- shared helpers --------------------------------------------------------------


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (parse_retry_after({"retry-after": later}) or 0) <= 30


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=5, backoff_base=1.0, max_retry_wait=5.0)
    assert 0.5 <= policy.delay(1) <= 1.0
    assert 2.0 <= policy.delay(3) <= 4.0
    assert policy.delay(10) == 5.0
    assert policy.delay(1, retry_after=2.5) == 2.5
    assert policy.delay(1, retry_after=60) == 5.0


def test_server_message_shapes() -> None:
    assert server_message(b'{"error": {"message": "m1"}}') == "m1"
    assert server_message(b'{"message": "m2"}') == "m2"
    assert server_message(b'{"error": "m3"}') == "m3"
    assert server_message(b"plain  text\n") == "plain text"
    assert server_message(b"") is None


# --- the standalone server used by end-to-end tests ---------------------------------


async def test_standalone_server_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    (tmp_path / "reply.txt").write_bytes(load_transcript("openai_text.txt"))
    script.write_text(
        json.dumps(
            {
                "responses": [
                    {"status": 500, "json": {"error": {"message": "warming up"}}},
                    {"sse_file": "reply.txt", "chunk_size": 10},
                    {
                        "events": [
                            {
                                "data": {
                                    "choices": [
                                        {"delta": {"content": "again"}, "finish_reason": "stop"}
                                    ]
                                }
                            }
                        ]
                    },
                ],
                "repeat_last": True,
            }
        )
    )
    log = tmp_path / "requests.jsonl"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.sse_server", "--port", "0", "--script", str(script),
        "--log", str(log),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = (await finishes(process.stdout.readline(), "the server's PORT= line")).decode()
        assert line.startswith("PORT=")
        url = f"http://127.0.0.1:{int(line.removeprefix('PORT='))}/v1"
        provider = OpenAICompatProvider(model="m", base_url=url, backoff_base=0.01)
        assert text_of(await collect(provider)) == "Hello, world! Ünïcødé ✓ 🚀"
        assert text_of(await collect(provider)) == "again"
        assert text_of(await collect(provider)) == "again"
    finally:
        process.terminate()
        await process.wait()
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(logged) == 4
    assert logged[0]["path"] == "/v1/chat/completions" and logged[0]["json"]["model"] == "m"


CTX = ErrorContext(
    provider="OpenAI-compatible",
    model="gpt-4o",
    base_url="http://localhost:8000/v1",
    endpoint="http://localhost:8000/v1/chat/completions",
    key_env="OPENAI_API_KEY",
    has_key=True,
)


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(status, True) for status in (408, 409, 429, 500, 529)],
        *[(status, False) for status in (400, 401, 403, 404, 422)],
    ],
)
def test_which_statuses_are_retryable(status: int, retryable: bool) -> None:
    assert status_error(status, b"", {}, CTX).retryable is retryable


def test_status_wording() -> None:
    assert status_error(500, b"", {"x-should-retry": "false"}, CTX).retryable is False
    forbidden = status_error(403, b'{"error": {"message": "no access."}}', {}, CTX).message
    assert forbidden == (
        "Access was denied (HTTP 403: no access); check that OPENAI_API_KEY"
        " is valid and allowed to use model 'gpt-4o'."
    )
    moved = status_error(308, b"", {"location": "https://new/v1"}, CTX).message
    assert "https://new/v1" in moved and "base URL" in moved
    limited = status_error(429, b'{"error": {"message": "slow"}}', {"retry-after": "3"}, CTX)
    assert limited.retry_after == 3.0
    assert limited.message.endswith("(HTTP 429: slow); wait a moment and try again.")
