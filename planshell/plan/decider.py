"""How human decisions reach the engine: a small protocol the UI implements."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from planshell.sanitize import plain_line

if TYPE_CHECKING:
    from collections.abc import Callable

    from planshell.plan.blast_radius import BlastRadius
    from planshell.plan.lint import LintFinding
    from planshell.plan.receipt import Receipt
    from planshell.plan.review_comments import ReviewComment
    from planshell.plan.staleness import Staleness


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
    # With APPROVE: the permission mode the plan runs in ("ask", "accept-edits", "auto");
    # None: unchanged.
    permission_mode: str | None = None
    # reviewed_text is the user's own edit of the plan: the engine saves it to the
    # plan file (atomically, through the plan store) before the approval holds.
    edited: bool = False
    # With REFINE: every comment the feedback sends (new ones and open ones carried
    # over); the engine tracks them and shows their status on the next revision.
    comments: tuple[ReviewComment, ...] = ()


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
    approve_mode: str = "ask"  # the approve dialog's focused choice ("ask" or "accept-edits")
    allow_auto: bool = False  # offer "auto": only the user's own config (plan.approve_auto)

    mode: str = "plan"  # the mode the review opened in: the screen words its keys for it
    # A changed plan (approved, then changed on disk): the unified diff from the
    # approved text to ``text``; the front end shows it before the review.
    diff: str = ""
    # The comments of the last round and their status in ``text`` (addressed: the
    # model replied with a ``> [!RESOLVED]`` line; open otherwise): review_comments.track.
    comments: tuple[ReviewComment, ...] = ()
    # Sections that changed although the feedback of the last review named others
    # (planshell/plan/revision_diff.py, ``unrequested_changes``).
    unrequested: tuple[str, ...] = ()
    # Cited files changed since the plan was written (planshell/plan/staleness.py),
    # and their diffs (or a note of what changed) for the review's ``s``.
    staleness: Staleness | None = None
    stale_diff: str = ""
    # Plan lint (planshell/plan/lint.py) of ``text``, and how to lint the person's own edit.
    lint: tuple[LintFinding, ...] = ()
    relint: Callable[[str], tuple[LintFinding, ...]] | None = None
    blast: BlastRadius | None = None  # the approve dialog's card (planshell/plan/blast_radius.py)
    # The optional critic's points about ``text`` (planshell/plan/critic.py): sanitised
    # one-line strings from a second model, never from the plan text. Shown apart from
    # the person's comments; they become comments only when the person says so.
    critic: tuple[str, ...] = ()
    critic_label: str = ""  # who made them: "critic (openai · …)", "demo critic"
    # MCP tools that ran while planning and how often, in the order they first ran
    # (the controller's ``mcp_calls``). Names come from servers: untrusted, see ``mcp_line``.
    mcp_ran: tuple[tuple[str, int], ...] = ()
    # "Runs with MODEL (planned with …)" when planning had a model of its own, else "".
    runner: str = ""

    def mcp_line(self) -> str:
        """The review's line on ``mcp_ran``, sanitised for display; "" when none ran."""
        return mcp_ran_line(self.mcp_ran)


def mcp_ran_line(ran: tuple[tuple[str, int], ...]) -> str:
    """ "MCP tools ran while planning: mcp__jira__get_issue (2×) — …", or "" when none ran.

    The receipt sees only the project's files; what a server changed elsewhere is
    not in it, so the review says which tools could have changed something.
    Names are server-supplied: each is made one printable line and capped.
    """
    if not ran:
        return ""
    shown = [plain_line(name, 80) + (f" ({count}×)" if count > 1 else "") for name, count in ran]
    return (
        f"MCP tools ran while planning: {', '.join(shown)} — their effects outside the "
        "project are not in the receipt"
    )


class ApprovalChoice(StrEnum):
    ONCE = "once"  # y
    SESSION = "session"  # s: this tool (bash: this command prefix) for the session
    ALWAYS = "always"  # a: written to the project's permissions.allow
    DENY = "deny"  # n, Esc, and every dismissal
    # p: allow once AND add the path to the executing plan's scope (an amendment);
    # offered only for an unplanned file (ApprovalRequest.add_to_plan).
    ADD_TO_PLAN = "add_to_plan"


@dataclass(frozen=True)
class ApprovalRequest:
    """A tool call outside plan mode that needs a person's yes (see planshell.permissions).

    Every string may hold model-authored text: front ends sanitise before display.
    """

    tool: str
    headline: str
    kind: str  # "bash", "edit", "write" or "other"
    why: str  # why this asks (the guard's reason, the mode)
    command: str = ""  # bash: the whole command line
    segments: tuple[str, ...] = ()  # bash: the simple commands it runs, as parsed
    path: str = ""  # edit/write: project-relative path
    diff: str = ""  # edit/write: unified diff of exactly what changes (new file: all +)
    new_file: bool = False
    session_rules: tuple[str, ...] = ()  # what "s" allows
    project_rules: tuple[str, ...] = ()  # what "a" writes to project_file
    project_file: str = ""  # the user's own rules file for this project (permissions/local_rules)
    unsandboxed: bool = False  # bash asked to run outside the workspace sandbox
    # What a yes can do beyond the diff (a protected path, a new repository): shown in red.
    warning: str = ""
    # An unplanned file in accept-edits: "add to the plan" (ApprovalChoice.ADD_TO_PLAN) is offered.
    add_to_plan: bool = False


