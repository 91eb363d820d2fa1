"""/resume: pick an earlier conversation of this project.

Enter (or a click) resumes only once the dialog is ready (``KeyGrace``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace

MAX_SESSIONS = 50  # listed
MAX_SCANNED = 200  # read to find them (empty logs are skipped)


def describe_session(path: Path) -> Text | None:
    """One line for the list, or None for a conversation without messages."""
    from planshell.agent.session import SessionLog

    try:
        loaded = SessionLog.load(path)
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
    except OSError:
        return None
    count = sum(1 for m in loaded.messages if m.role == "user")
    if count == 0:
        return None
    first = " ".join(strip_terminal_controls(loaded.first_prompt).split()) or "(no text)"
    if len(first) > 70:
        first = first[:69] + "…"
    text = Text()
    text.append(stamp, style="bold")
    text.append(f"  {first}")
    text.append(f"  · {count} message{'s' if count != 1 else ''} · {path.stem}", style="dim")
    return text


def describe_sessions(paths: list[Path]) -> list[tuple[Path, Text]]:
    out: list[tuple[Path, Text]] = []
    for path in paths[:MAX_SCANNED]:
        text = describe_session(path)
        if text is not None:
            out.append((path, text))
            if len(out) >= MAX_SESSIONS:
                break
    return out


class ResumeScreen(KeyGrace, ModalScreen[Path | None]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, sessions: list[Path], current: Path | None = None) -> None:
        super().__init__(classes="resume")
        self.candidates = [p for p in sessions if p != current]
        self.sessions: list[Path] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("Resume a conversation", style="bold"), id="title")
            yield Static("Reading the conversations…", id="empty")
            sessions = OptionList(id="sessions")
            sessions.display = False
            yield sessions
            yield Static(Text("enter resume · esc cancel", style="dim"), id="hint")

    async def on_mount(self) -> None:
        found = await asyncio.to_thread(describe_sessions, self.candidates)
        self.sessions = [path for path, _ in found]
        empty = self.query_one("#empty", Static)
        if not found:
            empty.update("No earlier conversations in this project.")
            return
        empty.display = False
        options = self.query_one("#sessions", OptionList)
        options.add_options([Option(text, id=str(i)) for i, (_, text) in enumerate(found)])
        options.display = True
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.keys_ready:  # not a click from before the dialog was ready
            self.dismiss(self.sessions[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
