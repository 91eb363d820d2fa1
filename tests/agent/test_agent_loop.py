"""The agent loop with the scripted provider and real (small) tools."""

from __future__ import annotations

import asyncio

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.llm.types import ProviderError, Usage
from tests.engine_helpers import EchoTool, SleepTool, finishes, make_agent, wait_for


async def test_multi_step_tool_use(tmp_path):
    echo = EchoTool()
    agent, provider, rec = make_agent(
        tmp_path,
        [
            Reply(text="Let me check.", calls=[("echo", {"text": "a"}), ("echo", {"text": "b"})]),
            Reply(calls=[("echo", {"text": "c"})], usage=Usage(100, 20)),
            Reply(text="All done.", chunk=3),
        ],
        [echo],
    )
    await agent.submit("go")
    assert echo.calls == ["a", "b", "c"]
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert agent.messages[-1].content == "All done."
    assert "".join(e.text for e in rec.of(ev.TextDelta)) == "Let me check.All done."
    assert [e.content for e in rec.of(ev.ToolFinished)] == ["echo: a", "echo: b", "echo: c"]
    assert rec.of(ev.TurnDone)[-1].stop_reason == "end_turn"
    assert agent.context_tokens == 120
    # Tool results reach the next model call, paired with their call ids.
    second = provider.requests[1].messages
    ids = [c.id for c in second[1].tool_calls]
    assert [m.tool_call_id for m in second[2:4]] == ids


async def test_tool_errors_become_results(tmp_path):
    agent, _, rec = make_agent(
        tmp_path,
        [
            Reply(calls=[("echo", {"text": "fail"}), ("echo", {"text": "crash"})]),
            Reply(text="ok"),
        ],
    )
    await agent.submit("go")
    finished = rec.of(ev.ToolFinished)
    assert finished[0].is_error and "refuses to say fail" in finished[0].content
    assert finished[1].is_error and "RuntimeError: boom" in finished[1].content
    assert agent.messages[-1].content == "ok"


async def test_bad_arguments_and_unknown_tools(tmp_path):
    agent, _, _rec = make_agent(
        tmp_path,
        [
            Reply(
                calls=[
                    ("echo", '{"text": "unterminated'),
                    ("echo", {"wrong": 1}),
                    ("echo", "[1, 2]"),
                    ("nope", {}),
                ]
            ),
            Reply(text="recovered"),
        ],
    )
    await agent.submit("go")
    results = [m for m in agent.messages if m.role == "tool"]
    assert all(m.is_error for m in results)
    assert "not valid JSON" in results[0].content and "unterminated" in results[0].content
    assert "Invalid arguments for echo" in results[1].content and "text" in results[1].content
    assert "must be a JSON object" in results[2].content
    assert (
        "'nope' is not a known tool" in results[3].content and "echo, sleep" in results[3].content
    )
    assert agent.messages[-1].content == "recovered"


async def test_inactive_tool_is_refused(tmp_path):
    echo = EchoTool()
    agent, _, _ = make_agent(
        tmp_path, [Reply(calls=[("echo", {"text": "x"})]), Reply(text="k")], [echo]
    )
    agent.registry.set_active([])
    await agent.submit("go")
    assert echo.calls == []
    assert "not available in this mode" in agent.messages[2].content


async def test_gate_refusal_stops_the_call(tmp_path):
    echo = EchoTool()
    agent, _, _ = make_agent(
        tmp_path, [Reply(calls=[("echo", {"text": "x"})]), Reply(text="k")], [echo]
    )
    agent.gates.append(lambda tool, args: "no echo today" if tool.name == "echo" else None)
    await agent.submit("go")
    assert echo.calls == []
    assert agent.messages[2].is_error and agent.messages[2].content == "no echo today"


async def test_cancel_mid_stream_keeps_history_consistent(tmp_path):
    agent, _, rec = make_agent(
        tmp_path, [Reply(text="x" * 400, chunk=2, delay=0.01), Reply(text="second answer")]
    )
    task = asyncio.create_task(agent.submit("go"))
    await wait_for(lambda: len(rec.of(ev.TextDelta)) >= 3)
    seen = len(rec.of(ev.TextDelta))
    assert agent.cancel()
    await finishes(task, "the cancelled turn")
    # The stream stopped at the cancel instead of draining the other ~200 pieces.
    assert len(rec.of(ev.TextDelta)) == seen
    assert rec.of(ev.TurnDone)[-1].cancelled
    assert not agent.busy
    assert agent.messages[-1].role == "assistant"
    assert agent.messages[-1].content.endswith("[interrupted by the user]")
    await agent.submit("again")
    assert agent.messages[-1].content == "second answer"


