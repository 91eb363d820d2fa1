"""Cost of the write-barrier receipt (taken synchronously when PLAN is entered).

Builds a git repository in a temporary directory: ``--tracked`` committed files
in 100 directories, 50 dirty ones plus one 20 MiB dirty file, an ignored
``.venv`` (``--venv`` files, within the ignored cap) and an ignored
``node_modules`` (``--node-modules`` files, over it), and one submodule. Then
times ``take_snapshot`` and ``compare`` (median of ``--runs``) and prints what
the receipt covered and what it says it left out.

``--baseline <commit>`` also times the receipt.py of that commit (for example
the status-only one before issue 10) on the same repository.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planshell.plan import receipt as rc  # noqa: E402


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, check=True, capture_output=True
    )


def build(base: Path, tracked: int, venv: int, node_modules: int) -> Path:
    repo = base / "repo"
    for i in range(tracked):
        path = repo / f"pkg{i % 100}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n" * 20)
    (repo / "big.bin").write_bytes(b"\0" * (20 << 20))
    (repo / ".gitignore").write_text(".venv/\nnode_modules/\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=b@x", "-c", "user.name=B", "add", "-A")
    git(repo, "-c", "user.email=b@x", "-c", "user.name=B", "commit", "-qm", "init")
    sub = base / "sub"
    (sub / "src").mkdir(parents=True)
    (sub / "src" / "lib.c").write_text("int x;\n")
    git(sub, "init", "-q")
    git(sub, "-c", "user.email=b@x", "-c", "user.name=B", "add", "-A")
    git(sub, "-c", "user.email=b@x", "-c", "user.name=B", "commit", "-qm", "sub")
    git(repo, "submodule", "add", "-q", str(sub), "vendor/sub")
    for i in range(50):
        (repo / f"pkg{i}" / f"mod{i}.py").write_text("dirty\n")
    (repo / "big.bin").write_bytes(b"\1" * (20 << 20))
    for name, count in ((".venv", venv), ("node_modules", node_modules)):
        for i in range(count):
            path = repo / name / f"d{i % 50}" / f"f{i}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
    return repo


def load_baseline(commit: str) -> ModuleType:
    source = subprocess.run(
        ["git", "show", f"{commit}:planshell/plan/receipt.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("receipt_baseline", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    exec(compile(source, f"{commit}:receipt.py", "exec"), module.__dict__)
    return module


def timed(module: ModuleType, repo: Path, runs: int) -> tuple[float, float, object]:
    snaps, compares = [], []
    receipt: object = None
    for _ in range(runs):
        start = time.perf_counter()
        snap = module.take_snapshot(repo)
        snaps.append(time.perf_counter() - start)
        start = time.perf_counter()
        receipt = module.compare(snap)
        compares.append(time.perf_counter() - start)
    return statistics.median(snaps), statistics.median(compares), receipt


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracked", type=int, default=20_000)
    parser.add_argument("--venv", type=int, default=5_000)
    parser.add_argument("--node-modules", type=int, default=30_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", help="also time receipt.py as of this commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="planshell-bench-receipt-") as tmp:
        started = time.perf_counter()
        repo = build(Path(tmp), args.tracked, args.venv, args.node_modules)
        print(f"built the repository in {time.perf_counter() - started:.1f}s")
        modules: list[tuple[str, ModuleType]] = [("current", rc)]
        if args.baseline:
            modules.append((f"baseline {args.baseline}", load_baseline(args.baseline)))
        for label, module in modules:
            snap_s, compare_s, receipt = timed(module, repo, args.runs)
            snap = module.take_snapshot(repo)
            print(
                f"{label}: take_snapshot {snap_s * 1000:.0f} ms, compare {compare_s * 1000:.0f} ms "
                f"(median of {args.runs}), {len(snap.entries)} entries"
            )
            print(f"  {getattr(receipt, 'summary', receipt)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
