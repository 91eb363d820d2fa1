"""Running planshell as a subprocess, as a user would."""

from __future__ import annotations

import asyncio
import os
import sys


async def run_planshell(
    args: list[str], cwd, extra_env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``python -m planshell ARGS`` in CWD without API keys: its exit code, stdout and stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env.update(extra_env or {})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "planshell",
        *args,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()
