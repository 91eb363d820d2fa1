"""Where ``write_plan``'s text lands, and what a rewrite keeps of the file it replaces.

The store contains the path (``plans/`` only, no links, a fresh name for a new
plan); this module picks which path and keeps an existing plan's title line.
"""

from __future__ import annotations

from pathlib import Path

from planshell.plan.store import PlanStore, PlanStoreError


def with_title(title: str, content: str) -> str:
    """``content`` as a plan file: a ``# Plan: title`` heading unless it has a title."""
    return content if content.lstrip().startswith("# ") else f"# Plan: {title}\n\n{content}"


def plan_target(
    store: PlanStore,
    requested: str | None,
    current: Path | None,
    pending_name: str | None,
    title: str,
) -> Path:
    """The file to write: the one asked for, else the current plan, else a new one.

    A new file asked for by name must be a new plan name (PlanStoreError if not).
    """
    if requested:
        path = store.resolve(requested)
        if path != current and not store.exists(path):
            store.check_new_name(path)
        return path
    if current is not None:
        return current
    return store.new_path(pending_name or title)


def title_line(store: PlanStore, path: Path) -> str | None:
    """The ``# …`` title line of the plan file at ``path``, if it exists and has one."""
    try:
        if not store.exists(path):
            return None
        first = store.read(path).lstrip("\n").split("\n", 1)[0]
    except PlanStoreError:
        return None
    return first if first.startswith("# ") else None


def keep_title(text: str, title_line: str | None) -> str:
    """A rewrite of an existing plan keeps its title line: a plan keeps its identity.

    Refining ("fewer steps", "Refine the plan …: …") must not retitle the plan
    after the latest message; ``/plan new`` starts a new file for a new title.
    """
    if title_line is None:
        return text
    lines = text.lstrip("\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines[0] = title_line
        return "\n".join(lines)
    return f"{title_line}\n\n{text}"
