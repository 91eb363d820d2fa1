"""find and grep in a real git repository: ignore files, hidden folders, ranking, both engines."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from planshell.agent import events as ev
from planshell.config import Settings
from planshell.llm.demo import DemoProvider
from planshell.runtime import build_runtime
from planshell.tools import grep
from planshell.tools.base import Tool, ToolContext, ToolResult
from planshell.tools.find import FindTool
from planshell.tools.grep import GrepTool
from planshell.tools.grep_query import file_rank
from planshell.tools.ignore import IgnoreRules, global_excludes_path, load_spec
from tests.engine_helpers import Recorder, ScriptedDecider
from tests.fresh_python import fresh_python

SERVER_PY = "def serve(port):\n    # the server answers widget requests\n    return port\n"

# path -> does a default search see it?
TREE: dict[str, tuple[str, bool]] = {
    "src/widgets/server.py": (SERVER_PY, True),
    "src/widgets/__init__.py": ("from .server import serve  # server entry\n", True),
    "README.md": ("# Widgets\n\nThe server serves widgets.\n", True),
    "keep.log": ("server log kept by !keep.log\n", True),
    ".serverrc": ("server = on  # hidden files are searched, hidden folders are not\n", True),
    "package-lock.json": ('{"name": "server"}\n', True),
    # ten doc lines that sort before src/ by path
    "docs/a.md": ("".join(f"server note {i}\n" for i in range(10)), True),
    # left out by ignore rules
    "build/server.js": ("server bundle\n", False),  # .gitignore
    "app.log": ("server log\n", False),  # .gitignore
    "src/widgets/generated_api.py": ("server = 1\n", False),  # nested src/.gitignore
    "scratch/server.txt": ("server scratch\n", False),  # .ignore
    "local-notes.md": ("server notes\n", False),  # .git/info/exclude
    "old.bak": ("server backup\n", False),  # global excludes file
    # left out as hidden folders
    ".planshell/plans/x.md": ("".join(f"server plan {i}\n" for i in range(20)), False),
    ".hypothesis/examples/e": ("server example\n", False),
    ".github/workflows/ci.yml": ("run: server\n", False),
}


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with every kind of ignore rule, plans and hidden folders."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    (home / ".config" / "git" / "ignore").write_text("*.bak\n")
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("local-notes.md\n")
    write(root, ".gitignore", "build/\n*.log\n!keep.log\n")
    write(root, "src/.gitignore", "generated_*.py\n")
    write(root, ".ignore", "scratch/\n")
    for rel, (text, _) in TREE.items():
        write(root, rel, text)
    return root


@pytest.fixture
def ctx(repo: Path) -> ToolContext:
    return ToolContext(root=repo)


async def call(tool: Tool, ctx: ToolContext, **kwargs: Any) -> ToolResult:
    return await tool.run(tool.Args(**kwargs), ctx)


def paths(result: ToolResult) -> list[str]:
    """The distinct paths of grep output lines, in order."""
    out: list[str] = []
    for line in result.content.splitlines():
        path = line.split(":", 1)[0]
        if not line.startswith("[") and path not in out:
            out.append(path)
    return out


def test_global_excludes_path_reads_git_config_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert global_excludes_path() == tmp_path / "xdg" / "git" / "ignore"
    (tmp_path / "xdg" / "git").mkdir(parents=True)
    (tmp_path / "xdg" / "git" / "config").write_text("[core]\n\texcludesFile = ~/xdg-ignore\n")
    assert global_excludes_path() == home / "xdg-ignore"
    (home / ".gitconfig").write_text('[core]\n  excludesfile = "/etc/my ignore"\n  pager = x\n')
    assert global_excludes_path() is not None  # ~/.gitconfig wins over the XDG config
    (home / ".gitconfig").write_text("[core]\n  excludesfile = /srv/ignore\n")
    assert global_excludes_path() == Path("/srv/ignore")


async def test_grep_lists_source_first_and_skips_ignored(ctx: ToolContext, engine: str) -> None:
    result = await call(GrepTool(), ctx, pattern="server")
    assert result.data["engine"] == engine
    assert paths(result) == [
        "src/widgets/__init__.py",
        "src/widgets/server.py",
        ".serverrc",
        "README.md",
        "docs/a.md",
        "keep.log",
        "package-lock.json",
    ]
    assert set(paths(result)) == {rel for rel, (_, seen) in TREE.items() if seen}


async def test_grep_source_survives_a_small_cap(ctx: ToolContext, engine: str) -> None:
    """The issue's symptom: docs and plans used to fill the cap before src/ was reached."""
    result = await call(GrepTool(), ctx, pattern="server", max_results=2, include_hidden=True)
    lines = result.content.splitlines()
    assert lines[:2] == [
        "src/widgets/__init__.py:1:from .server import serve  # server entry",
        "src/widgets/server.py:2:    # the server answers widget requests",
    ]
    assert lines[2].startswith("[showing 2 matching lines, source files first; there are more")
    assert result.data["capped"] is True


