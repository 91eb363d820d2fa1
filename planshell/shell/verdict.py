"""The guard's answer and its messages: a verdict, and the refusal that carries one.

Every module of the guard words its refusals here, so a block always names the segment,
says why, and suggests a fix in the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from planshell.shell.words import FIX_PLAN

FIX_PARSE = "use a simpler command, or the read/grep/find tools instead."
FIX_UNCHECKED = "Use a simpler command, or the read/grep/find tools instead."
CD_HINT = (
    "the working directory is already the project root; use the read/grep/find tools for files."
)
FIX_STRUCTURE = "Run the simple commands one at a time."


@dataclass(frozen=True)
class Verdict:
    """The guard's answer for one command."""

    allowed: bool
    reason: str  # one sentence; for a block: names the offending segment and why, suggests a fix
    segment: str | None = None  # the source text of the offending segment, when known


class Refusal(Exception):
    """Carries a finished block verdict out of the tree walk."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


def quote(segment: str, limit: int = 120) -> str:
    """``segment`` on one line, cut at ``limit`` characters, for a message."""
    flat = " ".join(segment.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def refuse(segment: str, why: str, fix: str = FIX_PLAN) -> Refusal:
    """Build the refusal: name the segment, say why, and suggest the fix."""
    reason = f'blocked: "{quote(segment)}" — {why}; plan mode may only read. {fix}'
    return Refusal(Verdict(False, reason, segment))


def unparseable(detail: str, command: str) -> Verdict:
    """The block for a command the guard cannot read (a ``cd`` also gets the cd hint)."""
    reason = f"blocked: bash could not parse this command safely ({detail}); {FIX_PARSE}"
    if command.lstrip().startswith("cd "):
        reason += f" Note: {CD_HINT}"
    return Verdict(False, reason, None)
