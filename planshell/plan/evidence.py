"""The run record: what was done while each step of an approved plan was current.

A ticked box says a step is done; the record says what happened for it. Every
step of the approved text gets a stable id (its number and a hash of its text),
and each edit, write and command run in EXECUTE is filed under the *current*
step: the first step that is neither done nor skipped. ``set_plan_steps`` has
no "in progress" state, and a plan is worked through in order, so ticking a
step is what moves the pointer on; work after the last step is ticked is
filed under the last step.

A step ticked done with nothing recorded is "ticked without evidence": shown
with ⚠, never refused (some steps are reading or thinking). Skipped steps carry
the reason the model gave. The record lives beside the plan as
``<plan stem>.run.json`` (planshell/plan/store.py writes and reads it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planshell.plan.amend import Amendment
from planshell.plan.document import parse_plan

__all__ = [
    "Evidence",
    "Grant",
    "RunRecord",
    "StepRecord",
    "StepStatus",
    "step_id",
]

StepStatus = Literal["open", "done", "skipped"]
RUN_VERSION = 1
MAX_ITEMS_PER_STEP = 100  # a loop of commands must not grow the record without bound
MAX_DETAIL_CHARS = 300
# A Verification command's output, kept for its last run only: the end of it, where a
# test runner puts its summary.
MAX_OUTPUT_CHARS = 2000
MAX_GRANTS = 100  # Verification commands run unasked, over every approval of the plan
MAX_AMENDMENTS = 100
MAX_AMENDMENT_CHARS = 500


def step_id(number: int, text: str) -> str:
    """``<number>-<8 hex>``: the same step text at the same place keeps its id."""
    digest = hashlib.sha256(" ".join(text.split()).lower().encode("utf-8")).hexdigest()
    return f"{number}-{digest[:8]}"


@dataclass
class Evidence:
    """One thing done while a step was current: an edited path or a command and its exit code.

    ``output`` is kept only for the last run of a Verification command (``RunLog``).
    """

    kind: Literal["edit", "command"]
    detail: str
    exit_code: int | None = None
    output: str = ""


@dataclass
class StepRecord:
    id: str
    number: int
    text: str
    status: StepStatus = "open"
    reason: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    dropped: int = 0  # evidence past MAX_ITEMS_PER_STEP, counted, not kept

    @property
    def without_evidence(self) -> bool:
        """Ticked done while nothing was recorded for it."""
        return self.status == "done" and not self.evidence and not self.dropped

    def add(self, item: Evidence) -> None:
        if item.kind == "edit" and item in self.evidence:
            return  # one line per path, however often it was edited
        if len(self.evidence) >= MAX_ITEMS_PER_STEP:
            self.dropped += 1
        else:
            self.evidence.append(item)


@dataclass(frozen=True)
class Grant:
    """A Verification command that ran without a question under one approved revision."""

    revision: str  # ApprovalRecord.revision: the sha256 of the text as the person approved it
    command: str  # normalised (planshell/plan/verification.py)


@dataclass
class RunRecord:
    plan: str
    steps: list[StepRecord]
    report: str = ""  # the plan report (planshell/plan/report.py), written when the plan completes
    # Verification commands already run unasked: the next identical run asks (kept on disk,
    # so ``--continue`` does not offer them again).
    granted: list[Grant] = field(default_factory=list)
    # Approved changes to the plan while it executed (planshell/plan/amend.py), in order.
    amendments: list[Amendment] = field(default_factory=list)
    # What the run used (written with the report): the blast-radius card shows the last run.
    tokens: int | None = None
    cost: float | None = None

    @classmethod
    def seed(cls, plan: str, text: str, previous: RunRecord | None = None) -> RunRecord:
        """The record for approved ``text``; a step with the same id keeps what ``previous`` had.

        A step already ticked in the approved text starts done, but not flagged:
        it was ticked before this record existed.
        """
        kept = {s.id: s for s in previous.steps} if previous is not None else {}
        steps: list[StepRecord] = []
        for number, step in enumerate(parse_plan(text).steps, start=1):
            sid = step_id(number, step.text)
            old = kept.get(sid)
            if old is not None:
                steps.append(old)
                continue
            status: StepStatus = "done" if step.done else "open"
            record = StepRecord(sid, number, step.text, status)
            if step.done:
                record.reason = "ticked before this run"
            steps.append(record)
        granted = list(previous.granted) if previous is not None else []
        amendments = list(previous.amendments) if previous is not None else []
        return cls(plan, steps, granted=granted, amendments=amendments)

    def was_granted(self, revision: str, command: str) -> bool:
        return Grant(revision, command) in self.granted

    def grant(self, revision: str, command: str) -> None:
        """``command`` ran unasked under ``revision``; past the cap the oldest is forgotten."""
        self.granted = [*self.granted, Grant(revision, command)][-MAX_GRANTS:]

    def current(self) -> StepRecord | None:
        """The first open step; the last step once all are closed; None without steps."""
        for step in self.steps:
            if step.status == "open":
                return step
        return self.steps[-1] if self.steps else None

    def record(self, item: Evidence) -> StepRecord | None:
        """File ``item`` under the current step; returns that step (None: no steps)."""
        step = self.current()
        if step is not None:
            item.detail = _clip(item.detail)
            step.add(item)
        return step

    def tick(self, number: int, status: StepStatus, reason: str = "") -> None:
        step = self.steps[number - 1]
        step.status = status
        step.reason = _clip(reason.strip()) if status == "skipped" else ""

    def amend(self, amendment: Amendment) -> None:
        """An approved amendment: kept in order; a reworded step keeps its work and status.

        The step's id follows its new text (so a resumed run matches it again).
        """
        if amendment.kind == "step" and 1 <= amendment.step <= len(self.steps):
            step = self.steps[amendment.step - 1]
            step.text = amendment.new_text
            step.id = step_id(step.number, amendment.new_text)
        if len(self.amendments) < MAX_AMENDMENTS:
            self.amendments.append(amendment)

    def to_json(self) -> str:
        body = {
            "version": RUN_VERSION,
            "plan": self.plan,
            "steps": [
                {
                    **asdict(step),
                    "evidence": [_evidence_json(e) for e in step.evidence],
                    "without_evidence": step.without_evidence,
                }
                for step in self.steps
            ],
        }
        if self.amendments:
            body["amendments"] = [asdict(a) for a in self.amendments]
        if self.report:
            body["report"] = self.report
        if self.granted:
            body["granted"] = [asdict(g) for g in self.granted]
        if self.tokens is not None:
            body["tokens"] = self.tokens
        if self.cost is not None:
            body["cost"] = self.cost
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RunRecord | None:
        """A record read back from disk, or None if it is not one (then it starts afresh)."""
        try:
            raw = _RunFile.model_validate_json(text)
        except ValidationError:
            return None
        steps = [
            StepRecord(
                s.id,
                s.number,
                s.text,
                s.status,
                s.reason,
                [Evidence(e.kind, e.detail, e.exit_code, e.output) for e in s.evidence],
                s.dropped,
            )
            for s in raw.steps
        ]
        granted = [Grant(g.revision, g.command) for g in raw.granted]
        amendments = [
            Amendment(a.kind, a.when, a.reason, a.step, a.old_text, a.new_text, a.path)
            for a in raw.amendments
        ]
        return cls(raw.plan, steps, raw.report, granted, amendments, raw.tokens, raw.cost)


def _evidence_json(item: Evidence) -> dict[str, object]:
    """An item as JSON; ``output`` only where there is some (a Verification run)."""
    body = asdict(item)
    if not item.output:
        del body["output"]
    return body


def tail(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """The end of ``text``, at most ``limit`` characters, from a line start when one is near."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < limit // 4:
        cut = cut[newline + 1 :]
    return "…\n" + cut


