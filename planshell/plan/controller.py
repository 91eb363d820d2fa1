"""The plan-mode state machine: OFF -> PLAN -> EXECUTE -> OFF.

It owns the mode, the current plan path and the saved tool set, and plugs
into the agent through its hooks: a gate (checked on every tool call), a
prompt part (planning guidance, or the approved plan, every turn) and a call
check (a plan changed on disk pauses execution). The transitions live here;
the pieces they use each have their own module: review_rounds.py (the review
loop), steps.py (the execute checklist), authoring.py (where write_plan
writes), mode_log.py (the session's mode entry), mode_tools.py (plan tools
per mode) and capabilities.py (``/plan why``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planshell.agent import events as ev
from planshell.agent.events import Mode
from planshell.mcp.tools import McpSearchTool
from planshell.plan import prompts
from planshell.plan.approval_record import ApprovalRecord, PlanChange, less_permissive
from planshell.plan.authoring import keep_title, plan_target, title_line, with_title
from planshell.plan.decider import AmendmentRequest, Decider, Decision, Review, mcp_ran_line
from planshell.plan.document import parse_plan, validate_plan
from planshell.plan.fetch_gate import FetchPlanGate
from planshell.plan.mode_log import RecordedMode, mode_entry
from planshell.plan.mode_tools import mode_tool_names
from planshell.plan.policy import PlanPolicy
from planshell.plan.receipt import PendingSnapshot, Receipt, compare, take_snapshot
from planshell.plan.review_rounds import KEPT_CHANGING, ReviewRounds
from planshell.plan.run_log import RunLog
from planshell.plan.scope import plan_scope
from planshell.plan.steps import StepUpdate, checklist, tick_steps, tick_todos
from planshell.plan.store import PlanStore, PlanStoreError
from planshell.plan.undo_keeper import (
    EXECUTE_REFUSED,
    PLAN_REFUSED,
    CheckpointKeeper,
    UndoRefused,
)
from planshell.sanitize import plain_line
from planshell.shell.guard import BashGuard
from planshell.text import plural
from planshell.tools.base import ExecPolicy, Tool, ToolArgs, ToolError, ToolResult
from planshell.tools.registry import ToolRegistry
from planshell.tools.todo import TodoList

# The report, staleness, amendment, undo and verification modules are imported in the
# methods that use them: a session that never reviews or executes a plan does not pay for
# them at start-up (issue 28).
if TYPE_CHECKING:
    from planshell.agent.loop import Agent
    from planshell.config import PlanSettings
    from planshell.plan.amend import AmendedPlan
    from planshell.plan.evidence import RunRecord
    from planshell.plan.staleness import Staleness
    from planshell.plan.undo import UndoPlan


# What the person sees on the exit_plan_mode row for each outcome (the tool result itself
# is written for the model).
SHOWN_DECISION: dict[Decision, str] = {
    Decision.APPROVE: "approved: executing the plan",
    Decision.REFINE: "changes requested",
    Decision.EXIT: "left plan mode; the plan file is kept",
    Decision.DISCARD: "plan discarded",
    Decision.KEEP: "kept planning",
}
SHOWN_KEEP = SHOWN_DECISION[Decision.KEEP]
SHOWN_KEEP_CHANGING = "kept planning: the plan or the project kept changing during the review"
SHOWN_LEFT = "kept planning: plan mode was left during the review"


class ModeChangeRefused(Exception):
    """A mode change asked for while the engine cannot take it (a review is open)."""


class PlanChanged(Exception):
    """The plan file no longer holds the text the person approved."""


@dataclass(frozen=True)
class ReviewOutcome:
    """What a person decided in a review opened by ``review_existing``.

    ``message`` is the request the front end sends next (execute or refine), or None.
    """

    decision: Decision
    path: Path
    message: str | None = None
    notice: str = ""


@dataclass(frozen=True)
class ModeState:
    mode: Mode
    plan_path: Path | None
    saved_tools: tuple[str, ...] | None


class PlanController:
    def __init__(
        self,
        agent: Agent,
        store: PlanStore,
        settings: PlanSettings,
        todos: TodoList,
        decider: Decider,
        *,
        plan_exec_policy: ExecPolicy | Callable[[], ExecPolicy] | None = None,
    ) -> None:
        self.agent = agent
        self.store = store
        self.settings = settings
        self.todos = todos
        self.decider = decider
        self.guard = BashGuard(settings.bash.safe_patterns, settings.bash.destructive_patterns)
        self.policy = PlanPolicy(self.guard, settings.allowed_tools)
        # fetch.allow_domains (the user's own config only); the runtime sets it from settings.
        self.fetch_gate = FetchPlanGate((), decider)
        # A factory is called on first entering PLAN (the sandbox probe must not slow start-up).
        self._plan_exec_source = plan_exec_policy
        self._plan_exec = plan_exec_policy if isinstance(plan_exec_policy, ExecPolicy) else None
        self.mode = Mode.OFF
        self.plan_path: Path | None = None
        self.pending_name: str | None = None
        self.saved_tools: tuple[str, ...] | None = None
        self._normal_exec = agent.ctx.exec_policy
        # The receipt's snapshot, taken in a thread on entering PLAN; every tool call
        # waits for it first (``barrier``), so the receipt sees all the agent changes.
        self._pending: PendingSnapshot | None = None
        self.sandbox_warning: str | None = None  # the guard-only notice, once it was emitted
        # An open review question freezes the mode (``review_pending``).
        self.reviews = ReviewRounds(
            agent,
            store,
            settings,
            decider,
            mode=lambda: self.mode,
            receipt_provider=self.receipt,
            on_saved=self._plan_updated,
            cited_check=self.cited_check,
            guard=self.guard,
        )
        # Set by the runtime: an approval's permission mode ("accept-edits", "ask"),
        # and the mode in force now (recorded with an approval, back when the plan ends).
        self.on_approve_mode: Callable[[str], object] | None = None
        self.permission_mode_now: Callable[[], str] | None = None
        # The text the person approved (EXECUTE), and a plan whose file no longer
        # holds it (PLAN, waiting for a person): see planshell/plan/approval_record.py.
        self.approval: ApprovalRecord | None = None
        self.changed_plan: PlanChange | None = None
        # The project as EXECUTE found it, for /undo (planshell/plan/undo_keeper.py).
        self.undo_keeper = CheckpointKeeper(agent.ctx.root, agent.emit, self._record_mode)
        # A file the checkpoint skipped (over its size cap) is copied before a file tool
        # first replaces it during the plan: the tools call this, knowing nothing of plans.
        agent.ctx.before_write = self._before_write
        agent.gates.insert(0, self.barrier)  # before every other gate: nothing runs first
        agent.gates.append(self.gate)
        agent.prompt_parts.append(self.prompt_part)
        agent.call_checks.append(self.check_before_call)
        # What each approved step's work was (planshell/plan/run_log.py): EXECUTE only.
        self.run_log = RunLog(store, lambda text: agent.emit(ev.Notice(text, "warning")))
        agent.result_hooks.append(self.record_result)
        # clock, agent.cost, agent.tokens_used when EXECUTE started: the report's run line
        self._exec_started: tuple[float, float | None, int] | None = None
        # The time an amendment is stamped with (tests inject a fixed one).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        # MCP (issue 27): the MCP tools plan mode offered when it was entered (a tool
        # that appears later waits for the next entry), and the ones that ran while
        # planning (the receipt cannot see what a server changed; the review says it).
        self.plan_mcp: frozenset[str] = frozenset()
        self.mcp_ran: list[str] = []
        self.reviews.mcp_ran = self.mcp_calls
        # Set by the runtime (McpManager.plan_offer): which of plan mode's MCP tools are
        # offered up front, within the schema budget; None without MCP servers.
        self.mcp_offer: Callable[[list[str]], list[str]] | None = None

    # --- hooks ----------------------------------------------------------------

    @property
    def registry(self) -> ToolRegistry:
        return self.agent.registry

    @property
    def plan_exec_policy(self) -> ExecPolicy:
        """How plan-mode bash runs (sandboxed or guarded), resolved once, lazily."""
        if self._plan_exec is None:
            source = self._plan_exec_source
            self._plan_exec = source() if callable(source) else ExecPolicy()
        return self._plan_exec

    async def barrier(self, tool: Tool, args: ToolArgs) -> str | None:
        """No tool call runs before the snapshot is complete (awaited: the UI keeps painting).

        A call that waited while the mode changed (PLAN left, or left and entered
        again) is refused: it was judged for a mode that is over.
        """
        pending, mode, waited = self._pending, self.mode, False
        while pending is not None and not pending.done:
            waited = True
            await pending.wait()
            if self._pending is pending:
                break
            pending = self._pending  # left and entered again meanwhile: the new snapshot
        if waited and (self.mode is not mode or self._pending is not pending):
            return prompts.BARRIER_MODE_CHANGED
        return None

    async def wait_for_snapshot(self) -> None:
        """The barrier for callers outside the agent's tool calls (``planshell doctor``)."""
        if self._pending is not None:
            await self._pending.wait()

    async def gate(self, tool: Tool, args: ToolArgs) -> str | None:
        if self.mode is Mode.EXECUTE:
            # No change of the plan before the checkpoint (awaited: the UI keeps painting).
            await self.undo_keeper.settle_async()
        if self.mode is Mode.EXECUTE and self.approval is not None and self._plan_change():
            # A later call of a reply that changed the plan: nothing more runs until
            # a person approves (the check before the next model call pauses).
            return prompts.EXECUTE_PAUSED_RESULT
        if self.mode is not Mode.PLAN:
            return None
        if getattr(tool, "is_mcp", False) and tool.name not in self.plan_mcp:
            return (
                f"Plan mode is read-only: {tool.name} is an MCP tool that is not available "
                "while planning (only read-only tools of servers the user trusts for planning "
                "that were there when plan mode began). Describe the change in the plan instead."
            )
        refusal = self.policy.check(self.registry, tool, args)
        if refusal is None and tool.name == "fetch":
            # A URL can carry secrets out: unlisted domains need a person's yes (fetch_gate.py).
            return await self.fetch_gate.check(str(getattr(args, "url", "")))
        return refusal

    def prompt_part(self) -> str | None:
        """Planning guidance in PLAN; in EXECUTE the approved text, never the file's.

        The file is compared with the approval on every call: a changed plan
        pauses here too (the call check before it normally caught it already).
        """
        if self.mode is Mode.EXECUTE and self.plan_path is not None:
            change = self._plan_change()
            if change is None and self.approval is not None:
                return prompts.execute_guidance(self._display(self.plan_path), self.approval.text)
            if change is not None and not self.reviews.questions_open:
                self._pause(change)
            else:  # a review is open: the mode is frozen, but the text is still withheld
                return prompts.EXECUTE_PAUSED
        if self.mode is Mode.PLAN:
            return prompts.plan_guidance(self._display(self.plan_path) if self.plan_path else None)
        return None

    async def check_before_call(self) -> str | None:
        """Before every model call: a changed plan pauses execution and opens the review.

        Returns why the turn stops, or None to go on (nothing changed, or the
        person approved the changed plan, or asked for a refinement).
        """
        if self.mode is Mode.EXECUTE:
            await self.undo_keeper.settle_async()
        if self.mode is Mode.EXECUTE and not self.reviews.questions_open:
            change = self._plan_change()
            if change is not None:
                self._pause(change)
        if self.changed_plan is None or self.reviews.questions_open or self.mode is not Mode.PLAN:
            return None
        return await self._review_change(self.changed_plan)

    # --- transitions ----------------------------------------------------------

    @property
    def review_pending(self) -> bool:
        """A plan review is waiting for a person: no mode change until it is decided."""
        return self.reviews.questions_open > 0

    def _check_free(self) -> None:
        if self.reviews.questions_open:
            raise ModeChangeRefused(
                "A plan review is open: decide there first (Esc keeps planning)."
            )

    def enter_plan(self, *, name: str | None = None, plan_path: Path | None = None) -> None:
        """OFF/EXECUTE -> PLAN. Takes effect before the next tool call."""
        self._check_free()
        if self.mode is Mode.PLAN:
            if plan_path is not None:
                self.plan_path = plan_path
            return
        previous = self.mode
        if self.mode is Mode.EXECUTE:
            self._restore_tools()
            self._end_plan_permissions("Plan mode on")
        offered = self.policy.offered(self.registry)
        mcp = [n for n in offered if getattr(self.registry.get(n), "is_mcp", False)]
        if self.mcp_offer is not None:
            # The schema budget holds in plan mode too: the MCP tools that fit, or
            # mcp_search, which finds only these (fixed now) for a turn.
            kept = [n for n in offered if n not in mcp and n != McpSearchTool.name]
            offered = [*kept, *self.mcp_offer(mcp)]
        self.saved_tools = self.registry.set_active(offered)
        self.plan_mcp = frozenset(mcp)
        self.mcp_ran = []
        self.plan_path = plan_path
        self.pending_name = name
        self.agent.ctx.exec_policy = self.plan_exec_policy
        self._warn_unsandboxed()
        self._start_snapshot()
        self.mode = Mode.PLAN
        self._changed(previous)

    def leave(self, *, discard: bool = False, why: str = "Plan mode off") -> None:
        """PLAN/EXECUTE -> OFF, restoring exactly the tools saved on entry.

        A plan that ends (``why`` names how) takes its permission mode with it.
        """
        if self.mode is Mode.OFF:
            return
        self._check_free()
        previous = self.mode
        self._restore_tools()
        self._end_plan_permissions("Plan discarded" if discard else why)
        self.changed_plan = None
        if discard and self.plan_path is not None:
            try:
                self.store.delete(self.plan_path)
            except PlanStoreError as exc:
                self.agent.emit(ev.Notice(str(exc), "error"))
        if previous is Mode.EXECUTE:
            self.todos.replace([])
            self.undo_keeper.end()
        self._drop_snapshot()
        self.mode = Mode.OFF
        self.plan_path = None
        self.pending_name = None
        self._changed(previous)

    async def request_leave(self, reason: str) -> str:
        """The model's ``cancel_plan_mode``: PLAN -> OFF only if a person agrees.

        Every other way out of PLAN is a person's action (``/plan off``, the toggle
        key, the picker, a review decision); this is the one door the model can
        knock on, and the decider (a dialog in the TUI, always "no" headless) answers.
        """
        if self.mode is not Mode.PLAN:
            raise ToolError("Plan mode is not active.")
        allowed = await self.decider.confirm_leave_plan(reason)
        # The mode may have changed while the question was open (the person acted).
        if self.mode is not Mode.PLAN:
            return f"Plan mode was already left by the user (now {self.mode.value})."
        if not allowed:
            self.agent.emit(
                ev.Notice("The agent asked to leave plan mode; plan mode stays on.", "warning")
            )
            return prompts.LEAVE_REFUSED_RESULT
        self.leave()
        return prompts.LEAVE_ALLOWED_RESULT

    def start_plan(self, *, name: str | None = None, plan_path: Path | None = None) -> None:
        """A person's "plan this": PLAN for ``name``/``plan_path``, switching plans if needed.

        Asking for a new named plan while another is being planned starts over
        (a fresh snapshot and plan); otherwise it is ``enter_plan``.
        """
        self._check_free()
        if (
            self.mode is Mode.PLAN
            and name is not None
            and (self.plan_path is not None or self.pending_name != name)
        ):
            self.leave()
        self.enter_plan(name=name, plan_path=plan_path)

    def toggle(self) -> Mode:
        """The toggle key: OFF -> PLAN, PLAN/EXECUTE -> OFF. Returns the new mode."""
        if self.mode is Mode.OFF:
            self.enter_plan()
        else:
            self.leave()
        return self.mode

    def is_active(self, path: Path | None) -> bool:
        """Whether ``path`` is the plan being planned or executed (None: any plan in PLAN)."""
        if self.mode is Mode.OFF:
            return False
        if self.plan_path is None:
            return self.mode is Mode.PLAN
        return path is None or _same_file(self.plan_path, path)

    def discard(self, path: Path) -> None:
        """Delete a plan file; leaving plan mode first when it is the active plan."""
        self._check_free()
        if self.is_active(path):
            self.leave(why="Plan discarded")
        self.store.delete(path)

    def approve(
        self,
        path: Path,
        text: str,
        permission_mode: str | None = None,
        *,
        record: ApprovalRecord | None = None,
    ) -> None:
        """PLAN -> EXECUTE: tools restored, steps seeded, ``text`` recorded as approved.

        ``permission_mode`` is the one the person chose with the approval; the
        mode in force before it comes back when the plan ends. ``record`` is a
        resumed approval (its text is ``text``).
        """
        previous = self.mode
        self._restore_tools()
        self._drop_snapshot()
        self.plan_path = path
        self.changed_plan = None
        if record is None:  # a new approval, not a resumed one: record the project first
            self._warn_stale(path)
            self.undo_keeper.start()
            before = self.permission_mode_now() if self.permission_mode_now is not None else None
            if self.approval is not None:  # approved again while executing: same "before"
                before = self.approval.permission_before
            record = ApprovalRecord(path, text, before, permission_mode)
        self.approval = record
        if permission_mode and self.on_approve_mode is not None:
            self.on_approve_mode(permission_mode)
        if previous is not Mode.EXECUTE:
            self._exec_started = (time.monotonic(), self.agent.cost, self.agent.tokens_used)
        self.mode = Mode.EXECUTE
        self.run_log.start(path, text)
        self.todos.replace(self.run_log.flagged(checklist(text)))
        self._changed(previous)

    def execute_existing(
        self, path: Path, reviewed: str | None = None, permission_mode: str | None = None
    ) -> str:
        """Start executing a saved plan a person picked (from the picker or a review).

        With ``reviewed``, the file must still hold exactly the text the person
        read, or :class:`PlanChanged` is raised and nothing changes.
        """
        self._check_free()
        text = self.store.read(path)
        problem = validate_plan(text)
        if problem:
            raise PlanStoreError(problem)
        if reviewed is not None and text != reviewed:
            raise PlanChanged(f"{path.name} changed since you read it; nothing was executed.")
        if self.mode is Mode.OFF:
            self.saved_tools = self.registry.active
        self.approve(path, text, permission_mode)
        return text

    def execute_request(self, path: Path) -> str:
        """The message that starts executing ``path`` (sent by the front end)."""
        return prompts.EXECUTE_REQUEST.format(path=self._display(path))

    async def complete(self) -> str:
        """The ``plan_complete`` tool: end the plan, then report it.

        The end state and the report are worked out in threads (a big tree takes
        seconds to walk and hash): the event loop keeps going meanwhile.
        """
        if self.mode is not Mode.EXECUTE:
            raise ToolError("plan_complete works only while executing an approved plan.")
        path, record, approval = self.plan_path, self.run_log.record, self.approval
        self.leave(why="Plan complete")  # ends the checkpoint (in a thread)
        await self.undo_keeper.settle_async()  # the report needs the end state
        if path is not None and record is not None and approval is not None:
            seconds, tokens, cost = self._exec_measures()
            # Kept in the run record: the next review's blast-radius card shows the last run.
            record.cost, record.tokens = cost, tokens
            args = (path, approval.text, record, seconds, tokens, cost)
            self._emit_report(path, record, *await asyncio.to_thread(self._report, *args))
        if self.settings.cleanup_on_complete and path is not None:
            try:
                self.store.delete(path)
            except PlanStoreError:
                pass
        return "Plan complete. Exiting execute mode."

    def _exec_measures(self) -> tuple[float | None, int | None, float | None]:
        """How long the plan executed, the tokens it used and what it cost (read on the
        loop's thread). Tokens are None when no reply reported usage during execution."""
        seconds = cost = None
        tokens: int | None = None
        if self._exec_started is not None:
            started, cost_before, tokens_before = self._exec_started
            seconds = time.monotonic() - started
            if self.agent.cost is not None:
                cost = self.agent.cost - (cost_before or 0.0)
            tokens = (self.agent.tokens_used - tokens_before) or None
        return seconds, tokens, cost

    def _report(
        self,
        path: Path,
        text: str,
        record: RunRecord,
        seconds: float | None,
        tokens: int | None,
        cost: float | None,
    ) -> tuple[bool, str | None]:
        """The plan report (planshell/plan/report.py), kept in the run record.

        Runs in a worker thread (it hashes, diffs and asks git): returns whether
        the plan is complete and why the record was not saved, if it was not.
        """
        from planshell.plan.report import build_report, render_markdown
        from planshell.plan.undo import commits_during

        cp = self.undo_keeper.checkpoint
        report = build_report(
            text,
            record,
            plan_scope(text),
            cp,
            commits=commits_during(cp) if cp is not None else [],
            seconds=seconds,
            tokens=tokens,
            cost=cost,
        )
        record.report = render_markdown(report)
        try:
            self.undo_keeper.wrote_after_end(self.store.write_run(path, record.to_json()))
        except PlanStoreError as exc:
            return report.complete, f"Plan report not saved: {exc}"
        return report.complete, None

    def _emit_report(
        self, path: Path, record: RunRecord, complete: bool, problem: str | None
    ) -> None:
        """Send the report to the front end (on the loop's thread)."""
        if problem is not None:
            self.agent.emit(ev.Notice(problem, "warning"))
        self.agent.emit(ev.PlanReported(str(path), record.report, complete))

    def restore(self, entry: dict[str, Any] | None) -> None:
        """Bring back the mode recorded in a resumed session log."""
        if not entry:
            return
        self.undo_keeper.load(entry.get("checkpoint"))
        recorded = RecordedMode.parse(entry, set(self.registry.names()))
        mode, path, saved_tuple = recorded.mode, recorded.plan_path, recorded.saved_tools
        if mode is Mode.PLAN:
            self.enter_plan(plan_path=path)
            if saved_tuple is not None:
                self.saved_tools = saved_tuple
            if path is not None:
                self.changed_plan = PlanChange.from_entry(entry.get("changed_plan"), path)
                if self.changed_plan is not None:
                    self._record_mode()
        elif mode is Mode.EXECUTE and path is not None:
            self._restore_execute(path, entry, saved_tuple)

    def _restore_execute(
        self, path: Path, entry: dict[str, Any], saved: tuple[str, ...] | None
    ) -> None:
        """EXECUTE again only if the file still holds the recorded approved text.

        Otherwise the plan is a changed plan: PLAN on the same file, and the
        first turn opens the review with the diff (headless: exit 3).
        """
        record = ApprovalRecord.from_entry(entry.get("approval"), path)
        try:
            current: str | None = self.store.read(path)
            problem = ""
        except PlanStoreError as exc:
            current, problem = None, str(exc)
        if record is not None and current is not None and record.holds(current):
            self.saved_tools = saved or self.registry.active
            # The plan's own permission mode comes back; it ends in the narrower of
            # the mode before the approval and the mode this run started in.
            now = self.permission_mode_now() if self.permission_mode_now is not None else None
            before = less_permissive(record.permission_before, now)
            resumed = ApprovalRecord(
                path, record.text, before, record.permission_mode, record.revision
            )
            self.approve(path, record.text, record.permission_mode, record=resumed)
            return
        approved = record.text if record is not None else None
        self.enter_plan(plan_path=path)
        if saved is not None:
            self.saved_tools = saved
        self.changed_plan = PlanChange(path, approved, current, problem)
        if approved is not None:
            self.reviews.reviewed[path] = approved
        self._record_mode()

    def state(self) -> ModeState:
        return ModeState(self.mode, self.plan_path, self.saved_tools)

    # --- undo ---------------------------------------------------------------------

    def _check_undo(self) -> None:
        """Undo writes the project: never in PLAN (read-only), nor under a running plan."""
        if self.mode is Mode.PLAN:
            raise UndoRefused(PLAN_REFUSED)
        if self.mode is Mode.EXECUTE:
            raise UndoRefused(EXECUTE_REFUSED)

    def undo_preview(self) -> UndoPlan:
        """What ``/undo`` would restore, recreate and delete (reads the tree: from a worker)."""
        self._check_undo()
        return self.undo_keeper.preview()

    def undo(self, overwrite_hand_edits: bool = False, plan: UndoPlan | None = None) -> list[str]:
        """Put the project back as the last plan's execution found it; returns the problems.

        ``plan`` is the preview a person saw; hand-edited files only with
        ``overwrite_hand_edits``.
        """
        self._check_undo()
        return self.undo_keeper.undo(overwrite_hand_edits, plan)

    # --- the plan tools' logic -----------------------------------------------

    def write_plan(self, title: str, content: str, plan_path: str | None) -> Path:
        if self.mode is not Mode.PLAN:
            raise ToolError("write_plan works only in plan mode; outside it, edit files normally.")
        problem = validate_plan(content)
        if problem:
            raise ToolError(problem)
        text = with_title(title, content)
        try:
            path = plan_target(self.store, plan_path, self.plan_path, self.pending_name, title)
            text = keep_title(text, title_line(self.store, path))
            written = self.store.write(path, text)
        except PlanStoreError as exc:
            raise ToolError(str(exc)) from None
        self.plan_path = written
        self._plan_updated(written, text)
        self._record_mode()
        return written

    async def record_cited(self, path: Path) -> None:
        """Note HEAD and the cited files' hashes beside the plan just written (``write_plan``).

        Off the event loop: it runs git and hashes up to 64 MiB of files
        (planshell/plan/staleness.py). A plan that cannot be read or recorded
        gets a notice, and its review simply has no staleness chip.
        """
        from planshell.plan.staleness import record_cited

        root = self.agent.ctx.root

        def record() -> None:
            text = self.store.read(path)
            self.store.write_cited(path, record_cited(root, text).to_json())

        try:
            await asyncio.to_thread(record)
        except (PlanStoreError, OSError) as exc:
            self.agent.emit(ev.Notice(f"Cited files not recorded: {exc}", "warning"))

    def cited_check(self, path: Path) -> tuple[Staleness, str] | None:
        """Which of ``path``'s cited files changed since it was written, and their diffs.

        None when the plan has no usable record (written before this existed, or by hand).
        """
        from planshell.plan.staleness import CitedRecord, check_cited, cited_diffs

        raw = self.store.read_cited(path)
        record = CitedRecord.from_json(raw) if raw is not None else None
        if record is None:
            return None
        root = self.agent.ctx.root
        staleness = check_cited(root, record)
        return staleness, cited_diffs(root, record, staleness) if staleness.stale else ""

    async def review(self, plan_path: str) -> str:
        """exit_plan_mode: show the plan to the user and act on the decision."""
        return (await self.review_outcome(plan_path))[0]

    async def review_outcome(self, plan_path: str) -> tuple[str, str]:
        """exit_plan_mode: the result for the model, and the line the person sees for it.

        The result is written for the model ("The user has not approved the plan …
        Stay in plan mode"); the transcript's tool row shows the decision instead.
        """
        if self.mode is not Mode.PLAN:
            raise ToolError("exit_plan_mode works only in plan mode (no plan is being written).")
        try:
            path = self.store.resolve(plan_path)
        except PlanStoreError as exc:
            raise ToolError(str(exc)) from None
        mcp = self.mcp_notice()
        if mcp is not None:
            self.agent.emit(ev.Notice(mcp, "warning"))
        decided = await self.reviews.run(path)
        if decided is None:
            return prompts.keep_result(KEPT_CHANGING), SHOWN_KEEP_CHANGING
        review, text = decided
        if self.mode is not Mode.PLAN:
            left = "Plan mode was left while the plan was being reviewed."
            return prompts.keep_result(left), SHOWN_LEFT
        return self._apply(review, path, text), SHOWN_DECISION.get(review.decision, SHOWN_KEEP)

    async def review_existing(self, path: Path) -> ReviewOutcome:
        """``/plan review``: a person reviews a saved plan from any mode.

        The same review rounds as ``exit_plan_mode`` (file and receipt re-checked
        after approval); the decision is applied here, and the outcome says what
        the front end should send next.
        """
        self._check_free()
        diff = notice = ""
        change = self.changed_plan
        if change is not None and _same_file(change.path, path):
            # The paused plan: the review shows what changed since the approval.
            try:
                current: str | None = self.store.read(path)
            except PlanStoreError:
                current = None
            shown = self._display(path)
            diff, notice = change.with_current(current).diff(shown), change.headline(shown)
        try:
            decided = await self.reviews.run(path, diff=diff, notice=notice)
        except ToolError as exc:
            raise PlanStoreError(str(exc)) from None
        if decided is None:
            return ReviewOutcome(Decision.KEEP, path, notice=KEPT_CHANGING)
        review, text = decided
        match review.decision:
            case Decision.APPROVE:
                self.execute_existing(path, reviewed=text, permission_mode=review.permission_mode)
                return ReviewOutcome(review.decision, path, self.execute_request(path))
            case Decision.REFINE:
                self.start_plan(plan_path=path)
                if self.changed_plan is not None:  # the refinement is the way forward now
                    self.changed_plan = None
                    self._record_mode()
                feedback = review.feedback or "(no details given)"
                message = prompts.REFINE_REQUEST.format(path=self._display(path), feedback=feedback)
                return ReviewOutcome(review.decision, path, message)
            case Decision.EXIT:
                if self.is_active(path):
                    self.leave()
            case Decision.DISCARD:
                self.discard(path)
            case _:
                pass
        return ReviewOutcome(review.decision, path)

    # --- write barrier and capabilities ------------------------------------------

    def receipt(self) -> Receipt | None:
        """Changes to the work tree since PLAN was entered; None outside PLAN."""
        pending = self._pending
        if self.mode is not Mode.PLAN or pending is None:
            return None
        return compare(pending.result(), ignore=self._receipt_ignores())

    def capabilities(self) -> str:
        """What plan mode allows and why, as markdown (``/plan why``).

        Resolves the plan exec policy (the one-off bubblewrap probe) and, in PLAN,
        compares the work tree with the snapshot: call it from a worker, not a paint.
        """
        from planshell.plan.capabilities import capabilities_report

        return capabilities_report(
            mode=self.mode,
            registry=self.registry,
            policy=self.policy,
            bash=self.settings.bash,
            exec_policy=self.plan_exec_policy,
            snapshot=self._pending.result() if self._pending is not None else None,
            receipt=self.receipt,
        )

    def _before_write(self, path: Path) -> None:
        """``ToolContext.before_write`` (in the tool's thread): only while a plan executes."""
        if self.mode is Mode.EXECUTE:
            self.undo_keeper.before_write(path)

    def record_result(self, tool: Tool, args: ToolArgs, result: ToolResult) -> None:
        """The agent's result hook: a finished call's work, filed under the current step.

        Only while an approved plan executes: in PLAN nothing but the plan is written.
        """
        if self.mode is Mode.EXECUTE and self.approval is not None:
            self.run_log.record_result(tool, args, result)
        if self.mode is Mode.PLAN and getattr(tool, "is_mcp", False):
            self.mcp_ran.append(tool.name)

    def mcp_tools_added(self, names: list[str], *, offer: bool) -> None:
        """New MCP tools (a server started or sent tools/list_changed).

        In PLAN they are not offered now (the set was fixed on entry) but join the
        tools restored on leaving, when ``offer``; otherwise ``offer`` activates them.
        """
        if self.mode is Mode.PLAN:
            waiting = [
                n
                for n in names
                if n not in self.plan_mcp
                and getattr(self.registry.get(n), "plan_permitted", False)  # read-only, opted in
            ]
            if waiting:
                # A session that starts in PLAN (--plan, ui.start_mode) meets its servers'
                # first tool lists here too: say why they are not offered, and how to get them.
                shown = ", ".join(plain_line(n, 80) for n in waiting[:3])
                more = f" and {len(waiting) - 3} more" if len(waiting) > 3 else ""
                self.agent.emit(
                    ev.Notice(
                        f"MCP tools arrived after plan mode began ({shown}{more}): plan mode "
                        "offers only the tools present when it was entered. Leave and enter "
                        "plan mode again (/plan off, /plan on) to offer them.",
                        "information",
                    )
                )
        if not offer:
            return
        if self.mode is Mode.PLAN and self.saved_tools is not None:
            self.saved_tools = (*self.saved_tools, *(n for n in names if n not in self.saved_tools))
            return
        self.registry.set_active([*self.registry.active, *names])

    def mcp_over_budget(self) -> None:
        """MCP schemas outgrew the budget: MCP tools go behind mcp_search.

        In PLAN the plan's set stays as it was fixed at entry (within the budget
        then, and no later tool joins it); the tools restored on leaving lose
        their MCP tools. Elsewhere the active set loses them now.
        """

        def lean(names: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(n for n in names if not n.startswith("mcp__"))

        if self.saved_tools is not None:
            self.saved_tools = lean(self.saved_tools)
        if self.mode is not Mode.PLAN:
            self.registry.set_active(lean(self.registry.active))

    def mcp_calls(self) -> tuple[tuple[str, int], ...]:
        """The MCP tools that ran while planning, with how often, first-run order.

        Only in PLAN: the list starts empty at each entry, and a review outside
        plan mode (``/plan review``) is not about this planning session.
        """
        if self.mode is not Mode.PLAN:
            return ()
        return tuple(Counter(self.mcp_ran).items())

    def mcp_notice(self) -> str | None:
        """The transcript's notice at review time (the review shows the same line)."""
        return mcp_ran_line(self.mcp_calls()) or None

    def verification_ready(self, command: str) -> str | None:
        """The approved Verification command ``command`` is, if it may run unasked now.

        Only while an approved plan executes, from the approved text (never the file),
        and once per approved revision: the run record says whether it already did.
        """
        approval = self.approval
        if self.mode is not Mode.EXECUTE or approval is None or self.run_log.record is None:
            return None
        from planshell.plan.verification import approved_check

        check = approved_check(approval.text, command)
        if check is None or self.run_log.was_granted(approval.revision, check):
            return None
        return check

    def use_verification(self, command: str) -> None:
        """``command`` runs unasked now (``verification_ready`` said so): the next run asks."""
        check = self.verification_ready(command)
        if check is not None and self.approval is not None:
            self.run_log.grant(self.approval.revision, check)

    def set_steps(self, updates: list[StepUpdate], reasons: dict[int, str] | None = None) -> str:
        """``set_plan_steps``: tick the approved text, write it, and mirror it in the checklist.

        A step in ``reasons`` was skipped (its box is ticked: it is closed); the run
        record keeps the reason, and a step ticked done with no recorded work is flagged.
        """
        if self.mode is Mode.PLAN:
            raise ToolError("set_plan_steps works after approval; in plan mode, revise the plan.")
        if self.plan_path is None or self.approval is None:
            raise ToolError("There is no approved plan to tick.")
        if self._plan_change() is not None:
            raise ToolError(
                "The plan file changed since the user approved it: nothing was ticked. "
                "Execution is paused until the user approves the plan again; stop and end your turn."
            )
        text = tick_steps(self.approval.text, updates)
        try:
            self.store.write(self.plan_path, text)
        except PlanStoreError as exc:
            raise ToolError(str(exc)) from None
        # planshell's own tick: the ticked text is the approved text from now on.
        self.approval = self.approval.ticked(text)
        self._record_mode()
        reasons = reasons or {}
        self.run_log.tick(
            [
                (n, ("skipped" if n in reasons else "done") if done else "open", reasons.get(n, ""))
                for n, done, _ in updates
            ]
        )
        tick_todos(self.todos, updates)
        self.todos.replace(self.run_log.flagged(self.todos.items))
        new = parse_plan(text)
        self._plan_updated(self.plan_path, text)
        return f"Updated {plural(len(updates), 'step')}: {new.done_count}/{new.total_steps} done."

    # --- amendments (planshell/plan/amend.py) ---------------------------------------

    def _amendable(self, tool: str) -> ApprovalRecord:
        """The approval an amendment would change; ToolError outside a running, unchanged plan."""
        if self.mode is Mode.PLAN:
            raise ToolError(
                f"{tool} works only while an approved plan executes; in plan mode, revise the "
                "plan with write_plan and show it again with exit_plan_mode."
            )
        if self.mode is not Mode.EXECUTE or self.plan_path is None or self.approval is None:
            raise ToolError(f"There is no approved plan to amend ({tool} works during execution).")
        if self._plan_change() is not None:
            raise ToolError(prompts.AMEND_PAUSED)
        return self.approval

    async def amend(self, step: int, reason: str, new_text: str) -> str:
        """``amend_plan``: a person approves one step's new wording, or nothing changes.

        Always asked, in every permission mode (auto too): the plan is the
        person's. Approved, the amended text is written (atomically), becomes
        the approved text and the scope follows it; declined, the file, the
        approval and the run record stay exactly as they were.
        """
        approval = self._amendable("amend_plan")
        path = approval.path
        from planshell.plan.amend import amend_step

        amended = amend_step(approval.text, step, new_text, reason, self.clock())
        change = amended.amendment
        request = AmendmentRequest(
            path,
            parse_plan(approval.text).title,
            change.step,
            change.old_text,
            change.new_text,
            change.reason,
            amended.added_scope,
        )
        answer = await self.decider.review_amendment(request)
        if self.mode is not Mode.EXECUTE or self.approval is not approval:
            return prompts.AMEND_RACED  # ticked, paused or ended while the person looked
        if not answer.approved:
            who = "you" if answer.by_person else "nobody was there to approve it"
            self.agent.emit(
                ev.Notice(
                    f"Amendment of step {change.step} declined ({who}); the approved plan stands.",
                    "warning" if answer.by_person else "information",
                )
            )
            return prompts.AMEND_DECLINED if answer.by_person else prompts.AMEND_NOBODY
        self._commit_amendment(amended)
        self.agent.emit(
            ev.Notice(f"Plan amended: step {change.step} reworded ({self._display(path)}).")
        )
        return prompts.amend_approved(change.step, change.new_text)

    def add_to_plan(self, rel: str) -> str | None:
        """A person's "add to the plan" answer: ``rel`` joins the approved plan's scope.

        An amendment entry naming the path is appended (written atomically) and
        the approval rebinds to it, so later edits of the file no longer ask.
        Returns why it could not be added (the edit itself was allowed), or None.
        """
        try:
            approval = self._amendable("add to the plan")
            from planshell.plan.amend import add_to_scope

            amended = add_to_scope(approval.text, rel, self.clock(), "added by the user")
            self._commit_amendment(amended)
        except ToolError as exc:
            return str(exc)
        shown = self._display(approval.path)
        self.agent.emit(ev.Notice(f"Added {rel} to the plan's scope (an amendment of {shown})."))
        return None

    def _commit_amendment(self, amended: AmendedPlan) -> None:
        """Write the amended plan and bind the approval to it (the person approved it)."""
        if self.plan_path is None or self.approval is None:
            raise ToolError("There is no approved plan to amend.")
        if self._plan_change() is not None:
            raise ToolError(prompts.AMEND_PAUSED)
        try:
            self.store.write(self.plan_path, amended.text)
        except PlanStoreError as exc:
            raise ToolError(f"The amendment was not saved: {exc}") from None
        self.approval = self.approval.ticked(amended.text)  # the approved text from now on
        self._record_mode()
        if self.agent.session is not None:
            self.agent.session.append({"type": "plan_amendment", **asdict(amended.amendment)})
        self.run_log.amend(amended.amendment)
        self.todos.replace(self.run_log.flagged(self.todos.items))
        self._plan_updated(self.plan_path, amended.text)

    # --- helpers --------------------------------------------------------------

    def _apply(self, review: Review, path: Path, text: str) -> str:
        shown = self._display(path)
        match review.decision:
            case Decision.APPROVE:
                self.approve(path, text, review.permission_mode)
                return prompts.approved_result(shown, text)
            case Decision.REFINE:
                return prompts.refine_result(review.feedback or "(no details given)")
            case Decision.EXIT:
                self.leave()
                return prompts.exit_result(shown)
            case Decision.DISCARD:
                self.leave(discard=True)
                return prompts.DISCARD_RESULT
            case _:
                return prompts.keep_result(review.feedback)

    def _warn_stale(self, path: Path) -> None:
        """At the start of execution: a Notice when cited files changed since the plan was written."""
        if path in self.reviews.cited:  # the review just checked: its answer, not a second hashing
            checked = self.reviews.cited.pop(path)
        else:
            try:
                checked = self.cited_check(path)
            except (OSError, PlanStoreError):
                return
        if checked is not None and checked[0].stale:
            self.agent.emit(ev.Notice(f"Plan {checked[0].summary}", "warning"))

    def _end_plan_permissions(self, why: str) -> None:
        """The plan ends: its permission mode goes, the one before the approval comes back.

        Only when the approval chose a mode; a Notice says so ("Plan complete:
        permissions back to ask"). The approval itself is over.
        """
        record, self.approval = self.approval, None
        if record is None or not record.permission_mode or record.permission_before is None:
            return
        now = self.permission_mode_now() if self.permission_mode_now is not None else None
        if now == record.permission_before or self.on_approve_mode is None:
            return
        self.on_approve_mode(record.permission_before)
        self.agent.emit(ev.Notice(f"{why}: permissions back to {record.permission_before}."))

    def _plan_change(self) -> PlanChange | None:
        """In EXECUTE: the file as a change from the approved text, or None if it holds it."""
        if self.plan_path is None:
            return None
        approved = self.approval.text if self.approval is not None else None
        try:
            current = self.store.read(self.plan_path)
        except PlanStoreError as exc:
            return PlanChange(self.plan_path, approved, None, str(exc))
        if self.approval is not None and self.approval.holds(current):
            return None
        return PlanChange(self.plan_path, approved, current)

    def _pause(self, change: PlanChange) -> None:
        """EXECUTE -> PLAN on the same file: the changed plan needs a person's approval."""
        path = change.path
        if change.approved is not None:
            self.reviews.reviewed[path] = change.approved  # the review marks what changed since
            self.reviews.feedback.pop(path, None)  # no refinement was asked for this change
        self._end_plan_permissions("Plan paused (it changed on disk)")
        self.enter_plan(plan_path=path)
        self.changed_plan = change
        self._record_mode()

    async def _review_change(self, change: PlanChange) -> str | None:
        """Show the diff and the changed plan for review; None lets the turn go on.

        Approve executes the new text (a new approval); refine goes on in PLAN
        with the person's feedback; everything else stops the turn here.
        """
        path = change.path
        shown = self._display(path)
        try:
            current: str | None = self.store.read(path)
            problem = ""
        except PlanStoreError as exc:
            current, problem = None, str(exc)
        change = change.with_current(current, problem)
        self.changed_plan = change
        diff = change.diff(shown)
        # One line: the diff itself is the review's (the TUI's diff screen, headless stderr).
        self.agent.emit(ev.Notice(change.headline(shown), "warning"))
        unusable = diff if current is None else validate_plan(current)
        if unusable:
            # Nothing to approve (unreadable or not a plan): /plan off, or restore the file.
            self.agent.emit(ev.ErrorEvent(f"{shown} cannot be reviewed: {unusable}"))
            return change.headline(shown)
        try:
            decided = await self.reviews.run(path, diff=diff, notice=change.headline(shown))
        except ToolError as exc:
            self.agent.emit(ev.Notice(str(exc), "error"))
            return str(exc)
        if decided is None:
            return KEPT_CHANGING
        review, text = decided
        if self.mode is not Mode.PLAN:
            return "Plan mode was left while the changed plan was being reviewed."
        match review.decision:
            case Decision.APPROVE:
                self.approve(path, text, review.permission_mode)
                return None
            case Decision.REFINE:
                self.changed_plan = None
                self._record_mode()
                feedback = review.feedback or "(no details given)"
                await self.agent.submit(
                    prompts.REFINE_REQUEST.format(path=shown, feedback=feedback)
                )
                return None
            case Decision.EXIT:
                self.leave()
            case Decision.DISCARD:
                self.leave(discard=True)
            case _:
                pass
        return change.headline(shown)

    def _start_snapshot(self) -> None:
        """The receipt's snapshot, in a background thread (a big repository takes seconds)."""
        self._drop_snapshot()
        root, ignore = self.agent.ctx.root, self._receipt_ignores()
        self._pending = PendingSnapshot(
            # Looked up at call time: tests hold the real scan back with a wrapper.
            lambda stop: take_snapshot(root, ignore=ignore, stop=stop),
            root,
        )

    def _drop_snapshot(self) -> None:
        """Plan mode is over: a scan still running stops, and its waiters go on."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _receipt_ignores(self) -> list[Path]:
        """Only the plan files: the rest of ``.planshell/`` (config.toml) is a change."""
        return [self.store.plans_dir]

    def _warn_unsandboxed(self) -> None:
        """Once per session: plan-mode bash runs without the sandbox that was asked for."""
        notice = getattr(self.plan_exec_policy, "notice", None)
        if notice and self.sandbox_warning is None:
            self.sandbox_warning = notice
            self.agent.emit(ev.Notice(notice, "warning"))

    def _restore_tools(self) -> None:
        if self.saved_tools is not None:
            known = set(self.registry.names())  # an MCP server's tool may have gone since
            self.registry.set_active(n for n in self.saved_tools if n in known)
            self.saved_tools = None
        self.plan_mcp = frozenset()
        self.agent.ctx.exec_policy = self._normal_exec

    def shape_tools(self) -> None:
        """Offer the mode-specific plan tools of the current mode, and only those."""
        registry = self.registry
        registry.set_active(mode_tool_names(registry.active, registry.names(), self.mode))

    def _changed(self, previous: Mode) -> None:
        if self.mode is not Mode.EXECUTE:
            self.run_log.stop()
        self.shape_tools()
        title = self._title()
        self._record_mode()
        self.agent.emit(
            ev.ModeChanged(
                self.mode,
                previous,
                str(self.plan_path) if self.plan_path else None,
                title,
            )
        )

    def _record_mode(self) -> None:
        """The whole plan state in one entry: ``--continue`` restores from the last one."""
        if self.agent.session is None:
            return
        entry = mode_entry(
            self.mode, self.plan_path, self.saved_tools, self.approval, self.changed_plan
        )
        if self.undo_keeper.ident is not None:
            entry["checkpoint"] = self.undo_keeper.ident
        self.agent.session.append(entry)

    def _title(self) -> str | None:
        if self.plan_path is None:
            return None
        if self.mode is Mode.EXECUTE and self.approval is not None:
            return parse_plan(self.approval.text).title
        try:
            return parse_plan(self.store.read(self.plan_path)).title
        except PlanStoreError:
            return self.plan_path.stem

    def _plan_updated(self, path: Path, text: str) -> None:
        doc = parse_plan(text)
        self.agent.emit(ev.PlanUpdated(str(path), doc.title, doc.done_count, doc.total_steps))

    def _display(self, path: Path) -> str:
        return self.agent.ctx.display(path)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b
