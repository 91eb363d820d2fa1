"""Plans of any size (issue 28, section 4): a 100-line and a 100,000-line plan, one run.

Run: ``python bench/review.py [--runs 5] [--size 120x40] [--json FILE] [--baseline REV]``

Figures (each also for the ``--baseline`` tree, run from a temporary worktree with
``PYTHONPATH`` set to it; the harness is always this tree's):

1. First frame, in a real terminal: ``planshell review FILE`` launched in a private
   tmux server, the pane polled every 20 ms until a line of the plan body is on
   screen. Median of ``--runs`` launches per size, the sizes interleaved, after one
   warm-up launch each. Goal: 100k lines within 1.5x of 100 lines.
2. ``n``/``p`` within one frame (1/60 s, 0.017 s), on the 100k-line plan, right after
   it opened (the background layout still running), 20 ``n`` then 20 ``p``:
   - the widget's jump cost, headless (``run_test``, in a subprocess): perf_counter
     around ``next_heading()``/``prev_heading()`` plus rendering every visible row
     (``render_lines`` of the viewport): the work a key press costs the UI thread;
   - press to moved, in tmux: ``send-keys n`` until ``capture-pane`` shows the next
     heading on the plan's top row, polled without sleeping (each poll spawns a tmux
     client, ~2-5 ms, which is counted in).
   p95 of the 40 presses for each. Beside them, once per run, the harness's floor: 40
   keys typed into a bare Textual app (Static + Input) in the same tmux server, each
   until it shows (the same polling): what any key costs before planshell does anything.
3. Peak memory of a headless process that opens the 100k-line plan, lets the
   background layout run 2 s and presses ``G`` (which lays out the whole plan):
   ru_maxrss, and how long that ``G`` took (reported, no goal; tracemalloc made the
   full layout take minutes, so it is not used).
4. The browser review's first screen for the 100k-line plan: from constructing and
   starting the loopback review server (``BrowserReview.start``) until an HTTP client
   (httpx, a real socket against 127.0.0.1) holds the page's HTML and the first chunk
   of sections its script requests (a tree without chunks: the page alone, which then
   holds the whole plan). Fresh server per run (no warm caches), median of ``--runs``.
   Goal < 1 s. Also reported: the page's notices (``extras``) and the whole plan
   loaded chunk by chunk. The plan store caps plans at 256 KiB (about 11k lines of
   this generator), so the child process lifts that cap to serve 100k lines: the
   figure is the serving path's cost, not a size the store accepts today.

Noise: the machine is shared; the ratios and p95s are what to read, each from one run.
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
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MARKER = "A generated plan used to measure the review screen."
SMALL, LARGE = 100, 100_000
FRAME = 0.017  # one frame at 60 Hz
RATIO_GOAL = 1.5
WEB_GOAL = 1.0
SECTION = "4 plans of any size"
LINT_HINT = "l lists them"  # the lint chips' row is complete

if __name__ == "__main__" and "--child" in sys.argv:
    # A child measures the tree on PYTHONPATH: this tree goes last, for the harness only.
    sys.path.append(str(ROOT))
else:
    sys.path.insert(0, str(ROOT))

from bench.figures import Figure, checkout, report  # noqa: E402
from tests.plan_samples import generated_plan  # noqa: E402


def make_plan(lines: int) -> str:
    return generated_plan(lines, title="Generated benchmark plan", intro=MARKER)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


# ------------------------------------------------------------- tmux first frame


BARE_INPUT_APP = """
from textual.app import App
from textual.widgets import Input, Static


class Bare(App):
    def compose(self):
        yield Static("BARE-READY")
        yield Input()


