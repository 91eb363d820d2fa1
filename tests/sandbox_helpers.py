"""Bubblewrap and git for the sandbox tests: skip marks, a git runner, bash under a policy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from planshell.config import PlanSettings
from planshell.sandbox import bwrap
from planshell.sandbox.gitsafe import git_shim_dir
from planshell.tools.base import ExecPolicy, ToolContext, ToolResult
from planshell.tools.shell import BashArgs, BashTool


def _bwrap_problem() -> str | None:
    if not sys.platform.startswith("linux"):
        return "bubblewrap sandboxes need Linux"
    path = bwrap.find_bwrap()
    if path is None:
        return "bubblewrap (bwrap) is not installed; apt install bubblewrap"
    ok, why = bwrap.probe(path)
    return None if ok else why


BWRAP_PROBLEM = _bwrap_problem()
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"no sandbox: {BWRAP_PROBLEM}")
needs_git = pytest.mark.skipif(git_shim_dir() is None, reason="git (and bash) are needed")


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout


async def run(policy: ExecPolicy, root: Path, command: str, **kw: object) -> ToolResult:
    ctx = ToolContext(root=root, exec_policy=policy)
    return await BashTool().run(BashArgs(command=command, **kw), ctx)


def sandboxed(root: Path) -> ExecPolicy:
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="required"), root)
    assert policy.label == "sandboxed", policy
    return policy
