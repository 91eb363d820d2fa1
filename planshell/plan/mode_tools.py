"""Which plan tools each mode offers: a tool that can only fail is not offered.

A lean tool list matters (small-context models pay for every schema). Tools
not listed here follow the user's set and, in PLAN, the plan policy.
"""

from __future__ import annotations

from collections.abc import Iterable

from planshell.agent.events import Mode

MODE_TOOLS: dict[str, frozenset[Mode]] = {
    "enter_plan_mode": frozenset({Mode.OFF, Mode.EXECUTE}),
    "write_plan": frozenset({Mode.PLAN}),
    "exit_plan_mode": frozenset({Mode.PLAN}),
    "cancel_plan_mode": frozenset({Mode.PLAN}),
    "ask_questions": frozenset({Mode.PLAN}),
    "set_plan_steps": frozenset({Mode.EXECUTE}),
    "amend_plan": frozenset({Mode.EXECUTE}),
    "plan_complete": frozenset({Mode.EXECUTE}),
}


def mode_tool_names(active: Iterable[str], registered: Iterable[str], mode: Mode) -> list[str]:
    """``active`` without the plan tools ``mode`` cannot use, plus the registered ones it can.

    In PLAN nothing is added: the policy chose the set already.
    """
    names = [n for n in active if n not in MODE_TOOLS or mode in MODE_TOOLS[n]]
    if mode is not Mode.PLAN:
        known = set(registered)
        names += [
            n for n, modes in MODE_TOOLS.items() if mode in modes and n in known and n not in names
        ]
    return names
