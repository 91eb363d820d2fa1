"""Start-up time to the first frame, in a real terminal (tmux), against a bare Textual app.

For each run a fresh private tmux server starts the program and the pane is
polled until a marker text is on screen:

- bare:      a Textual app with one Static and one Input (marker: its Static text)
- planshell: ``python -m planshell`` on a small project, demo model
             (first frame: the prompt placeholder; ready: the provider label)

Prints the medians of ``--runs`` runs (default 7, interleaved) and the ratio
planshell/bare for the first frame. The target is a ratio of at most 1.3;
``--check`` exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tmux_harness import TmuxPane, isolated_env, tmux_path  # noqa: E402

TARGET = 1.3

BARE_APP = """
from textual.app import App
from textual.widgets import Input, Static


class Bare(App):
    def compose(self):
        yield Static("BARE-FIRST-FRAME")
        yield Input(placeholder="type here")


Bare().run()
"""


def time_to(command: list[str], markers: list[str], env: dict[str, str], cwd: Path) -> list[float]:
    """Seconds from launch until each marker is on screen (in order)."""
    times: list[float] = []
    with TmuxPane.start(command, env=env, cwd=cwd, size=(100, 30)) as pane:
        for marker in markers:
            pane.wait_for(marker, timeout=30)
            times.append(time.monotonic() - pane.started_at)
        pane.keys("C-q")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 if the ratio exceeds {TARGET}"
    )
    args = parser.parse_args()
    if tmux_path() is None:
        print("startup bench skipped: tmux is not installed")
        return 0
    with tempfile.TemporaryDirectory(prefix="planshell-bench-") as tmp:
        base = Path(tmp)
        project = base / "project"
        (project / "src").mkdir(parents=True)
        (project / "README.md").write_text("# Bench project\n\nNothing to see.\n")
        (project / "src" / "main.py").write_text("print('hi')\n")
        bare = base / "bare_app.py"
        bare.write_text(BARE_APP)
        home = base / "home"
        home.mkdir()
        env = isolated_env(home)
        # Measure what an installed planshell does: with cached bytecode (the
        # warm-up runs below write it even where PYTHONDONTWRITEBYTECODE is set).
        env["PYTHONDONTWRITEBYTECODE"] = ""
        python = sys.executable
        # One warm-up each, so both pay the same (warm) file-system cache.
        time_to([python, str(bare)], ["BARE-FIRST-FRAME"], env, base)
        time_to([python, "-m", "planshell", "-C", str(project)], ["Ask anything"], env, project)
        bare_times: list[float] = []
        first_times: list[float] = []
        ready_times: list[float] = []
        for _ in range(args.runs):
            (t,) = time_to([python, str(bare)], ["BARE-FIRST-FRAME"], env, base)
            bare_times.append(t)
            first, ready = time_to(
                [python, "-m", "planshell", "-C", str(project)],
                ["Ask anything", "demo (offline)"],
                env,
                project,
            )
            first_times.append(first)
            ready_times.append(ready)
    bare_median = statistics.median(bare_times)
    first_median = statistics.median(first_times)
    ready_median = statistics.median(ready_times)
    ratio = first_median / bare_median
    print(f"runs: {args.runs} each (tmux, 100x30)")
    print(f"bare Textual app (Static + Input), first frame: {bare_median * 1000:7.0f} ms")
    print(f"planshell, first frame:                         {first_median * 1000:7.0f} ms")
    print(f"planshell, engine ready (provider shown):       {ready_median * 1000:7.0f} ms")
    verdict = "ok" if ratio <= TARGET else "TOO SLOW"
    print(f"ratio first frame planshell/bare: {ratio:.2f} (target <= {TARGET}: {verdict})")
    return 1 if args.check and ratio > TARGET else 0


if __name__ == "__main__":
    raise SystemExit(main())