async def test_cancel_mid_tool_records_results(tmp_path):
    sleeper, echo = SleepTool(), EchoTool()
    agent, _, rec = make_agent(
        tmp_path,
        [Reply(calls=[("sleep", {"seconds": 300}), ("echo", {"text": "never"})])],
        [sleeper, echo],
    )
    heard: list[tuple[str, str, bool]] = []
    agent.result_hooks.append(
        lambda tool, _args, result: heard.append((tool.name, result.content, result.is_error))
    )
    task = asyncio.create_task(agent.submit("go"))
    await finishes(sleeper.started.wait(), "the sleep tool starting")
    agent.cancel()
    await finishes(task, "the turn cancelled mid-tool")  # the tool sleeps 300 s otherwise
    assert not sleeper.finished and echo.calls == []
    # The call that started is reported to the result hooks (plan mode's review counts the
    # MCP tools called while planning); the one never started is not.
    assert heard == [("sleep", "sleep was cancelled before it finished.", True)]
    call_ids = [c.id for c in agent.messages[1].tool_calls]
    results = [m for m in agent.messages if m.role == "tool"]
    assert [m.tool_call_id for m in results] == call_ids
    assert all("Cancelled by the user" in m.content for m in results)
    assert rec.of(ev.TurnDone)[-1].cancelled


async def test_steering_message_is_delivered_at_next_model_call(tmp_path):
    sleeper = SleepTool()
    agent, provider, rec = make_agent(
        tmp_path,
        [Reply(calls=[("sleep", {"seconds": 0.2})]), Reply(text="steered")],
        [sleeper],
    )
    task = asyncio.create_task(agent.submit("go"))
    await finishes(sleeper.started.wait(), "the sleep tool starting")
    await agent.submit("also check the tests")
    assert [e.text for e in rec.of(ev.SteeringQueued)] == ["also check the tests"]
    await task
    second = provider.requests[1].messages
    assert second[-1].role == "user" and second[-1].content == "also check the tests"
    assert rec.of(ev.SteeringDelivered)[0].text == "also check the tests"


async def test_provider_error_discards_partial_reply(tmp_path):
    agent, _, rec = make_agent(
        tmp_path,
        [
            Reply(text="half an ans", error=ProviderError("The stream was cut off.", partial=True)),
            Reply(text="full answer"),
        ],
    )
    await agent.submit("go")
    assert "The stream was cut off." in rec.of(ev.ErrorEvent)[0].message
    assert "/retry" in rec.of(ev.ErrorEvent)[0].interactive_text()
    assert [m.role for m in agent.messages] == ["user"]
    await agent.retry()
    assert [m.role for m in agent.messages] == ["user", "assistant"]


async def test_max_steps_stops_a_runaway_model(tmp_path):
    agent, _, rec = make_agent(
        tmp_path, [Reply(calls=[("echo", {"text": str(i)})]) for i in range(5)]
    )
    agent.max_steps = 3
    await agent.submit("loop forever")
    assert "Stopped after 3 model calls" in rec.of(ev.ErrorEvent)[0].message
    assert rec.of(ev.TurnDone)[-1].stop_reason == "max_steps"


async def test_prompt_parts_are_rebuilt_every_call(tmp_path):
    agent, provider, _ = make_agent(
        tmp_path, [Reply(calls=[("echo", {"text": "a"})]), Reply(text="done")]
    )
    counter = iter(range(10))
    agent.base_prompt = "BASE"
    agent.prompt_parts.append(lambda: f"part {next(counter)}")
    await agent.submit("go")
    assert provider.requests[0].system == "BASE\n\npart 0"
    assert provider.requests[1].system == "BASE\n\npart 1"


async def test_broken_subscriber_does_not_break_the_loop(tmp_path):
    agent, _, rec = make_agent(tmp_path, [Reply(text="fine")])

    def broken(event):
        raise ValueError("view bug")

    agent.subscribe(broken)
    await agent.submit("go")
    assert agent.messages[-1].content == "fine"
    assert rec.of(ev.TurnDone)
