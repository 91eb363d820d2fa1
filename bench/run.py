"""``make bench``: every bench script in one run, and one table of each figure beside its goal.

Run: ``.venv/bin/python bench/run.py [--baseline REV] [--only NAME ...]``

Each script measures one area and writes its figures (value, goal, method) as
JSON lines; this runner collects them and prints the table, then the method of
each figure. ``--baseline REV`` makes every script also measure that git
revision in a temporary worktree, in the same run, so "before" and "after" come
from one machine under one load. The exit status is 0 even when a goal is
missed: a busy machine is not a failing build, and the table says what missed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.figures import load, methods, table  # noqa: E402

SCRIPTS = ("startup", "stream", "receipt", "review", "scaling")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    parser.add_argument("--only", nargs="+", choices=SCRIPTS, help="run only these scripts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="planshell-bench-") as tmp:
        out = Path(tmp) / "figures.jsonl"
        for name in args.only or SCRIPTS:
            command = [sys.executable, str(HERE / f"{name}.py"), "--json", str(out)]
            if args.baseline:
                command += ["--baseline", args.baseline]
            print(f"== bench/{name}.py", flush=True)
            done = subprocess.run(command, check=False)
            if done.returncode != 0:
                print(f"bench/{name}.py exited {done.returncode}", flush=True)
        figures = load(out)
    print()
    print(table(figures))
    print("\nmethod:\n" + methods(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
