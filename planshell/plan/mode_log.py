"""The plan state in the session log: one ``mode`` entry per change, read back on resume.

``--continue`` restores from the last entry alone, so each entry carries the
whole state (mode, plan, saved tools, an approval or a changed plan). Deciding
what a resumed entry turns into (EXECUTE again, or a changed plan to review)
is the controller's job; this module only writes and reads the entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planshell.agent.events import Mode
from planshell.plan.approval_record import ApprovalRecord, PlanChange


def mode_entry(
    mode: Mode,
    plan_path: Path | None,
    saved_tools: tuple[str, ...] | None,
    approval: ApprovalRecord | None,
    changed_plan: PlanChange | None,
) -> dict[str, Any]:
    """The ``mode`` entry for the state given; an approval only in EXECUTE, a change only in PLAN."""
    entry: dict[str, Any] = {
        "type": "mode",
        "mode": mode.value,
        "plan_path": str(plan_path) if plan_path else None,
        "saved_tools": list(saved_tools) if saved_tools is not None else None,
    }
    if mode is Mode.EXECUTE and approval is not None:
        entry["approval"] = approval.to_entry()
    if mode is Mode.PLAN and changed_plan is not None:
        entry["changed_plan"] = changed_plan.to_entry()
    return entry


@dataclass(frozen=True)
class RecordedMode:
    """A ``mode`` entry read back: saved tools no longer registered are dropped."""

    mode: Mode
    plan_path: Path | None
    saved_tools: tuple[str, ...] | None

    @classmethod
    def parse(cls, entry: dict[str, Any], known: set[str]) -> RecordedMode:
        mode = Mode(entry.get("mode", "off"))
        raw_path = entry.get("plan_path")
        saved = entry.get("saved_tools")
        return cls(
            mode,
            Path(raw_path) if raw_path else None,
            tuple(n for n in saved if n in known) if saved else None,
        )
