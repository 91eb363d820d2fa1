"""The incremental SSE decoder, fed the way a network feeds it: in pieces."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

from hypothesis import given, settings
from hypothesis import strategies as st

from planshell.llm.sse import SSEDecoder, SSEEvent, aiter_sse
from tests.sse_server import load_transcript


def decode_all(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    return events


MIXED = (
    "\ufeffevent: greet\r\ndata: héllo 🚀\r\nid: 7\r\n\r\n"
    ": keep-alive\n\n"
    "data:no-space\rdata:  two spaces\r\r"
    "data: first\ndata: second\n\n"
).encode()
MIXED_EVENTS = [
    SSEEvent("greet", "héllo 🚀", "7"),
    SSEEvent("message", "no-space\n two spaces", "7"),
    SSEEvent("message", "first\nsecond", "7"),
]


def test_single_event() -> None:
    assert decode_all(b"data: hi\n\n") == [SSEEvent("message", "hi", None)]


def test_event_name_id_and_multiline_data() -> None:
    events = decode_all(b"event: delta\nid: 42\ndata: a\ndata: b\ndata:\n\n")
    assert events == [SSEEvent("delta", "a\nb\n", "42")]


def test_data_with_and_without_space() -> None:
    assert [e.data for e in decode_all(b"data:x\n\ndata: y\n\ndata:  z\n\n")] == ["x", "y", " z"]


def test_comments_are_ignored() -> None:
    assert decode_all(b": ping\n\n:\n\ndata: x\n: inside\n\n") == [SSEEvent(data="x")]


def test_event_without_data_is_not_dispatched_and_name_resets() -> None:
    events = decode_all(b"event: lonely\n\ndata: x\n\n")
    assert events == [SSEEvent("message", "x")]


def test_field_without_colon() -> None:
    assert decode_all(b"data\n\n") == [SSEEvent(data="")]


def test_unknown_fields_and_retry() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 1500\nfoo: bar\ndata: x\n\n") == [SSEEvent(data="x")]
    assert decoder.retry_ms == 1500


def test_crlf_lf_and_cr_line_endings() -> None:
    assert decode_all(MIXED) == MIXED_EVENTS


def test_cr_at_chunk_end_then_lf() -> None:
    # "\r" | "\n" is one line ending, not two: the event must not end early.
    events = decode_all(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")
    assert events == [SSEEvent(data="a\nb")]


def test_every_split_point_gives_the_same_events() -> None:
    for cut in range(len(MIXED) + 1):
        assert decode_all(MIXED[:cut], MIXED[cut:]) == MIXED_EVENTS, cut


def test_byte_at_a_time() -> None:
    assert decode_all(*(MIXED[i : i + 1] for i in range(len(MIXED)))) == MIXED_EVENTS


def test_utf8_character_split_across_chunks() -> None:
    raw = "data: 🚀ü\n\n".encode()
    rocket_start = raw.index(b"\xf0")
    decoder = SSEDecoder()
    assert decoder.feed(raw[: rocket_start + 2]) == []
    assert decoder.feed(raw[rocket_start + 2 :]) == [SSEEvent(data="🚀ü")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert decode_all(b"data: \xff\xfe ok\n\n") == [SSEEvent(data="\ufffd\ufffd ok")]


def test_final_event_without_blank_line_is_dropped() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: done\n\ndata: trunc") == [SSEEvent(data="done")]
    assert decoder.has_partial_event
    assert decoder.feed(b"ated\n") == []
    assert decoder.has_partial_event  # a field line without its blank line


def test_no_partial_event_after_complete_input() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: x\n\n: trailing comment\n")
    assert not decoder.has_partial_event


def test_bom_only_stripped_at_start() -> None:
    assert decode_all(b"\xef\xbb", b"\xbfdata: x\n\n") == [SSEEvent(data="x")]
    assert decode_all(b"data: x\n\n\xef\xbb\xbfdata: y\n\n") == [SSEEvent(data="x")]


def test_transcripts_survive_any_two_way_split() -> None:
    for name in ("openai_tool_calls.txt", "anthropic_thinking.txt"):
        raw = load_transcript(name)
        whole = decode_all(raw)
        assert whole and all(e.data for e in whole)
        for cut in range(0, len(raw) + 1, 7):
            assert decode_all(raw[:cut], raw[cut:]) == whole


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(MIXED)), max_size=12))
def test_random_splits(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(MIXED)]
    chunks = [MIXED[a:b] for a, b in itertools.pairwise(points)]
    assert decode_all(*chunks) == MIXED_EVENTS


async def test_aiter_sse() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in (b"data: o", b"ne\n", b"\ndata: two\n\ndata: three"):
            yield piece

    assert [e.data async for e in aiter_sse(chunks())] == ["one", "two"]
