"""One tool call in the transcript: a one-line headline and a collapsible output."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from planshell.sanitize import strip_terminal_controls

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
BODY_MAX_LINES = 200  # lines of output shown when expanded
BODY_MAX_CHARS = 20_000


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ToolRow(Widget):
    """``✓ read planshell/config.py · 120 lines``; click or ctrl+o shows the output."""

    status: reactive[str] = reactive("running")  # running | ok | error
    expanded: reactive[bool] = reactive(False)

    def __init__(self, call_id: str, name: str, headline: str) -> None:
        super().__init__(classes="tool-row -running")
        self.call_id = call_id
        self.tool_name = name
        self.headline = _one_line(strip_terminal_controls(headline or name), 200)
        self.content = ""
        self.frame = 0

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-header")
        body = Static("", classes="tool-body")
        body.display = False
        yield body

    def on_mount(self) -> None:
        self.watch_status(self.status)

    # --- state ------------------------------------------------------------------

    def finish(self, content: str, is_error: bool) -> None:
        self.content = strip_terminal_controls(content)
        self.status = "error" if is_error else "ok"

    def toggle(self) -> None:
        self.expanded = not self.expanded

    def tick(self, frame: int) -> None:
        """Advance the spinner (driven by the screen's single timer)."""
        if self.status == "running":
            self.frame = frame
            self._refresh_header()

    # --- rendering --------------------------------------------------------------

    def summary(self) -> str:
        if self.status == "running":
            return ""
        if self.status == "error":
            first = next((ln for ln in self.content.splitlines() if ln.strip()), "failed")
            return _one_line(first, 100)
        lines = self.content.count("\n") + (1 if self.content and not self.content.endswith("\n") else 0)
        if not self.content.strip():
            return "no output"
        return f"{lines} line{'s' if lines != 1 else ''}"

    def _header(self) -> Content:
        mark, mark_style = {
            "running": (SPINNER[self.frame % len(SPINNER)], "$accent bold"),
            "ok": ("✓", "$success bold"),
            "error": ("✗", "$error bold"),
        }[self.status]
        name, _, rest = self.headline.partition(" ")
        parts: list[str | tuple[str, str]] = [(mark, mark_style), " ", (name, "bold")]
        if rest:
            parts.append(f" {rest}")
        summary = self.summary()
        if summary:
            style = "$text-error" if self.status == "error" else "$text-muted"
            parts.append((f"  · {summary}", style))
        if self.status != "running" and self.content.strip():
            parts.append(("  ▾" if self.expanded else "  ▸", "$text-muted"))
        return Content.assemble(*parts)

    def _body(self) -> Text:
        content = self.content[:BODY_MAX_CHARS]
        lines = content.splitlines()
        total = self.content.count("\n") + 1
        shown = lines[:BODY_MAX_LINES]
        text = Text("\n".join(shown) or "(no output)")
        hidden = total - len(shown)
        if hidden > 0 or len(self.content) > BODY_MAX_CHARS:
            text.append(f"\n… {max(hidden, 1)} more lines not shown", style="italic")
        return text

    def _refresh_header(self) -> None:
        # query, not is_mounted: the children exist (composed) before the
        # Mount event has been handled, and a finish may land in between.
        for header in self.query(".tool-header").results(Static):
            header.update(self._header())

    def watch_status(self, status: str) -> None:
        for name in ("running", "ok", "error"):
            self.set_class(status == name, f"-{name}")
        self._refresh_header()

    def watch_expanded(self, expanded: bool) -> None:
        bodies = list(self.query(".tool-body").results(Static))
        if not bodies:
            return
        body = bodies[0]
        # Collapsed rows drop their text so long sessions do not keep big renders alive.
        body.update(self._body() if expanded else "")
        body.display = expanded
        self.set_class(expanded, "-expanded")
        self._refresh_header()

    def on_click(self) -> None:
        if self.status != "running":
            self.toggle()
