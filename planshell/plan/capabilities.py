"""``/plan why``: what plan mode allows and why, as one markdown report.

A report only: it reads the policy, the guard, the plan exec policy and the
write barrier's snapshot, and changes none of them. The controller hands in
its live pieces, so the report always describes the state in force now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from planshell.agent.events import Mode
from planshell.plan.policy import PlanPolicy
from planshell.plan.receipt import Receipt, Snapshot
from planshell.tools.base import ExecPolicy
from planshell.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from planshell.config import PlanBashSettings


def capabilities_report(
    *,
    mode: Mode,
    registry: ToolRegistry,
    policy: PlanPolicy,
    bash: PlanBashSettings,
    exec_policy: ExecPolicy,
    snapshot: Snapshot | None,
    receipt: Callable[[], Receipt | None],
) -> str:
    """The tool table, the bash gate and sandbox, git hardening and the write barrier.

    ``receipt`` is called only when a snapshot exists: comparing hashes files,
    so a caller runs this from a worker, not a paint.
    """
    from planshell.sandbox.gitsafe import GIT_OVERRIDES, SHIM_FLAGS, git_shim_dir

    lines = [
        f"## Plan mode capabilities (mode: {mode.value})",
        "",
        "| tool | in plan mode | why |",
        "|---|---|---|",
    ]
    for name, allowed, why in policy.explain(registry):
        lines.append(f"| `{name}` | {'allowed' if allowed else 'blocked'} | {why} |")
    guard = policy.guard
    safe = (
        f"custom ({len(bash.safe_patterns or [])} patterns)"
        if guard.uses_custom_safe
        else "built-in"
    )
    destructive = (
        f"custom ({len(bash.destructive_patterns or [])} patterns)"
        if guard.uses_custom_destructive
        else "built-in"
    )
    lines += [
        "",
        "### Shell commands (`bash`)",
        "",
        "- **Gate**: every command must be proved read-only by the bash guard "
        "(`planshell check-command` tests one).",
        f"- **Guard patterns**: safe: {safe}; destructive: {destructive}.",
    ]
    for warning in guard.warnings + policy.warnings:
        lines.append(f"- **Warning**: {warning}")
    status = getattr(exec_policy, "status", None)
    if status is not None:
        lines.append(f"- **Sandbox**: {status.state}: {status.reason}.")
        if status.how:
            lines.append(f"- **To get the sandbox**: {status.how}.")
    else:
        lines.append(f"- **Sandbox**: {exec_policy.label or 'none'}.")
    if exec_policy.refusal:
        lines.append("- **Refused**: plan-mode bash runs nothing until the sandbox is available.")
    by_flags: dict[tuple[str, ...], list[str]] = {}
    for sub, flags in SHIM_FLAGS.items():
        by_flags.setdefault(flags, []).append(sub)
    inserted = "; ".join(
        f"`{' '.join(flags)}` for {', '.join(subs)}" for flags, subs in by_flags.items()
    )
    lines += [
        "",
        "### Git hardening",
        "",
        "- **Config overrides** (beat repository config): "
        + ", ".join(f"`{k}={v}`" for k, v in GIT_OVERRIDES)
        + ".",
        (
            f"- **git shim** first on PATH: inserts {inserted}; blanks the content "
            "filters (`filter.<driver>.clean/smudge/process`) the config defines."
            if git_shim_dir() is not None
            else "- **git shim**: not available (git or bash not found)."
        ),
        "",
        "### Write barrier",
        "",
    ]
    if snapshot is None:
        lines.append("- A snapshot of the work tree is taken when plan mode starts.")
    else:
        now = receipt()
        taken = snapshot.taken_at.astimezone().strftime("%H:%M:%S")
        state = now.summary if now is not None else "not checked"
        lines.append(f"- Snapshot taken at {taken} ({snapshot.kind}); now: {state}.")
    return "\n".join(lines) + "\n"