async def test_grep_include_flags_bring_files_back(ctx: ToolContext, engine: str) -> None:
    tool = GrepTool()
    everything = await call(tool, ctx, pattern="server", include_ignored=True, include_hidden=True)
    assert set(paths(everything)) == set(TREE)
    assert not any(p.startswith(".git/") for p in paths(everything))
    ignored = await call(tool, ctx, pattern="server", include_ignored=True)
    assert set(paths(ignored)) == {
        rel for rel in TREE if not rel.startswith((".planshell", ".hy", ".github"))
    }
    hidden = await call(tool, ctx, pattern="server", include_hidden=True)
    assert ".planshell/plans/x.md" in paths(hidden) and "build/server.js" not in paths(hidden)
    # plans rank with lock files, after docs
    assert paths(hidden)[-2:] == [".planshell/plans/x.md", "package-lock.json"]


async def test_grep_named_folders_are_searched(ctx: ToolContext, engine: str) -> None:
    tool = GrepTool()
    assert paths(await call(tool, ctx, pattern="server", path="build")) == ["build/server.js"]
    assert paths(await call(tool, ctx, pattern="server", path=".planshell")) == [
        ".planshell/plans/x.md"
    ]
    in_src = await call(tool, ctx, pattern="server", path="src")  # the root .gitignore counts
    assert paths(in_src) == ["src/widgets/__init__.py", "src/widgets/server.py"]
    none = await call(tool, ctx, pattern="server bundle", path="src")
    assert "not searched: ignored files (include_ignored)" in none.content


async def test_project_below_the_repository_top(repo: Path, engine: str) -> None:
    """Rules of folders above the project root count, as git and rg apply them."""
    write(repo, "src/widgets/trace.log", "server trace\n")
    ctx = ToolContext(root=repo / "src")
    result = await call(GrepTool(), ctx, pattern="server")
    assert paths(result) == ["widgets/__init__.py", "widgets/server.py"]


