"""Start-up: planshell ready in a real terminal against a bare Textual app, and ``planshell -p``.

Run: ``.venv/bin/python bench/startup.py [--runs 7] [--baseline REV] [--json FILE]``

Issue 28, section 1. Every figure is a median of ``--runs`` runs (default 7),
the programs interleaved run by run, so a busy machine slows all of them alike:

- bare: a Textual app with one Static and one Input, to its first frame
  (marker: the Static's text);
- planshell first frame: ``python -m planshell`` on a small project with the
  demo model (no API key) until the prompt's placeholder is on screen;
- planshell ready: until the status bar shows the model ("demo (offline)"),
  i.e. the engine is built; the goal is ready/bare <= 1.5x;
- ``planshell -p hello`` with the demo model, wall time of the whole process
  (no terminal: stdout is a pipe); the goal is 0.3 s. ``python -c pass`` is
  shown beside it as the floor of any Python program on the same box.

Floors, so the table shows what the goals are up against (no goals of their own):

- ``python -c`` importing asyncio and pydantic and validating one model: what
  any asyncio program with pydantic at its boundaries pays before its own code;
- ``import planshell.config``, timed inside the process (the interpreter's own
  start-up is already in every first frame): pydantic plus planshell's settings
  models, which must validate before the engine is built (the model's name in
  the status bar comes from them);
- the ready floor: planshell's first frame plus that import, over the bare
  app's first frame: the lowest "ready" ratio while settings are pydantic models
  built after the first frame (one interpreter, one GIL: the import cannot
  overlap the drawing).

Each terminal run is a fresh private tmux server (tests/tmux_harness.py),
polled every 20 ms. Bytecode is written and reused, as an installed planshell
would (one warm-up run of each program first).

``textual-speedups`` (compiled geometry for Textual) is used by Textual when it
is importable and ``TEXTUAL_SPEEDUPS`` is not "0": when it is installed the
ready time is also measured with it switched off, so its effect shows;
otherwise the script says it is not installed.

``--baseline REV`` measures that git revision's planshell as well (a temporary
worktree, run with ``PYTHONPATH`` on it), in the same interleaved rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.figures import Figure, checkout, report  # noqa: E402
from tests.tmux_harness import TmuxPane, isolated_env, tmux_path  # noqa: E402

SECTION = "1 start-up"
READY_RATIO_GOAL = 1.5
PRINT_GOAL = 0.3  # seconds for `planshell -p hello` with the demo model
FIRST_FRAME = "Ask anything"  # the prompt's placeholder
READY = "demo (offline)"  # the status bar's model label once the engine is built

BARE_APP = """
from textual.app import App
from textual.widgets import Input, Static


class Bare(App):
    def compose(self):
        yield Static("BARE-FIRST-FRAME")
        yield Input(placeholder="type here")


Bare().run()
"""

PYDANTIC_PROGRAM = """
import asyncio
from pydantic import BaseModel


class One(BaseModel):
    x: int = 1


One()
"""

# In-process import time: the interpreter's own start-up is already in every first frame.
IMPORT_TIMED = (
    "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
)

METHOD_TMUX = "tmux 100x30, fresh server per run, polled every 20 ms; median of {runs}, interleaved"
METHOD_PRINT = "wall time of the process, stdout a pipe; median of {runs}, interleaved"


@dataclass
class Tree:
    """One planshell checkout to measure, and its samples."""

    label: str  # "this tree" or "baseline REV"
    path: Path
    first: list[float] = field(default_factory=list)
    ready: list[float] = field(default_factory=list)
    ready_no_speedups: list[float] = field(default_factory=list)
    printed: list[float] = field(default_factory=list)
    config: list[float] = field(default_factory=list)  # `import planshell.config`


def time_to(command: list[str], markers: list[str], env: dict[str, str], cwd: Path) -> list[float]:
    """Seconds from launch until each marker is on screen (in order)."""
    times: list[float] = []
    with TmuxPane.start(command, env=env, cwd=cwd, size=(100, 30)) as pane:
        for marker in markers:
            pane.wait_for(marker, timeout=30)
            times.append(time.monotonic() - pane.started_at)
        pane.keys("C-q")
    return times


def _run(command: list[str], env: dict[str, str], cwd: Path) -> bytes:
    """Run ``command`` to its exit (it must succeed); its stdout."""
    done = subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{command} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return done.stdout


def wall(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds the process takes from start to exit (it must succeed)."""
    started = time.monotonic()
    _run(command, env, cwd)
    return time.monotonic() - started


