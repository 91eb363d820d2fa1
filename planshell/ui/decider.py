"""The TUI side of the ``Decider`` protocol: human decisions as modal screens.

The engine awaits these from inside a running request; the screens are
pushed on the app and their result comes back through a future, so this
works from any task on the app's loop (no worker context needed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planshell.plan.decider import (
    AmendmentAnswer,
    AmendmentRequest,
    ApprovalChoice,
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    FetchRequest,
    Review,
    ReviewRequest,
)

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from planshell.plan.receipt import Receipt

ENTER_PLAN_QUESTION = "The agent asks to plan first: read-only until you approve a plan"
LEAVE_PLAN_QUESTION = "The agent wants to leave plan mode without a plan review"
MAX_PATHS_SHOWN = 6


def changed_question(receipt: Receipt) -> str:
    """ "Files changed while planning: a, b. Approve anyway?" (long lists shortened)."""
    from planshell.sanitize import strip_terminal_controls

    paths = [strip_terminal_controls(path) for path in receipt.changed]
    if not paths:
        summary = strip_terminal_controls(receipt.summary or "files changed")
        return f"Files changed while planning ({summary}). Approve anyway?"
    shown = ", ".join(paths[:MAX_PATHS_SHOWN])
    if len(paths) > MAX_PATHS_SHOWN:
        shown += f" and {len(paths) - MAX_PATHS_SHOWN} more"
    return f"Files changed while planning: {shown}. Approve anyway?"


def _reason(reason: str) -> str:
    """The model's stated reason, as one sanitised line (it is untrusted text)."""
    from planshell.sanitize import strip_terminal_controls

    text = " ".join(strip_terminal_controls(reason).split())
    return f"Reason: {text[:300]}" if text else ""


class TuiDecider:
    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def confirm_enter_plan(self, reason: str) -> bool:
        from planshell.ui.screens.confirm import ConfirmScreen

        screen = ConfirmScreen(
            ENTER_PLAN_QUESTION,
            detail=_reason(reason),
            yes="Plan first",
            no="Not now",
            default=True,
        )
        return bool(await self.ask(screen))

    async def confirm_leave_plan(self, reason: str) -> bool:
        """Only an explicit *yes* leaves; Enter, Esc and dismissal keep planning."""
        from planshell.ui.screens.confirm import ConfirmScreen

        detail = _reason(reason)
        screen = ConfirmScreen(
            LEAVE_PLAN_QUESTION,
            detail=(detail + "\n" if detail else "")
            + "Leaving gives the agent every tool back without a reviewed plan.",
            yes="Allow",
            no="Keep planning",
            default=False,
        )
        return await self.ask(screen) is True

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        """One dialog for all questions; Esc, *Skip* or dismissal answer None (skipped)."""
        from planshell.ui.screens.questions import QuestionsScreen

        answers = await self.ask(QuestionsScreen(questions))
        return answers if isinstance(answers, list) else None

    async def review_plan(self, request: ReviewRequest) -> Review:
        return await self.show_review(request)

    async def choose_handoff(self, tokens: dict[str, int], default: str) -> str:
        """Keep / compact / fresh after approval; dismissal keeps the context."""
        from planshell.ui.screens.handoff import HandoffScreen

        answer = await self.ask(HandoffScreen(tokens, default))
        return answer if isinstance(answer, str) else "keep"

    async def approve_tool(self, request: ApprovalRequest) -> ApprovalDecision:
        """The approval prompt; anything but an explicit yes denies."""
        from planshell.ui.screens.approval import ApprovalScreen

        answer = await self.ask(ApprovalScreen(request))
        if isinstance(answer, ApprovalDecision):
            return answer
        return ApprovalDecision(ApprovalChoice.DENY)

    async def approve_fetch(self, request: FetchRequest) -> bool:
        """Plan mode's fetch question; only an explicit ``y`` fetches."""
        from planshell.ui.screens.fetch import FetchScreen

        return await self.ask(FetchScreen(request)) is True

    async def review_amendment(self, request: AmendmentRequest) -> AmendmentAnswer:
        """The amendment review; only an explicit ``a`` approves, every dismissal declines."""
        from planshell.ui.screens.amendment import AmendmentScreen

        return AmendmentAnswer(await self.ask(AmendmentScreen(request)) is True)

    async def show_review(self, request: ReviewRequest) -> Review:
        """The review screen; its decision, after a second question when files changed.

        Approving while the write-barrier receipt is not clean asks "Files changed
        while planning: a, b. Approve anyway?". *Yes* approves; *no* (or Esc) shows
        the review again, where the user can refine (e.g. ask the model to explain
        or revert the change), keep planning, exit or discard. Dismissal never
        approves: the review screen answers KEEP when it goes away unanswered.
        A changed plan (``request.diff``) shows the diff from the approved text
        first; Esc there keeps execution paused.
        """
        from planshell.ui.screens.confirm import ConfirmScreen
        from planshell.ui.screens.review import ReviewScreen

        if request.diff:
            # A changed plan: what changed since the approval first, then its review.
            from planshell.ui.screens.plan_diff import PlanDiffScreen

            if await self.ask(PlanDiffScreen(request)) is not True:
                return Review(Decision.KEEP)
        while True:
            review = await self.ask(ReviewScreen(request))
            if not isinstance(review, Review):
                return Review(Decision.KEEP)
            receipt = request.receipt
            # No receipt (outside PLAN, or none computed) counts as clean.
            if review.decision is not Decision.APPROVE or receipt is None or receipt.clean:
                return review
            question = ConfirmScreen(
                changed_question(receipt),
                detail="Planning should not change files. Approving runs the plan on top of "
                "these changes; No goes back to the review.",
                yes="Approve anyway",
                no="Back to the review",
            )
            if await self.ask(question) is True:
                return review

    async def ask(self, screen: Screen[Any]) -> Any:
        """Push ``screen`` and wait for its result (None when it goes away unanswered)."""
        from planshell.ui.screens.results import wait_for_answer

        return await wait_for_answer(self.app, screen)
