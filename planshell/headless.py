"""``planshell -p``: one request, no UI, the answer on stdout.

Exit codes: 0 done; 1 an error was shown; 3 a plan awaits approval; 4 a
plan-mode run ended without writing a plan (the model answered in prose).
"""

from __future__ import annotations

import sys
from typing import TextIO

from planshell.agent import events as ev
from planshell.plan.decider import HeadlessDecider
from planshell.plan.init import INIT_COMMAND, start_init
from planshell.runtime import Runtime
from planshell.sanitize import plain_line, strip_terminal_controls

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_AWAITING_APPROVAL = 3
EXIT_NO_PLAN = 4


async def run_print(
    runtime: Runtime,
    decider: HeadlessDecider,
    prompt: str,
    *,
    verbose: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    failed: list[str] = []
    ended_with_newline = True

    def on_event(event: ev.Event) -> None:
        nonlocal ended_with_newline
        if isinstance(event, ev.TextDelta):
            text = strip_terminal_controls(event.text)
            if text:
                out.write(text)
                out.flush()
                ended_with_newline = text.endswith("\n")
        elif isinstance(event, ev.AssistantDone) and not ended_with_newline:
            out.write("\n")
            ended_with_newline = True
        elif isinstance(event, ev.ErrorEvent):
            failed.append(event.message)
            err.write(f"error: {strip_terminal_controls(event.message)}\n")
        elif isinstance(event, ev.Notice) and event.level in ("warning", "error"):
            err.write(f"{event.level}: {strip_terminal_controls(event.message)}\n")
        elif verbose and isinstance(event, ev.ToolStarted):
            err.write(f"→ {strip_terminal_controls(event.headline)}\n")
        elif verbose and isinstance(event, ev.ToolProgress):
            err.write(f"  ↳ {strip_terminal_controls(event.line)}\n")
        elif verbose and isinstance(event, ev.ToolFinished) and event.is_error:
            first = strip_terminal_controls(event.content).splitlines()[:1]
            err.write(f"  ✗ {first[0] if first else 'failed'}\n")
        elif verbose and isinstance(event, ev.ModeChanged):
            err.write(f"mode: {event.previous} -> {event.mode}\n")

    unsubscribe = runtime.agent.subscribe(on_event)
    if runtime.plan.sandbox_warning and runtime.plan.mode.value == "plan":
        # Plan mode was entered (--plan, a resumed session) before anyone listened.
        err.write(f"warning: {strip_terminal_controls(runtime.plan.sandbox_warning)}\n")
    if verbose:
        err.write(f"provider: {runtime.provider.label}\nproject: {runtime.root}\n")
        # The mode at the start: --plan or a resumed session entered it before we listened.
        err.write(f"mode: {runtime.plan.mode.value}\n")
        for problem in runtime.problems:
            err.write(f"warning: {problem}\n")
    if prompt.strip() == INIT_COMMAND:
        # /init: the person's command enters PLAN for the AGENTS.md plan (questions are skipped).
        prompt = start_init(runtime.plan)
    try:
        await runtime.agent.submit(prompt)
    finally:
        unsubscribe()
        runtime.close()
    if not ended_with_newline:
        out.write("\n")
    if failed:
        return EXIT_ERROR
    if decider.awaiting is not None:
        shown = plain_line(runtime.agent.ctx.display(decider.awaiting), 500)
        out.write(f"Plan awaiting approval: {shown}\n")
        return EXIT_AWAITING_APPROVAL
    if runtime.plan_turns is not None and runtime.plan_turns.last_turn_without_plan:
        return EXIT_NO_PLAN  # the Notice already said so on stderr
    return EXIT_OK
