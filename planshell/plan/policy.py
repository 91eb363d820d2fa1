"""The one plan-mode policy: what is offered to the model and what may run.

The controller uses ``offered`` to swap the tool list; the gate uses ``check``
on every call at run time. Both derive from the same rule, so the two layers
cannot drift apart: a tool may run in plan mode only when its declared effects
are all ``read``, or it is ``bash`` with a command the guard proves read-only,
or it is ``write_plan`` (the plan store contains that write), or it is
``fetch`` (the controller asks the person per domain first: plan/fetch_gate.py).
"""

from __future__ import annotations

from planshell.shell.guard import BashGuard
from planshell.tools.base import Tool, ToolArgs
from planshell.tools.registry import ToolRegistry

GUARDED_TOOLS = frozenset({"bash", "write_plan", "fetch"})
NOT_IN_PLAN = frozenset({"enter_plan_mode"})


class PlanPolicy:
    def __init__(self, guard: BashGuard, allowed_tools: list[str] | None = None) -> None:
        self.guard = guard
        self.allowed_tools = allowed_tools
        self.warnings: list[str] = []

    @staticmethod
    def permitted(tool: Tool) -> bool:
        """The effect rule: default-deny for anything that is not purely read."""
        return tool.name not in NOT_IN_PLAN and (tool.plan_permitted or tool.name in GUARDED_TOOLS)

    def offered(self, registry: ToolRegistry) -> list[str]:
        if self.allowed_tools is None:
            return [t.name for t in registry.all() if self.permitted(t)]
        names: list[str] = []
        self.warnings = []
        for name in self.allowed_tools:
            tool = registry.get(name)
            if tool is None:
                self.warnings.append(f"plan.allowed_tools: no tool named {name!r}; ignored")
            elif not self.permitted(tool):
                self.warnings.append(
                    f"plan.allowed_tools: {name!r} can change files or run programs; "
                    "it is never offered in plan mode"
                )
            else:
                names.append(name)
        for required in ("write_plan", "exit_plan_mode"):
            if registry.get(required) is not None and required not in names:
                names.append(required)
        return names

    def check(self, registry: ToolRegistry, tool: Tool, args: ToolArgs) -> str | None:
        """Refusal message for a plan-mode call, or None when it may run."""
        allowed = self.offered(registry)
        if tool.name not in allowed or not self.permitted(tool):
            effects = ", ".join(sorted(e.value for e in tool.effects)) or "none"
            return (
                f"Plan mode is read-only: {tool.name} (effects: {effects}) is not allowed. "
                f"Available now: {', '.join(allowed)}. Describe the change in the plan "
                "with write_plan instead, then call exit_plan_mode."
            )
        if tool.name == "bash":
            verdict = self.guard.check(str(getattr(args, "command", "")))
            if not verdict.allowed:
                return f"Plan mode allows only read-only shell commands. {verdict.reason}"
        return None

    def explain(self, registry: ToolRegistry) -> list[tuple[str, bool, str]]:
        """Each tool with allowed/blocked and why (for ``/plan why``)."""
        allowed = set(self.offered(registry))
        rows = []
        for tool in registry.all():
            effects = ", ".join(sorted(e.value for e in tool.effects))
            if tool.name in allowed:
                why = {
                    "bash": "only commands the bash guard proves read-only",
                    "write_plan": "writes only the plan file, through the plan store",
                    "task": "its sub-agents are built read-only (this list, this gate, the sandbox)",
                    "fetch": "public addresses only; asks per domain unless in fetch.allow_domains",
                }.get(tool.name, f"effects: {effects}")
                rows.append((tool.name, True, why))
            elif tool.name in NOT_IN_PLAN:
                rows.append((tool.name, False, "already in plan mode"))
            elif not self.permitted(tool):
                rows.append((tool.name, False, f"effects: {effects}"))
            else:
                rows.append((tool.name, False, "not in plan.allowed_tools"))
        return rows
