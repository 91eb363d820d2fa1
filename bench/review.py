"""Benchmark the plan review screen: is a 10,000-line plan as quick to open as a 100-line one?

Run: ``.venv/bin/python bench/review.py [--runs 5] [--size 120x40]``

1. First frame, in a real terminal: ``planshell review FILE`` is launched in a
   private tmux server and the pane is polled every 20 ms until a line of the
   plan body is on screen. Median of ``--runs`` launches, 100 vs 10,000 lines.
2. ``n`` x 20, headless (``run_test``): the time of each press until the top row
   is the next heading, and the widget's own jump cost (lay out + render rows).
3. Peak memory of a headless run that opens the 10,000-line plan and lets the
   background layout finish (tracemalloc peak and ru_maxrss, in a subprocess).

The design target is "first frame of 10k within 1.5x of 100 lines"; the
script prints the ratio and exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
MARKER = "A generated plan used to measure the review screen."
TARGET_RATIO = 1.5

sys.path.insert(0, str(ROOT))
from tests.plan_samples import generated_plan  # noqa: E402


def make_plan(lines: int) -> str:
    return generated_plan(lines, title="Generated benchmark plan", intro=MARKER)


# ------------------------------------------------------------- tmux first frame


class Tmux:
    """A private tmux server (own socket and config) so nothing leaks into the user's."""

    def __init__(self, folder: Path) -> None:
        self.socket = f"planshell-bench-{os.getpid()}"
        self.conf = folder / "tmux.conf"
        self.conf.write_text(
            "set -s extended-keys always\nset -s escape-time 0\nset -g remain-on-exit on\n"
        )

    def run(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.conf), *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def first_frame(
        self, command: list[str], width: int, height: int, timeout: float = 30
    ) -> float:
        """Seconds from launching ``command`` until MARKER is on screen."""
        start = time.perf_counter()
        self.run(
            "new-session", "-d", "-s", "bench", "-x", str(width), "-y", str(height),
            "-e", "COLORTERM=truecolor", "-e", "TERM=xterm-256color", *command,
        )  # fmt: skip
        try:
            while time.perf_counter() - start < timeout:
                if MARKER in self.run("capture-pane", "-p", "-t", "bench", check=False):
                    return time.perf_counter() - start
                time.sleep(0.02)
            raise RuntimeError(f"no first frame within {timeout} s: {command}")
        finally:
            self.run("kill-session", "-t", "bench", check=False)

    def jump_times(
        self, command: list[str], titles: list[str], width: int, height: int
    ) -> list[float]:
        """Seconds from sending ``n`` until the next heading is the plan's top row, per press.

        The read-only header is one row, so the plan's top row is pane row 1.
        """
        self.run(
            "new-session", "-d", "-s", "jumps", "-x", str(width), "-y", str(height),
            "-e", "COLORTERM=truecolor", "-e", "TERM=xterm-256color", *command,
        )  # fmt: skip
        times: list[float] = []
        try:
            deadline = time.perf_counter() + 30
            while MARKER not in self.run("capture-pane", "-p", "-t", "jumps", check=False):
                if time.perf_counter() > deadline:
                    raise RuntimeError("the review screen did not open")
                time.sleep(0.02)
            for title in titles:
                start = time.perf_counter()
                self.run("send-keys", "-t", "jumps", "n")
                while True:
                    rows = self.run("capture-pane", "-p", "-t", "jumps", check=False).split("\n")
                    if len(rows) > 1 and rows[1].strip().startswith(title):
                        times.append(time.perf_counter() - start)
                        break
                    if time.perf_counter() - start > 5:
                        raise RuntimeError(f"n did not bring {title!r} to the top: {rows[:3]}")
        finally:
            self.run("kill-session", "-t", "jumps", check=False)
        return times

    def close(self) -> None:
        self.run("kill-server", check=False)


def review_command(path: Path) -> list[str]:
    """``planshell review PATH``; falls back to the module while the CLI wiring is missing."""
    probe = subprocess.run(
        [str(PYTHON), "-c", "from planshell.ui.app import run_review"],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    if probe.returncode == 0:
        return [str(PYTHON), "-m", "planshell", "review", str(path)]
    return [str(PYTHON), "-m", "planshell.ui.review_app", str(path)]


def bench_tmux(
    files: dict[int, Path], runs: int, size: tuple[int, int]
) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """First-frame times per plan size, and real-terminal ``n`` x 20 times per plan size."""
    from planshell.plan.document import parse_plan

    frames: dict[int, list[float]] = {lines: [] for lines in files}
    jumps: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        tmux = Tmux(Path(folder))
        try:
            for path in files.values():  # warm the OS cache / .pyc files once
                tmux.first_frame(review_command(path), *size)
            for _ in range(runs):  # interleave so drift hits both sizes alike
                for lines, path in files.items():
                    frames[lines].append(tmux.first_frame(review_command(path), *size))
            for lines, path in files.items():
                sections = parse_plan(path.read_text()).sections
                titles = [section.title for section in sections if section.level][1:21]
                jumps[lines] = tmux.jump_times(review_command(path), titles, *size)
        finally:
            tmux.close()
    return frames, jumps


# --------------------------------------------------------------- n x 20 headless


async def bench_jumps(path: Path, presses: int, size: tuple[int, int]) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from textual.app import App

    from planshell.plan.decider import ReviewRequest
    from planshell.plan.document import parse_plan
    from planshell.ui.screens.review import ReviewScreen
    from planshell.ui.widgets.plan_view import PlanView

    text = path.read_text()
    request = ReviewRequest(path, text, parse_plan(text).title)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(request))

    app = Host()
    pilot_times: list[float] = []
    widget_times: list[float] = []
    opened = time.perf_counter()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.screen.query_one(PlanView)
        while not view.layout_complete:
            await pilot.pause(0.005)
        settled = time.perf_counter() - opened
        for _ in range(presses):
            start = time.perf_counter()
            await pilot.press("n")
            heading = view.sections[view.current_section()].title
            assert view.render_line(0).text[2:].rstrip() == heading, "n did not land on a heading"
            pilot_times.append(time.perf_counter() - start)
        view.load(text)  # a fresh lazy layout: jumps now lay out as they go
        from textual.geometry import Region

        region = Region(0, 0, view.size.width, view.size.height)
        for _ in range(presses):
            start = time.perf_counter()
            view.next_heading()
            view.render_lines(region)
            widget_times.append(time.perf_counter() - start)
            await pilot.pause(0)
    return {
        "pilot_press_median_ms": statistics.median(pilot_times) * 1000,
        "pilot_press_max_ms": max(pilot_times) * 1000,
        "widget_jump_median_ms": statistics.median(widget_times) * 1000,
        "widget_jump_max_ms": max(widget_times) * 1000,
        "layout_settled_ms": settled * 1000,
    }


