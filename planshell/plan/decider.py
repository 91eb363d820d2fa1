"""How human decisions reach the engine: a small protocol the UI implements."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from planshell.plan.receipt import Receipt


class Decision(StrEnum):
    APPROVE = "approve"
    REFINE = "refine"
    KEEP = "keep"  # keep planning: the safe default for every dismissal
    EXIT = "exit"  # leave plan mode, keep the file
    DISCARD = "discard"  # leave plan mode, delete the file (the UI confirms first)


@dataclass(frozen=True)
class Review:
    decision: Decision
    feedback: str = ""
    reviewed_text: str | None = None  # the exact text the user approved


@dataclass(frozen=True)
class ReviewRequest:
    path: Path
    text: str
    title: str
    changed_sections: frozenset[int] = frozenset()
    previous_text: str | None = None
    notice: str = ""  # e.g. "the plan changed while you were reviewing"
    receipt: Receipt | None = None  # the write-barrier receipt, when available
    hidden: int = 0  # invisible/bidi characters in the text (removed from the display)


class Decider(Protocol):
    async def confirm_enter_plan(self, reason: str) -> bool: ...

    async def confirm_leave_plan(self, reason: str) -> bool:
        """The model asks to leave PLAN without a review; only a person may say yes."""
        ...

    async def review_plan(self, request: ReviewRequest) -> Review: ...

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        """The model's questions in one dialog: an answer per question, or None (skipped)."""
        ...


class HeadlessDecider:
    """For ``--print``: may enter plan mode, never approves a plan.

    The plan it was asked about is remembered so the CLI can print its path
    and exit with the "awaiting approval" code.
    """

    def __init__(self) -> None:
        self.awaiting: Path | None = None

    async def confirm_enter_plan(self, reason: str) -> bool:
        return True

    async def confirm_leave_plan(self, reason: str) -> bool:
        # Nobody is there to agree: plan mode stays on for the whole run.
        return False

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        return None  # nobody to ask: skipped, the model records its assumptions

    async def review_plan(self, request: ReviewRequest) -> Review:
        self.awaiting = request.path
        return Review(
            Decision.KEEP,
            feedback="This is a non-interactive run: the plan awaits the user's approval "
            "in the planshell TUI. Stop now and end your turn.",
        )