def _clip(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_DETAIL_CHARS else line[: MAX_DETAIL_CHARS - 1] + "…"


# --- the file's shape, checked when it is read back (it is on disk: anyone may edit it)


class _EvidenceFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: Literal["edit", "command"]
    detail: str = Field(max_length=MAX_DETAIL_CHARS)
    exit_code: int | None = None
    output: str = Field("", max_length=MAX_OUTPUT_CHARS + 2)


class _StepFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    number: int = Field(ge=1)
    text: str
    status: StepStatus
    reason: str = ""
    evidence: list[_EvidenceFile] = Field(default_factory=list, max_length=MAX_ITEMS_PER_STEP)
    dropped: int = Field(0, ge=0)


class _GrantFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    revision: str = Field(max_length=64)
    command: str = Field(max_length=MAX_DETAIL_CHARS)


class _AmendmentFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    kind: Literal["step", "scope"]
    when: str = Field(max_length=40)
    reason: str = Field("", max_length=MAX_AMENDMENT_CHARS)
    step: int = Field(0, ge=0)
    old_text: str = Field("", max_length=MAX_AMENDMENT_CHARS)
    new_text: str = Field("", max_length=MAX_AMENDMENT_CHARS)
    path: str = Field("", max_length=MAX_AMENDMENT_CHARS)


class _RunFile(BaseModel):
    model_config = ConfigDict(extra="ignore")
    version: Literal[1]
    plan: str
    steps: list[_StepFile]
    report: str = ""
    granted: list[_GrantFile] = Field(default_factory=list, max_length=MAX_GRANTS)
    amendments: list[_AmendmentFile] = Field(default_factory=list, max_length=MAX_AMENDMENTS)
    tokens: int | None = Field(None, ge=0)
    cost: float | None = Field(None, ge=0, allow_inf_nan=False)
