"""The blast radius of a plan: what approving it lets loose, shown on the approve dialog.

Three parts, all computed by the engine when a review opens (the UI only draws them):

* **Files**: the plan's declared scope (``scope.py``; exact entries only when
  they look like files, ``lint.file_like``) with each exact path's
  current size from one ``lstat`` (``lint.probe_path``: symlinks that lead out
  of the project are shown as "outside" and never sized; nothing is opened).
  A missing path is "new"; directories and globs are listed unsized.
* **Commands**: the Verification commands and, for each permission mode the
  dialog offers, whether the permission engine would ask before running it
  (``CommandCheck``: ``PermissionController.command_verdict`` in the app, the
  plan guard otherwise).
* **Estimate**: tokens and cost for executing the plan, as a range. A rough
  order of magnitude, not a quote. The heuristic (``estimate``):

  - model calls ≈ 3 per step (read, edit, tick) + 1 per Verification command + 2;
  - each call sends the context: the conversation's current size from the
    context accounting (at least ``BASE_CONTEXT_TOKENS`` for the system prompt
    and tools) plus the plan; files read stay in the context, so on average
    half of the scope files' tokens ride along on every call;
  - output ≈ ``OUTPUT_PER_STEP`` per step plus a quarter of the scope files'
    tokens (edits rewrite parts of files);
  - tokens are bytes / ``CHARS_PER_TOKEN``; the range is half to twice the
    middle, widened to include the last run of this plan when its run record
    (``<plan>.run.json``) holds tokens or cost; cost uses the configured price
    of the model (``prices`` in the config), none when no price is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from planshell.agent.compaction import CHARS_PER_TOKEN, estimate_tokens
from planshell.plan.document import parse_plan
from planshell.plan.evidence import RunRecord
from planshell.plan.lint import file_like, probe_path
from planshell.plan.report import verification_commands
from planshell.plan.scope import plan_scope
from planshell.plan.store import PlanStore, PlanStoreError

__all__ = [
    "BASE_CONTEXT_TOKENS",
    "MODES",
    "BlastRadius",
    "CommandCheck",
    "CommandLine",
    "Estimate",
    "FileLine",
    "PastRun",
    "blast_radius",
    "estimate",
    "past_run",
]

MODES = ("ask", "accept-edits", "auto")
MAX_FILES = 100  # shown and sized; the rest are counted
MAX_COMMANDS = 30
BASE_CONTEXT_TOKENS = 6_000  # system prompt and tool specs, when the conversation is smaller
OUTPUT_PER_STEP = 600
CALLS_PER_STEP = 3

CommandCheck = Callable[[str, str], tuple[str, str]]
"""(command, permission mode) -> (action "allow"/"ask"/"deny", why): no prompt, no log."""
PriceFn = Callable[[int, int], float | None]
"""(input tokens, output tokens) -> US dollars, or None when no price is configured."""


@dataclass(frozen=True)
class FileLine:
    """A scope entry: ``status`` is file, new, directory, glob, outside, special or unknown."""

    entry: str
    status: str
    size: int | None = None


@dataclass(frozen=True)
class CommandLine:
    """A Verification command and, per mode, what the permission engine would do."""

    command: str
    verdicts: tuple[tuple[str, str, str], ...]  # (mode, action, why)

    def verdict(self, mode: str) -> tuple[str, str]:
        """(action, why) in ``mode``; ("ask", …) when the mode was not evaluated."""
        for name, action, why in self.verdicts:
            if name == mode:
                return action, why
        return "ask", "not evaluated"


@dataclass(frozen=True)
class PastRun:
    """An earlier execution of this plan, from its run record."""

    tokens: int | None
    cost: float | None


@dataclass(frozen=True)
class Estimate:
    calls: int
    tokens_low: int
    tokens_high: int
    cost_low: float | None = None
    cost_high: float | None = None


@dataclass(frozen=True)
class BlastRadius:
    files: tuple[FileLine, ...]
    more_files: int
    commands: tuple[CommandLine, ...]
    estimate: Estimate
    history: PastRun | None = None

    def asking(self, mode: str) -> list[CommandLine]:
        """The commands that would need approval (or be denied) in ``mode``."""
        return [c for c in self.commands if c.verdict(mode)[0] != "allow"]


def _files(text: str, root: Path) -> tuple[list[FileLine], int]:
    scope = plan_scope(text)
    lines: list[FileLine] = []
    paths = sorted(p for p in scope.paths if file_like(p))  # not symbols such as `list_widgets`
    for entry in paths[:MAX_FILES]:
        found = probe_path(root, entry)
        status = "new" if found.status == "missing" else found.status
        lines.append(FileLine(entry, status, found.size))
    room = max(0, MAX_FILES - len(lines))
    others = [*(FileLine(d, "directory") for d in scope.directories)]
    others += [FileLine(g, "glob") for g in scope.globs]
    lines += others[:room]
    return lines, len(paths) + len(others) - len(lines)


def estimate(
    text: str,
    file_bytes: int,
    commands: int,
    *,
    context_tokens: int = 0,
    price: PriceFn | None = None,
    history: PastRun | None = None,
) -> Estimate:
    """The documented heuristic (module docstring): a range of tokens and cost."""
    steps = max(1, parse_plan(text).total_steps)
    calls = CALLS_PER_STEP * steps + commands + 2
    file_tokens = int(file_bytes / CHARS_PER_TOKEN)
    per_call = max(context_tokens, BASE_CONTEXT_TOKENS) + estimate_tokens(text)
    tokens_in = calls * per_call + calls * file_tokens // 2
    tokens_out = OUTPUT_PER_STEP * steps + file_tokens // 4
    middle = tokens_in + tokens_out
    low, high = middle // 2, middle * 2
    cost_low = cost_high = None
    cost = price(tokens_in, tokens_out) if price is not None else None
    if cost is not None:
        cost_low, cost_high = cost / 2, cost * 2
    if history is not None:
        if history.tokens is not None:
            low, high = min(low, history.tokens), max(high, history.tokens)
        if history.cost is not None and cost_low is not None and cost_high is not None:
            cost_low, cost_high = min(cost_low, history.cost), max(cost_high, history.cost)
    return Estimate(calls, low, high, cost_low, cost_high)


def past_run(store: PlanStore, plan: Path) -> PastRun | None:
    """The last run's tokens and cost from ``<plan>.run.json``, if it recorded any."""
    try:
        raw = store.read_run(plan)
    except PlanStoreError:
        return None
    record = RunRecord.from_json(raw) if raw is not None else None
    if record is None or (record.tokens is None and record.cost is None):
        return None
    return PastRun(record.tokens, record.cost)


def blast_radius(
    text: str,
    root: Path,
    *,
    check: CommandCheck,
    modes: tuple[str, ...] = MODES,
    context_tokens: int = 0,
    price: PriceFn | None = None,
    history: PastRun | None = None,
) -> BlastRadius:
    """The card's contents for plan ``text`` in the project at ``root``."""
    files, more = _files(text, root)
    commands = tuple(
        CommandLine(command, tuple((mode, *check(command, mode)) for mode in modes))
        for command in verification_commands(text)[:MAX_COMMANDS]
    )
    file_bytes = sum(f.size or 0 for f in files if f.status == "file")
    guess = estimate(
        text,
        file_bytes,
        len(commands),
        context_tokens=context_tokens,
        price=price,
        history=history,
    )
    return BlastRadius(tuple(files), more, commands, guess, history)
