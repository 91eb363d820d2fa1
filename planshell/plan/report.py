"""The plan report: what an approved plan's execution did, audited against what it promised.

Built when a plan completes from the approved text, its run record
(``evidence.py``), its scope (``scope.py``) and, when there is one, its
checkpoint's changed files and commits. The headline says "complete" only when
every step is closed and every Verification command ran and exited 0;
otherwise it says "finished with gaps" and lists what is open first, so a
reader sees the gaps before the good news. The report is markdown kept in the
run record (``report``); every piece of it is model- or repo-authored text,
so front ends sanitise it before display.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from planshell.plan.amend import Amendment
from planshell.plan.checkpoint import Checkpoint
from planshell.plan.document import parse_plan, verification_text
from planshell.plan.evidence import Evidence, RunRecord
from planshell.plan.scope import Scope, normalise_entry
from planshell.plan.store import PlanStore, PlanStoreError

__all__ = [
    "CheckRun",
    "PlanReport",
    "StepReport",
    "build_report",
    "changed_files",
    "fold",
    "render_markdown",
    "saved_report",
    "verification_commands",
]

_FENCE = re.compile(r"^\s*(```+|~~~+)")
_INLINE = re.compile(r"`([^`\n]+)`")
_OWN_DIR = ".planshell/"  # the plan file and its run record change with every tick


@dataclass(frozen=True)
class StepReport:
    number: int
    text: str
    status: str  # "open", "done" or "skipped"
    reason: str
    evidence: tuple[Evidence, ...]
    unverified: bool  # ticked done with nothing recorded


@dataclass(frozen=True)
class CheckRun:
    """A Verification command and the exit code of its last matching run (None: not run)."""

    command: str
    exit_code: int | None
    output: str = ""  # the end of the last matching run's output (what the run record kept)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass
class PlanReport:
    title: str
    plan: str
    steps: list[StepReport]
    checks: list[CheckRun]
    changed_planned: list[str] = field(default_factory=list)
    planned_untouched: list[str] = field(default_factory=list)
    changed_unplanned: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    seconds: float | None = None
    tokens: int | None = None
    cost: float | None = None
    amendments: list[Amendment] = field(default_factory=list)

    @property
    def gaps(self) -> list[str]:
        """What keeps the plan from "complete", one line each, in plan order."""
        out = [f"step {s.number} is still open" for s in self.steps if s.status == "open"]
        for check in self.checks:
            if check.exit_code is None:
                out.append(f"verification `{check.command}` was not run")
            elif check.exit_code != 0:
                out.append(f"verification `{check.command}` exited {check.exit_code}")
        return out

    @property
    def complete(self) -> bool:
        return not self.gaps


def verification_commands(text: str) -> list[str]:
    """The commands of the plan's Verification section: fenced lines, else inline code of its lines.

    Comments and blank lines are not commands.
    """
    body = verification_text(parse_plan(text))
    if body is None:
        return []
    fenced: list[str] = []
    inside = False
    for line in body.splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        stripped = line.strip().removeprefix("$ ").strip()
        if inside and stripped and not stripped.startswith("#"):
            fenced.append(stripped)
    if fenced:
        return fenced
    return [m.group(1).strip() for m in _INLINE.finditer(body) if m.group(1).strip()]


def fold(text: str) -> str:
    """``text`` on one line, each run of whitespace one space."""
    return " ".join(text.split())


def _check_runs(commands: list[str], record: RunRecord) -> list[CheckRun]:
    ran = [
        e for step in record.steps for e in step.evidence if e.kind == "command"
    ]  # in the order they were recorded, step by step
    out: list[CheckRun] = []
    for command in commands:
        want = fold(command)
        code: int | None = None
        output = ""
        for item in ran:  # the last match wins: a failed run fixed and run again passes
            if want and want in fold(item.detail) and item.exit_code is not None:
                code, output = item.exit_code, item.output
        out.append(CheckRun(command, code, output))
    return out


def changed_files(cp: Checkpoint) -> list[str]:
    """Project files whose content differs between the checkpoint and the plan's end."""
    if cp.after is None:
        return []
    out = []
    for rel in sorted(set(cp.before) | set(cp.after)):
        old, new = cp.before.get(rel), cp.after.get(rel)
        if old is None or not old.same(new):
            out.append(rel)
    return [rel for rel in out if not rel.startswith(_OWN_DIR)]


def _relative(detail: str, root: Path | None) -> str | None:
    path = Path(detail)
    if path.is_absolute() and root is not None:
        try:
            detail = path.relative_to(root).as_posix()
        except ValueError:
            return detail
    return normalise_entry(detail) or detail


def _edited(record: RunRecord, root: Path | None) -> list[str]:
    """Files the run record says were edited (no checkpoint to compare with)."""
    seen: dict[str, None] = {}
    for step in record.steps:
        for item in step.evidence:
            if item.kind == "edit":
                rel = _relative(item.detail, root)
                if rel is not None and not rel.startswith(_OWN_DIR):
                    seen[rel] = None
    return list(seen)


def _untouched(scope: Scope, changed: list[str]) -> list[str]:
    """Scope entries no changed file falls under."""
    out = [path for path in sorted(scope.paths) if path not in changed]
    out += [d for d in scope.directories if not any(p.startswith(d) for p in changed)]
    out += [g for g in scope.globs if not any(Scope(globs=(g,)).covers(p) for p in changed)]
    return out


