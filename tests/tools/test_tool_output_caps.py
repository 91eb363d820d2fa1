"""Every tool result sent to the model is capped, with a note on getting the rest.

Each tool kind is run for real against a project in ``tmp_path`` with a small
``result_max_chars``, so one big file or command output cannot fill the window.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.tools.base import ToolContext, ToolResult, cap_text
from planshell.tools.edit import EditArgs, EditTool
from planshell.tools.find import FindArgs, FindTool
from planshell.tools.grep import GrepArgs, GrepTool
from planshell.tools.ls import LsArgs, LsTool
from planshell.tools.read import ReadArgs, ReadTool
from planshell.tools.shell import BashArgs, BashTool
from planshell.tools.todo import TodoList, TodoWriteTool
from tests.engine_helpers import make_agent

CAP = 2000
NOTE_ROOM = 400  # a truncation note is a sentence, never another page


def ctx_for(root: Path) -> ToolContext:
    return ToolContext(root=root, result_max_chars=CAP)


def assert_capped(result: ToolResult, *hints: str) -> str:
    assert len(result.content) <= CAP + NOTE_ROOM, len(result.content)
    tail = result.content[-NOTE_ROOM:]
    for hint in hints:
        assert hint in tail, (hint, tail)
    return tail


async def test_read_stops_at_the_budget_and_names_the_next_offset(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i} " + "x" * 60 + "\n" for i in range(1000)))
    tool = ReadTool()
    result = tool.capped(
        await tool.run(ReadArgs(path="big.txt"), ctx_for(tmp_path)), ctx_for(tmp_path)
    )
    tail = assert_capped(result, "of 1000", "read more with offset=")
    offset = int(tail.rsplit("offset=", 1)[1].rstrip("]"))
    # Following the note continues exactly where the first read stopped.
    more = await tool.run(ReadArgs(path="big.txt", offset=offset, limit=1), ctx_for(tmp_path))
    assert more.content.split("\t", 1)[1].startswith(f"line {offset - 1} ")


async def test_read_of_one_huge_line_is_cut_too(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 1_000_000)
    ctx = ToolContext(root=tmp_path, result_max_chars=CAP, read_max_bytes=10_000_000)
    tool = ReadTool()
    result = tool.capped(await tool.run(ReadArgs(path="min.js"), ctx), ctx)
    assert_capped(result)
    assert "more characters truncated" in result.content or "offset" in result.content


async def test_grep_stops_at_the_budget(tmp_path: Path) -> None:
    for n in range(40):
        (tmp_path / f"m{n}.py").write_text("".join(f"needle = {'y' * 150}\n" for _ in range(20)))
    tool = GrepTool()
    result = tool.capped(
        await tool.run(GrepArgs(pattern="needle", max_results=5000), ctx_for(tmp_path)),
        ctx_for(tmp_path),
    )
    assert_capped(result, "there are more", "narrow the pattern, path or glob")
    assert result.data["capped"] is True


async def test_find_is_capped(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    for n in range(200):
        (deep / f"file_{n:04}_{'z' * 40}.txt").write_text("")
    tool = FindTool()
    result = tool.capped(
        await tool.run(FindArgs(pattern="**/*.txt"), ctx_for(tmp_path)), ctx_for(tmp_path)
    )
    assert_capped(result, "output truncated", "narrower pattern or path")


async def test_ls_is_capped(tmp_path: Path) -> None:
    for n in range(300):
        (tmp_path / f"entry_{n:04}_{'q' * 40}.txt").write_text("")
    tool = LsTool()
    result = tool.capped(await tool.run(LsArgs(), ctx_for(tmp_path)), ctx_for(tmp_path))
    assert_capped(result, "output truncated", "list a subdirectory")


async def test_bash_keeps_head_and_tail_within_the_budget(tmp_path: Path) -> None:
    tool = BashTool()
    result = tool.capped(
        await tool.run(BashArgs(command="seq 1 100000"), ctx_for(tmp_path)), ctx_for(tmp_path)
    )
    assert len(result.content) <= CAP + NOTE_ROOM
    assert result.content.startswith("1\n2\n") and "100000\nexit code 0" in result.content
    assert "send the output to a file and read or grep parts of it" in result.content


async def test_edit_diff_is_capped(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("start\n")
    tool = EditTool()
    args = EditArgs(
        path="a.txt", old_string="start\n", new_string="".join(f"{i}\n" for i in range(5000))
    )
    result = tool.capped(await tool.run(args, ctx_for(tmp_path)), ctx_for(tmp_path))
    assert_capped(result, "output truncated")


async def test_todo_result_is_capped(tmp_path: Path) -> None:
    tool = TodoWriteTool(TodoList())
    args = tool.Args.model_validate(
        {"todos": [{"content": f"task {n} " + "w" * 80, "status": "pending"} for n in range(100)]}
    )
    result = tool.capped(await tool.run(args, ctx_for(tmp_path)), ctx_for(tmp_path))
    assert len(result.content) <= CAP + NOTE_ROOM


async def test_the_loop_caps_every_result_it_sends(tmp_path: Path) -> None:
    """Whatever a tool returns, the model gets at most the cap (the loop applies it)."""
    (tmp_path / "a.txt").write_text("start\n")
    big = "".join(f"{i}\n" for i in range(20000))
    agent, provider, rec = make_agent(
        tmp_path,
        [
            Reply(calls=[("edit", {"path": "a.txt", "old_string": "start\n", "new_string": big})]),
            Reply(text="ok"),
        ],
        [EditTool()],
    )
    agent.ctx.result_max_chars = CAP
    await agent.submit("go")
    sent = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert len(sent) == 1 and len(sent[0].content) <= CAP + NOTE_ROOM
    assert "output truncated" in sent[0].content
    shown = rec.of(ev.ToolFinished)[0]
    assert shown.content == sent[0].content and shown.data.get("capped") is True


@pytest.mark.parametrize("size", [0, CAP - 1, CAP])
def test_cap_text_leaves_what_fits(size: int) -> None:
    text = "x" * size
    assert cap_text(text, CAP, "hint") is text


def test_cap_text_cuts_at_a_line_and_counts_what_is_left() -> None:
    text = "\n".join("y" * 99 for _ in range(100))  # 100 lines of 100 characters
    capped = cap_text(text, CAP, "read a line range")
    head, note = capped.rsplit("\n", 1)
    assert all(len(line) == 99 for line in head.split("\n"))
    assert note.startswith("[output truncated: ") and note.endswith("read a line range]")
    dropped = int(note.split(": ", 1)[1].split(" ", 1)[0].replace(",", ""))
    assert len(head) + dropped == len(text)
    json.dumps(capped)  # plain text, nothing odd
