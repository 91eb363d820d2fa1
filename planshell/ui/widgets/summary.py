"""A compaction in the transcript: one collapsed row; expanding shows the model's summary."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Collapsible, Static

from planshell.ui.widgets.messages import Entry, clean


class SummaryRow(Collapsible, Entry):
    """Collapsed by default; the summary is model text, so it is shown as plain text."""

    DEFAULT_CSS = """
    SummaryRow { height: auto; margin: 0 0 1 0; border: none; padding: 0; color: $text-muted; }
    SummaryRow Contents { padding: 0 0 0 2; }
    """

    def __init__(self, title: str, summary: str) -> None:
        super().__init__(
            Static(Text(clean(summary) or "(no summary)")), title=clean(title), collapsed=True
        )
