"""What a person approved, kept by planshell rather than read back from disk.

An approval records the exact plan text the person read (and the permission
mode in force before it). Execution works from that text only: planshell's own
ticks update the record as they update the file, and anything else that
changes the file (bash in the workspace sandbox, the file tools, another
process, a ``git pull``) makes it a *changed plan*, which waits for a person
again. The record rides in the session log's mode entry, so ``--continue``
compares the file with the text approved in the earlier run.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

__all__ = [
    "ApprovalRecord",
    "PlanChange",
    "less_permissive",
    "sha256",
]

# Permission modes from the narrowest to the widest (planshell.permissions.PermissionMode).
_PERMISSION_ORDER = ("ask", "accept-edits", "auto")
_HEX64 = re.compile(r"[0-9a-f]{64}")
DIFF_MAX_LINES = 400  # a notice is not the place for a whole rewritten plan; the review is


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def less_permissive(a: str | None, b: str | None) -> str | None:
    """The narrower of two permission modes (an unknown one counts as the widest)."""
    if a is None or b is None:
        return a if b is None else b

    def rank(mode: str) -> int:
        return (
            _PERMISSION_ORDER.index(mode) if mode in _PERMISSION_ORDER else len(_PERMISSION_ORDER)
        )

    return a if rank(a) <= rank(b) else b


@dataclass(frozen=True)
class ApprovalRecord:
    """The approved text of the executing plan, and the permission mode it ends in.

    ``permission_before`` is the permission mode in force before the approval;
    ``permission_mode`` the one chosen with it (``a`` / ``A``), or None when the
    approval left the mode alone. ``revision`` names what the person approved (the
    sha256 of the text as approved): planshell's ticks keep it, a new approval
    changes it; the Verification commands run unasked once per revision.
    """

    path: Path
    text: str
    permission_before: str | None = None
    permission_mode: str | None = None
    revision: str = ""

    def __post_init__(self) -> None:
        if not self.revision:
            object.__setattr__(self, "revision", sha256(self.text))

    @property
    def digest(self) -> str:
        return sha256(self.text)

    def holds(self, current: str) -> bool:
        """Whether the file's text is exactly the approved text (ticks included)."""
        return current == self.text

    def ticked(self, text: str) -> ApprovalRecord:
        """The record after planshell's own write (a tick, or an amendment a person approved).

        The new text is the approved one from now on.
        """
        return replace(self, text=text)

    def to_entry(self) -> dict[str, Any]:
        return {
            "plan_path": str(self.path),
            "text": self.text,
            "sha256": self.digest,
            "permission_before": self.permission_before,
            "permission_mode": self.permission_mode,
            "revision": self.revision,
        }

    @classmethod
    def from_entry(cls, entry: object, path: Path) -> ApprovalRecord | None:
        """The record in a session log entry, or None if it is missing or does not add up.

        The digest is checked against the text and the path against the mode
        entry's: a record that fails either is no approval at all.
        """
        if not isinstance(entry, dict):
            return None
        text, digest = entry.get("text"), entry.get("sha256")
        if not isinstance(text, str) or not isinstance(digest, str) or sha256(text) != digest:
            return None
        if entry.get("plan_path") != str(path):
            return None
        before, chosen = entry.get("permission_before"), entry.get("permission_mode")
        revision = entry.get("revision")
        return cls(
            path,
            text,
            before if isinstance(before, str) else None,
            chosen if isinstance(chosen, str) else None,
            revision if isinstance(revision, str) and _HEX64.fullmatch(revision) else "",
        )


@dataclass(frozen=True)
class PlanChange:
    """The plan file no longer holds the approved text: execution waits for a person.

    ``approved`` is None when there is no usable record of what was approved
    (a session log written before planshell kept it); ``current`` is None when
    the file cannot be read (``problem`` says why).
    """

    path: Path
    approved: str | None
    current: str | None
    problem: str = ""

    def diff(self, shown: str) -> str:
        """A unified diff from the approved text to the file, at most DIFF_MAX_LINES lines."""
        if self.current is None:
            return f"(the plan file cannot be read: {self.problem})"
        before = (self.approved or "").splitlines(keepends=True)
        after = self.current.splitlines(keepends=True)
        lines = [
            line if line.endswith("\n") else line + "\n"
            for line in difflib.unified_diff(
                before, after, fromfile=f"{shown} (approved)", tofile=f"{shown} (on disk now)"
            )
        ]
        if len(lines) > DIFF_MAX_LINES:
            more = len(lines) - DIFF_MAX_LINES
            lines = [*lines[:DIFF_MAX_LINES], f"… {more} more diff lines (see the review)\n"]
        return "".join(lines).rstrip("\n")

    def headline(self, shown: str) -> str:
        if self.approved is None:
            return (
                f"{shown}: this session recorded no approved text for the plan it was "
                "executing, so execution is paused until you approve the plan again."
            )
        return (
            f"The plan {shown} changed on disk after you approved it; execution is paused "
            "until you approve it again (the executor was not given the changed text)."
        )

    def to_entry(self) -> dict[str, Any]:
        """Only the approved text is kept: the file is read again on resume."""
        return {
            "plan_path": str(self.path),
            "approved": self.approved,
            "sha256": sha256(self.approved) if self.approved is not None else None,
        }

    @classmethod
    def from_entry(cls, entry: object, path: Path) -> PlanChange | None:
        if not isinstance(entry, dict) or entry.get("plan_path") != str(path):
            return None
        approved = entry.get("approved")
        if not isinstance(approved, str) or entry.get("sha256") != sha256(approved):
            approved = None
        return cls(path, approved, None)

    def with_current(self, current: str | None, problem: str = "") -> PlanChange:
        return replace(self, current=current, problem=problem)
