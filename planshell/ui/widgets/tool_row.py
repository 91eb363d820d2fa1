"""One tool call in the transcript: a one-line headline and a collapsible output.

The headline names the target (``read planshell/config.py``, ``bash pytest -q``)
and, once finished, what came of it: a one-line result (a decision such as
"approved", a refusal) is shown in the headline itself, longer output as a
line count that Enter or a click expands.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from planshell.sanitize import strip_terminal_controls
from planshell.ui.widgets.messages import Entry, Look, chop_lines

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
BODY_MAX_LINES = 200  # lines of output shown when expanded
BODY_MAX_CHARS = 20_000
SUMMARY_MAX = 100  # a one-line result up to this long is shown in the headline


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ToolRow(Entry):
    """``✓ read planshell/config.py · 120 lines ▸``; Enter or a click shows the output."""

    kind = "tool"

    def __init__(self, call_id: str, name: str, headline: str) -> None:
        super().__init__()
        self.call_id = call_id
        self.tool_name = name
        self.headline = _one_line(strip_terminal_controls(headline or name), 200)
        self.content = ""
        self.shown: str | None = None  # the tool's line for the person, when it gives one
        self.frame = 0
        self.status = "running"  # running | ok | error
        self.expanded = False
        self.grouped = False  # follows another tool row: no blank row before it
        self.selected = False  # the keyboard cursor is on it
        self.progress: list[str] = []  # a sub-agent's steps, one headline each

    # --- state ------------------------------------------------------------------

    def finish(self, content: str, is_error: bool, shown: str | None = None) -> None:
        """``shown``: the line a person reads in the headline when ``content`` is
        written for the model (a plan decision); the content stays on expand."""
        self.content = strip_terminal_controls(content)
        self.shown = _one_line(strip_terminal_controls(shown), SUMMARY_MAX) if shown else None
        self.status = "error" if is_error else "ok"
        self.touch()

    def add_progress(self, line: str) -> None:
        """One step of the work behind this call (a sub-agent's tool call), shown on expand."""
        self.progress.append(_one_line(strip_terminal_controls(line), 200))
        self.touch()

    def progress_title(self) -> str:
        """``2 steps · grep x =``: how many steps so far, and the latest."""
        if not self.progress:
            return ""
        count = len(self.progress)
        return f"{count} step{'s' if count != 1 else ''} · {self.progress[-1]}"

    def toggle(self) -> bool:
        if self.status == "running" and not self.progress:
            return False
        self.expanded = not self.expanded
        self.touch()
        return True

    def tick(self, frame: int) -> None:
        """Advance the spinner (driven by the screen's single timer)."""
        if self.status == "running":
            self.frame = frame
            self.touch()

    def select(self, selected: bool) -> None:
        if selected != self.selected:
            self.selected = selected
            self.touch()

    # --- rendering --------------------------------------------------------------

    def summary(self) -> str:
        """What came of the call, for the headline."""
        if self.status == "running":
            return ""
        lines = [ln for ln in self.content.splitlines() if ln.strip()]
        if self.status == "error":
            return _one_line(lines[0] if lines else "failed", SUMMARY_MAX)
        if self.shown:
            return self.shown
        if not lines:
            return "no output"
        if len(lines) == 1 and len(lines[0].strip()) <= SUMMARY_MAX:
            return _one_line(lines[0], SUMMARY_MAX)  # a decision or a short result
        count = self.content.count("\n") + (0 if self.content.endswith("\n") else 1)
        return f"{count} line{'s' if count != 1 else ''}"

    def expandable(self) -> bool:
        return bool(self.progress) or (self.status != "running" and bool(self.content.strip()))

    def header_text(self) -> str:
        """The headline as shown (tests and copy)."""
        return "".join(seg.text for seg in self._header(Look()))

    def _header(self, look: Look) -> list[Segment]:
        mark, mark_style = {
            "running": (SPINNER[self.frame % len(SPINNER)], look.tool_running),
            "ok": ("✓", look.tool_ok),
            "error": ("✗", look.tool_error),
        }[self.status]
        name, _, rest = self.headline.partition(" ")
        parts = [Segment(mark, mark_style), Segment(" "), Segment(name, look.tool_name)]
        if rest:
            parts.append(Segment(f" {rest}"))
        summary = self.summary() or (f"{self.progress_title()}" if self.status == "running" else "")
        if summary:
            style = look.tool_error_text if self.status == "error" else look.muted
            parts.append(Segment(f"  · {summary}", style))
        if self.expandable():
            parts.append(Segment("  ▾" if self.expanded else "  ▸", look.muted))
        return parts

    def body_lines(self, width: int) -> list[str]:
        content = self.content[:BODY_MAX_CHARS]
        shown = chop_lines(content or "(no output)", width, BODY_MAX_LINES)
        total = self.content.count("\n") + 1
        if total > len(shown) or len(self.content) > BODY_MAX_CHARS:
            hidden = max(1, total - len(content.split("\n")[: len(shown)]))
            if len(self.content.split("\n")) > len(shown) or len(self.content) > BODY_MAX_CHARS:
                shown.append(f"… {hidden} more lines not shown")
        return shown

    def estimate(self, width: int) -> int:
        body = min(BODY_MAX_LINES, self.content.count("\n") + 1) + len(self.progress)
        return 1 + (not self.grouped) + (body if self.expanded else 0)

    def build(self, width: int, look: Look) -> list[Strip]:
        base = look.base + look.cursor if self.selected else look.base
        header = [
            Segment("  ", base),
            *(Segment(s.text, base + s.style if s.style else base) for s in self._header(look)),
        ]
        out = [Strip.blank(width, look.base)] * (0 if self.grouped else 1)
        out.append(Strip(header).crop_extend(0, width, base))
        if self.expanded:
            body = look.base + look.tool_body
            inner = max(1, width - 6)
            steps = [f"↳ {step}" for step in self.progress]
            lines = [*steps, *(self.body_lines(inner) if self.status != "running" else [])]
            for line in lines:
                row = [Segment("    ", look.base), Segment(" ", body), Segment(line, body)]
                out.append(
                    Strip(row).crop_extend(0, width - 1, body).extend_cell_length(width, look.base)
                )
        return out

    def plain(self) -> str:
        steps = "".join(f"\n↳ {step}" for step in self.progress) if self.expanded else ""
        return self.header_text() + steps + ("\n" + self.content if self.expanded else "")


__all__ = ["SPINNER", "Style", "ToolRow"]
