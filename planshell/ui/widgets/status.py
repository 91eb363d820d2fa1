"""The status bar: mode chip (+ plan-mode sandbox marker), provider, project, tokens, activity."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
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
MARKER_TEXT = {"guarded": "⚠ guard only — no sandbox", "checking": "checking sandbox"}


def abbreviate_home(path: Path, home: str | None = None) -> str:
    text = str(path)
    home = home if home is not None else os.path.expanduser("~")
    if home and home != "/" and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


def fit_path(text: str, width: int) -> str:
    """The path whole, else its last components after ``…/``, else nothing.

    Shortened only at a ``/``: a name is never cut (``…26/proj`` read as a
    different directory), and a last name too long for the room drops the path.
    """
    if cell_len(text) <= width:
        return text
    parts = text.split("/")
    for start in range(1, len(parts)):
        tail = "/".join(parts[start:])
        if tail and cell_len(tail) + 2 <= width:
            return "…/" + tail
    return ""


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
    """The project directory, ~-abbreviated; shortened by whole components to fit."""

    text: reactive[str] = reactive("", layout=True)

    def render(self) -> Text:
        return Text(fit_path(self.text, self.size.width), no_wrap=True)


# When the row is too narrow, these go first to last, each whole (never a cut word):
# the sub-agent count, the provider, the sandbox suffix, the plan title in the chip,
# the project path, the context count. The warnings (permission mode, plan-mode
# marker), the activity with its "esc to stop" and the chip itself stay longest.
DROP_ORDER = (
    "subagents",
    "provider",
    "sandbox-suffix",
    "chip-title",
    "project",
    "tokens",
    "permission-mode",
    "plan-marker",
    "activity",
)
PROJECT_MIN = 4  # cells the project path needs to be worth showing


class StatusBar(Horizontal):
    """One row at the bottom. The screen pushes values in; nothing is polled here.

    Each segment is shown whole or not at all: when the row is too narrow,
    segments are dropped in ``DROP_ORDER`` until the rest fits (Textual would
    cut the last ones mid-word: ``esc to sto``, ``+120 sub-agen``).
    """

    def __init__(
        self, project: str, labels: PlanLabels | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self._project = project
        self._labels = labels
        self._marker = ""
        self._marker_hidden = False
        self._chip_hidden = False
        self._permission: tuple[str | None, bool] = (None, False)
        self._activity = Text("")
        self._context_reading: tuple[int, int | None, float | None] = (0, None, None)
        self._subagent_tokens = 0
        self._dropped: frozenset[str] = frozenset()

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
        yield Static("", id="subagents")

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

    @property
    def dropped(self) -> frozenset[str]:
        """What the last fit left out for want of room (names from ``DROP_ORDER``)."""
        return self._dropped

    def set_marker(self, label: str | None, *, hidden: bool = False) -> None:
        """How plan-mode bash runs, next to the chip; None hides it (OFF, EXECUTE)."""
        self._marker = label or ""
        self._marker_hidden = hidden
        marker = self.marker
        for name in MARKERS:
            marker.set_class(name == label, f"-{name}")
        marker.update(Text(MARKER_TEXT.get(label or "", label or "")))
        self.fit()

    def hide_chip(self, hidden: bool) -> None:
        """``plan.ui.hide_widget``: no chip and no marker."""
        self._chip_hidden = hidden
        self._marker_hidden = hidden
        self.fit()

    def set_permission_mode(self, mode: str | None, *, sandbox: bool = False) -> None:
        """The approval mode outside plan mode (None hides it, e.g. in PLAN); auto warns.

        ``sandbox``: bash is known to run in the workspace sandbox (a small suffix).
        """
        widget = self.query_one("#permission-mode", Static)
        for name in PERMISSION_TEXT:
            widget.set_class(name == mode, f"-{name}")
        widget.set_class(bool(mode), "-shown")
        self._permission = (mode, sandbox)
        self.fit()

    def on_resize(self) -> None:
        # Narrow: the default "ask" gives its room to the project path (others still show).
        self.set_class(self.size.width < NARROW, "-narrow")
        self.fit()

    def on_mode_chip_changed(self) -> None:
        self.fit()

    def set_project(self, label: str) -> None:
        self.query_one(ProjectPath).text = label

    def set_provider(self, label: str, *, demo: bool) -> None:
        widget = self.query_one("#provider", Static)
        widget.update(Text(label))
        widget.set_class(demo, "-demo")
        widget.remove_class("-starting")
        self.fit()

    def set_tokens(self, tokens: int | None) -> None:
        self.set_context(tokens or 0, None)

    def set_context(self, used: int, window: int | None, cost: float | None = None) -> None:
        """``used / window`` (and the session cost when priced); warning colour past 80%."""
        self._context_reading = (used, window, cost)
        widget = self.query_one("#tokens", Static)
        widget.update(Text(format_context(used, window, cost) if used or cost else ""))
        widget.set_class(bool(window) and used >= WARN_FRACTION * (window or 1), "-warning")
        self.fit()

    def set_subagent_tokens(self, tokens: int) -> None:
        """Tokens every sub-agent of this session used (shown after the context size)."""
        self._subagent_tokens = tokens
        self.fit()

    def set_activity(self, frame: int | None, elapsed: float = 0.0) -> None:
        """``frame`` None: idle (nothing shown, so snapshots are stable)."""
        widget = self.query_one("#activity", Static)
        if frame is None:
            self._activity = Text("")
            widget.update("")
            widget.remove_class("-busy")
            self.fit()
            return
        widget.add_class("-busy")
        self._activity = Text.assemble(
            (SPINNER[frame % len(SPINNER)], "bold"),
            f" working {format_elapsed(elapsed)} · ",
            ("esc", "bold"),
            " to stop",
        )
        widget.update(self._activity)
        self.fit()

    # --- fitting ------------------------------------------------------------------------

    def _permission_text(self, suffix: bool) -> Text:
        mode, sandbox = self._permission
        text = Text(PERMISSION_TEXT.get(mode or "", mode or ""))
        if mode and sandbox and suffix:
            text.append(f" · {SANDBOX_TEXT}", style="dim")
        return text

    def _wanted(self) -> dict[str, int]:
        """Cells each segment that has something to show needs (without its margins)."""
        mode, _ = self._permission
        used, _, cost = self._context_reading
        wanted: dict[str, int] = {}
        if not self._chip_hidden:
            wanted["mode-chip"] = 0  # measured per fit: with or without its title
        if self._marker and not self._marker_hidden:
            wanted["plan-marker"] = cell_len(MARKER_TEXT.get(self._marker, self._marker))
        if mode and not (self.size.width < NARROW and mode == "ask"):
            wanted["permission-mode"] = 0  # measured per fit: with or without the suffix
        provider = self.query_one("#provider", Static)
        wanted["provider"] = cell_len(str(provider.render()))
        wanted["project"] = PROJECT_MIN
        if self._activity.plain:
            wanted["activity"] = self._activity.cell_len
        if used or cost:
            wanted["tokens"] = cell_len(str(self.query_one("#tokens", Static).render()))
        if self._subagent_tokens:
            wanted["subagents"] = 0  # " · " before it only after the context count
        return wanted

    def _layout(self, dropped: set[str]) -> tuple[dict[str, Text], int]:
        """The texts of the segments kept, and the cells they take with their margins."""
        wanted = self._wanted()
        texts: dict[str, Text] = {}
        total = 0
        chip = self.chip
        for child in self.children:
            name = str(child.id)
            if name not in wanted or name in dropped:
                continue
            if name == "mode-chip":
                text = Text(f" {chip.label_text(with_title='chip-title' not in dropped)} ")
            elif name == "permission-mode":
                text = self._permission_text("sandbox-suffix" not in dropped)
            elif name == "subagents":
                lead = " · " if "tokens" in wanted and "tokens" not in dropped else ""
                text = Text(f"{lead}+{format_tokens(self._subagent_tokens)} sub-agents")
            else:
                text = Text(" " * wanted[name])
            texts[name] = text
            margin = child.styles.margin
            total += text.cell_len + margin.left + margin.right
        return texts, total

    def fit(self) -> None:
        """Show each segment whole or not at all, dropping in ``DROP_ORDER`` to fit."""
        width = self.size.width
        if not self.is_mounted or width <= 0:
            return
        dropped: set[str] = set()
        texts, total = self._layout(dropped)
        for name in DROP_ORDER:
            if total <= width:
                break
            dropped.add(name)
            texts, total = self._layout(dropped)
        self._dropped = frozenset(dropped)
        self.chip.show_title("chip-title" not in dropped)
        for child in self.children:
            name = str(child.id)
            child.display = name in texts
        if "permission-mode" in texts:
            self.query_one("#permission-mode", Static).update(texts["permission-mode"])
        if "subagents" in texts:
            self.query_one("#subagents", Static).update(texts["subagents"])
