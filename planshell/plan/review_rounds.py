"""The review rounds: show a plan to a person until a decision about *that text* holds.

Both ways into a review (the model's ``exit_plan_mode``, a person's ``/plan
review``, and the review of a plan changed while executing) share this loop,
so an approval means the same everywhere: the file still holds the text shown,
no new change appeared in the work tree meanwhile, and a person's own edit is
on disk before it counts. What a decision *does* is the controller's job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from planshell.agent import events as ev
from planshell.agent.events import Mode
from planshell.llm.types import Usage
from planshell.plan.decider import Decider, Decision, Review, ReviewRequest
from planshell.plan.document import changed_sections, parse_plan, validate_plan
from planshell.plan.store import PlanStore, PlanStoreError
from planshell.sanitize import count_hidden
from planshell.shell.guard import BashGuard
from planshell.tools.base import ToolError

if TYPE_CHECKING:
    from planshell.agent.loop import Agent, PriceFn
    from planshell.config import PlanSettings
    from planshell.plan.blast_radius import BlastRadius, CommandCheck
    from planshell.plan.critic import Critic, CriticReport
    from planshell.plan.receipt import Receipt
    from planshell.plan.review_comments import ReviewComment
    from planshell.plan.staleness import Staleness

# What a plan's cited files did since it was written: (staleness, diffs), or None.
CitedCheck = Callable[[Path], "tuple[Staleness, str] | None"]

MAX_REVIEW_ROUNDS = 5
KEPT_CHANGING = "The plan or the project kept changing during review."


class ReviewRounds:
    """Runs review rounds and remembers what each plan looked like when last reviewed.

    ``questions_open`` counts review questions on screen: while it is above
    zero the controller refuses mode changes. ``reviewed`` is the text last
    shown per plan, so the next review marks the sections changed since.
    ``receipt_provider`` is called at review and approval time; its result
    rides in ``ReviewRequest.receipt``. ``comments`` holds, per plan, the
    comments the last refinement sent: the next review shows each as addressed
    or open in the revision (:func:`planshell.plan.review_comments.track`).
    ``feedback`` is the refine feedback
    given at the last review of each plan (for "changed without request");
    ``cited_check`` compares the plan's cited files with when it was written.
    """

    def __init__(
        self,
        agent: Agent,
        store: PlanStore,
        settings: PlanSettings,
        decider: Decider,
        *,
        mode: Callable[[], Mode],
        receipt_provider: Callable[[], Receipt | None] | None,
        on_saved: Callable[[Path, str], None],
        cited_check: CitedCheck | None = None,
        guard: BashGuard | None = None,
    ) -> None:
        self.agent = agent
        self.store = store
        self.settings = settings
        self.decider = decider
        self.receipt_provider = receipt_provider
        self.reviewed: dict[Path, str] = {}
        self.comments: dict[Path, tuple[ReviewComment, ...]] = {}
        self.feedback: dict[Path, str] = {}
        # The last cited-files check per plan: the approval's notice reuses it (no second hashing).
        self.cited: dict[Path, tuple[Staleness, str] | None] = {}
        self.cited_check = cited_check
        self.questions_open = 0
        # The optional critic (planshell/plan/critic.py), asked at review time so a
        # /provider switch is seen; the runtime sets it. One answer per plan text.
        self.critic: Callable[[], Critic | None] = lambda: None
        self._critiqued: tuple[Path, str, CriticReport] | None = None
        self._mode = mode
        self._on_saved = on_saved
        self.guard = guard or BashGuard(
            settings.bash.safe_patterns, settings.bash.destructive_patterns
        )
        # Set by the runtime: what the permission engine would do with a bash command in a mode.
        self.command_check: CommandCheck | None = None
        # Set by the runtime: the price of the model that executes (with a planning model
        # of its own, not the one answering now); unset, the agent's current price.
        self.execution_price: Callable[[], PriceFn | None] | None = None
        # Set by the controller: the MCP tools that ran while planning, with counts
        # (the receipt cannot see what a server changed outside the project).
        self.mcp_ran: Callable[[], tuple[tuple[str, int], ...]] = lambda: ()
        # Set by the runtime: which model will run the plan, for the approve dialog ("").
        self.runner: Callable[[], str] = lambda: ""

    async def run(
        self, path: Path, *, diff: str = "", notice: str = ""
    ) -> tuple[Review, str] | None:
        """Show ``path`` until a decision holds: (decision, reviewed text), or None.

        An approval counts only if the file still holds the text shown and no new
        change appeared in the work tree meanwhile; otherwise the review opens
        again with a notice, at most ``MAX_REVIEW_ROUNDS`` times. While the
        question is open the mode is frozen (``questions_open``). ``diff`` and
        ``notice`` describe a changed plan (approved, then changed on disk).
        """
        for _ in range(MAX_REVIEW_ROUNDS):
            text = self.read(path)
            shown = await self._current_receipt()
            cited = await self._cited(path)
            self.cited[path] = cited
            # Off the event loop: lint and the blast radius lstat the files the plan names.
            request = await asyncio.to_thread(self._request, path, text, notice, shown, diff, cited)
            request = await self._with_critic(request)
            self.questions_open += 1
            try:
                review = await self.decider.review_plan(request)
            finally:
                self.questions_open -= 1
            if review.decision is Decision.APPROVE:
                if review.edited and review.reviewed_text is not None:
                    notice = self._save_user_edit(path, text, review.reviewed_text)
                    if notice:
                        self.agent.emit(ev.Notice(notice, "warning"))
                        continue
                    text = review.reviewed_text
                current = self.read(path)
                if current != (review.reviewed_text or text):
                    notice = "The plan file changed while you were reviewing it; review it again."
                    self.agent.emit(ev.Notice(notice, "warning"))
                    continue
                # What is approved is what the person last saw, e.g. after their own
                # comments were written into the file from the review.
                text = current
                final = await self._current_receipt()
                if _new_changes(shown, final):
                    summary = final.summary if final is not None else ""
                    notice = f"Files changed while you were reviewing ({summary}); review again."
                    self.agent.emit(ev.Notice(notice, "warning"))
                    continue
                self._record_receipt(final, path)
                # The text approved is the text checked on disk: the one the screen
                # showed, with the person's own comments when they wrote some.
                text = current
                self.comments.pop(path, None)  # approved: the comments are settled
            elif review.decision is Decision.REFINE:
                # What this refinement asked for; a refinement without comments (an
                # edit sent as feedback, the browser's) keeps the open ones going.
                self.comments[path] = review.comments or tuple(
                    c for c in request.comments if c.open
                )
            self.reviewed[path] = text
            if review.decision is Decision.REFINE:
                self.feedback[path] = review.feedback
            else:
                self.feedback.pop(path, None)
            return review, text
        return None

    def read(self, path: Path) -> str:
        """The plan at ``path`` as a review shows it; ToolError if unreadable or not a plan."""
        try:
            text = self.store.read(path)
        except PlanStoreError as exc:
            raise ToolError(str(exc)) from None
        problem = validate_plan(text)
        if problem:
            raise ToolError(problem)
        return text

    def _save_user_edit(self, path: Path, shown: str, edited: str) -> str:
        """Write the person's edited plan over the file they reviewed; "" or why not.

        Only when the file still holds the text they started editing from, and
        the edit is a valid plan: what is approved is then what is on disk.
        """
        if self.read(path) != shown:
            return "The plan file changed while you were editing it; review it again."
        problem = "it is empty." if not edited.strip() else validate_plan(edited)
        if problem:
            return f"Your edited plan was not saved: {problem}"
        try:
            self.store.write(path, edited)
        except PlanStoreError as exc:
            return f"Your edited plan was not saved: {exc}"
        self._on_saved(path, edited)
        return ""

    def _request(
        self,
        path: Path,
        text: str,
        notice: str,
        receipt: Receipt | None = None,
        diff: str = "",
        cited: tuple[Staleness, str] | None = None,
    ) -> ReviewRequest:
        # Imported at the first review, not at start-up (issue 28: ~20 ms of every launch).
        from planshell.plan.lint import lint_plan
        from planshell.plan.review_comments import track
        from planshell.plan.revision_diff import unrequested_changes

        doc = parse_plan(text)
        previous = self.reviewed.get(path)
        changed = (
            frozenset(changed_sections(parse_plan(previous), doc)) if previous else frozenset()
        )
        unrequested = unrequested_changes(previous, text, self.feedback.get(path, ""))
        staleness, stale_diff = cited if cited is not None else (None, "")
        root = self.store.root
        return ReviewRequest(
            path,
            text,
            doc.title,
            changed,
            previous,
            notice,
            receipt,
            count_hidden(text),
            approve_mode=self.settings.approve_mode,
            allow_auto=self.settings.approve_auto,
            mode=self._mode().value,
            diff=diff,
            comments=tuple(track(self.comments.get(path, ()), text)),
            unrequested=unrequested,
            staleness=staleness,
            stale_diff=stale_diff,
            lint=lint_plan(text, root),
            relint=lambda edited: lint_plan(edited, root),
            blast=self._blast(path, text),
            mcp_ran=self.mcp_ran(),
            runner=self.runner(),
        )

    async def _cited(self, path: Path) -> tuple[Staleness, str] | None:
        """The cited-files check, off the event loop (it hashes files and runs git)."""
        if self.cited_check is None:
            return None
        return await asyncio.to_thread(self.cited_check, path)

    def _blast(self, path: Path, text: str) -> BlastRadius:
        """The approve dialog's card: scope sizes, commands per mode, an estimate."""
        from planshell.plan.blast_radius import blast_radius, past_run

        check = self.command_check or self._guard_check
        price = self.execution_price() if self.execution_price is not None else self.agent.price
        return blast_radius(
            text,
            self.store.root,
            check=check,
            context_tokens=self.agent.context_tokens,
            price=(lambda i, o: price(Usage(i, o))) if price is not None else None,
            history=past_run(self.store, path),
        )

    def _guard_check(self, command: str, mode: str) -> tuple[str, str]:
        """Without a permission engine (tests, headless): the plan guard's read-only verdict."""
        verdict = self.guard.check(command)
        if verdict.allowed:
            return "allow", "read-only command"
        return ("allow", "auto mode") if mode == "auto" else ("ask", verdict.reason)

    async def _with_critic(self, request: ReviewRequest) -> ReviewRequest:
        """``request`` with the critic's points (asked once per plan text); a failure is a notice.

        The critic reads before the person does; it never decides, and what it
        says goes nowhere but the request.
        """
        critic = self.critic()
        if critic is None:
            return request
        cached = self._critiqued
        if cached is not None and cached[:2] == (request.path, request.text):
            report = cached[2]
        else:
            report = await critic.review(request.path, request.text)
            self._critiqued = (request.path, request.text, report)
            if report.notice:
                self.agent.emit(ev.Notice(report.notice, "warning"))
        notice = request.notice
        if report.notice:
            notice = f"{notice} · {report.notice}" if notice else report.notice
        return replace(request, critic=report.points, critic_label=report.label, notice=notice)

    async def _current_receipt(self) -> Receipt | None:
        """The receipt provider's answer, computed off the event loop (it hashes files)."""
        if not callable(self.receipt_provider):
            return None
        return await asyncio.to_thread(self.receipt_provider)

    def _record_receipt(self, receipt: Receipt | None, path: Path) -> None:
        if self.agent.session is None or receipt is None:
            return
        self.agent.session.append(
            {"type": "receipt", "decision": "approve", "plan_path": str(path), **receipt.to_entry()}
        )


def _new_changes(shown: Receipt | None, now: Receipt | None) -> bool:
    """Whether the approval-time receipt shows changes the user has not seen."""
    if now is None or now.clean:
        return False
    return (shown.digest if shown is not None else None) != now.digest
