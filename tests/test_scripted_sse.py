"""tests/scripted_sse.py: replies become a served script that planshell's real client reads back.

The server runs as the subprocess the tmux tests use; the client is planshell's
OpenAI-compatible provider, so a reply that the helper encodes wrongly (a
call's arguments, its id, the usage) fails here rather than as a confusing
walk-through.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from planshell.llm.models import list_models
from planshell.llm.openai_compat import OpenAICompatProvider
from planshell.llm.types import StreamEnd, UsageReport
from tests.provider_helpers import calls_of, collect, failure, text_of
from tests.scripted_sse import MODEL, ScriptedServer, SseReply, script

REPLIES = [
    SseReply(
        "Reading.",
        calls=[("read", {"path": "src/é.py"}), ("grep", {"pattern": 'a"b\\n'})],
        usage=(120, 7),
    ),
    SseReply("Done."),
]


def test_the_script_has_one_response_per_reply_and_a_fixed_model_list() -> None:
    made = script(REPLIES)
    assert len(made["responses"]) == 2 and made["repeat_last"] is False
    assert list(made["routes"]) == ["/v1/models"]
    json.dumps(made)  # what the server reads


async def test_the_client_reads_back_each_reply_and_the_model_list_takes_none(
    tmp_path: Path,
) -> None:
    with ScriptedServer(REPLIES, tmp_path) as server:
        # Asked before, between and after the replies: always the same answer, never a reply.
        assert await list_models(server.base_url, {}) == [MODEL]
        provider = OpenAICompatProvider(model=MODEL, base_url=server.base_url, backoff_base=0.01)
        first = await collect(provider)
        assert await list_models(server.base_url, {}) == [MODEL]
        second = await collect(provider)
        _seen, error = await failure(
            OpenAICompatProvider(
                model=MODEL, base_url=server.base_url, max_attempts=1, backoff_base=0.01
            )
        )
        assert await list_models(server.base_url, {}) == [MODEL]
    assert text_of(first) == "Reading."
    calls = calls_of(first)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("read", {"path": "src/é.py"}),
        ("grep", {"pattern": 'a"b\\n'}),
    ]
    assert len({c.id for c in calls}) == 2
    [usage] = [e.usage for e in first if isinstance(e, UsageReport)]
    assert (usage.input_tokens, usage.output_tokens) == (120, 7)
    assert [e.stop_reason for e in first if isinstance(e, StreamEnd)] == ["tool_use"]
    assert text_of(second) == "Done." and calls_of(second) == []
    assert "no scripted response left" in error.message  # the script ran out: said so
    assert len(server.chat_requests()) == 3 and len(server.requests()) == 6


async def test_a_gated_reply_waits_for_its_file_then_streams(tmp_path: Path) -> None:
    """``wait_for_file``: the request is taken (and logged) at once, the answer only after
    the test releases it, so a walk-through can change files between two model replies."""
    replies = [SseReply("First."), SseReply("Gated.", wait_for_file="go")]
    with ScriptedServer(replies, tmp_path) as server:
        provider = OpenAICompatProvider(model=MODEL, base_url=server.base_url, backoff_base=0.01)
        assert text_of(await collect(provider)) == "First."
        gated = asyncio.create_task(collect(provider))
        while len(server.chat_requests()) < 2:  # the request has arrived...
            await asyncio.sleep(0.01)
        # ...and, ungated, would be answered at once: give it every chance, it is held.
        done, _pending = await asyncio.wait({gated}, timeout=0.3)
        assert not done
        server.release("go")
        assert text_of(await gated) == "Gated."
