"""read / ls / find / grep against real files in a temporary project."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from planshell.tools import find, grep, ls, walk
from planshell.tools.base import Tool, ToolContext, ToolError, ToolResult
from planshell.tools.find import FindTool
from planshell.tools.grep import GrepTool
from planshell.tools.grep_query import GlobFilter
from planshell.tools.ls import LsTool
from planshell.tools.read import ReadTool
from planshell.tools.walk import glob_to_regex


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "project"
    root.mkdir()
    return ToolContext(root=root)


async def call(tool: Tool, ctx: ToolContext, **kwargs: Any) -> ToolResult:
    return await tool.run(tool.Args(**kwargs), ctx)


def put(root: Path, rel: str, data: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


# --------------------------------------------------------------------------- read


async def test_read_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    put(ctx.root, "a.txt", "alpha\nbeta\r\n\ngamma")
    result = await call(ReadTool(), ctx, path="a.txt")
    assert result.content == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
    assert not result.is_error
    assert result.data == {"path": "a.txt", "start": 1, "total": 4, "end": 4}


async def test_read_offset_and_limit_with_footer(ctx: ToolContext) -> None:
    put(ctx.root, "n.txt", "".join(f"line {i}\n" for i in range(1, 101)))
    result = await call(ReadTool(), ctx, path="n.txt", offset=10, limit=3)
    lines = result.content.splitlines()
    assert lines[:3] == ["    10\tline 10", "    11\tline 11", "    12\tline 12"]
    assert lines[3] == "[showed lines 10-12 of 100; 97 lines omitted; read more with offset=13]"


async def test_read_tail_footer_has_no_offset_hint(ctx: ToolContext) -> None:
    put(ctx.root, "n.txt", "a\nb\nc\n")
    result = await call(ReadTool(), ctx, path="n.txt", offset=3)
    assert result.content == "     3\tc\n[showed lines 3-3 of 3; 2 lines omitted]"


async def test_read_default_limit_is_2000_lines(ctx: ToolContext) -> None:
    put(ctx.root, "big.txt", "x\n" * 2500)
    result = await call(ReadTool(), ctx, path="big.txt")
    assert result.content.count("\tx") == 2000
    assert result.content.endswith("500 lines omitted; read more with offset=2001]")


async def test_read_truncates_long_lines(ctx: ToolContext) -> None:
    put(ctx.root, "long.txt", "y" * 2500 + "\nshort\n")
    result = await call(ReadTool(), ctx, path="long.txt")
    first, second = result.content.splitlines()
    assert first == "     1\t" + "y" * 2000 + " [... 500 more characters truncated]"
    assert second == "     2\tshort"


async def test_read_empty_file(ctx: ToolContext) -> None:
    put(ctx.root, "empty.txt")
    result = await call(ReadTool(), ctx, path="empty.txt")
    assert result.content == "[empty.txt is empty]"


async def test_read_offset_past_end(ctx: ToolContext) -> None:
    put(ctx.root, "s.txt", "one\ntwo\n")
    with pytest.raises(ToolError, match=r"offset 5 is past the end of s.txt, which has 2 lines"):
        await call(ReadTool(), ctx, path="s.txt", offset=5)


async def test_read_refuses_missing_file_and_suggests_find(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"nope.py does not exist; use find"):
        await call(ReadTool(), ctx, path="nope.py")


async def test_read_refuses_directory_and_suggests_ls(ctx: ToolContext) -> None:
    (ctx.root / "pkg").mkdir()
    with pytest.raises(ToolError, match=r"pkg is a directory.*use ls"):
        await call(ReadTool(), ctx, path="pkg")


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"caf\xe9 latin-1\n"])
async def test_read_refuses_binary(ctx: ToolContext, data: bytes) -> None:
    put(ctx.root, "blob.bin", data)
    with pytest.raises(ToolError, match=r"blob.bin looks like a binary file"):
        await call(ReadTool(), ctx, path="blob.bin")


async def test_read_refuses_large_file_unless_windowed(ctx: ToolContext) -> None:
    ctx.read_max_bytes = 1000
    put(ctx.root, "log.txt", "".join(f"entry {i}\n" for i in range(1, 501)))
    with pytest.raises(
        ToolError, match=r"log.txt is .* KB, over the 1000 B limit.*offset and limit"
    ):
        await call(ReadTool(), ctx, path="log.txt")
    result = await call(ReadTool(), ctx, path="log.txt", offset=250, limit=2)
    assert result.content.splitlines() == [
        "   250\tentry 250",
        "   251\tentry 251",
        "[showed lines 250-251 of 500; 498 lines omitted; read more with offset=252]",
    ]


async def test_read_window_stops_at_the_size_budget(ctx: ToolContext) -> None:
    ctx.read_max_bytes = 1000
    put(ctx.root, "wide.txt", ("z" * 300 + "\n") * 20)
    result = await call(ReadTool(), ctx, path="wide.txt", limit=20)
    assert result.content.count("\tz") == 3
    assert result.content.endswith("read more with offset=4]")


@pytest.mark.parametrize("raw", ["../outside.txt", "/etc/passwd", "link/secret.txt"])
async def test_read_refuses_paths_outside_root(ctx: ToolContext, raw: str) -> None:
    outside = ctx.root.parent / "elsewhere"
    put(outside, "secret.txt", "top secret\n")
    put(ctx.root.parent, "outside.txt", "nope\n")
    (ctx.root / "link").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the project root"):
        await call(ReadTool(), ctx, path=raw)


@pytest.mark.parametrize(
    "raw",
    [
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/proc/thread-self/environ",
        "/proc/self/task/../environ",
        "/proc//self/./mem",
    ],
)
async def test_read_refuses_process_secrets_even_outside_root_allowed(
    ctx: ToolContext, raw: str
) -> None:
    """/proc/self is planshell itself: its environ holds the provider API keys."""
    ctx.allow_outside_root = True
    with pytest.raises(ToolError, match="process file"):
        await call(ReadTool(), ctx, path=raw)
    result = await call(ReadTool(), ctx, path="/proc/self/status")  # no secret in it
    assert "Name:" in result.content


def test_walk_skips_process_secrets() -> None:
    """A grep or find from /proc (allowed outside the root) never opens environ files."""
    found = []
    for path in walk.walk_files(Path(f"/proc/{os.getpid()}")):
        found.append(path.name)
        if len(found) > 200:
            break
    assert "status" in found
    assert not {"environ", "cmdline", "mem"} & set(found)


def test_read_headline() -> None:
    tool = ReadTool()
    assert tool.headline(tool.Args(path="planshell/config.py")) == "read planshell/config.py"
    assert tool.headline(tool.Args(path="a.py", offset=10, limit=5)) == "read a.py:10-14"


# --------------------------------------------------------------------------- ls


async def test_ls_sorts_dirs_first_with_slash_and_sizes(ctx: ToolContext) -> None:
    put(ctx.root, "b.txt", "x" * 2048)
    put(ctx.root, "a.txt", "hi")
    put(ctx.root, "zdir/inner.txt")
    put(ctx.root, ".hidden/x")
    (ctx.root / "link").symlink_to("a.txt")
    result = await call(LsTool(), ctx)
    assert result.content.splitlines() == [
        ".hidden/",
        "zdir/",
        "a.txt  2 B",
        "b.txt  2.0 KB",
        "link -> a.txt",
    ]


async def test_ls_caps_entries(ctx: ToolContext) -> None:
    for i in range(ls.LS_MAX_ENTRIES + 3):
        put(ctx.root, f"many/f{i:04d}")
    result = await call(LsTool(), ctx, path="many")
    lines = result.content.splitlines()
    assert len(lines) == ls.LS_MAX_ENTRIES + 1
    assert lines[-1].startswith(f"[showing {ls.LS_MAX_ENTRIES} of {ls.LS_MAX_ENTRIES + 3}")


async def test_ls_refusals(ctx: ToolContext) -> None:
    put(ctx.root, "f.txt")
    with pytest.raises(ToolError, match=r"f\.txt is a file, not a directory; use read"):
        await call(LsTool(), ctx, path="f.txt")
    with pytest.raises(ToolError, match="ghost does not exist; use find"):
        await call(LsTool(), ctx, path="ghost")
    with pytest.raises(ToolError, match="outside the project root"):
        await call(LsTool(), ctx, path="..")


async def test_ls_empty_dir(ctx: ToolContext) -> None:
    (ctx.root / "void").mkdir()
    assert (await call(LsTool(), ctx, path="void")).content == "[void is empty]"


# --------------------------------------------------------------------------- find


def touch_at(root: Path, rel: str, mtime: float) -> None:
    path = put(root, rel)
    os.utime(path, (mtime, mtime))


async def test_find_newest_first_and_skips_dirs(ctx: ToolContext) -> None:
    touch_at(ctx.root, "old.py", 1_000)
    touch_at(ctx.root, "src/new.py", 3_000)
    touch_at(ctx.root, "src/deep/mid.py", 2_000)
    touch_at(ctx.root, "src/deep/same.py", 2_000)
    touch_at(ctx.root, "notes.md", 4_000)
    for skipped in walk.SKIP_DIRS:
        touch_at(ctx.root, f"{skipped}/hidden.py", 5_000)
        touch_at(ctx.root, f"src/{skipped}/nested.py", 5_000)
    result = await call(FindTool(), ctx, pattern="**/*.py")
    assert result.content.splitlines() == [
        "src/new.py",
        "src/deep/mid.py",
        "src/deep/same.py",
        "old.py",
    ]


async def test_find_glob_semantics(ctx: ToolContext) -> None:
    for rel in ["top.py", "top.md", "src/a.py", "src/b.pyi", "src/c.txt"]:
        touch_at(ctx.root, rel, 1_000)
    tool = FindTool()
    assert (await call(tool, ctx, pattern="*.py")).content == "top.py"
    assert (await call(tool, ctx, pattern="./*.md")).content == "top.md"
    both = await call(tool, ctx, pattern="src/*.{py,pyi}")
    assert both.content.splitlines() == ["src/a.py", "src/b.pyi"]
    inside = await call(tool, ctx, pattern="*.txt", path="src")
    assert inside.content == "src/c.txt"


async def test_find_does_not_follow_symlinks(ctx: ToolContext) -> None:
    outside = ctx.root.parent / "elsewhere"
    put(outside, "leak.py")
    (ctx.root / "link").symlink_to(outside)
    (ctx.root / "alias.py").symlink_to(outside / "leak.py")
    result = await call(FindTool(), ctx, pattern="**/*.py")
    assert result.content.startswith("No files match **/*.py in . (not searched:")


async def test_find_caps_results(ctx: ToolContext) -> None:
    for i in range(find.FIND_MAX_RESULTS + 2):
        put(ctx.root, f"gen/f{i:04d}.txt")
    result = await call(FindTool(), ctx, pattern="gen/*.txt")
    lines = result.content.splitlines()
    assert len(lines) == find.FIND_MAX_RESULTS + 1
    assert f"most recently modified of {find.FIND_MAX_RESULTS + 2} matches" in lines[-1]


async def test_find_refusals(ctx: ToolContext) -> None:
    put(ctx.root, "f.txt")
    with pytest.raises(ToolError, match="is a file, not a directory"):
        await call(FindTool(), ctx, pattern="*", path="f.txt")
    with pytest.raises(ToolError, match="outside the project root"):
        await call(FindTool(), ctx, pattern="*", path="/etc")
    with pytest.raises(ToolError, match="invalid glob"):
        await call(FindTool(), ctx, pattern="*.{py")


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/x/y", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("[!a]*.txt", "b.txt", True),
        ("[!a]*.txt", "a.txt", False),
        ("f?o", "f/o", False),
        ("*.{ts,tsx}", "c.tsx", True),
        (r"\*.py", "*.py", True),
        (r"\*.py", "a.py", False),
    ],
)
def test_glob_to_regex(glob: str, path: str, expected: bool) -> None:
    assert (glob_to_regex(glob).fullmatch(path) is not None) is expected


def test_grep_glob_filter_is_gitignore_like() -> None:
    assert GlobFilter.parse("*.py").wants_file("deep/down/x.py")
    assert not GlobFilter.parse("src/*.py").wants_file("lib/src/x.py")
    assert GlobFilter.parse("/src/*.py").wants_file("src/x.py")
    assert not GlobFilter.parse("!*.py").wants_file("x.py")
    assert GlobFilter.parse("!*.py").wants_file("x.js")
    assert GlobFilter.parse("!build/").prunes_dir("a/build")
    assert not GlobFilter.parse("build/").wants_file("build")


# --------------------------------------------------------------------------- grep


def grep_tree(root: Path) -> None:
    put(root, "b.py", "import os\nTODO: b\n")
    put(root, "a.py", "# TODO: first\nx = 1\n# todo: lower\nTODO twice TODO\n")
    put(root, "a-c/x.txt", "TODO in a-c\n")
    put(root, "a/z.txt", "TODO in a\n")
    put(root, "crlf.txt", "TODO crlf\r\nnext\r\n")
    put(root, ".hidden/h.md", "TODO hidden\n")
    put(root, "nul_late.txt", "TODO early\n" * 1500 + "\x00TODO\n")
    put(root, "latin.txt", b"TODO caf\xe9\n")
    put(root, "image.png", b"\x89PNG\x00TODO\n")
    put(root, "long.txt", "TODO " + "w" * 700 + "\n")
    for skipped in walk.SKIP_DIRS:
        put(root, f"{skipped}/s.py", "TODO skipped\n")
        put(root, f"a/{skipped}/s.py", "TODO skipped\n")
    (root / "link.py").symlink_to(root / "a.py")
    put(root, ".gitignore", "ignored.txt\n")  # honoured: the .git folder makes a work tree
    put(root, "ignored.txt", "TODO ignored\n")


async def test_grep_output_format_and_order(ctx: ToolContext, engine: str) -> None:
    grep_tree(ctx.root)
    result = await call(GrepTool(), ctx, pattern="TODO")
    # Source files first; .hidden/ and ignored.txt are skipped.
    assert result.content.splitlines() == [
        "a.py:1:# TODO: first",
        "a.py:4:TODO twice TODO",
        "b.py:2:TODO: b",
        "a/z.txt:1:TODO in a",
        "a-c/x.txt:1:TODO in a-c",
        "crlf.txt:1:TODO crlf",
        "long.txt:1:TODO " + "w" * 495 + " [... 205 more characters truncated]",
    ]
    assert result.data["engine"] == engine


async def test_grep_ignore_case_glob_and_path(ctx: ToolContext, engine: str) -> None:
    grep_tree(ctx.root)
    tool = GrepTool()
    low = await call(tool, ctx, pattern="todo:", ignore_case=True, glob="*.py")
    assert low.content.splitlines() == [
        "a.py:1:# TODO: first",
        "a.py:3:# todo: lower",
        "b.py:2:TODO: b",
    ]
    anchored = await call(tool, ctx, pattern="TODO", glob="a/*.txt")
    assert anchored.content == "a/z.txt:1:TODO in a"
    excluded = await call(tool, ctx, pattern="TODO in", glob="!a-c/")
    assert excluded.content == "a/z.txt:1:TODO in a"
    one_file = await call(tool, ctx, pattern="x = ", path="a.py", glob="*.md")
    assert one_file.content == "a.py:2:x = 1"
    inside_skipped = await call(tool, ctx, pattern="TODO", path="a/node_modules")
    assert inside_skipped.content == "a/node_modules/s.py:1:TODO skipped"


async def test_grep_caps_results_with_note(ctx: ToolContext, engine: str) -> None:
    put(ctx.root, "a.txt", "hit\n" * 5)
    put(ctx.root, "b.txt", "hit\n" * 5)
    result = await call(GrepTool(), ctx, pattern="hit", max_results=7)
    lines = result.content.splitlines()
    assert lines[:7] == [f"a.txt:{i}:hit" for i in range(1, 6)] + ["b.txt:1:hit", "b.txt:2:hit"]
    assert lines[7].startswith("[showing 7 matching lines, source files first; there are more")
    assert result.data["capped"] is True


async def test_grep_no_match_and_errors(ctx: ToolContext, engine: str) -> None:
    put(ctx.root, "a.txt", "hello\n")
    tool = GrepTool()
    none = await call(tool, ctx, pattern="absent")
    assert none.content == (
        "No matches for 'absent' in . (not searched: ignored files (include_ignored) and "
        "hidden folders (include_hidden))"
    )
    assert not none.is_error
    with pytest.raises(ToolError, match=r"invalid regex 'foo\('"):
        await call(tool, ctx, pattern="foo(")
    with pytest.raises(ToolError, match="ghost does not exist"):
        await call(tool, ctx, pattern="x", path="ghost")
    with pytest.raises(ToolError, match="outside the project root"):
        await call(tool, ctx, pattern="root", path="/etc")


async def test_grep_engines_agree(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    assert grep.find_rg() is not None, "the ripgrep package's rg is missing"
    grep_tree(ctx.root)
    queries: list[dict[str, Any]] = [
        {"pattern": "TODO"},
        {"pattern": r"^\w+ ", "ignore_case": True},
        {"pattern": "o", "glob": "*.{py,md}"},
        {"pattern": "TODO", "glob": "!*.txt"},
        {"pattern": "TODO", "path": "a", "max_results": 1},
        {"pattern": "e", "max_results": 3},
        {"pattern": "TODO", "include_hidden": True, "include_ignored": True},
        {"pattern": "TODO", "path": ".hidden"},
    ]
    tool = GrepTool()
    with_rg = [(await call(tool, ctx, **q)).content for q in queries]
    monkeypatch.setattr(grep, "find_rg", lambda: None)
    with_python = [(await call(tool, ctx, **q)).content for q in queries]
    assert with_python == with_rg


def test_grep_headline() -> None:
    tool = GrepTool()
    assert tool.headline(tool.Args(pattern="TODO", path="src")) == "grep TODO in src"
    assert tool.headline(tool.Args(pattern="TODO", glob="*.py")) == "grep TODO (*.py)"
