"""Turns that end without what plan mode expects.

A plan-mode turn is meant to end in ``write_plan`` (and usually
``exit_plan_mode``). One that ends with prose only looks, in a transcript or a
script, just like success; this watcher says so at the end of the turn and
remembers it for headless mode's exit code.
"""

from __future__ import annotations

from collections.abc import Callable

from planshell.agent import events as ev
from planshell.agent.events import Mode

PLAN_TOOLS = frozenset({"write_plan", "exit_plan_mode"})
NO_PLAN_NOTICE = "No plan was written: ask again or refine the request."


class PlanTurnWatch:
    """Subscribe to the agent's bus; emits a Notice when a PLAN turn wrote no plan.

    A turn counts from one ``TurnDone`` to the next, so a ``/retry`` (which
    starts no new ``TurnStarted``) is watched like any other turn. Cancelled,
    failed and paused turns already say what happened and get no notice.
    """

    def __init__(self, emit: Callable[[ev.Event], None], mode: Callable[[], Mode]) -> None:
        self._emit = emit
        self._mode = mode
        self._planned = False
        self.last_turn_without_plan = False

    def __call__(self, event: ev.Event) -> None:
        match event:
            case ev.TurnStarted():
                self._planned = False
                self.last_turn_without_plan = False
            case ev.ToolFinished(name=name, is_error=False) if name in PLAN_TOOLS:
                self._planned = True
            case ev.TurnDone(stop_reason=reason, cancelled=cancelled):
                planned, self._planned = self._planned, False
                self.last_turn_without_plan = (
                    not planned
                    and not cancelled
                    and reason not in ("error", "paused")  # paused: a changed plan said why
                    and self._mode() is Mode.PLAN
                )
                if self.last_turn_without_plan:
                    self._emit(ev.Notice(NO_PLAN_NOTICE, "warning"))
            case _:
                pass
