"""planshell's command line in this process: ``planshell.cli.main`` with its output captured.

A ``python -m planshell`` subprocess per case pays an interpreter start and every
import (0.6-1 s on the CI box); the entry function the real program calls costs
neither. A module that tests the CLI this way keeps at least one test that spawns
the real program, so argv, pipes and exit statuses are still covered end to end:
``run_planshell`` runs it as a subprocess, as a user would.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest

from planshell.cli import main
from planshell.logs import reset_logging


class CliRun(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


class InProcessCli:
    """``cli(args, cwd)`` (or ``await cli.run(...)`` from an async test) runs ``main(args)``.

    Environment variables are set with ``monkeypatch``; ``stdin`` is what a pipe
    would carry. The log handler ``main`` installs is removed afterwards, as the
    process exiting would.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        self._monkeypatch = monkeypatch
        self._capsys = capsys

    def __call__(
        self,
        args: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        stdin: str = "",
    ) -> CliRun:
        for name, value in (env or {}).items():
            self._monkeypatch.setenv(name, value)
        self._monkeypatch.chdir(cwd)
        self._monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        self._capsys.readouterr()  # only this run's output
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            reset_logging()
        out, err = self._capsys.readouterr()
        return CliRun(code, out, err)

    async def run(
        self,
        args: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        stdin: str = "",
    ) -> CliRun:
        """From an async test: ``main`` runs its own event loop, so it runs in a thread
        while this loop keeps serving (the ``sse_server`` fixture lives on it)."""
        return await asyncio.to_thread(self, args, cwd, env, stdin)


async def run_planshell(
    args: list[str],
    cwd: Path,
    extra_env: dict[str, str] | None = None,
    stdout_file: Path | None = None,
) -> tuple[int, str, str]:
    """``python -m planshell ARGS`` in CWD without API keys: its exit code, stdout and stderr.

    ``stdout_file``: stdout goes to that file (``planshell -p … > out.txt``), and the
    returned stdout is the file's text.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    env.update(extra_env or {})
    with open(stdout_file, "wb") if stdout_file else contextlib.nullcontext() as sink:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "planshell",
            *args,
            cwd=cwd,
            env=env,
            stdout=sink if sink is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    text = stdout_file.read_text() if stdout_file else out.decode()
    return proc.returncode or 0, text, err.decode()
