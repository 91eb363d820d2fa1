"""Keeps the run record of the plan being executed and writes it beside the plan.

The controller starts it on approval and stops it on every way out of EXECUTE;
the agent loop's result hook feeds it (``record``). It only ever writes
``<plan stem>.run.json`` through the plan store, so the file is contained the
same way plans are; a record that cannot be written is a notice, never a
failed tool call (the work itself happened).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from planshell.plan.store import PlanStore, PlanStoreError
from planshell.tools.base import Effect, Tool, ToolArgs, ToolResult
from planshell.tools.todo import TodoItem, TodoStatus

# The record's own modules load when a plan starts executing, not at start-up (issue 28).
if TYPE_CHECKING:
    from planshell.plan.amend import Amendment
    from planshell.plan.evidence import Evidence, RunRecord, StepStatus

__all__ = ["RunLog", "evidence_of"]


def evidence_of(tool: Tool, args: ToolArgs, result: ToolResult, plans_dir: Path) -> Evidence | None:
    """What a finished call leaves as evidence, by its effects and result data, not its name.

    A write tool that reports a ``path`` edited a file (failed calls changed
    nothing); a tool that can execute and reports an ``exit_code`` ran a command,
    whatever its exit code. Plan files (``set_plan_steps``' ticks) are not work.
    """
    from planshell.plan.evidence import Evidence

    data = result.data or {}
    path = data.get("path")
    if Effect.WRITE in tool.effects and isinstance(path, str) and not result.is_error:
        if Path(path).is_absolute() and Path(path).parent == plans_dir:
            return None
        if Path(path).parts[:2] == (".planshell", "plans"):
            return None
        return Evidence("edit", path)
    code = data.get("exit_code")
    if Effect.EXEC in tool.effects and isinstance(code, int) and not isinstance(code, bool):
        command = getattr(args, "command", None)
        return Evidence(
            "command", command if isinstance(command, str) else tool.headline(args), code
        )
    return None


class RunLog:
    """The run record of the executing plan, saved after every change."""

    def __init__(self, store: PlanStore, warn: Callable[[str], None]) -> None:
        self.store = store
        self.warn = warn
        self.path: Path | None = None
        self.record: RunRecord | None = None
        self._warned = False
        self._checks: list[str] = []  # the approved Verification commands, folded

    def start(self, path: Path, text: str) -> None:
        """Seed the record for approved ``text``, keeping a saved record's steps that still match."""
        from planshell.plan.evidence import RunRecord
        from planshell.plan.report import fold, verification_commands

        previous: RunRecord | None = None
        try:
            saved = self.store.read_run(path)
        except PlanStoreError as exc:
            self.warn(f"Run record not read: {exc}; starting a new one.")
            saved = None
        if saved is not None:
            previous = RunRecord.from_json(saved)
        self.path = path
        self.record = RunRecord.seed(path.name, text, previous)
        self._checks = [c for c in (fold(v) for v in verification_commands(text)) if c]
        self._warned = False
        self._save()

    def stop(self) -> None:
        self.path = None
        self.record = None

    def record_result(self, tool: Tool, args: ToolArgs, result: ToolResult) -> None:
        if self.record is None:
            return
        item = evidence_of(tool, args, result, self.store.plans_dir)
        if item is None:
            return
        check = self._check_of(item)
        if check is not None:
            from planshell.plan.evidence import tail

            # A Verification run keeps its output; only the last run of each check does.
            self._drop_output(check)
            item.output = tail(result.content)
        if self.record.record(item) is not None:
            self._save()

    def _check_of(self, item: Evidence) -> str | None:
        """The Verification command a command item runs (as the report matches it), or None."""
        if item.kind != "command":
            return None
        from planshell.plan.report import fold

        ran = fold(item.detail)
        return next((c for c in self._checks if c in ran), None)

    def _drop_output(self, check: str) -> None:
        if self.record is None:
            return
        for step in self.record.steps:
            for old in step.evidence:
                if old.output and self._check_of(old) == check:
                    old.output = ""

    def was_granted(self, revision: str, command: str) -> bool:
        """Whether Verification ``command`` already ran unasked under ``revision`` (no record: yes)."""
        return self.record is None or self.record.was_granted(revision, command)

    def grant(self, revision: str, command: str) -> None:
        """Verification ``command`` runs unasked now: saved at once, so the next one asks."""
        if self.record is not None:
            self.record.grant(revision, command)
            self._save()

    def tick(self, changes: list[tuple[int, StepStatus, str]]) -> None:
        """The steps ``set_plan_steps`` changed (already checked against the plan)."""
        if self.record is None:
            return
        for number, status, reason in changes:
            if number <= len(self.record.steps):
                self.record.tick(number, status, reason)
        self._save()

    def amend(self, amendment: Amendment) -> None:
        """An approved amendment (planshell/plan/amend.py): kept for the report."""
        if self.record is None:
            return
        self.record.amend(amendment)
        self._save()

    def flagged(self, items: list[TodoItem]) -> list[TodoItem]:
        """The checklist with each step's evidence state (``TodoItem.note``) and skip reason."""
        if self.record is None:
            return items
        out = list(items)
        for index, step in enumerate(self.record.steps[: len(out)]):
            item = out[index]
            if step.status == "skipped":
                out[index] = replace(
                    item,
                    content=f"{step.text} (skipped: {step.reason})",
                    status=TodoStatus.COMPLETED,
                    note="skipped",
                )
            elif step.without_evidence and item.status is TodoStatus.COMPLETED:
                out[index] = replace(item, content=step.text, note="unverified")
            else:
                out[index] = replace(item, content=step.text, note="")
        return out

    def _save(self) -> None:
        if self.record is None or self.path is None:
            return
        try:
            self.store.write_run(self.path, self.record.to_json())
        except PlanStoreError as exc:
            if not self._warned:  # once per run: the same refusal on every call is noise
                self._warned = True
                self.warn(f"Run record not saved: {exc}")
