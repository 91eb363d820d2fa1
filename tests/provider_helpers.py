"""Driving a streaming provider in tests: collect its events, or its failure."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import aclosing
from typing import Any

import pytest

from planshell.llm.types import (
    Message,
    ProviderError,
    StreamEvent,
    TextChunk,
    ToolCall,
    ToolCallReady,
    ToolSpec,
)

USER = [Message(role="user", content="hi")]


async def collect(
    provider: Any,
    messages: list[Message] = USER,
    tools: Sequence[ToolSpec] = (),
    max_output: int | None = None,
) -> list[StreamEvent]:
    try:
        stream = provider.stream("be brief", messages, list(tools), max_output=max_output)
        async with aclosing(stream):
            return [event async for event in stream]
    finally:
        await provider.aclose()


async def failure(provider: Any) -> tuple[list[StreamEvent], ProviderError]:
    """Events yielded before the stream failed, and the failure."""
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        try:
            async for event in provider.stream("", USER, []):
                seen.append(event)
        finally:
            await provider.aclose()
    return seen, info.value


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


def calls_of(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallReady)]


def record_waits(provider: Any) -> list[float]:
    """The seconds of each retry wait ``provider`` takes, in order.

    The waits still happen (real ``asyncio.sleep``): this records what the retry
    policy chose, which the tests assert instead of timing the whole call.
    """
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    provider.retry.sleep = sleep
    return waits
