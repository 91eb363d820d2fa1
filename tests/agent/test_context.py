"""Context accounting, /retry, Esc before the first token and compaction (engine level)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planshell.agent import compaction as cp
from planshell.agent import events as ev
from planshell.agent.loop import UNANSWERED_MARK
from planshell.agent.session import SessionLog
from planshell.llm.scripted import Reply
from planshell.llm.types import Message, ProviderError, ToolCall, Usage
from tests.engine_helpers import EchoTool, finishes, make_agent, wait_for

# --- /retry and Esc ---------------------------------------------------------------------


async def test_retry_after_a_finished_turn_replaces_the_reply(tmp_path):
    agent, provider, rec = make_agent(
        tmp_path,
        [
            Reply(text="first", calls=[("echo", {"text": "a"})]),
            Reply(text="answer one"),
            Reply(text="answer two"),
        ],
        [EchoTool()],
    )
    agent.session = SessionLog(tmp_path / "s.jsonl")
    await agent.submit("question")
    await agent.retry()
    assert [(m.role, m.content) for m in agent.messages] == [
        ("user", "question"),
        ("assistant", "answer two"),
    ]
    # The retried request is exactly the original one: no earlier reply in it.
    assert [m.content for m in provider.requests[-1].messages] == ["question"]
    assert rec.of(ev.RetryStarted)[0].dropped == 3
    agent.session.close()
    loaded = SessionLog.load(tmp_path / "s.jsonl")
    assert [m.content for m in loaded.messages] == ["question", "answer two"]
    assert not loaded.problems


async def test_retry_after_an_error_sends_the_same_request(tmp_path):
    agent, _provider, rec = make_agent(
        tmp_path, [Reply(error=ProviderError("down", retryable=True)), Reply(text="ok")]
    )
    await agent.submit("q")
    await agent.retry()
    assert [m.content for m in agent.messages] == ["q", "ok"]
    assert rec.of(ev.RetryStarted)[0].dropped == 0


async def test_esc_before_the_first_token_marks_the_request_unanswered(tmp_path):
    agent, provider, _rec = make_agent(tmp_path, [Reply(text="late", delay=300), Reply(text="B")])
    task = asyncio.create_task(agent.submit("first question"))
    await wait_for(lambda: provider.requests)
    assert agent.cancel()
    await finishes(task, "the cancelled turn")
    assert [(m.role, m.content) for m in agent.messages] == [
        ("user", "first question"),
        ("assistant", UNANSWERED_MARK),
    ]
    await agent.submit("second question")
    sent = provider.requests[-1].messages
    # The model sees the first question was interrupted, not a pending question to answer.
    assert [m.content for m in sent] == ["first question", UNANSWERED_MARK, "second question"]


async def test_retry_after_esc_asks_the_interrupted_request_again(tmp_path):
    agent, provider, _ = make_agent(tmp_path, [Reply(text="late", delay=300), Reply(text="now")])
    task = asyncio.create_task(agent.submit("q"))
    await wait_for(lambda: provider.requests)
    agent.cancel()
    await finishes(task, "the cancelled turn")
    await agent.retry()
    assert [m.content for m in provider.requests[-1].messages] == ["q"]
    assert [m.content for m in agent.messages] == ["q", "now"]


# --- accounting ----------------------------------------------------------------------------


async def test_used_tokens_are_the_usage_report_plus_an_estimate_of_what_followed(tmp_path):
    agent, _, rec = make_agent(
        tmp_path,
        [Reply(calls=[("echo", {"text": "x" * 700})], usage=Usage(1000, 50)), Reply(text="done")],
        [EchoTool()],
    )
    await agent.submit("go")
    updates = rec.of(ev.ContextUpdated)
    # After the first reply: exactly the report; after the tool result, more (estimated).
    assert updates[1].used == 1050
    assert agent.context_used() > 1050 + 700 / cp.CHARS_PER_TOKEN


async def test_without_usage_reports_the_whole_request_is_estimated(tmp_path):
    agent, _, rec = make_agent(tmp_path, [Reply(text="y" * 350)])
    await agent.submit("x" * 350)
    assert rec.of(ev.ContextUpdated)[-1].used >= 200
    assert rec.of(ev.ContextUpdated)[-1].window is None


async def test_window_and_cost(tmp_path):
    agent, _, rec = make_agent(tmp_path, [Reply(text="a", usage=Usage(1_000_000, 500_000))])

    async def window() -> int:
        return 4096

    agent.window_source = window
    agent.price = lambda u: u.input_tokens * 2e-6 + u.output_tokens * 8e-6
    await agent.submit("hi")
    last = rec.of(ev.ContextUpdated)[-1]
    assert last.window == 4096
    assert last.cost == 6.0


# --- compaction -----------------------------------------------------------------------------


def long_history(turns: int, size: int = 2000) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        out.append(Message("user", f"request {i} " + "u" * size))
        out.append(Message("assistant", "", tool_calls=[ToolCall(f"c{i}", "echo", "{}")]))
        out.append(Message("tool", "r" * size, tool_call_id=f"c{i}", tool_name="echo"))
        out.append(Message("assistant", f"reply {i}"))
    return out


@given(
    st.lists(st.sampled_from(["user", "assistant", "call", "tool"]), max_size=30),
    st.integers(min_value=0, max_value=3000),
)
def test_split_never_separates_a_tool_call_from_its_result(kinds, keep):
    messages: list[Message] = []
    for kind in kinds:
        if kind == "call":
            messages.append(Message("assistant", "", tool_calls=[ToolCall("c", "echo", "{}")]))
            messages.append(Message("tool", "r" * 100, tool_call_id="c", tool_name="echo"))
        else:
            messages.append(Message(kind if kind != "tool" else "assistant", "t" * 100))
    older, recent = cp.split_history(messages, keep)
    assert older + recent == messages
    assert not recent or recent[0].role != "tool"


async def test_auto_compaction_keeps_recent_turns_and_pins_live_state(tmp_path):
    summary_seen: list[list[str]] = []

    def model(request) -> Reply:
        if not request.tools:  # the summariser gets no tools
            summary_seen.append(request.tools)
            return Reply(text="SUMMARY: the user asked for 12 requests")
        return Reply(text="fresh answer")

    agent, provider, rec = make_agent(tmp_path, [model] * 10)
    agent.session = SessionLog(tmp_path / "s.jsonl")
    agent.load_history(long_history(12))
    agent.pin_parts.append(lambda: "Mode: PLAN (pinned by the test)")

    async def window() -> int:
        return 8000

    agent.window_source = window
    # A long history: the window is looked up before the first call, not after it.
    await agent.submit("the newest request")
    assert rec.of(ev.ContextUpdated)[-1].window == 8000
    assert summary_seen  # (in chunks: the older part is larger than half the window)
    assert provider.requests[-1].tools  # the real request has its tools
    compacted = rec.of(ev.Compacted)
    assert len(compacted) == 1 and compacted[0].reason == "auto"
    assert compacted[0].after_tokens < compacted[0].before_tokens
    sent = provider.requests[-1].messages
    block = sent[0].content
    assert block.startswith(cp.COMPACTED_HEADER)
    assert "SUMMARY: the user asked" in block
    assert "Mode: PLAN (pinned by the test)" in block
    assert block.rstrip().endswith("the newest request")
    # The recent part is verbatim and ends with the new request.
    assert sent[-1].content == "the newest request"
    assert agent.context_used() < 8000 * agent.compaction.threshold
    agent.session.close()
    loaded = SessionLog.load(tmp_path / "s.jsonl")
    assert loaded.summary == "SUMMARY: the user asked for 12 requests"
    assert [m.content for m in loaded.messages] == [m.content for m in agent.messages]


async def test_an_overflow_error_compacts_once_and_sends_again(tmp_path):
    too_long = ProviderError(
        "The conversation is too long for the context window of model 'm' "
        "(HTTP 400: This model's maximum context length is 4096 tokens)."
    )
    agent, _provider, rec = make_agent(
        tmp_path, [Reply(error=too_long), Reply(text="short summary"), Reply(text="answer")]
    )
    agent.load_history(long_history(6))
    await agent.submit("q")
    assert [m.content for m in agent.messages][-2:] == ["q", "answer"]
    assert rec.of(ev.Compacted)[0].reason == "overflow"
    assert not rec.of(ev.ErrorEvent)


def small_server(window: int):
    """Answers like a server with a ``window``-token context: too long is an error."""
    too_long = ProviderError(f"prompt is too long: more than {window} tokens")

    def model(request) -> Reply:
        if cp.request_tokens(request.system, request.messages, []) > window:
            return Reply(error=too_long)
        return Reply(text="sum" if not request.tools else "works")

    return model


@pytest.mark.parametrize("known_window", [True, False])
async def test_an_oversized_message_never_leaves_the_conversation_stuck(tmp_path, known_window):
    agent, _provider, rec = make_agent(tmp_path, [small_server(4096)] * 20)
    if known_window:

        async def window() -> int:
            return 4096

        agent.window_source = window
    await agent.submit("paste " + "p" * 60_000)
    await agent.submit("next")
    assert agent.messages[-1].content == "works"
    assert cp.request_tokens("", agent.messages, []) < 4096
    assert rec.of(ev.Compacted)


async def test_manual_compact_with_instructions_and_cancel_leaves_history(tmp_path):
    agent, provider, rec = make_agent(tmp_path, [Reply(text="s", delay=300)])
    agent.load_history(long_history(8))
    before = list(agent.messages)
    task = asyncio.create_task(agent.compact("the API names"))
    await wait_for(lambda: provider.requests)
    assert "the API names" in provider.requests[0].messages[0].content
    assert agent.cancel()
    assert await finishes(task, "the cancelled compaction") is False
    assert agent.messages == before
    assert not rec.of(ev.Compacted)


async def test_a_failing_summary_still_shrinks_the_history(tmp_path):
    agent, _, rec = make_agent(tmp_path, [Reply(error=ProviderError("down"))])
    agent.load_history(long_history(8))
    assert await agent.compact()
    assert agent.messages[0].content.startswith(cp.COMPACTED_HEADER)
    assert any("could not write a summary" in n.message for n in rec.of(ev.Notice))


async def test_handoff_fresh_keeps_only_the_pinned_state(tmp_path):
    agent, provider, _ = make_agent(tmp_path, [Reply(text="executing")])
    agent.load_history(long_history(4))
    agent.pin_parts.append(lambda: "PLAN TEXT")
    estimates = agent.handoff_estimates()
    assert estimates["fresh"] < estimates["compact"] <= estimates["keep"]
    agent.request_handoff("fresh")
    await agent.submit("go on")
    sent = provider.requests[-1].messages
    assert len(sent) == 1 and "PLAN TEXT" in sent[0].content and "go on" in sent[0].content


def rambling_summariser(text: str, budgets: list[int | None], stop=None):
    """A small real model writes until it is stopped (seen: 3,420 tokens of repetition)."""

    def model(request) -> Reply:
        if not request.tools:
            budgets.append(request.max_output)
            return Reply(text=text, stop_reason=stop)
        return Reply(text="answer")

    return model


async def test_a_rambling_summary_is_held_to_its_budget(tmp_path):
    budgets: list[int | None] = []
    ramble = "It is possible to use max_num with a list, but it is not very useful.\n\n" * 700
    agent, _provider, rec = make_agent(tmp_path, [rambling_summariser(ramble, budgets)] * 10)
    agent.load_history(long_history(8, size=800))

    async def window() -> int:
        return 4096

    agent.window_source = window
    await agent.submit("hello")
    await agent.submit("next")
    compacted = rec.of(ev.Compacted)
    assert compacted, "the history is over the threshold: it must compact"
    budget = agent.compaction.summary_tokens(4096)
    assert budgets and set(budgets) == {budget}  # every summary request asks for at most that
    for done in compacted:
        assert done.after_tokens < done.before_tokens  # compaction never grows the history
        assert len(done.summary) <= budget * cp.CHARS_PER_TOKEN + 60
    assert any("summary reached its length limit" in n.message for n in rec.of(ev.Notice))
    assert agent.messages[-1].content == "answer"
    assert agent.context_used() < 4096 * agent.compaction.threshold


async def test_a_summary_stopped_by_its_limit_is_reported_as_cut(tmp_path):
    budgets: list[int | None] = []
    agent, _provider, rec = make_agent(
        tmp_path, [rambling_summariser("short but unfinished", budgets, "max_tokens")]
    )
    agent.load_history(long_history(8))
    assert await agent.compact()
    assert budgets == [cp.DEFAULT_SUMMARY_TOKENS]  # the window is unknown here
    assert "short but unfinished" in agent.messages[0].content
    assert any("was cut" in n.message for n in rec.of(ev.Notice))


@given(
    st.integers(min_value=1024, max_value=1_000_000),
    st.integers(min_value=0, max_value=1_000_000),
    st.floats(min_value=0.2, max_value=1.0),
    st.floats(min_value=0.05, max_value=0.8),
)
def test_kept_part_summary_and_fixed_cost_fit_under_the_threshold(window, fixed, threshold, keep):
    policy = cp.CompactionPolicy(threshold=threshold, keep_fraction=keep)
    kept = policy.keep_tokens(window, fixed)
    assert 0 <= kept <= window * keep
    if kept:
        assert fixed + policy.summary_tokens(window, fixed) + kept <= window * threshold
    # The summariser's own request fits the window: input chunk, summary so far, answer.
    assert policy.chunk_tokens(window) + 2 * policy.summary_tokens(window) <= window


async def test_still_full_after_compacting_says_what_fills_the_context(tmp_path):
    budgets: list[int | None] = []
    agent, _provider, rec = make_agent(tmp_path, [rambling_summariser("s", budgets)] * 6)
    agent.load_history(long_history(4, size=1000))
    agent.pin_parts.append(lambda: "PLAN " + "x" * 12_000)  # a pinned plan larger than the window

    async def window() -> int:
        return 2048

    agent.window_source = window
    await agent.submit("hello")  # the window is looked up after this call
    await agent.submit("go")
    assert budgets, "the history is over the threshold: it must compact"
    warning = next(n.message for n in rec.of(ev.Notice) if "still nearly full" in n.message)
    assert "of 2,048 tokens" in warning and "summary and pinned state 3," in warning


async def test_a_resumed_long_conversation_is_compacted_before_it_is_sent(tmp_path):
    """Seen with llama-server: each resumed run was rejected once as too long first."""
    agent, provider, rec = make_agent(tmp_path, [small_server(4096)] * 10)
    agent.load_history(long_history(6, size=2500))  # over the window already
    lookups: list[int] = []

    async def window() -> int:
        lookups.append(len(provider.requests))
        return 4096

    agent.window_source = window
    await agent.submit("next")
    assert lookups == [0]  # looked up before any request was sent
    assert [c.reason for c in rec.of(ev.Compacted)] == ["auto"]
    assert not any("too long" in n.message for n in rec.of(ev.Notice))
    assert agent.messages[-1].content == "works"


async def test_the_pinned_request_is_bounded_by_the_window(tmp_path):
    agent, _provider, _rec = make_agent(tmp_path, [small_server(4096)] * 10)

    async def window() -> int:
        return 4096

    agent.window_source = window
    await agent.submit("paste " + "p" * 60_000)
    assert cp.is_compacted_block(agent.messages[0])
    pinned = agent.messages[0].content.partition("## The user's latest request\n")[2]
    assert pinned.startswith("paste ppp")
    assert len(pinned) <= agent.compaction.request_chars(4096) + 40
    assert agent.messages[-1].content == "works"


def counting_server(window: int, scale: float, agent_box: list):
    """A server whose template and tokenizer cost ``scale`` times the estimate (llama.cpp
    with a tool prompt: about 1.26); it reports usage and rejects what is over its window."""

    def model(request) -> Reply:
        agent = agent_box[0]
        tools = agent.registry.specs() if request.tools else []
        real = int(cp.request_tokens(request.system, request.messages, tools) * scale)
        if real > window:
            return Reply(
                error=ProviderError(
                    f"request ({real} tokens) exceeds the available context size ({window} tokens)"
                )
            )
        if not request.tools:
            return Reply(text="summary " * 250, usage=Usage(real, 600))
        return Reply(text="answer " + "a" * 3000, usage=Usage(real, 900))

    return model


class WordyTool(EchoTool):
    """A tool whose long description stands for a real tool list (about 1,500 tokens)."""

    name = "wordy"
    description = "A tool described at length. " * 190


async def test_usage_reports_teach_the_estimate_what_the_server_adds(tmp_path):
    box: list = []
    agent, _provider, rec = make_agent(
        tmp_path, [counting_server(4096, 1.5, box)] * 40, [EchoTool(), WordyTool()]
    )
    box.append(agent)

    async def window() -> int:
        return 4096

    agent.window_source = window
    for i in range(8):
        await agent.submit(f"question {i} " + "q" * 1500)
        assert agent.messages[-1].content.startswith("answer")
    assert agent.meter.scale == pytest.approx(1.5, abs=0.05)
    assert rec.of(ev.Compacted)
    # Every compaction left room in the server's own count: no request was rejected.
    assert not any("too long" in n.message for n in rec.of(ev.Notice))
    whole = cp.request_tokens(agent._last_system, agent.messages, agent.registry.specs())
    agent.meter.history_replaced()
    assert agent.context_used() == agent.meter.scaled(whole) > whole


@given(
    st.lists(st.integers(min_value=0, max_value=5000), max_size=12),
    st.integers(min_value=0, max_value=4000),
)
def test_shrink_ends_and_only_shortens(sizes, budget):
    """It used to loop forever once the elided messages alone were over the budget."""
    messages = [Message("user", "m" * size) for size in sizes]
    out, elided = cp.shrink(messages, budget)
    assert len(out) == len(messages) and elided <= len(messages)
    assert all(
        len(a.content) <= max(len(b.content), 400) for a, b in zip(out, messages, strict=True)
    )
    if elided == 0:
        assert out == messages
