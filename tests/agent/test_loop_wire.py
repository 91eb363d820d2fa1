"""The agent loop on top of real providers and a loopback server: what a wire
case means for the turn (run or not run, continue or stop, what the user sees)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planshell.agent import compaction as cp
from planshell.agent import events as ev
from planshell.agent.loop import REFUSAL_NOTICE, Agent
from planshell.llm.anthropic import AnthropicProvider
from planshell.llm.openai_compat import OpenAICompatProvider
from planshell.llm.scripted import Reply
from planshell.tools.base import ToolContext
from planshell.tools.registry import ToolRegistry
from tests.engine_helpers import EchoTool, Recorder, make_agent
from tests.sse_server import (
    Response,
    SSEServer,
    load_transcript,
    sse_event,
)


def ant(kind: str, **payload: Any) -> bytes:
    return sse_event({"type": kind, **payload}, kind)


START = ant(
    "message_start",
    message={
        "id": "m",
        "role": "assistant",
        "content": [],
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
)


def stop(reason: str) -> list[bytes]:
    return [
        ant("message_delta", delta={"stop_reason": reason}, usage={"output_tokens": 5}),
        ant("message_stop"),
    ]


def text(value: str, index: int = 0) -> list[bytes]:
    return [
        ant("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        ant("content_block_delta", index=index, delta={"type": "text_delta", "text": value}),
        ant("content_block_stop", index=index),
    ]


def tool_use(partial_json: str, index: int = 0, call_id: str = "toolu_1") -> list[bytes]:
    return [
        ant(
            "content_block_start",
            index=index,
            content_block={"type": "tool_use", "id": call_id, "name": "echo", "input": {}},
        ),
        ant(
            "content_block_delta",
            index=index,
            delta={"type": "input_json_delta", "partial_json": partial_json},
        ),
        ant("content_block_stop", index=index),
    ]


def agent_for(provider: Any, root: Path) -> tuple[Agent, EchoTool, Recorder]:
    echo = EchoTool()
    agent = Agent(provider, ToolRegistry([echo]), ToolContext(root=root))
    recorder = Recorder()
    agent.subscribe(recorder)
    return agent, echo, recorder


async def test_cut_off_tool_call_is_not_run_and_retried_with_double_budget(
    sse_server: SSEServer, tmp_path: Path
) -> None:
    sse_server.add(
        Response.sse(
            [START, *text("Writing."), *tool_use('{"text": "hal', 1), *stop("max_tokens")]
        ),
        Response.sse([START, *tool_use('{"text": "whole"}', 0, "toolu_2"), *stop("tool_use")]),
        Response.sse([START, *text("Done."), *stop("end_turn")]),
    )
    provider = AnthropicProvider(model="c", base_url=sse_server.url, api_key="k", max_tokens=512)
    agent, echo, rec = agent_for(provider, tmp_path)
    await agent.submit("go")
    await provider.aclose()
    assert echo.calls == ["whole"]  # the cut call never ran
    assert [r.json["max_tokens"] for r in sse_server.requests] == [512, 1024, 512]
    notices = [n.message for n in rec.of(ev.Notice)]
    assert any("cut off a call to echo" in n and "max_tokens=1024" in n for n in notices)
    # The cut reply is not in the history the model sees next.
    history = sse_server.requests[1].json["messages"]
    assert history == [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    assert rec.of(ev.TurnDone)[-1].stop_reason == "end_turn"


async def test_cut_off_tool_call_without_a_known_limit_is_reported(
    sse_server: SSEServer, tmp_path: Path
) -> None:
    call = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "echo", "arguments": '{"text": "hal'},
    }
    sse_server.add(
        Response.sse(
            [
                sse_event({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
                sse_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
                sse_event("[DONE]"),
            ]
        )
    )
    provider = OpenAICompatProvider(model="m", base_url=f"{sse_server.url}/v1")
    agent, echo, rec = agent_for(provider, tmp_path)
    await agent.submit("go")
    await provider.aclose()
    assert echo.calls == [] and len(sse_server.requests) == 1
    errors = [e.message for e in rec.of(ev.ErrorEvent)]
    assert len(errors) == 1 and "cut off the model's call to echo" in errors[0]
    assert "not run" in errors[0] and "max_tokens" in errors[0]
    assert all(not m.tool_calls for m in agent.messages)
    assert not [m for m in agent.messages if m.role == "tool"]


async def test_refusal_is_shown_as_such(sse_server: SSEServer, tmp_path: Path) -> None:
    sse_server.add(Response.sse([START, *stop("refusal")]))
    provider = AnthropicProvider(model="c", base_url=sse_server.url, api_key="k")
    agent, _, rec = agent_for(provider, tmp_path)
    await agent.submit("something")
    await provider.aclose()
    assert [n.message for n in rec.of(ev.Notice)] == [REFUSAL_NOTICE]
    assert rec.of(ev.TurnDone)[-1].stop_reason == "refusal"


async def test_pause_turn_is_continued(sse_server: SSEServer, tmp_path: Path) -> None:
    sse_server.add(
        Response.sse([START, *text("Searching…"), *stop("pause_turn")]),
        Response.sse([START, *text("Found it."), *stop("end_turn")]),
    )
    provider = AnthropicProvider(model="c", base_url=sse_server.url, api_key="k")
    agent, _, rec = agent_for(provider, tmp_path)
    await agent.submit("look")
    await provider.aclose()
    assert len(sse_server.requests) == 2
    # The paused reply goes back as the last (assistant) message, for the server to go on.
    assert sse_server.requests[1].json["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Searching…"}],
    }
    assert rec.of(ev.TurnDone)[-1].stop_reason == "end_turn"


async def test_raw_control_characters_in_arguments_are_accepted(tmp_path: Path) -> None:
    echo = EchoTool()
    agent, _, _ = make_agent(
        tmp_path,
        [Reply(calls=[("echo", '{"text": "line one\nline\ttwo"}')]), Reply(text="ok")],
        [echo],
    )
    await agent.submit("go")
    assert echo.calls == ["line one\nline\ttwo"]


async def test_bad_json_message_reads_once(tmp_path: Path) -> None:
    # json's message "Unterminated string starting at" already ends in "at".
    agent, _, _ = make_agent(
        tmp_path,
        [
            Reply(calls=[("echo", '{"text": "x" "y"}'), ("echo", '{"text": "open')]),
            Reply(text="ok"),
        ],
        [EchoTool()],
    )
    await agent.submit("go")
    first, second = (m.content for m in agent.messages if m.role == "tool")
    assert "not valid JSON (Expecting ',' delimiter at position 13)" in first
    assert "not valid JSON (Unterminated string starting at position 9)" in second
    assert "at at" not in second


# llama-cpp-python (0.3.36, seen by hand): a prompt over its n_ctx is a 200
# text/event-stream with no events at all (its log says "Requested tokens (19954)
# exceed context window of 4096"); a reply has no usage, and ends with an empty
# delta carrying finish_reason, then [DONE].
async def test_llama_cpp_python_overflow_on_the_first_call_compacts_and_resends(
    sse_server: SSEServer, tmp_path: Path
) -> None:
    reply = load_transcript("llama_cpp_python_text.txt")
    empty = Response(headers={"content-type": "text/event-stream; charset=utf-8"})
    sse_server.add(empty, Response.sse(reply))
    sse_server.repeat_last = True
    provider = OpenAICompatProvider(model="smollm2", base_url=sse_server.url, api_key=None)
    agent, _echo, rec = agent_for(provider, tmp_path)

    async def configured() -> int:  # `context_window = 1024`: the server reports none
        return 1024

    agent.window_source = configured
    # Over the window but short enough to be sent before the window is looked up
    # (a longer history is compacted before it is sent: see test_context).
    paste = "Summarise this log. " + "line: request ok in 12 ms; " * 200
    assert cp.estimate_tokens(paste) < cp.EARLY_WINDOW_TOKENS
    await agent.submit(paste)
    await provider.aclose()
    assert not rec.of(ev.ErrorEvent)  # not "the server sent nothing"
    assert rec.of(ev.Compacted)[0].reason == "overflow"
    assert agent.messages[-1].content == "It adds."
    resent = sse_server.requests[-1].json["messages"]
    assert len(json.dumps(resent)) < len(json.dumps(sse_server.requests[0].json["messages"]))