Bare().run()
"""


class Tmux:
    """A private tmux server (own socket and config) so nothing leaks into the user's."""

    def __init__(self, folder: Path) -> None:
        self.socket = f"planshell-bench-review-{os.getpid()}"
        self.conf = folder / "tmux.conf"
        self.conf.write_text(
            "set -s extended-keys always\nset -s escape-time 0\nset -g remain-on-exit on\n"
            "set -s exit-empty off\n"
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

    def start(self, name: str, tree: Path, plan: Path, size: tuple[int, int]) -> None:
        command = [sys.executable, "-m", "planshell", "review", str(plan)]
        self.run(
            "new-session", "-d", "-s", name, "-x", str(size[0]), "-y", str(size[1]), "-c", str(tree),
            "-e", "COLORTERM=truecolor", "-e", "TERM=xterm-256color", "-e", f"PYTHONPATH={tree}",
            *command,
        )  # fmt: skip

    def screen(self, name: str) -> str:
        return self.run("capture-pane", "-p", "-t", name, check=False)

    def first_frame(self, tree: Path, plan: Path, size: tuple[int, int]) -> float:
        """Seconds from launching the review until MARKER is on screen."""
        start = time.perf_counter()
        self.start("frame", tree, plan, size)
        try:
            while time.perf_counter() - start < 60:
                if MARKER in self.screen("frame"):
                    return time.perf_counter() - start
                time.sleep(0.02)
            raise RuntimeError(f"no first frame within 60 s: {plan}")
        finally:
            self.run("kill-session", "-t", "frame", check=False)

    def jumps(
        self, tree: Path, plan: Path, titles: list[str], size: tuple[int, int]
    ) -> list[float]:
        """Seconds from ``send-keys`` until the wanted heading is the plan's top row.

        20 ``n`` to ``titles[1..20]``, then 20 ``p`` back. The plan's top row is found
        once the header is complete (the plan has a lint chip: no Verification).
        """
        self.start("jumps", tree, plan, size)
        times: list[float] = []
        try:
            deadline = time.perf_counter() + 60
            # Open, and the lint chips (a row above the plan, maybe after the frame) shown.
            while MARKER not in (shown := self.screen("jumps")) or LINT_HINT not in shown:
                if time.perf_counter() > deadline:
                    raise RuntimeError("the review screen did not open")
                time.sleep(0.02)
            top = next(
                y for y, row in enumerate(shown.split("\n")) if row.strip().startswith(titles[0])
            )
            steps = [("n", title) for title in titles[1:21]]
            steps += [("p", title) for title in reversed(titles[:20])]
            for key, title in steps:
                start = time.perf_counter()
                self.run("send-keys", "-t", "jumps", key)
                while True:
                    rows = self.screen("jumps").split("\n")
                    if len(rows) > top and rows[top].strip().startswith(title):
                        times.append(time.perf_counter() - start)
                        break
                    if time.perf_counter() - start > 10:
                        raise RuntimeError(f"{key} did not bring {title!r} to the top: {rows[:3]}")
        finally:
            self.run("kill-session", "-t", "jumps", check=False)
        return times

    def echo_floor(self, size: tuple[int, int], keys: int = 40) -> list[float]:
        """Seconds from ``send-keys`` until a bare Textual app (one Input) shows the key.

        The same tmux server, size and polling as :meth:`jumps`: what a key costs this
        harness (tmux relaying it, a client spawned per poll) plus Textual's smallest
        frame, the floor under every press-to-screen figure here.
        """
        command = [sys.executable, "-c", BARE_INPUT_APP]
        self.run(
            "new-session", "-d", "-s", "floor", "-x", str(size[0]), "-y", str(size[1]),
            "-e", "COLORTERM=truecolor", "-e", "TERM=xterm-256color", *command,
        )  # fmt: skip
        times: list[float] = []
        try:
            deadline = time.perf_counter() + 60
            while "BARE-READY" not in self.screen("floor"):
                if time.perf_counter() > deadline:
                    raise RuntimeError("the bare app did not start")
                time.sleep(0.02)
            for typed in range(1, keys + 1):
                start = time.perf_counter()
                self.run("send-keys", "-t", "floor", "x")
                while self.screen("floor").count("x") < typed:
                    if time.perf_counter() - start > 10:
                        raise RuntimeError("the bare app did not echo a key")
                times.append(time.perf_counter() - start)
        finally:
            self.run("kill-session", "-t", "floor", check=False)
        return times

    def close(self) -> None:
        self.run("kill-server", check=False)


def headings(text: str) -> list[str]:
    """The titles ``n`` visits from the top (sections with a heading), as the view draws them."""
    from planshell.plan.document import parse_plan

    return [section.title for section in parse_plan(text).sections if section.level]


# ------------------------------------------------------------- children (per tree)


async def _widget_jumps(path: Path, size: tuple[int, int]) -> list[float]:
    from textual.app import App
    from textual.geometry import Region

    from planshell.plan.decider import ReviewRequest
    from planshell.plan.document import parse_plan
    from planshell.ui.screens.review import ReviewScreen
    from planshell.ui.widgets.plan_view import PlanView

    text = path.read_text()
    request = ReviewRequest(path, text, parse_plan(text).title)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(request))

    times: list[float] = []
    async with Host().run_test(size=size) as pilot:
        await pilot.pause()
        view = pilot.app.screen.query_one(PlanView)
        region = Region(0, 0, view.size.width, view.size.height)
        for move in [view.next_heading] * 20 + [view.prev_heading] * 20:
            start = time.perf_counter()
            moved = move()
            view.render_lines(region)
            times.append(time.perf_counter() - start)
            assert moved, "a jump did not move"
            await pilot.pause(0)  # let the background layout run between presses
    return times