def build_report(
    text: str,
    record: RunRecord,
    scope: Scope,
    checkpoint: Checkpoint | None = None,
    *,
    commits: list[str] | None = None,
    seconds: float | None = None,
    tokens: int | None = None,
    cost: float | None = None,
) -> PlanReport:
    """The report of approved ``text`` run as ``record``; the checkpoint (if any) says what changed."""
    steps = [
        StepReport(s.number, s.text, s.status, s.reason, tuple(s.evidence), s.without_evidence)
        for s in record.steps
    ]
    if checkpoint is not None and checkpoint.after is not None:
        changed = changed_files(checkpoint)
    else:
        changed = _edited(record, checkpoint.root if checkpoint is not None else None)
    return PlanReport(
        title=parse_plan(text).title,
        plan=record.plan,
        steps=steps,
        checks=_check_runs(verification_commands(text), record),
        changed_planned=[p for p in changed if scope.covers(p)],
        planned_untouched=_untouched(scope, changed),
        changed_unplanned=[p for p in changed if not scope.covers(p)],
        commits=list(commits or []),
        seconds=seconds,
        tokens=tokens,
        cost=cost,
        amendments=list(record.amendments),
    )


# --- markdown -------------------------------------------------------------------------


def _code(text: str) -> str:
    """``text`` as inline code whatever backticks it holds."""
    text = fold(text)
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _block(text: str) -> list[str]:
    """``text`` as a fenced block no line of it can close (a fence longer than any inside)."""
    run = max((len(m) for m in re.findall(r"`{3,}|~{3,}", text)), default=0)
    fence = "`" * max(3, run + 1)
    return [
        f"  {fence}text",
        *(f"  {line}" for line in text.rstrip("\n").splitlines()),
        f"  {fence}",
    ]


def _evidence_line(item: Evidence) -> str:
    if item.kind == "edit":
        return f"edited {_code(item.detail)}"
    return f"ran {_code(item.detail)} → exit {item.exit_code}"


def _amendment_line(item: Amendment) -> str:
    """One approved amendment: when, what changed, and why."""
    if item.kind == "scope":
        what = f"added {_code(item.path)} to the scope"
    else:
        what = f"step {item.step}: {_code(item.old_text)} → {_code(item.new_text)}"
    why = f" ({fold(item.reason)})" if item.reason else ""
    return f"- {fold(item.when)}: {what}{why}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def _files(title: str, paths: list[str]) -> list[str]:
    if not paths:
        return []
    return [f"**{title}** ({len(paths)})", "", *(f"- {_code(p)}" for p in paths), ""]


def render_markdown(report: PlanReport) -> str:
    """The report as markdown: headline (gaps first), steps, verification, files, commits, cost."""
    closed = sum(1 for s in report.steps if s.status != "open")
    lines = [f"# Plan report: {fold(report.title)}", ""]
    if report.complete:
        lines.append(
            f"**Complete**: {closed}/{len(report.steps)} steps closed, every check passed."
        )
    else:
        lines.append(f"**Finished with gaps**: {closed}/{len(report.steps)} steps closed.")
        lines.append("")
        lines.extend(f"- {gap}" for gap in report.gaps)
    lines += ["", "## Steps", ""]
    for step in report.steps:
        mark = {"done": "✓", "skipped": "↷", "open": "☐"}.get(step.status, "?")
        if step.unverified:
            mark = "⚠"
        lines.append(f"{step.number}. {mark} {fold(step.text)}")
        if step.status == "skipped":
            lines.append(f"   - skipped: {fold(step.reason) or 'no reason given'}")
        elif step.unverified:
            lines.append("   - ticked without evidence (no edit or command recorded)")
        lines.extend(f"   - {_evidence_line(item)}" for item in step.evidence)
    if report.amendments:
        lines += ["", "## Amendments", ""]
        lines.extend(_amendment_line(a) for a in report.amendments)
    lines += ["", "## Verification", ""]
    if not report.checks:
        lines.append("The plan has no Verification commands.")
    for check in report.checks:
        result = "not run" if check.exit_code is None else f"exit {check.exit_code}"
        lines.append(f"- {'✓' if check.passed else '✗'} {_code(check.command)}: {result}")
        if check.exit_code not in (None, 0) and check.output.strip():
            lines += ["", *_block(check.output), ""]
    lines += ["", "## Files", ""]
    files = [
        *_files("Changed, planned", report.changed_planned),
        *_files("Planned, untouched", report.planned_untouched),
        *_files("Changed, not planned", report.changed_unplanned),
    ]
    lines.extend(files or ["No files changed and none planned.", ""])
    if report.commits:
        lines += ["## Commits", "", *(f"- {_code(c)}" for c in report.commits), ""]
    usage = []
    if report.seconds is not None:
        usage.append(f"time {_duration(report.seconds)}")
    if report.tokens is not None:
        usage.append(f"{report.tokens} tokens")
    if report.cost is not None:
        usage.append(f"cost ${report.cost:.4f}")
    if usage:
        lines += ["## Run", "", ", ".join(usage), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _saved(store: PlanStore, plan: Path) -> str | None:
    text = store.read_run(plan)
    record = RunRecord.from_json(text) if text is not None else None
    return record.report if record is not None and record.report else None


def saved_report(store: PlanStore, plan: str | None = None) -> str:
    """The last report of ``plan`` (a path or name), or of the newest plan that has one.

    Raises :class:`PlanStoreError` with a sentence a person can act on when there is none.
    """
    if plan is None:
        for info in store.list():
            try:
                found = _saved(store, info.path)
            except PlanStoreError:
                continue
            if found is not None:
                return found
        raise PlanStoreError("no plan has a report yet (a report is written when a plan completes)")
    path = store.find_by_name(plan) if not store.exists(plan) else store.resolve(plan)
    if path is None:
        raise PlanStoreError(f"no plan named {plan}")
    found = _saved(store, path)
    if found is None:
        raise PlanStoreError(f"{path.name} has no report: it has not been completed")
    return found