async def test_engines_agree_on_the_repository(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert grep.find_rg() is not None
    queries: list[dict[str, Any]] = [
        {"pattern": "server"},
        {"pattern": "server", "max_results": 4},
        {"pattern": "SERVER", "ignore_case": True, "include_hidden": True, "max_results": 12},
        {"pattern": "server", "include_ignored": True},
        {"pattern": "server", "include_ignored": True, "include_hidden": True, "max_results": 5},
        {"pattern": "server", "glob": "*.md", "include_hidden": True},
        {"pattern": "server", "glob": "!docs/"},
        {"pattern": "server", "glob": "*.log"},  # app.log stays ignored: a glob only narrows
        {"pattern": "server", "glob": "*.log", "include_ignored": True},
        {"pattern": "server", "path": "build"},
        {"pattern": "server", "path": "src/widgets"},
        {"pattern": "^", "max_results": 2},
    ]
    tool = GrepTool()
    with_rg = [(await call(tool, ctx, **q)).content for q in queries]
    monkeypatch.setattr(grep, "find_rg", lambda: None)
    with_python = [(await call(tool, ctx, **q)).content for q in queries]
    assert with_python == with_rg


async def test_find_skips_ignored_and_hidden_unless_asked(ctx: ToolContext) -> None:
    tool = FindTool()
    default = (await call(tool, ctx, pattern="**/*")).content.splitlines()
    assert "src/widgets/server.py" in default
    assert not {"build/server.js", "old.bak", ".planshell/plans/x.md"} & set(default)
    assert ".serverrc" in default and ".gitignore" in default  # hidden files stay
    every = await call(tool, ctx, pattern="**/*", include_ignored=True, include_hidden=True)
    assert set(TREE) <= set(every.content.splitlines())
    assert not any(p.startswith(".git/") for p in every.content.splitlines())
    named = await call(tool, ctx, pattern="*", path="build")
    assert named.content == "build/server.js"
    none = await call(tool, ctx, pattern="**/*.bak")
    assert none.content.startswith("No files match **/*.bak in . (not searched: ignored files")
    assert (await call(tool, ctx, pattern="**/*.bak", include_ignored=True)).content == "old.bak"


def test_ignore_rules_in_a_worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A linked worktree's ``.git`` is a file: info/exclude comes from the common git dir."""
    monkeypatch.setenv("HOME", str(tmp_path))
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    git = ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("secret.txt\n")
    wt = tmp_path / "wt"
    rules = IgnoreRules(wt)
    assert rules.ignored(rules.chain(wt), wt / "secret.txt", False)
    assert not rules.ignored(rules.chain(wt), wt / "public.txt", False)


@pytest.mark.parametrize(
    ("rel", "rank"),
    [
        ("src/widgets/server.py", 0),
        ("Makefile", 0),
        ("web/App.TSX", 0),
        ("README.md", 1),
        ("pyproject.toml", 1),
        (".serverrc", 1),
        ("package-lock.json", 2),
        ("Cargo.lock", 2),
        ("static/app.min.js", 2),
        (".planshell/plans/x.md", 2),
        ("dist/server.py", 2),
    ],
)
def test_file_rank(rel: str, rank: int) -> None:
    assert file_rank(rel) == rank


async def test_demo_answers_from_the_source_file(repo: Path) -> None:
    """The issue's symptom: "what does the server do?" answered "No file mentions server"."""
    runtime = build_runtime(
        Settings(), repo, ScriptedDecider(), provider=DemoProvider(chunk_delay=0)
    )
    rec = Recorder()
    runtime.agent.subscribe(rec)
    await runtime.agent.submit("what does the server do?")
    assert [e.name for e in rec.of(ev.ToolStarted)][:2] == ["ls", "grep"]
    answer = runtime.agent.messages[-1].content
    assert "No file mentions" not in answer
    assert "src/widgets/server.py:2:    # the server answers widget requests" in answer
    assert ".planshell/plans" not in answer and "build/server.js" not in answer


async def test_a_repository_inside_an_ignoring_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A dotfiles repository at $HOME that ignores '*' does not hide a project with its own .git."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    subprocess.run(["git", "init", "-q", str(home)], check=True)
    (home / ".gitignore").write_text("*\n")
    project = home / "work" / "proj"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project, ".gitignore", "*.log\n")
    write(project, "src/server.py", "server = 1\n")
    write(project, "server.log", "server log\n")
    ctx = ToolContext(root=project)
    assert paths(await call(GrepTool(), ctx, pattern="server")) == ["src/server.py"]
    # a plain folder inside the ignoring repository: named explicitly, so searched whole
    plain = home / "notes"
    write(plain, "server.md", "server\n")
    write(plain, "server.log", "server\n")
    found = await call(GrepTool(), ToolContext(root=plain), pattern="server")
    assert paths(found) == ["server.log", "server.md"]


def test_an_ignore_file_of_comments_has_no_rules_and_a_pattern_after_them_does(
    tmp_path: Path,
) -> None:
    """A new repository's .git/info/exclude is all comments: no spec, and pathspec (~10 ms to
    import) is not loaded for it."""
    exclude = tmp_path / "exclude"
    exclude.write_text("# git ls-files --others --exclude-from=.git/info/exclude\n#   *.o\n\n  \n")
    assert load_spec(exclude, tmp_path) is None
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from planshell.tools.ignore import load_spec\n"
        f"assert load_spec(Path({str(exclude)!r})) is None\n"
        "print('pathspec' in sys.modules)\n"
    )
    assert fresh_python(code).strip() == "False"
    exclude.write_text("# a comment\n\\#literal\n *.tmp\n")  # an escaped '#', a leading space
    spec = load_spec(exclude, tmp_path)
    assert spec is not None
    assert spec.match_file("#literal") and spec.match_file(" x.tmp")
    assert not spec.match_file("x.tmp") and not spec.match_file("a comment")
