"""Transcript entries: user and assistant messages, thinking, errors, notes.

Everything shown here may come from the model or a tool, so text is
sanitised (:func:`planshell.sanitize.strip_terminal_controls`) and rendered
as plain ``Content``/``Text`` (never parsed as markup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown


def clean(text: str) -> str:
    return strip_terminal_controls(text)


class Entry:
    """Marker mix-in for everything the transcript holds."""


class ReplyEntry(Entry):
    """Marker for assistant replies (live or frozen), importable without Markdown."""

    @property
    def full_text(self) -> str:
        """The reply's whole markdown source."""
        raise NotImplementedError


class WelcomeBanner(Static, Entry):
    """The first line of an empty transcript."""

    def __init__(self, version: str) -> None:
        text = Content.assemble(
            ("planshell", "bold $primary"),
            (f" {version}", "$text-muted"),
            ("  ·  type a request, ", "$text-muted"),
            ("/", "bold"),
            (" for commands, ", "$text-muted"),
            ("F1", "bold"),
            (" for keys", "$text-muted"),
        )
        super().__init__(text, classes="welcome")


class UserMessage(Static, Entry):
    """Something the user sent; steering messages start as *queued*."""

    state: reactive[str] = reactive("sent")  # sent | queued | delivered

    def __init__(self, text: str, *, queued: bool = False) -> None:
        self.text = clean(text)
        super().__init__(classes="user -queued" if queued else "user")
        self.set_reactive(UserMessage.state, "queued" if queued else "sent")

    def render(self) -> Content:
        parts: list[str | tuple[str, str]] = [("› ", "bold $primary"), self.text]
        if self.state == "queued":
            parts.append(("\n⧗ queued: the model sees it at its next step", "italic $text-warning"))
        elif self.state == "delivered":
            parts.append(("\n↳ steering delivered", "italic $text-muted"))
        return Content.assemble(*parts)

    def watch_state(self, state: str) -> None:
        self.set_class(state == "queued", "-queued")
        self.set_class(state == "delivered", "-delivered")
        self.refresh(layout=True)


class FrozenAssistantMessage(Static, ReplyEntry):
    """A finished reply rendered once by Rich: far cheaper than a live Markdown.

    Headings are left-aligned like the live widget's; colours come from the
    ``markdown.*`` styles the app keeps in step with the theme.
    """

    def __init__(self, text: str) -> None:
        self._reply_text = text
        super().__init__(classes="assistant frozen")
        self.update(chat_markdown(text, dark=self._dark_theme()))

    @property
    def full_text(self) -> str:
        return self._reply_text

    def _dark_theme(self) -> bool:
        """Whether the app's theme is dark (code colours); dark when built outside an app."""
        try:
            return self.app.current_theme.dark
        except RuntimeError:  # Textual's NoActiveAppError: no app in this context
            return True


_MARKDOWN_CLASS: type[RichMarkdown] | None = None


def chat_markdown(text: str, *, dark: bool = True) -> RichMarkdown:
    """A ``rich.markdown.Markdown`` with left-aligned headings (imported lazily).

    ``dark`` picks the code-block colours: the caller knows its app's theme.
    """
    global _MARKDOWN_CLASS
    if _MARKDOWN_CLASS is None:
        from rich.markdown import Heading
        from rich.markdown import Markdown as RichMarkdown

        class LeftHeading(Heading):
            LEVEL_ALIGN: ClassVar[dict[str, Any]] = dict.fromkeys(Heading.LEVEL_ALIGN, "left")

        class ChatMarkdown(RichMarkdown):
            elements: ClassVar[dict[str, Any]] = {**RichMarkdown.elements, "heading_open": LeftHeading}

        _MARKDOWN_CLASS = ChatMarkdown
    code_theme = "ansi_dark" if dark else "ansi_light"
    return _MARKDOWN_CLASS(text, hyperlinks=False, code_theme=code_theme)


class ThinkingBlock(Vertical, Entry):
    """Reasoning text: dimmed, collapsible (click the title or press ctrl+t)."""

    collapsed: reactive[bool] = reactive(False)

    def __init__(self) -> None:
        super().__init__(classes="thinking")
        self._parts: list[str] = []
        self._refresh_pending = False
        self.finished = False

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="thinking-title")
        yield Static("", classes="thinking-body")

    def _title(self) -> Text:
        mark = "▸" if self.collapsed else "▾"
        label = "thinking" if self.finished else "thinking…"
        lines = self.text.count("\n") + 1 if self.text else 0
        extra = f"  ({lines} lines)" if self.collapsed and lines else ""
        return Text(f"{mark} {label}{extra}")

    def _part(self, name: str) -> Static | None:
        found = list(self.query(f".thinking-{name}").results(Static))
        return found[0] if found else None

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def feed(self, delta: str) -> None:
        self._parts.append(clean(delta))
        # Re-rendering the whole text per delta is quadratic: refresh at most 10x/s.
        if not self._refresh_pending and not self.collapsed:
            self._refresh_pending = True
            self.set_timer(0.1, self._refresh_body)

    def _refresh_body(self) -> None:
        self._refresh_pending = False
        body = self._part("body")
        if body is not None and not self.collapsed:
            body.update(Text(self.text))

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self.collapsed = True
        self._refresh_title()

    def toggle(self) -> None:
        self.collapsed = not self.collapsed

    def watch_collapsed(self, collapsed: bool) -> None:
        body = self._part("body")
        if body is None:
            return
        body.display = not collapsed
        if not collapsed:
            body.update(Text(self.text))
        self._refresh_title()

    def on_mount(self) -> None:
        self.watch_collapsed(self.collapsed)

    def _refresh_title(self) -> None:
        title = self._part("title")
        if title is not None:
            title.update(self._title())

    def on_click(self) -> None:
        self.toggle()


class ErrorRow(Static, Entry):
    """The engine's one-sentence error, in red."""

    def __init__(self, message: str) -> None:
        self.message = clean(message)
        super().__init__(Content.assemble(("✗ ", "bold"), self.message), classes="error-row")


class NoteRow(Static, Entry):
    """A quiet line: interruptions, cleared conversations, resumed sessions."""

    def __init__(self, message: str, *, kind: str = "info") -> None:
        self.message = message
        super().__init__(Content(message), classes=f"note -{kind}")

