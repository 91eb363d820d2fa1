"""The base system prompt: who the agent is, where it runs, the project's rules."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from planshell.fsutil import ReadRefused, read_project_file

AGENTS_FILE = "AGENTS.md"
AGENTS_MAX_BYTES = 32 * 1024

_IDENTITY = """\
You are planshell, a coding agent working in the user's repository from a terminal.
You can read, search and edit files and run shell commands with the tools you are given.
- Read before you change: look at the relevant files first.
- Keep changes small and focused; follow the project's existing style.
- Prefer the dedicated tools (read, grep, find, ls, edit, write) over shell equivalents.
- When a tool refuses a call, read its message: it says what is allowed instead.
- Be concise. Use markdown. Quote file paths relative to the project root."""


def agents_md(root: Path, notices: list[str] | None = None) -> str | None:
    """The project's AGENTS.md, capped so a huge file cannot eat the context.

    Read through the safe reader: the repository controls this path, and a
    symlink to ``/proc/self/environ`` or ``/dev/zero``, a FIFO or a link out
    of the project is refused with one sentence appended to ``notices``.
    """
    try:
        data = read_project_file(root, Path(AGENTS_FILE), AGENTS_MAX_BYTES, truncate=True)
    except ReadRefused as refused:
        if notices is not None:
            notices.append(refused.message)
        return None
    except OSError:
        return None
    text = data[:AGENTS_MAX_BYTES].decode("utf-8", errors="replace")
    if len(data) > AGENTS_MAX_BYTES:
        text += f"\n[... {AGENTS_FILE} truncated at {AGENTS_MAX_BYTES} bytes ...]"
    return text


def environment(root: Path, today: date) -> str:
    """Where the agent runs: the one part of the prompt that differs between machines."""
    return (
        "## Environment\n"
        f"- Project root (working directory): {root}\n"
        f"- Platform: {platform.system()} {platform.release()}\n"
        f"- Date: {today.isoformat()}"
    )


def base_prompt(
    root: Path,
    today: date | None = None,
    *,
    identity: str = _IDENTITY,
    notices: list[str] | None = None,
) -> str:
    """Who the agent is (``identity``: a sub-agent has its own), where, and AGENTS.md.

    Why AGENTS.md was not read, when it was refused, is appended to ``notices``.
    """
    parts = [identity, environment(root, today or date.today())]
    rules = agents_md(root, notices)
    if rules:
        parts.append(f"## Project instructions ({AGENTS_FILE})\n{rules}")
    return "\n\n".join(parts)
