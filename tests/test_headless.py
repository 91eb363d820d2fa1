"""`planshell -p` as a real subprocess, against the demo model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "planshell", *args], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=timeout,
    )


def test_print_mode_answers_from_the_project(project):
    proc = run_cli(["-p", "what is in this repo?", "--verbose"], project)
    assert proc.returncode == 0, proc.stderr
    assert "Offline demo model" in proc.stdout and "Widget Service" in proc.stdout
    assert "provider: demo (offline)" in proc.stderr
    assert "→ ls ." in proc.stderr and "→ read README.md" in proc.stderr


def test_plan_print_mode_awaits_approval(project):
    proc = run_cli(["--plan", "-p", "add rate limiting"], project)
    assert proc.returncode == 3, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("Plan awaiting approval: .planshell/plans/") and line.endswith(".md")
    plan = project / line.split(": ", 1)[1]
    assert plan.read_text().startswith("# Plan: add rate limiting")
    # Nothing but the plan was written.
    assert sorted(p.name for p in project.iterdir()) == [".planshell", "Makefile", "README.md", "pyproject.toml", "src"]


def test_print_needs_a_prompt(project):
    proc = run_cli(["-p"], project)
    assert proc.returncode == 2 and "needs a prompt" in proc.stderr


def test_continue_without_sessions_is_a_clear_error(project):
    proc = run_cli(["--continue", "-p", "hi"], project)
    assert proc.returncode == 1 and "no earlier session" in proc.stderr


def test_engine_imports_no_textual():
    code = (
        "import sys\n"
        "import planshell.runtime, planshell.headless, planshell.cli\n"
        "import planshell.llm.demo, planshell.llm.scripted, planshell.plan.tools\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] == 'textual')\n"
        "print(bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
