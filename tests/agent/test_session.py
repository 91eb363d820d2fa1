"""Session logs: appended per entry, resumable, tolerant of damage."""

from __future__ import annotations

import json
import os

import pytest

from planshell.agent.session import SessionLog, SessionNotFound, find_session, list_sessions
from planshell.llm.types import Message, ToolCall


def test_append_and_load_round_trip(tmp_path):
    log = SessionLog.create(tmp_path)
    log.append_message(Message("user", "hello"))
    log.append_message(
        Message("assistant", "", tool_calls=[ToolCall("c1", "read", '{"path":"a"}')])
    )
    log.append_message(Message("tool", "data", tool_call_id="c1", tool_name="read"))
    log.append({"type": "mode", "mode": "plan", "plan_path": "/x.md", "saved_tools": ["read"]})
    # Flushed per entry: readable before close.
    loaded = SessionLog.load(log.path)
    assert [m.role for m in loaded.messages] == ["user", "assistant", "tool"]
    assert loaded.messages[1].tool_calls[0].name == "read"
    assert loaded.mode is not None and loaded.mode["mode"] == "plan"
    assert loaded.first_prompt == "hello" and not loaded.problems
    log.close()


def test_truncated_last_line_is_tolerated(tmp_path):
    log = SessionLog.create(tmp_path)
    log.append_message(Message("user", "one"))
    log.close()
    with log.path.open("a") as fh:
        fh.write('{"type": "message", "message": {"role": "assis')
    loaded = SessionLog.load(log.path)
    assert [m.content for m in loaded.messages] == ["one"]
    assert loaded.problems == ["line 3: truncated last entry ignored"]
    # Reopening ends the broken line so new entries stay readable.
    again = SessionLog.reopen(log.path)
    again.append_message(Message("user", "two"))
    again.close()
    assert [m.content for m in SessionLog.load(log.path).messages] == ["one", "two"]


def test_corrupt_middle_line_is_reported(tmp_path):
    log = SessionLog.create(tmp_path)
    log.append({"type": "message", "message": {"role": "user", "content": "a"}})
    log.close()
    with log.path.open("a") as fh:
        fh.write("not json at all}\n")
        fh.write(
            json.dumps({"type": "message", "message": {"role": "user", "content": "b"}}) + "\n"
        )
    loaded = SessionLog.load(log.path)
    assert [m.content for m in loaded.messages] == ["a", "b"]
    assert len(loaded.problems) == 1 and "line 3: unreadable entry skipped" in loaded.problems[0]


def test_find_newest_and_by_id(tmp_path):
    with pytest.raises(SessionNotFound):
        find_session(tmp_path, None)
    first = SessionLog.create(tmp_path)
    first.append_message(Message("user", "first"))
    first.close()
    second = SessionLog(first.path.with_name("99999999-000000-abcdef.jsonl"))
    second.append({"type": "meta"})
    second.close()
    os.utime(first.path, (1_000, 1_000))
    assert list_sessions(tmp_path) == [second.path, first.path]
    assert find_session(tmp_path, None) == second.path
    assert find_session(tmp_path, first.id[:15]) == first.path
    with pytest.raises(SessionNotFound, match="no session 'zzz'"):
        find_session(tmp_path, "zzz")


def test_starting_without_messages_leaves_no_file(tmp_path):
    log = SessionLog.create(tmp_path)
    log.close()
    assert not log.path.exists() and list_sessions(tmp_path) == []
    log.append_message(Message("user", "now"))
    log.close()
    first, second = log.path.read_text().splitlines()
    assert json.loads(first)["type"] == "meta" and json.loads(second)["type"] == "message"
