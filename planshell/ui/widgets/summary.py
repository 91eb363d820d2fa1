"""A compaction in the transcript: one collapsed row; expanding shows the model's summary."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from planshell.ui.widgets.messages import Entry, Look, Rows, _strips, _wrap_text, clean


class SummaryRow(Entry):
    """``▸ compacted: …`` collapsed by default; the summary is model text, shown plain."""

    kind = "summary"

    def __init__(self, title: str, summary: str) -> None:
        super().__init__()
        self.title = " ".join(clean(title).split())
        self.summary = clean(summary) or "(no summary)"
        self.collapsed = True

    def toggle(self) -> bool:
        self.collapsed = not self.collapsed
        self.touch()
        return True

    def estimate(self, width: int) -> int:
        return 2 if self.collapsed else 2 + len(self.summary) // max(1, width)

    def build(self, width: int, look: Look) -> list[Strip]:
        mark = "▸" if self.collapsed else "▾"
        rows: Rows = [[Segment("  "), Segment(f"{mark} {self.title}", look.muted)]]
        if not self.collapsed:
            rows.extend(_wrap_text(self.summary, max(1, width - 5), look.muted, [Segment("    ")]))
        return _strips(rows, width, look.base, margin=1)

    def plain(self) -> str:
        return f"{self.title}\n{self.summary}"