@dataclass(frozen=True)
class ApprovalDecision:
    choice: ApprovalChoice
    reason: str = ""  # with DENY: sent to the model
    by_person: bool = True  # False: nobody was there to ask (headless)


@dataclass(frozen=True)
class AmendmentRequest:
    """The model's ``amend_plan``: one step reworded, for a person to approve or decline.

    ``old_text``, ``new_text`` and ``reason`` are model-authored (already one
    sanitised line each); front ends still sanitise what they show.
    ``added_scope`` are the scope entries the amendment would add (files the
    plan may then edit without asking in accept-edits).
    """

    path: Path
    title: str
    step: int
    old_text: str
    new_text: str
    reason: str
    added_scope: tuple[str, ...] = ()


@dataclass(frozen=True)
class AmendmentAnswer:
    approved: bool
    by_person: bool = True  # False: nobody was there to ask (headless)


@dataclass(frozen=True)
class FetchRequest:
    """A plan-mode fetch to a domain not in ``fetch.allow_domains`` (planshell/plan/fetch_gate.py).

    ``url`` is model-chosen: front ends show all of it, sanitised, since what it
    carries (path, query) is what would leave the machine.
    """

    url: str
    domain: str
    has_query: bool = False  # a query string: asked every time, never remembered
    redirect_from: str = ""  # a redirect hop: the URL that redirected here


HANDOFF_CHOICES = ("keep", "compact", "fresh")


class Decider(Protocol):
    async def confirm_enter_plan(self, reason: str) -> bool: ...

    async def choose_handoff(self, tokens: dict[str, int], default: str) -> str:
        """After approval: "keep" the context, "compact" it (plan pinned) or start "fresh".

        ``tokens`` is the context each choice would leave; ``default`` the
        project's remembered choice. Any other answer means "keep".
        """
        ...

    async def confirm_leave_plan(self, reason: str) -> bool:
        """The model asks to leave PLAN without a review; only a person may say yes."""
        ...

    async def review_plan(self, request: ReviewRequest) -> Review: ...

    async def approve_tool(self, request: ApprovalRequest) -> ApprovalDecision:
        """A tool call that needs a person's approval; only a person may allow it."""
        ...

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        """The model's questions in one dialog: an answer per question, or None (skipped)."""
        ...

    async def review_amendment(self, request: AmendmentRequest) -> AmendmentAnswer:
        """The model proposes a change to the executing plan; only a person may approve it."""
        ...

    async def approve_fetch(self, request: FetchRequest) -> bool:
        """A plan-mode fetch to an unlisted domain; only an explicit yes fetches."""
        ...


class HeadlessDecider:
    """For ``--print``: may enter plan mode, never approves a plan.

    The plan it was asked about is remembered so the CLI can print its path
    and exit with the "awaiting approval" code.
    """

    def __init__(self) -> None:
        self.awaiting: Path | None = None
        self.awaiting_diff = ""  # a changed plan: what changed since its approval
        self.awaiting_critic: tuple[str, ...] = ()  # the critic's points, for the CLI to print

    async def confirm_enter_plan(self, reason: str) -> bool:
        return True

    async def choose_handoff(self, tokens: dict[str, int], default: str) -> str:
        return "keep"  # nobody to ask: the context is never dropped unasked

    async def confirm_leave_plan(self, reason: str) -> bool:
        # Nobody is there to agree: plan mode stays on for the whole run.
        return False

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        return None  # nobody to ask: skipped, the model records its assumptions

    async def review_plan(self, request: ReviewRequest) -> Review:
        self.awaiting = request.path
        self.awaiting_diff = request.diff
        self.awaiting_critic = request.critic
        return Review(
            Decision.KEEP,
            feedback="This is a non-interactive run: the plan awaits the user's approval "
            "in the planshell TUI. Stop now and end your turn.",
        )

    async def review_amendment(self, request: AmendmentRequest) -> AmendmentAnswer:
        # Nobody is there to approve it: the approved plan stands as it is.
        return AmendmentAnswer(False, by_person=False)

    async def approve_fetch(self, request: FetchRequest) -> bool:
        # Nobody is there to ask: plan mode fetches only fetch.allow_domains.
        return False

    async def approve_tool(self, request: ApprovalRequest) -> ApprovalDecision:
        # Nobody is there to ask: a call that would ask is denied (and reported).
        return ApprovalDecision(
            ApprovalChoice.DENY,
            "this non-interactive run has no one to ask (allow it with --allow RULE "
            "or --permission-mode)",
            by_person=False,
        )
