"""The plan lint findings, listed: what the review's ``l`` opens.

The findings come from the engine (``planshell.plan.lint``) with the review
request; they quote plan and repository text, so every line is sanitised.
Esc, ``q`` or ``l`` close the list.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from planshell.plan.lint import LintFinding, summary
from planshell.sanitize import plain_line

__all__ = ["PlanLintScreen", "chip_text", "finding_text"]

MARKS = {"error": "✗", "warning": "⚠"}


def finding_text(finding: LintFinding) -> Text:
    """One finding as a line: mark, severity, message, section (all sanitised)."""
    style = "bold red" if finding.severity == "error" else "yellow"
    text = Text.assemble(
        (f"{MARKS.get(finding.severity, '·')} {finding.severity:<8}", style),
        plain_line(finding.message, 400),
    )
    if finding.section:
        text.append(f"  ({plain_line(finding.section, 80)})", "dim")
    return text


def chip_text(label: str) -> str:
    """A chip's words (sanitised: labels are the engine's, but counts hold plan text)."""
    return f" {plain_line(label, 60)} "


class PlanLintScreen(ModalScreen[None]):
    """Lists the findings; nothing here decides anything."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,l", "close", "Close"),
    ]

    def __init__(self, findings: tuple[LintFinding, ...]) -> None:
        super().__init__()
        self.findings = findings

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            heading = summary(self.findings) or "no findings"
            yield Static(Text(f"Plan lint: {heading}", "bold"), id="question")
            with VerticalScroll(id="findings"):
                if not self.findings:
                    yield Static("The plan passes every check.", classes="finding")
                for finding in self.findings:
                    yield Static(finding_text(finding), classes=f"finding -{finding.severity}")
            yield Static(
                Text(
                    "Errors make approval ask first. Esc, q or l close this list.",
                    "dim",
                ),
                id="hint",
            )

    def action_close(self) -> None:
        self.dismiss(None)