def printed_seconds(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """The seconds a program measured itself and printed (it must succeed)."""
    return float(_run(command, env, cwd))


def speedups_installed() -> bool:
    return importlib.util.find_spec("textual_speedups") is not None


@contextmanager
def project_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="planshell-bench-") as tmp:
        base = Path(tmp)
        project = base / "project"
        (project / "src").mkdir(parents=True)
        (project / "README.md").write_text("# Bench project\n\nNothing to see.\n")
        (project / "src" / "main.py").write_text("print('hi')\n")
        (base / "home").mkdir()
        (base / "bare_app.py").write_text(BARE_APP)
        yield base


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, help="append the figures here (bench/run.py)")
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    args = parser.parse_args()
    runs = args.runs
    python = sys.executable
    speedups = speedups_installed()
    print(f"textual-speedups: {'installed (measured on and off)' if speedups else 'not installed'}")
    with ExitStack() as stack, project_dir() as base:
        project = base / "project"
        trees = [Tree("this tree", ROOT)]
        if args.baseline:
            trees.append(
                Tree(f"baseline {args.baseline}", stack.enter_context(checkout(args.baseline)))
            )
        env = isolated_env(base / "home")
        # Measure what an installed planshell does: with cached bytecode.
        env["PYTHONDONTWRITEBYTECODE"] = ""
        bare_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}

        def tree_env(tree: Tree, **extra: str) -> dict[str, str]:
            return {**env, "PYTHONPATH": str(tree.path), **extra}

        planshell = [python, "-m", "planshell", "-C", str(project)]
        printing = [*planshell, "-p", "hello"]
        floor = [python, "-c", "pass"]
        pydantic_floor = [python, "-c", PYDANTIC_PROGRAM]
        config_import = [python, "-c", IMPORT_TIMED.format(module="planshell.config")]
        terminal = tmux_path() is not None
        if not terminal:
            print("start-up: tmux is not installed: only `planshell -p` is measured")
        # Warm-up: bytecode written, file-system cache warm for every program.
        if terminal:
            time_to([python, str(base / "bare_app.py")], ["BARE-FIRST-FRAME"], bare_env, base)
        for tree in trees:
            wall(printing, tree_env(tree), project)
            if terminal:
                time_to(planshell, [FIRST_FRAME, READY], tree_env(tree), project)
        bare: list[float] = []
        floors: list[float] = []
        pydantic_floors: list[float] = []
        wall(pydantic_floor, bare_env, base)
        for _ in range(runs):
            if terminal:
                (t,) = time_to(
                    [python, str(base / "bare_app.py")], ["BARE-FIRST-FRAME"], bare_env, base
                )
                bare.append(t)
            floors.append(wall(floor, bare_env, base))
            pydantic_floors.append(wall(pydantic_floor, bare_env, base))
            for tree in trees:
                if terminal:
                    first, ready = time_to(planshell, [FIRST_FRAME, READY], tree_env(tree), project)
                    tree.first.append(first)
                    tree.ready.append(ready)
                    if speedups:
                        _, off = time_to(
                            planshell,
                            [FIRST_FRAME, READY],
                            tree_env(tree, TEXTUAL_SPEEDUPS="0"),
                            project,
                        )
                        tree.ready_no_speedups.append(off)
                tree.printed.append(wall(printing, tree_env(tree), project))
                tree.config.append(printed_seconds(config_import, tree_env(tree), project))
    figures = figures_of(trees, bare, floors, pydantic_floors, runs, speedups)
    report(figures, args.json)
    if args.json is not None:  # the runner prints the table; say the essentials here too
        for f in figures:
            print(f"{f.tree:>20}  {f.name:<48} {f.value:.3f} {f.unit}")
    return 0


def figures_of(
    trees: list[Tree],
    bare: list[float],
    floors: list[float],
    pydantic_floors: list[float],
    runs: int,
    speedups: bool,
) -> list[Figure]:
    tmux = METHOD_TMUX.format(runs=runs)
    printed = METHOD_PRINT.format(runs=runs)
    med = statistics.median
    figures: list[Figure] = []
    if bare:
        figures.append(
            Figure(
                SECTION,
                "bare Textual app (Static + Input): first frame",
                med(bare),
                "s",
                method=tmux,
            )
        )
    for tree in trees:
        this = tree.label == "this tree"
        if tree.ready:
            ready = med(tree.ready)
            figures += [
                Figure(
                    SECTION,
                    "planshell: first frame (prompt shown)",
                    med(tree.first),
                    "s",
                    method=tmux,
                    tree=tree.label,
                ),
                Figure(
                    SECTION,
                    "planshell: ready (status bar shows the model)",
                    ready,
                    "s",
                    method=tmux,
                    tree=tree.label,
                ),
                Figure(
                    SECTION,
                    "planshell ready / bare first frame",
                    ready / med(bare),
                    "x",
                    READY_RATIO_GOAL if this else None,
                    method=tmux,
                    tree=tree.label,
                ),
            ]
            if tree.config:
                figures.append(
                    Figure(
                        SECTION,
                        "ready floor: (first frame + settings import) / bare",
                        (med(tree.first) + med(tree.config)) / med(bare),
                        "x",
                        method=f"{tmux}; plus `import planshell.config` timed in-process, median of {runs}",
                        tree=tree.label,
                    )
                )
            if tree.ready_no_speedups:
                figures.append(
                    Figure(
                        SECTION,
                        "planshell: ready, TEXTUAL_SPEEDUPS=0",
                        med(tree.ready_no_speedups),
                        "s",
                        method=tmux,
                        tree=tree.label,
                    )
                )
        figures.append(
            Figure(
                SECTION,
                "planshell -p hello (demo model)",
                med(tree.printed),
                "s",
                PRINT_GOAL if this else None,
                method=printed,
                tree=tree.label,
            )
        )
        if tree.config:
            figures.append(
                Figure(
                    SECTION,
                    "import planshell.config (pydantic + settings models)",
                    med(tree.config),
                    "s",
                    method=f"perf_counter around the import, in a fresh process; median of {runs}",
                    tree=tree.label,
                )
            )
    figures.append(
        Figure(
            SECTION,
            "python -c pass (floor of any Python program)",
            med(floors),
            "s",
            method=printed,
        )
    )
    figures.append(
        Figure(
            SECTION,
            "python: asyncio + pydantic + one model (floor)",
            med(pydantic_floors),
            "s",
            method=printed,
        )
    )
    figures.append(
        Figure(
            SECTION,
            "textual-speedups installed (1 yes, 0 no)",
            1.0 if speedups else 0.0,
            "",
            method="importlib.util.find_spec('textual_speedups'); measured on and off when installed",
        )
    )
    return figures  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
