"""Do the text paths scale linearly? Each is timed at a small and a large input, in one run.

Run: ``.venv/bin/python bench/scaling.py [--runs 7]``

These were speed budgets inside the test suite ("10,000 lines parse in 40 ms",
"1 MB is sanitised in 50 ms"); on a busy machine they failed correct code, so
the suite now checks only what the output is, and the speed lives here. An
absolute budget says more about the machine than about the code; a ratio
between two sizes measured back to back on the same machine does not.

For every case the cost per unit of input (per line or per character) at the
large size is divided by the cost per unit at the small size: 1.0 is exactly
linear, below 1 means fixed costs dominate the small input, and a quadratic
path shows up as a ratio near the size factor (10x, 100x). The target is at
most 1.5; the script exits 1 when a case misses it.

Each time is the best of ``--runs`` repeats of as many calls as fill 0.2 s
(``timeit`` with the garbage collector on), the two sizes' repeats
interleaved, so a busy machine slows the numbers more than it skews the ratios.
"""

from __future__ import annotations

import argparse
import gc
import sys
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.figures import Figure, report  # noqa: E402
from planshell.plan.document import parse_plan_uncached  # noqa: E402
from planshell.sanitize import strip_terminal_controls  # noqa: E402
from planshell.ui.widgets.plan_view import render_markdown  # noqa: E402
from tests.plan_samples import generated_plan  # noqa: E402

TARGET_RATIO = 1.5


@dataclass
class Case:
    """One function timed on a small and a large input of the same kind."""

    name: str
    func: Callable[[str], object]
    make: Callable[[int], str]  # input of the given size
    small: int
    large: int
    unit: str  # what the size counts: "lines" or "chars"


def plan(lines: int) -> str:
    return generated_plan(lines, title="Scaling", intro="A generated plan for bench/scaling.py.")


def hostile_plan(chars: int) -> str:
    """Lines that once tempted a parser into backtracking: runs of #, -, 1., spaces, backticks."""
    n = chars // 5
    pieces = ["#" * n, "- " * (n // 2), "1. " * (n // 3), " " * (n - 1) + "x", "`" * n]
    return "## Steps\n" + "\n".join(pieces)


def plain_text(chars: int) -> str:
    return ("hello world 日本 🎉 and some code();\n" * (chars // 30 + 1))[:chars]


def escaped_text(chars: int) -> str:
    return ("log \x1b[32mOK\x1b[0m line with text\n" * (chars // 30 + 1))[:chars]


def hostile_inline(chars: int) -> str:
    """Unclosed emphasis, code, underscore and link markers: the inline parser's worst case."""
    n = chars // 9
    return "*a " * n + "`" * n + "_x" * n + "[" * n


CASES = [
    Case("plan parse, generated plan", parse_plan_uncached, plan, 100, 10_000, "lines"),
    Case("plan parse, hostile lines", parse_plan_uncached, hostile_plan, 50_000, 500_000, "chars"),
    Case("sanitiser, plain text", strip_terminal_controls, plain_text, 10_000, 1_000_000, "chars"),
    Case("sanitiser, ANSI escapes", strip_terminal_controls, escaped_text, 10_000, 1_000_000, "chars"),
    Case("plan view render, hostile inline", lambda t: render_markdown(t, 80), hostile_inline, 2_250, 22_500, "chars"),
]  # fmt: skip


def seconds_per_call(func: Callable[[str], object], inputs: list[str], runs: int) -> list[float]:
    """Best seconds per call for each input; the inputs' samples are interleaved."""
    timers = [timeit.Timer(lambda arg=arg: func(arg), setup=gc.enable) for arg in inputs]
    numbers = []
    for timer in timers:
        number = 1
        while timer.timeit(number) < 0.2:  # like autorange, to a longer sample
            number *= 2
        numbers.append(number)
    best = [float("inf")] * len(inputs)
    for _ in range(runs):  # interleaved, so drift in the machine's load hits all alike
        for i, (timer, number) in enumerate(zip(timers, numbers, strict=True)):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="repeats per size (best is kept)")
    parser.add_argument("--json", type=Path, help="append the figures here (bench/run.py)")
    parser.add_argument("--baseline", help="ignored: these are ratios within one tree")
    args = parser.parse_args()
    figures: list[Figure] = []
    print(f"scaling of the text paths: cost per unit, large/small (target <= {TARGET_RATIO}x)")
    status = 0
    for case in CASES:
        inputs = [case.make(case.small), case.make(case.large)]
        t_small, t_large = seconds_per_call(case.func, inputs, args.runs)
        ratio = (t_large / case.large) / (t_small / case.small)
        verdict = "ok" if ratio <= TARGET_RATIO else "MISSED"
        status |= ratio > TARGET_RATIO
        print(
            f"{case.name:<34} {case.small:>9,} {case.unit}: {t_small * 1000:8.3f} ms"
            f"   {case.large:>9,} {case.unit}: {t_large * 1000:8.2f} ms"
            f"   ratio {ratio:5.2f}x  {verdict}"
        )
        figures.append(
            Figure(
                "5 scaling",
                f"{case.name}: per-{case.unit[:-1]} cost {case.large:,} vs {case.small:,}",
                ratio,
                "x",
                TARGET_RATIO,
                method="best of --runs timeit repeats (>= 0.2 s each), sizes interleaved",
            )
        )
    report(figures, args.json)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
