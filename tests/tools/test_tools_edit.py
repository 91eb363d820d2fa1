"""write / edit against real files, including every refusal path."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from planshell.tools.base import Tool, ToolContext, ToolError, ToolResult
from planshell.tools.edit import EditTool, WriteTool, unified_diff


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "project"
    root.mkdir()
    return ToolContext(root=root)


async def call(tool: Tool, ctx: ToolContext, **kwargs: Any) -> ToolResult:
    return await tool.run(tool.Args(**kwargs), ctx)


# --------------------------------------------------------------------------- write


async def test_write_creates_file_and_parents(ctx: ToolContext) -> None:
    result = await call(WriteTool(), ctx, path="pkg/sub/mod.py", content="x = 'é'\n")
    assert (ctx.root / "pkg/sub/mod.py").read_text() == "x = 'é'\n"
    assert result.content == "Created pkg/sub/mod.py (9 bytes)."
    assert result.data == {"path": "pkg/sub/mod.py", "bytes": 9, "created": True}


async def test_write_overwrites_and_keeps_mode(ctx: ToolContext) -> None:
    script = ctx.root / "run.sh"
    script.write_text("old\n")
    script.chmod(0o755)
    result = await call(WriteTool(), ctx, path="run.sh", content="new\r\n")
    assert script.read_bytes() == b"new\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert result.content == "Overwrote run.sh (5 bytes)."
    assert result.data["created"] is False
    assert [p.name for p in ctx.root.iterdir()] == ["run.sh"]  # no temp file left


async def test_write_refusals(ctx: ToolContext) -> None:
    (ctx.root / "dir").mkdir()
    (ctx.root / "file").write_text("")
    outside = ctx.root.parent / "elsewhere"
    outside.mkdir()
    (ctx.root / "escape").symlink_to(outside)
    with pytest.raises(ToolError, match="dir is a directory"):
        await call(WriteTool(), ctx, path="dir", content="x")
    with pytest.raises(ToolError, match=r"could not write file/x\.txt"):
        await call(WriteTool(), ctx, path="file/x.txt", content="x")
    for raw in ["../x.txt", "/etc/passwd", "escape/x.txt"]:
        with pytest.raises(ToolError, match="outside the project root"):
            await call(WriteTool(), ctx, path=raw, content="x")
    assert list(outside.iterdir()) == []


# --------------------------------------------------------------------------- edit


async def test_edit_replaces_unique_string_and_returns_diff(ctx: ToolContext) -> None:
    (ctx.root / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    result = await call(EditTool(), ctx, path="m.py", old_string="return 1", new_string="return 10")
    assert (
        ctx.root / "m.py"
    ).read_text() == "def f():\n    return 10\n\n\ndef g():\n    return 2\n"
    diff = result.data["diff"]
    assert diff.startswith("--- a/m.py\n+++ b/m.py\n@@ -1,5 +1,5 @@\n")
    assert "-    return 1\n+    return 10\n" in diff
    assert result.content == f"Edited m.py: replaced 1 occurrence.\n\n{diff}"
    assert result.data["replacements"] == 1


async def test_edit_refuses_non_unique_and_names_lines(ctx: ToolContext) -> None:
    path = ctx.root / "dup.py"
    path.write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(
        ToolError, match=r"occurs 2 times in dup.py \(starting on lines 1, 3\).*replace_all"
    ):
        await call(EditTool(), ctx, path="dup.py", old_string="x = 1", new_string="x = 3")
    assert path.read_text() == "x = 1\ny = 2\nx = 1\n"


async def test_edit_replace_all(ctx: ToolContext) -> None:
    path = ctx.root / "dup.py"
    path.write_text("x = 1\ny = 2\nx = 1\n")
    result = await call(
        EditTool(), ctx, path="dup.py", old_string="x = 1", new_string="x = 3", replace_all=True
    )
    assert path.read_text() == "x = 3\ny = 2\nx = 3\n"
    assert result.content.startswith("Edited dup.py: replaced 2 occurrences.")


async def test_edit_missing_old_string_hints_closest_line(ctx: ToolContext) -> None:
    (ctx.root / "c.py").write_text("import os\n\ndef compute_total(items):\n    pass\n")
    with pytest.raises(
        ToolError,
        match=r"old_string was not found in c.py. The closest line is 3: 'def compute_total\(items\):'",
    ):
        await call(
            EditTool(), ctx, path="c.py", old_string="def compute_totals(item):", new_string="x"
        )
    with pytest.raises(ToolError, match=r"not found in c.py.$"):
        await call(EditTool(), ctx, path="c.py", old_string="zzzz qqqq", new_string="x")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [("same", "same", "identical"), ("", "x", "old_string is empty")],
)
async def test_edit_refuses_pointless_edits(
    ctx: ToolContext, old: str, new: str, message: str
) -> None:
    (ctx.root / "a.txt").write_text("same\n")
    with pytest.raises(ToolError, match=message):
        await call(EditTool(), ctx, path="a.txt", old_string=old, new_string=new)


async def test_edit_refuses_missing_binary_directory_and_outside(ctx: ToolContext) -> None:
    (ctx.root / "blob").write_bytes(b"\x00\x01abc")
    (ctx.root / "dir").mkdir()
    tool = EditTool()
    with pytest.raises(ToolError, match=r"new\.py does not exist; use write to create it"):
        await call(tool, ctx, path="new.py", old_string="a", new_string="b")
    with pytest.raises(ToolError, match="blob looks like a binary file"):
        await call(tool, ctx, path="blob", old_string="abc", new_string="b")
    with pytest.raises(ToolError, match="dir is a directory"):
        await call(tool, ctx, path="dir", old_string="a", new_string="b")
    with pytest.raises(ToolError, match="outside the project root"):
        await call(tool, ctx, path="/etc/passwd", old_string="root", new_string="toor")


async def test_edit_applies_lf_edit_to_crlf_file(ctx: ToolContext) -> None:
    path = ctx.root / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await call(EditTool(), ctx, path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_unified_diff_marks_missing_final_newline() -> None:
    diff = unified_diff("f.txt", "a\nb", "a\nc")
    assert diff.splitlines() == [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]


def test_headlines() -> None:
    assert WriteTool().headline(WriteTool.Args(path="a.py", content="x")) == "write a.py"
    args = EditTool.Args(path="b.py", old_string="x", new_string="y")
    assert EditTool().headline(args) == "edit b.py"