async def _open_and_read(path: Path, size: tuple[int, int]) -> float:
    """Open ``path``, let the layout run 2 s, then ``G``: seconds ``G`` took (lays out all)."""
    from textual.app import App

    from planshell.plan.decider import ReviewRequest
    from planshell.plan.document import parse_plan
    from planshell.ui.screens.review import ReviewScreen

    text = path.read_text()
    request = ReviewRequest(path, text, parse_plan(text).title)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(request))

    async with Host().run_test(size=size) as pilot:
        await pilot.pause(2.0)
        start = time.perf_counter()
        await pilot.press("G")
        to_end = time.perf_counter() - start
        await pilot.app.workers.wait_for_complete()
    return to_end


def _web_first_screen(path: Path, runs: int) -> dict[str, float]:
    """Seconds to the first screen of a fresh loopback review server, and to the rest."""
    import httpx

    from planshell.plan import store as store_module
    from planshell.plan.decider import ReviewRequest
    from planshell.plan.document import parse_plan
    from planshell.review_web.server import BrowserReview

    text = path.read_text()
    store_module.MAX_PLAN_BYTES = 8 * 1024 * 1024  # the store's 256 KiB cap: see the docstring
    root = path.parent / "web-project"
    store = store_module.PlanStore(root)
    store.ensure_dir()
    plan = store.write(store.plans_dir / "big.md", text)
    firsts: list[float] = []
    extras: list[float] = []
    wholes: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        review = BrowserReview(
            ReviewRequest(plan, text, parse_plan(text).title),
            store,
            allow_approve=True,
            on_decision=lambda _review: None,
        )
        url = review.start()
        try:
            with httpx.Client(timeout=120) as client:
                page = client.get(url).text
                marker = 'data-loaded="'
                if marker in page:  # chunked: the first chunk the script asks for
                    loaded = int(page.split(marker, 1)[1].split('"', 1)[0])
                    version = page.split('data-version="', 1)[1].split('"', 1)[0]
                    total = int(page.split('data-sections="', 1)[1].split('"', 1)[0])
                    query = {"from": loaded, "version": version}
                    if loaded < total:
                        reply = client.get(url + "sections", params=query).json()
                        loaded = int(reply["next"])
                    firsts.append(time.perf_counter() - start)
                    mark = time.perf_counter()
                    if 'data-extras="lazy"' in page:
                        client.get(url + "extras", params={"version": version}).raise_for_status()
                    extras.append(time.perf_counter() - mark)
                    while loaded < total:
                        query["from"] = loaded
                        loaded = int(client.get(url + "sections", params=query).json()["next"])
                    wholes.append(time.perf_counter() - start)
                else:  # the whole plan in the page
                    firsts.append(time.perf_counter() - start)
                    wholes.append(firsts[-1])
                    extras.append(0.0)
        finally:
            review.close()
    return {
        "first": statistics.median(firsts),
        "extras": statistics.median(extras),
        "whole": statistics.median(wholes),
    }


def child(kind: str, path: Path, size: tuple[int, int], runs: int) -> None:
    """Subprocess body (the tree on PYTHONPATH): print one JSON line of results."""
    out: dict[str, Any]
    if kind == "jumps":
        out = {"times": asyncio.run(_widget_jumps(path, size))}
    elif kind == "memory":
        to_end = asyncio.run(_open_and_read(path, size))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = {"ru_maxrss_mib": rss / 1024, "to_end": to_end}
    else:
        out = _web_first_screen(path, runs)
    print(json.dumps(out))


def run_child(tree: Path, kind: str, path: Path, size: tuple[int, int], runs: int) -> Any:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path),
         "--size", f"{size[0]}x{size[1]}", "--runs", str(runs)],
        capture_output=True, text=True, check=False, cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- main


