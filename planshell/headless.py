"""``planshell -p``: one request, no UI, the final answer on stdout.

stdout carries the model's final answer only (rendered as terminal markdown
when stdout is a terminal, the markdown source when piped or redirected: a
file or the next program gets code blocks and links intact, with terminal
escapes removed, and no wrapping to a guessed width); tool calls, mode changes
and the provider go to stderr with ``--verbose``; problems go to stderr. Text
the engine wrote *for the model* (plan decisions, "stop now and end your
turn") never reaches stdout, even when the model repeats it.

Exit codes: 0 done; 1 an error was shown; 3 a plan awaits approval; 4 a
plan-mode run ended without writing a plan (the model answered in prose).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
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

# Tools whose results are the engine's or the decider's words to the model.
PLAN_DECISION_TOOLS = frozenset({"enter_plan_mode", "exit_plan_mode", "cancel_plan_mode"})
# A repeated line shorter than this is too generic to call a quotation ("Done.").
MIN_QUOTED = 24

HEADLESS_REMEDY = {
    "retry": "Run the same command again to retry.",
    "continue": 'Continue with: planshell --continue -p "…"',
}


def shell_word(path: Path) -> str:
    """PATH as one word a shell reads back exactly, so a pasted hint opens that file.

    The repository chose the directory name: spaces and quotes go through
    ``shlex.quote``; a name with control characters is written in bash's ``$'…'``
    form with escapes, so nothing unprintable reaches the terminal.
    """
    text = str(path)
    if text.isprintable():
        return shlex.quote(text)
    escaped = "".join(
        chr(byte) if 0x20 < byte < 0x7F and byte not in b"\\'" else f"\\x{byte:02x}"
        for byte in os.fsencode(text)  # bytes, so a non-UTF-8 name round-trips too
    )
    return f"$'{escaped}'"


def error_text(event: ev.ErrorEvent) -> str:
    """The error with advice that works without the TUI (no /retry)."""
    advice = HEADLESS_REMEDY.get(event.remedy, "")
    if event.partial:
        advice = "The partial reply was discarded. " + advice
    return f"{event.message.rstrip()} {advice}".rstrip()


def strip_model_directed(answer: str, directed: list[str]) -> str:
    """Drop lines of ``answer`` that repeat text written for the model."""
    if not directed:
        return answer
    kept = []
    for line in answer.splitlines():
        core = line.strip().strip("*_>` ")
        if len(core) >= MIN_QUOTED and any(core in text for text in directed):
            continue
        kept.append(line)
    return "\n".join(kept).strip("\n")


def render_answer(answer: str, out: TextIO) -> None:
    """Markdown rendered for a terminal (Rich), the markdown source when piped."""
    if not answer.strip():
        return
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=out, highlight=False).print(Markdown(answer))
        return
    out.write(answer.rstrip("\n") + "\n")


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
    replies: list[str] = []
    directed: list[str] = []  # results of plan-decision tools: words for the model

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.AssistantDone):
            replies.append(event.text)
            if verbose and event.text.strip():
                err.write(f"· {plain_line(event.text, 300)}\n")
        elif isinstance(event, ev.ErrorEvent):
            failed.append(event.message)
            err.write(f"error: {strip_terminal_controls(error_text(event))}\n")
        elif isinstance(event, ev.TurnDone) and event.cut_off_note:
            err.write(f"warning: {event.cut_off_note}\n")  # the answer above is incomplete
        elif isinstance(event, ev.Notice) and event.level in ("warning", "error"):
            err.write(f"{event.level}: {strip_terminal_controls(event.message)}\n")
        elif isinstance(event, ev.ToolFinished):
            if event.name in PLAN_DECISION_TOOLS:
                directed.append(event.content)
            if verbose and event.is_error:
                first = strip_terminal_controls(event.content).splitlines()[:1]
                err.write(f"  ✗ {first[0] if first else 'failed'}\n")
        elif verbose and isinstance(event, ev.ToolStarted):
            err.write(f"→ {strip_terminal_controls(event.headline)}\n")
        elif verbose and isinstance(event, ev.ToolProgress):
            err.write(f"  ↳ {strip_terminal_controls(event.line)}\n")
        elif verbose and isinstance(event, ev.ModeChanged):
            err.write(f"mode: {event.previous} -> {event.mode}\n")
        elif verbose and isinstance(event, ev.PermissionModeChanged):
            err.write(f"permissions: {event.previous} -> {event.mode}\n")
        elif verbose and isinstance(event, ev.Notice):  # information ("… permissions back to ask.")
            err.write(f"note: {strip_terminal_controls(event.message)}\n")

    unsubscribe = runtime.agent.subscribe(on_event)
    if runtime.plan.sandbox_warning and runtime.plan.mode.value == "plan":
        # Plan mode was entered (--plan, a resumed session) before anyone listened.
        err.write(f"warning: {strip_terminal_controls(runtime.plan.sandbox_warning)}\n")
    for notice in runtime.read_notices:
        err.write(f"warning: {strip_terminal_controls(notice)}\n")
    served = await runtime.adopt_served_model()  # no model chosen: one the server has
    if served is not None:
        err.write(f"note: {served.headless_text()}\n")
    if verbose:
        err.write(f"provider: {runtime.provider.label}\nproject: {runtime.root}\n")
        if runtime.phases is not None and runtime.phases.split:
            err.write(f"models: {strip_terminal_controls(runtime.phases.describe())}\n")
        # The mode at the start: --plan or a resumed session entered it before we listened.
        err.write(f"mode: {runtime.plan.mode.value}\n")
        if runtime.permissions is not None:
            err.write(f"permissions: {runtime.permissions.mode.value}\n")
        for problem in runtime.problems:
            err.write(f"warning: {problem}\n")
    if prompt.strip() == INIT_COMMAND:
        # /init: the person's command enters PLAN for the AGENTS.md plan (questions are skipped).
        prompt = start_init(runtime.plan)
    try:
        runtime.start_mcp()
        await runtime.agent.submit(prompt)
    finally:
        unsubscribe()
        await runtime.stop_mcp()
        runtime.close()
    if decider.awaiting is not None:
        # What the model said after the review answered the engine, not the user:
        # the user's answer is the plan itself.
        shown = plain_line(runtime.agent.ctx.display(decider.awaiting), 500)
        if decider.awaiting_diff:
            # A plan changed since its approval: what changed, for the person (not the model).
            err.write(strip_terminal_controls(decider.awaiting_diff).rstrip("\n") + "\n")
        out.write(f"Plan awaiting approval: {shown}\n")
        # Absolute: the hint must work from wherever the person is (-C DIR, another cwd).
        err.write(f"Review and approve it with: planshell review {shell_word(decider.awaiting)}\n")
        for point in decider.awaiting_critic:  # already sanitised one-liners
            err.write(f"critic: {point}\n")
        return EXIT_ERROR if failed else EXIT_AWAITING_APPROVAL
    final = next((text for text in reversed(replies) if text.strip()), "")
    render_answer(strip_model_directed(strip_terminal_controls(final), directed), out)
    if failed:
        return EXIT_ERROR
    if runtime.plan_turns is not None and runtime.plan_turns.last_turn_without_plan:
        return EXIT_NO_PLAN  # the Notice already said so on stderr
    return EXIT_OK
