"""`planshell check-command`: the app's guard and config, from the shell.

One test spawns the real program (``python -m planshell``: argv, stdout and
the exit status as a shell sees them); the rest call the same entry function,
``planshell.cli.main``, in this process, which costs no interpreter start-up
per case.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from planshell.cli import main


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``check(args, stdin=None)``: run check-command in ``tmp_path`` through ``main``."""
    monkeypatch.chdir(tmp_path)

    def run(args: list[str], stdin: str = "") -> Result:
        capsys.readouterr()  # drop anything printed before this call
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(["check-command", *args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def test_the_real_cli_prints_json_verdicts_in_order_and_exits_1_when_one_is_blocked(tmp_path):
    heredoc = "cat <<EOF\nhello\nEOF"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "planshell",
            "check-command",
            "--json",
            "git status",
            "rm -rf build",
            heredoc,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr  # one command is blocked
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["cmd"] for r in rows] == ["git status", "rm -rf build", heredoc]
    assert [r["allowed"] for r in rows] == [True, False, True]
    assert "rm" in rows[1]["reason"]
    assert set(rows[0]) == {"cmd", "allowed", "reason"}


def test_stdin_one_command_per_line(check):
    result = check([], stdin="ls -la\n\necho hi > out.txt\n")
    lines = result.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["allow", "block"]
    assert lines[1].split("\t")[1] == "echo hi > out.txt"


def test_uses_the_project_patterns(check, tmp_path):
    (tmp_path / ".planshell").mkdir()
    (tmp_path / ".planshell" / "config.toml").write_text(
        '[plan.bash]\nsafe_patterns = ["^cargo tree\\\\b", "("]\ndestructive_patterns = ["^cat\\\\b"]\n'
    )
    # Pattern lists are security-relevant: they apply from a project file once it is trusted.
    from planshell.config import project_config_path, read_config_file
    from planshell.config.trust import trust

    trust(read_config_file(project_config_path(tmp_path)))
    result = check(["--json", "cargo tree", "cat README.md", "cargo build"])
    allowed = [json.loads(line)["allowed"] for line in result.stdout.splitlines()]
    assert allowed == [True, False, False]
    assert "warning:" in result.stderr  # the invalid "(" pattern is reported, not fatal


@pytest.mark.parametrize(
    ("args", "stdin", "status"),
    [
        (["ls", "git status"], "", 0),
        (["ls", "rm -rf build"], "", 1),
        (["rm -rf build"], "", 1),
        ([], "ls\npwd\n", 0),
        ([], "ls\ntouch x\n", 1),
        (["--json", "test -v 'x[$(id)]'"], "", 1),
    ],
)
def test_exit_status_is_zero_only_when_every_command_is_allowed(check, args, stdin, status):
    assert check(args, stdin=stdin).returncode == status
