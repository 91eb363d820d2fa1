"""What every bench script reports, so ``bench/run.py`` can print one table of goals.

A bench script measures; it does not judge the machine. Each figure carries the
goal it is held to and the method in a few words, and the runner prints them
side by side (``make bench``). A script run with ``--json FILE`` appends its
figures there as JSON lines; run alone it prints them as a table too.

``checkout(rev)`` puts a git revision in a temporary worktree, so a script can
measure "before" and "after" in one run on the same machine (``--baseline``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Figure:
    """One measured value beside its goal.

    ``goal`` is the bound as a number in ``unit`` and ``better`` says which side
    of it passes ("lower" or "higher"); ``goal`` None means "reported, no goal"
    (for instance a baseline's value or a memory figure shown for scale).
    """

    section: str
    name: str
    value: float
    unit: str
    goal: float | None = None
    better: str = "lower"
    method: str = ""
    tree: str = "this tree"

    @property
    def ok(self) -> bool | None:
        if self.goal is None:
            return None
        return self.value <= self.goal if self.better == "lower" else self.value >= self.goal


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 10 else f"{value:.1f} s"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit == "%":
        return f"{value:.0f}%"
    return f"{value:g} {unit}".strip()


def goal_text(figure: Figure) -> str:
    if figure.goal is None:
        return "-"
    sign = "<=" if figure.better == "lower" else ">="
    return f"{sign} {fmt(figure.goal, figure.unit)}"


def table(figures: Sequence[Figure]) -> str:
    """The figures as aligned text: section, figure, tree, value, goal, verdict."""
    rows = [("section", "figure", "tree", "value", "goal", "")]
    for f in figures:
        verdict = {True: "ok", False: "MISSED", None: ""}[f.ok]
        rows.append((f.section, f.name, f.tree, fmt(f.value, f.unit), goal_text(f), verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def methods(figures: Sequence[Figure]) -> str:
    """Each distinct method once, labelled with the figures that use it."""
    users: dict[str, list[str]] = {}
    for f in figures:
        if f.method:
            names = users.setdefault(f.method, [])
            if f.name not in names:
                names.append(f.name)
    lines = []
    for method, names in users.items():
        label = names[0] if len(names) == 1 else f"{names[0]} (and {len(names) - 1} more)"
        lines.append(f"- {label}: {method}")
    return "\n".join(lines)


def report(figures: Sequence[Figure], json_path: Path | None) -> None:
    """Append to ``json_path`` when given (the runner's table), else print a table."""
    if json_path is not None:
        with json_path.open("a", encoding="utf-8") as out:
            for f in figures:
                out.write(json.dumps(asdict(f)) + "\n")
        return
    print(table(figures))
    if any(f.method for f in figures):
        print("\nmethod:\n" + methods(figures))


def load(json_path: Path) -> list[Figure]:
    if not json_path.exists():
        return []
    lines = json_path.read_text(encoding="utf-8").splitlines()
    return [Figure(**json.loads(line)) for line in lines if line.strip()]


def missing_dependencies(tree: Path) -> list[str]:
    """The runtime dependencies ``tree``'s pyproject.toml names that are not installed here.

    A baseline runs on this environment: one that needs a package since dropped (say,
    ``pydantic-settings`` before ``fa46f3a``) would fail deep inside a child process.
    """
    import re
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    project = tomllib.loads((tree / "pyproject.toml").read_text()).get("project", {})
    missing = []
    for spec in project.get("dependencies", []):
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec.strip())
        if name is None:
            continue
        try:
            version(name.group(0))
        except PackageNotFoundError:
            missing.append(name.group(0))
    return missing


@contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A detached worktree of ``rev`` for a baseline measurement, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="planshell-baseline-") as tmp:
        target = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(target), rev], cwd=ROOT, check=True
        )
        try:
            missing = missing_dependencies(target)
            if missing:
                raise SystemExit(
                    f"baseline {rev} needs {', '.join(missing)}, not installed here; for the "
                    f"measurement: {sys.executable} -m pip install {' '.join(missing)}"
                )
            yield target
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(target)], cwd=ROOT, check=False
            )
