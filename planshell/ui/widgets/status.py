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
NARROW = 60  # columns below which the default permission mode is not shown
PERMISSION_TEXT = {"ask": "ask", "accept-edits": "accept edits", "auto": "⚠ auto: nothing asks"}
SANDBOX_TEXT = "workspace sandbox"  # bash outside plan mode runs in it
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


WARN_FRACTION = 0.8  # the context readout turns to the warning colour past this


def format_context(used: int, window: int | None, cost: float | None = None) -> str:
    """``12.3k / 128k ctx · $0.042``; without a window just ``12.3k ctx``."""
    text = (
        f"{format_tokens(used)} / {format_tokens(window)} ctx"
        if window
        else f"{format_tokens(used)} ctx"
    )
    if cost is not None:
        text += f" · ${cost:.3f}" if cost < 10 else f" · ${cost:.2f}"
    return text


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

    def __init__(
        self, project: str, labels: PlanLabels | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self._project = project
        self._labels = labels
        self._marker = ""
        self._context_reading: tuple[int, int | None, float | None] = (0, None, None)
        self._subagent_tokens = 0

    def compose(self) -> ComposeResult:
        yield ModeChip(self._labels, id="mode-chip")
        marker = Static("", id="plan-marker")
        marker.display = False
        yield marker
        yield Static("", id="permission-mode")
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

    def set_permission_mode(self, mode: str | None, *, sandbox: bool = False) -> None:
        """The approval mode outside plan mode (None hides it, e.g. in PLAN); auto warns.

        ``sandbox``: bash is known to run in the workspace sandbox (a small suffix).
        """
        widget = self.query_one("#permission-mode", Static)
        for name in PERMISSION_TEXT:
            widget.set_class(name == mode, f"-{name}")
        text = Text(PERMISSION_TEXT.get(mode or "", mode or ""))
        if mode and sandbox:
            text.append(f" · {SANDBOX_TEXT}", style="dim")
        widget.update(text)
        widget.set_class(bool(mode), "-shown")

    def on_resize(self) -> None:
        # Narrow: the default "ask" gives its room to the project path (others still show).
        self.set_class(self.size.width < NARROW, "-narrow")

    def set_project(self, label: str) -> None:
        self.query_one(ProjectPath).text = label

    def set_provider(self, label: str, *, demo: bool) -> None:
        widget = self.query_one("#provider", Static)
        widget.update(Text(label))
        widget.set_class(demo, "-demo")
        widget.remove_class("-starting")

    def set_tokens(self, tokens: int | None) -> None:
        self.set_context(tokens or 0, None)

    def set_context(self, used: int, window: int | None, cost: float | None = None) -> None:
        """``used / window`` (and the session cost when priced); warning colour past 80%."""
        self._context_reading = (used, window, cost)
        self._show_tokens()

    def set_subagent_tokens(self, tokens: int) -> None:
        """Tokens every sub-agent of this session used (shown after the context size)."""
        self._subagent_tokens = tokens
        self._show_tokens()

    def _show_tokens(self) -> None:
        used, window, cost = self._context_reading
        parts = [format_context(used, window, cost)] if used or cost else []
        if self._subagent_tokens:
            parts.append(f"+{format_tokens(self._subagent_tokens)} sub-agents")
        widget = self.query_one("#tokens", Static)
        widget.update(Text(" · ".join(parts)))
        widget.set_class(bool(window) and used >= WARN_FRACTION * (window or 1), "-warning")

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
