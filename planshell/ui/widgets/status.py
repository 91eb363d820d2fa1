"""The status bar: mode chip (+ plan-mode sandbox marker), provider, project, tokens, activity."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from planshell.ui.widgets.mode_chip import ModeChip

if TYPE_CHECKING:
    from planshell.config import PlanLabels

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# Plan-mode bash: in the bubblewrap sandbox, guarded only, or refused (sandbox required);
# "checking" while the one-off sandbox probe runs.
MARKERS = ("sandboxed", "guarded", "refused", "checking")
# What the marker says: guard-only must not read like a reassurance.
MARKER_TEXT = {"guarded": "⚠ guard only — no sandbox", "checking": "sandbox…"}


def abbreviate_home(path: Path, home: str | None = None) -> str:
    text = str(path)
    home = home if home is not None else os.path.expanduser("~")
    if home and home != "/" and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


def truncate_left(text: str, width: int) -> str:
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    if width == 1:
        return "…"
    return "…" + text[-(width - 1) :]


def format_tokens(tokens: int) -> str:
    if tokens < 1000:
        return f"{tokens}"
    if tokens < 100_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens // 1000}k"


def format_elapsed(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m{seconds % 60:02d}s"


class ProjectPath(Widget):
    """The project directory, ~-abbreviated and cut from the left to fit."""

    text: reactive[str] = reactive("", layout=True)

    def render(self) -> Text:
        return Text(truncate_left(self.text, self.size.width), no_wrap=True)


class StatusBar(Horizontal):
    """One row at the bottom. The screen pushes values in; nothing is polled here."""

    def __init__(self, project: str, labels: PlanLabels | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self._project = project
        self._labels = labels
        self._marker = ""
        self._tokens: int | None = None
        self._subagent_tokens = 0

    def compose(self) -> ComposeResult:
        yield ModeChip(self._labels, id="mode-chip")
        marker = Static("", id="plan-marker")
        marker.display = False
        yield marker
        yield Static(Text("starting…"), id="provider", classes="-starting")
        path = ProjectPath(id="project")
        path.text = self._project
        yield path
        yield Static("", id="activity")
        yield Static("", id="tokens")

    @property
    def chip(self) -> ModeChip:
        return self.query_one(ModeChip)

    @property
    def marker(self) -> Static:
        return self.query_one("#plan-marker", Static)

    @property
    def marker_label(self) -> str:
        """The marker shown in PLAN ("sandboxed", "guarded", "refused"), "" when none."""
        return self._marker

    def set_marker(self, label: str | None, *, hidden: bool = False) -> None:
        """How plan-mode bash runs, next to the chip; None hides it (OFF, EXECUTE)."""
        self._marker = label or ""
        marker = self.marker
        for name in MARKERS:
            marker.set_class(name == label, f"-{name}")
        marker.update(Text(MARKER_TEXT.get(label or "", label or "")))
        marker.display = bool(label) and not hidden

    def set_project(self, label: str) -> None:
        self.query_one(ProjectPath).text = label

    def set_provider(self, label: str, *, demo: bool) -> None:
        widget = self.query_one("#provider", Static)
        widget.update(Text(label))
        widget.set_class(demo, "-demo")
        widget.remove_class("-starting")

    def set_tokens(self, tokens: int | None) -> None:
        self._tokens = tokens
        self._show_tokens()

    def set_subagent_tokens(self, tokens: int) -> None:
        """Tokens every sub-agent of this session used (shown after the context size)."""
        self._subagent_tokens = tokens
        self._show_tokens()

    def _show_tokens(self) -> None:
        parts = [f"{format_tokens(self._tokens)} ctx"] if self._tokens else []
        if self._subagent_tokens:
            parts.append(f"+{format_tokens(self._subagent_tokens)} sub-agents")
        self.query_one("#tokens", Static).update(Text(" · ".join(parts)))

    def set_activity(self, frame: int | None, elapsed: float = 0.0) -> None:
        """``frame`` None: idle (nothing shown, so snapshots are stable)."""
        widget = self.query_one("#activity", Static)
        if frame is None:
            widget.update("")
            widget.remove_class("-busy")
            return
        widget.add_class("-busy")
        widget.update(
            Text.assemble(
                (SPINNER[frame % len(SPINNER)], "bold"),
                f" working {format_elapsed(elapsed)} · ",
                ("esc", "bold"),
                " to stop",
            )
        )