# ------------------------------------------------------------------- memory


async def _open_and_settle(path: Path, size: tuple[int, int]) -> float:
    from textual.app import App

    from planshell.plan.decider import ReviewRequest
    from planshell.plan.document import parse_plan
    from planshell.ui.screens.review import ReviewScreen
    from planshell.ui.widgets.plan_view import PlanView

    text = path.read_text()
    request = ReviewRequest(path, text, parse_plan(text).title)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(request))

    start = time.perf_counter()
    async with Host().run_test(size=size) as pilot:
        await pilot.pause()
        view = pilot.app.screen.query_one(PlanView)
        while not view.layout_complete:
            await pilot.pause(0.01)
        settled = time.perf_counter() - start
        await pilot.press("G")
    return settled


def memory_child(path: Path, size: tuple[int, int]) -> None:
    """Subprocess body: print peak memory of opening ``path`` as JSON."""
    sys.path.insert(0, str(ROOT))
    import textual.app  # noqa: F401  (imports are not what we measure)

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    settled = asyncio.run(_open_and_settle(path, size))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "tracemalloc_peak_mib": peak / 2**20,
                "ru_maxrss_mib": rss / 1024,
                "rss_growth_mib": (rss - base_rss) / 1024,
                "layout_settled_s": settled,
            }
        )
    )


def bench_memory(path: Path, size: tuple[int, int]) -> dict[str, float]:
    done = subprocess.run(
        [str(PYTHON), __file__, "--memory-child", str(path), "--size", f"{size[0]}x{size[1]}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="first-frame launches per size")
    parser.add_argument("--size", default="120x40", help="terminal size, WIDTHxHEIGHT")
    parser.add_argument("--skip-tmux", action="store_true", help="only the headless parts")
    parser.add_argument("--memory-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    size = (width, height)
    if args.memory_child:
        memory_child(args.memory_child, size)
        return 0

    with tempfile.TemporaryDirectory(prefix="planshell-bench-") as folder:
        files = {}
        for lines in (100, 10_000):
            files[lines] = Path(folder) / f"plan-{lines}.md"
            files[lines].write_text(make_plan(lines))
        print(f"review screen benchmark, {width}x{height}")
        status = 0
        if args.skip_tmux or shutil.which("tmux") is None:
            print(
                "first frame: skipped (no tmux)" if not args.skip_tmux else "first frame: skipped"
            )
        else:
            frames, jumps = bench_tmux(files, max(5, args.runs), size)
            medians = {lines: statistics.median(times) for lines, times in frames.items()}
            for lines, times in frames.items():
                shown = ", ".join(f"{t * 1000:.0f}" for t in times)
                print(
                    f"first frame {lines:>6,} lines: median {medians[lines] * 1000:6.0f} ms  ({shown})"
                )
            ratio = medians[10_000] / medians[100]
            verdict = "ok" if ratio <= TARGET_RATIO else f"MISSED (target {TARGET_RATIO}x)"
            print(f"first frame ratio 10k/100: {ratio:.2f}x  {verdict}")
            if ratio > TARGET_RATIO:
                status = 1
            for lines, times in jumps.items():
                print(
                    f"n x {len(times)} in tmux on {lines:>6,} lines: median "
                    f"{statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
                    "(send-keys until the heading is the top row, polled)"
                )
        for lines in (100, 10_000):
            jumps = asyncio.run(bench_jumps(files[lines], 20, size))
            print(
                f"n x 20 on {lines:>6,} lines: pilot press median {jumps['pilot_press_median_ms']:.1f} ms "
                f"(max {jumps['pilot_press_max_ms']:.1f}); widget jump+render median "
                f"{jumps['widget_jump_median_ms']:.2f} ms (max {jumps['widget_jump_max_ms']:.2f}); "
                f"background layout done {jumps['layout_settled_ms']:.0f} ms after launch"
            )
        memory = {lines: bench_memory(files[lines], size) for lines in (100, 10_000)}
        for lines, numbers in memory.items():
            print(
                f"memory {lines:>6,} lines: tracemalloc peak {numbers['tracemalloc_peak_mib']:.1f} MiB, "
                f"ru_maxrss {numbers['ru_maxrss_mib']:.0f} MiB, "
                f"settled after {numbers['layout_settled_s'] * 1000:.0f} ms under tracemalloc"
            )
        peak_ratio = memory[10_000]["tracemalloc_peak_mib"] / memory[100]["tracemalloc_peak_mib"]
        print(f"memory ratio 10k/100 (tracemalloc peak): {peak_ratio:.2f}x")
        return status


if __name__ == "__main__":
    raise SystemExit(main())