def measure(
    tree: Path, label: str, files: dict[int, Path], args: argparse.Namespace
) -> list[Figure]:
    size = args.size_tuple
    figures: list[Figure] = []
    big = files[LARGE]
    print(f"-- {label}: {tree}", flush=True)
    if not args.skip_tmux and shutil.which("tmux"):
        with tempfile.TemporaryDirectory() as folder:
            tmux = Tmux(Path(folder))
            try:
                for path in files.values():  # warm the OS cache and .pyc files once
                    tmux.first_frame(tree, path, size)
                frames: dict[int, list[float]] = {lines: [] for lines in files}
                for _ in range(args.runs):  # interleaved: drift hits both sizes alike
                    for lines, path in files.items():
                        frames[lines].append(tmux.first_frame(tree, path, size))
                presses = tmux.jumps(tree, big, headings(big.read_text()), size)
            finally:
                tmux.close()
        medians = {lines: statistics.median(times) for lines, times in frames.items()}
        for lines, times in frames.items():
            print(f"first frame {lines:>7,} lines: " + ", ".join(f"{t * 1000:.0f}" for t in times))
        method = f"tmux, planshell review FILE until plan text shows, median of {args.runs}"
        figures += [
            Figure(SECTION, f"first frame {LARGE:,} / {SMALL:,} lines", medians[LARGE] / medians[SMALL],
                   "x", RATIO_GOAL, method=method, tree=label),
            Figure(SECTION, f"first frame, {SMALL:,} lines", medians[SMALL], "s", method=method, tree=label),
            Figure(SECTION, f"first frame, {LARGE:,} lines", medians[LARGE], "s", method=method, tree=label),
            Figure(SECTION, f"n/p press to moved p95, {LARGE:,} lines", p95(presses), "s",
                   FRAME, method="tmux send-keys until the heading is the top row, polled "
                   "(tmux client spawn counted), 20 n + 20 p just after open", tree=label),
        ]  # fmt: skip
    jumps = run_child(tree, "jumps", big, size, args.runs)["times"]
    figures.append(
        Figure(SECTION, f"n/p widget jump cost p95, {LARGE:,} lines", p95(jumps), "s", FRAME,
               method="headless: perf_counter around next/prev_heading + render_lines of the "
               "viewport, 20 n + 20 p just after open", tree=label)
    )  # fmt: skip
    memory = run_child(tree, "memory", big, size, args.runs)
    figures += [
        Figure(SECTION, f"peak RSS, {LARGE:,} lines", memory["ru_maxrss_mib"], "MiB",
               method="headless process: open, 2 s of background layout, G (lays out the "
               "whole plan); ru_maxrss", tree=label),
        Figure(SECTION, f"G (to the end), {LARGE:,} lines", memory["to_end"], "s",
               method="same process: pilot press G, 2 s after open", tree=label),
    ]  # fmt: skip
    web = run_child(tree, "web", big, size, args.runs)
    web_method = (
        "fresh BrowserReview.start() until httpx holds the page + the first chunk its "
        f"script requests (loopback), median of {args.runs}"
    )
    figures += [
        Figure(SECTION, f"browser first screen, {LARGE:,} lines", web["first"], "s", WEB_GOAL,
               method=web_method, tree=label),
        Figure(SECTION, f"browser notices (extras), {LARGE:,} lines", web["extras"], "s",
               method="GET extras after the first screen (unshown lines, diff)", tree=label),
        Figure(SECTION, f"browser whole plan loaded, {LARGE:,} lines", web["whole"], "s",
               method="start until every chunk is fetched, in order", tree=label),
    ]  # fmt: skip
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="launches / servers per figure")
    parser.add_argument("--size", default="120x40", help="terminal size, WIDTHxHEIGHT")
    parser.add_argument("--skip-tmux", action="store_true", help="only the headless parts")
    parser.add_argument("--json", type=Path, help="append the figures here (bench/run.py)")
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PLAN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    args.size_tuple = (width, height)
    if args.child:
        child(args.child[0], Path(args.child[1]), args.size_tuple, args.runs)
        return 0
    figures: list[Figure] = []
    with (
        tempfile.TemporaryDirectory(prefix="planshell-bench-review-") as folder,
        ExitStack() as stack,
    ):
        files = {}
        for lines in (SMALL, LARGE):
            files[lines] = Path(folder) / f"plan-{lines}.md"
            files[lines].write_text(make_plan(lines))
        trees = [("this tree", ROOT)]
        if args.baseline:
            trees.append(
                (f"baseline {args.baseline}", stack.enter_context(checkout(args.baseline)))
            )
        for label, tree in trees:
            figures += measure(tree, label, files, args)
        if not args.skip_tmux and shutil.which("tmux"):
            tmux = Tmux(Path(folder))
            try:
                floor = tmux.echo_floor(args.size_tuple)
            finally:
                tmux.close()
            figures.append(
                Figure(SECTION, "tmux floor: bare Textual app key echo p95", p95(floor), "s",
                       method="the same tmux server and polling as n/p press to moved; a key "
                       "typed into a bare app (Static + Input) until it shows, 40 keys",
                       tree="harness")
            )  # fmt: skip
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
