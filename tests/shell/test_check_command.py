"""`planshell check-command`: the app's guard and config, from the shell."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def check(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planshell", "check-command", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_json_verdicts_in_order(tmp_path):
    heredoc = "cat <<EOF\nhello\nEOF"
    proc = check(["--json", "git status", "rm -rf build", heredoc], tmp_path)
    assert proc.returncode == 1, proc.stderr  # one command is blocked
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["cmd"] for r in rows] == ["git status", "rm -rf build", heredoc]
    assert [r["allowed"] for r in rows] == [True, False, True]
    assert "rm" in rows[1]["reason"]
    assert set(rows[0]) == {"cmd", "allowed", "reason"}


def test_stdin_one_command_per_line(tmp_path):
    proc = check([], tmp_path, stdin="ls -la\n\necho hi > out.txt\n")
    lines = proc.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["allow", "block"]
    assert lines[1].split("\t")[1] == "echo hi > out.txt"


def test_uses_the_project_patterns(tmp_path):
    (tmp_path / ".planshell").mkdir()
    (tmp_path / ".planshell" / "config.toml").write_text(
        '[plan.bash]\nsafe_patterns = ["^cargo tree\\\\b", "("]\ndestructive_patterns = ["^cat\\\\b"]\n'
    )
    # Pattern lists are security-relevant: they apply from a project file once it is trusted.
    from planshell.config import project_config_path, read_config_file
    from planshell.config.trust import trust

    trust(read_config_file(project_config_path(tmp_path)))
    proc = check(["--json", "cargo tree", "cat README.md", "cargo build"], tmp_path)
    allowed = [json.loads(line)["allowed"] for line in proc.stdout.splitlines()]
    assert allowed == [True, False, False]
    assert "warning:" in proc.stderr  # the invalid "(" pattern is reported, not fatal


def test_exit_status_is_zero_only_when_every_command_is_allowed(tmp_path):
    assert check(["ls", "git status"], tmp_path).returncode == 0
    assert check(["ls", "rm -rf build"], tmp_path).returncode == 1
    assert check(["rm -rf build"], tmp_path).returncode == 1
    assert check([], tmp_path, stdin="ls\npwd\n").returncode == 0
    assert check([], tmp_path, stdin="ls\ntouch x\n").returncode == 1
    assert check(["--json", "test -v 'x[$(id)]'"], tmp_path).returncode == 1
