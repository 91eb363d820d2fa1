"""Drive a real terminal: a private tmux server, one pane, polled screen captures.

Usage::

    with TmuxPane.start([sys.executable, "-m", "planshell"], env={...}, size=(100, 30)) as pane:
        pane.wait_for("Ask anything")
        pane.type("hello")
        pane.keys("Enter")
        pane.wait_for("Offline demo model")  # waits up to TIMEOUT (30 s)

The server is private (``tmux -L <unique>``) with a config written before the
pane exists: ``extended-keys always`` (so modified keys reach the app as the
kitty protocol would send them), ``escape-time 0`` and ``remain-on-exit on``
(so an exited program's status can still be read). ``require_tmux()`` skips
the calling test with a clear reason when tmux is missing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tests.paths import REPO

SEEN = re.compile(r"(\d+)/(\d+) seen")  # the review gauge's coverage count

POLL = 0.02  # seconds between captures
# Default wait: generous, since CI is a busy 2-core machine. A hang guard that
# fails with the captured screen, never a speed budget (see bench/startup.py).
TIMEOUT = 30.0

CONFIG = """\
set -s extended-keys always
set -s escape-time 0
set -g remain-on-exit on
set -g status off
set -g history-limit 5000
set -g default-terminal "tmux-256color"
"""


def tmux_path() -> str | None:
    return shutil.which("tmux")


def require_tmux() -> str:
    import pytest

    path = tmux_path()
    if path is None:
        pytest.skip("tmux is not installed: the real-terminal tests need it (apt install tmux)")
    return path


class TmuxError(AssertionError):
    pass


class TmuxPane:
    def __init__(self, socket: str, config: Path, workdir: Path) -> None:
        self.socket = socket
        self.config = config
        self.workdir = workdir
        self.started_at = 0.0
        self.status_file = workdir / "exit-status"

    # --- lifecycle ------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        size: tuple[int, int] = (100, 30),
        config_extra: str = "",
    ) -> TmuxPane:
        tmux = tmux_path()
        if tmux is None:
            raise TmuxError("tmux is not installed")
        workdir = Path(tempfile.mkdtemp(prefix="planshell-tmux-"))
        config = workdir / "tmux.conf"
        config.write_text(CONFIG + config_extra)
        pane = cls(f"planshell-test-{uuid.uuid4().hex[:10]}", config, workdir)
        width, height = size
        env_args: list[str] = ["-e", "COLORTERM=truecolor"]
        for key, value in (env or {}).items():
            env_args += ["-e", f"{key}={value}"]
        # The exit status is written to a file by the wrapping shell: tmux 3.3
        # sometimes marks a pane dead (pty EOF) before it reaps the process, and
        # then never reports #{pane_dead_status}.
        program = " ".join(shlex.quote(part) for part in command)
        # COLUMNS/LINES can leak into the tmux server's environment (they did under
        # pytest); Python's shutil.get_terminal_size prefers them to the real size.
        shell_command = (
            f"unset COLUMNS LINES; {program}; echo $? > {shlex.quote(str(pane.status_file))}"
        )
        pane.started_at = time.monotonic()
        pane._tmux(
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            str(width),
            "-y",
            str(height),
            *(["-c", str(cwd)] if cwd else []),
            *env_args,
            shell_command,
        )
        return pane

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> TmuxPane:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- commands -----------------------------------------------------------------

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.config), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise TmuxError(f"tmux {args[0]} failed: {result.stderr.strip()}")
        return result.stdout

    def capture(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "main")

    def type(self, text: str) -> None:
        """Literal text (no key-name interpretation)."""
        self._tmux("send-keys", "-t", "main", "-l", text)

    def keys(self, *names: str) -> None:
        """tmux key names: Enter, Escape, C-q, F1, Up ..."""
        self._tmux("send-keys", "-t", "main", *names)

    def hex(self, *byte_values: str) -> None:
        """Raw bytes, e.g. ``hex("1b", "5b", "31", "30", "38", "3b", "36", "75")``."""
        self._tmux("send-keys", "-t", "main", "-H", *byte_values)

    def paste(self, text: str) -> None:
        """``text`` as a terminal pastes it: a bracketed paste, each newline sent as CR
        (``paste-buffer -p`` replaces LF with CR, as xterm does)."""
        buffer = self.workdir / "paste-buffer.txt"
        buffer.write_text(text)
        self._tmux("load-buffer", "-b", "paste", str(buffer))
        self._tmux("paste-buffer", "-p", "-d", "-b", "paste", "-t", "main")

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", "main", "-x", str(width), "-y", str(height))

    # --- waiting ------------------------------------------------------------------

    def wait_until(
        self, predicate: Callable[[str], bool], *, timeout: float = TIMEOUT, what: str = "condition"
    ) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while True:
            try:
                screen = self.capture()
            except TmuxError:
                screen = screen or ""
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                raise TmuxError(f"timed out after {timeout}s waiting for {what}; screen:\n{screen}")
            time.sleep(POLL)

    def wait_for(self, text: str, *, timeout: float = TIMEOUT) -> str:
        return self.wait_until(lambda screen: text in screen, timeout=timeout, what=repr(text))

    def read_whole_plan(self) -> str:
        """In the review: ``u`` (next unseen section) until the gauge says every section was seen.

        Approving a plan with sections never on screen asks first; a person who read it
        all is not asked. A plan that fits on screen (no gauge) is left as it is. Each ``u`` waits for the count to move, so no key is lost.
        """

        def counts(screen: str) -> tuple[int, int] | None:
            match = SEEN.search(screen)
            return (int(match[1]), int(match[2])) if match else None

        # A plan that fits on screen shows no gauge: it is all seen at once.
        screen = self.wait_until(lambda s: "a approve" in s, what="the review's keys")
        for _ in range(200):
            seen = counts(screen)
            if seen is None or seen[0] >= seen[1]:
                return screen
            self.keys("u")
            screen = self.wait_until(
                lambda s, before=seen: counts(s) not in (None, before), what="u to show more"
            )
        raise TmuxError(f"the plan was never all seen; screen:\n{screen}")

    def wait_gone(self, text: str, *, timeout: float = TIMEOUT) -> str:
        return self.wait_until(
            lambda screen: text not in screen, timeout=timeout, what=f"{text!r} to go"
        )

    def pane_dead(self) -> bool:
        out = self._tmux("display-message", "-p", "-t", "main", "#{pane_dead}")
        return out.strip() == "1"

    def exit_status(self) -> int | None:
        """The program's exit status once it has exited, else None."""
        try:
            text = self.status_file.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text.lstrip("-").isdigit() else None

    def wait_exit(self, *, timeout: float = TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while (status := self.exit_status()) is None:
            if time.monotonic() > deadline:
                raise TmuxError(
                    f"the program did not exit within {timeout}s; screen:\n{self.capture()}"
                )
            time.sleep(POLL)
        return status


def start_planshell(
    project: Path,
    home: Path,
    *args: str,
    size: tuple[int, int] = (110, 30),
    env: Mapping[str, str] | None = None,
) -> TmuxPane:
    """``planshell *args -C project`` in a new pane, with ``home`` (made here) as its isolated
    home and ``env`` (e.g. ``PLANSHELL_*`` settings) added; skips the test when tmux is missing."""
    require_tmux()
    home.mkdir()
    command = [sys.executable, "-m", "planshell", *args, "-C", str(project)]
    return TmuxPane.start(
        command, env={**isolated_env(home), **(env or {})}, cwd=project, size=size
    )


def isolated_env(home: Path) -> dict[str, str]:
    """Env for a planshell child: tmp data/config dirs, no API keys, no user theme."""
    env = {
        "PLANSHELL_DATA_DIR": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "share"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "",
        "OPENAI_API_KEY": "",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TZ": "UTC",
        # The checkout under test, not whichever one the interpreter has installed
        # (a worktree's tests must run the worktree's planshell).
        "PYTHONPATH": str(REPO),
    }
    return env
