"""Long sessions and fast streams (issue 28): nothing is lost, nothing comes out of order.

A resumed conversation shows its newest part first and inserts the older ones
above it between frames; ``--continue`` shows the end of the file before the
full load. These tests check what ends up in the transcript, never how fast.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from planshell.agent.session import SessionLog
from planshell.agent.session_peek import peek_resumed_mode, peek_resumed_tail
from planshell.llm.scripted import Reply
from planshell.llm.types import Message, ToolCall
from planshell.ui.widgets import transcript as transcript_module
from planshell.ui.widgets.assistant import AssistantMessage
from planshell.ui.widgets.messages import UserMessage
from planshell.ui.widgets.tool_row import ToolRow
from tests.ui.plan_helpers import chip_text
from tests.ui.resume_helpers import held_resume
from tests.ui_helpers import SIZE, idle, make_app, ready, send, until

pytestmark = pytest.mark.usefixtures("isolated_env")

TURNS = 600  # 2,400 messages: well past what the first frame shows


def write_long_session(project: Path, turns: int = TURNS, mode: str | None = None) -> Path:
    log = SessionLog.create(project)
    if mode is not None:
        log.append({"type": "mode", "mode": mode, "plan_path": None, "saved_tools": None})
    for n in range(turns):
        log.append_message(Message("user", f"question {n}"))
        call = ToolCall(f"c{n}", "read", '{"path": "README.md"}')
        log.append_message(Message("assistant", f"reading for {n}", tool_calls=[call]))
        log.append_message(Message("tool", f"result {n}", tool_call_id=call.id))
        log.append_message(Message("assistant", f"answer {n}"))
    log.close()
    return log.path


async def test_a_long_resumed_session_is_all_there_in_order(project: Path) -> None:
    loaded = SessionLog.load(write_long_session(project))
    app = make_app(project, [], resume=loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: not transcript.history_pending)
        users = [u.text for u in transcript.entries_of(UserMessage)]
        assert users == [f"question {n}" for n in range(TURNS)]
        answers = [a.full_text for a in transcript.entries_of(AssistantMessage)]
        assert answers[:4] == ["reading for 0", "answer 0", "reading for 1", "answer 1"]
        assert len(answers) == 2 * TURNS
        rows = transcript.tool_rows
        assert len(rows) == TURNS
        assert all(row.status == "ok" for row in rows)  # every call met its result
        assert not any("earlier" in e.plain() for e in transcript.all_entries)
        transcript.action_top()
        await pilot.pause()
        assert "question 0" in transcript.visible_text()
        transcript.action_bottom()
        await pilot.pause()
        assert "answer 599" in transcript.visible_text()


async def test_older_history_arriving_does_not_move_what_the_reader_looks_at(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript_module, "_BACKFILL_GAP", 3600.0)  # batches by hand below
    loaded = SessionLog.load(write_long_session(project))
    app = make_app(project, [], resume=loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        transcript = screen.transcript
        assert transcript.history_pending
        assert transcript.entries_of(UserMessage)[0].text != "question 0"
        transcript.scroll_to(y=5, animate=False)
        await pilot.pause()
        assert not transcript.following
        before = transcript.visible_text()
        transcript._backfill()
        await pilot.pause()
        assert transcript.visible_text() == before
        while transcript.history_pending:
            transcript._backfill()
        await pilot.pause()
        assert transcript.visible_text() == before
        assert transcript.entries_of(UserMessage)[0].text == "question 0"


async def test_continue_shows_the_end_of_the_session_before_it_has_loaded(project: Path) -> None:
    path = write_long_session(project, mode="plan")
    app, gate = held_resume(
        project,
        path,
        mode_hint=peek_resumed_mode(project, None),
        resume_tail=partial(peek_resumed_tail, project, None),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen_stack[0]
        try:
            await until(pilot, lambda: "answer 599" in screen.transcript.visible_text())
            shown = screen.transcript.visible_text()
            assert f"Resumed conversation {path.stem}." in shown
            assert chip_text(app).startswith("PLAN")
            assert app.runtime is None  # still loading
        finally:
            gate.set()
        await ready(pilot)
        transcript = screen.transcript
        await until(pilot, lambda: not transcript.history_pending)
        users = [u.text for u in transcript.entries_of(UserMessage)]
        assert users == [f"question {n}" for n in range(TURNS)]  # the preview left no copies
        notes = [e for e in transcript.all_entries if "Resumed conversation" in e.plain()]
        assert len(notes) == 1
        assert chip_text(app).startswith("PLAN")


async def test_the_preview_sanitises_model_text_like_the_loaded_history(project: Path) -> None:
    log = SessionLog.create(project)
    log.append_message(Message("user", "hi"))
    log.append_message(Message("assistant", "safe\x1b]52;c;ZXZpbA==\x07 text\x1b[31m red"))
    log.close()
    app, gate = held_resume(
        project, log.path, resume_tail=partial(peek_resumed_tail, project, None)
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen_stack[0]
        try:
            await until(pilot, lambda: "safe text red" in screen.transcript.visible_text())
            assert "\x1b" not in screen.transcript.visible_text()
        finally:
            gate.set()
        await ready(pilot)


def test_the_tail_peek_is_a_suffix_of_what_the_load_gives(project: Path) -> None:
    log = SessionLog.create(project)
    log.append_message(Message("user", "before the clear"))
    log.append({"type": "clear"})
    log.append_message(Message("user", "one"))
    log.append_message(Message("assistant", "two"))
    log.append({"type": "rewind", "keep": 1})
    log.append_message(Message("assistant", "three"))
    log.close()
    with log.path.open("a") as fh:
        fh.write('[1, 2]\n"a string"\n{"type": "message", "message": "not a dict"}\n')
        fh.write('{"type": "message", "message": {"role": "user", "content": "trunc')
    loaded = [m.content for m in SessionLog.load(log.path).messages]
    assert loaded == ["one", "three"]
    stem, raw = peek_resumed_tail(project, None) or ("", [])
    assert stem == log.path.stem
    assert [m["content"] for m in raw] == ["three"]  # after the rewind: a suffix of the load
    # A window that starts inside an entry drops that partial line.
    _, small = peek_resumed_tail(project, None, limit=120) or ("", [])
    assert all(isinstance(m, dict) for m in small)
    assert [m["content"] for m in small] in ([], ["three"])
    assert peek_resumed_tail(project, "no-such-session") is None


async def test_a_fast_stream_reaches_the_screen_whole_and_in_order(project: Path) -> None:
    text = "".join(f"w{n} " if n % 50 else f"\n\n## part {n}\n\n" for n in range(1, 4000))
    replies = [
        Reply(text="Reading first.", chunk=2, calls=[("read", {"path": "README.md"})]),
        Reply(text=text, chunk=3),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "go")
        await idle(pilot, screen)
        transcript = screen.transcript
        kinds = [type(e).__name__ for e in transcript.entries]
        assert kinds == ["UserMessage", "AssistantMessage", "ToolRow", "AssistantMessage"]
        first, last = transcript.entries_of(AssistantMessage)
        assert first.full_text == "Reading first."
        assert last.full_text == text
        assert isinstance(transcript.entries[2], ToolRow)
        rows = "\n".join(
            transcript.rendered_line(row) for row in range(transcript.virtual_size.height)
        )
        words = [w for w in rows.split() if w.startswith("w") and w[1:].isdigit()]
        assert words == [f"w{n}" for n in range(1, 4000) if n % 50]
