"""The scrolling conversation: renders engine events, owns no engine state.

Follows the stream (Textual's scroll *anchor*) until the user scrolls up;
scrolling back to the bottom resumes following. Long sessions stay light:
finished replies older than the last few become one cheap ``Static`` each,
and only the newest ``MAX_ENTRIES`` entries are kept mounted.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.widget import Widget

from planshell.ui.widgets.messages import (
    Entry,
    ErrorRow,
    FrozenAssistantMessage,
    NoteRow,
    ReplyEntry,
    ThinkingBlock,
    UserMessage,
    clean,
)
from planshell.ui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from planshell.llm.types import Message
    from planshell.tools.registry import ToolRegistry
    from planshell.ui.widgets.assistant import AssistantMessage


def _new_reply(text: str = "", *, finished: bool = False) -> AssistantMessage:
    # Textual's Markdown is imported on the first reply, not at start-up.
    from planshell.ui.widgets.assistant import AssistantMessage

    return AssistantMessage(text, finished=finished)


def _is_live_reply(widget: object) -> bool:
    return isinstance(widget, ReplyEntry) and not isinstance(widget, FrozenAssistantMessage)

LIVE_MARKDOWN = 3  # finished replies kept as live Markdown widgets
MAX_ENTRIES = 400  # older entries are unmounted
HISTORY_MESSAGES = 120  # messages rendered when resuming a long session


class Transcript(VerticalScroll, can_focus=True):
    """Vertical list of entries; the screen feeds it engine events."""

    def __init__(self, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        self._reply: AssistantMessage | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolRow] = {}
        self._queued: list[UserMessage] = []
        self._hidden_count = 0
        self._removing: weakref.WeakSet[Widget] = weakref.WeakSet()  # removal is async

    def on_mount(self) -> None:
        self.anchor()

    # --- queries ------------------------------------------------------------------

    @property
    def entries(self) -> list[Widget]:
        return [
            child
            for child in self.children
            if isinstance(child, Entry | ToolRow)
            and not child.has_class("-hidden-note")
            and child not in self._removing
        ]

    @property
    def tool_rows(self) -> list[ToolRow]:
        return list(self.query(ToolRow))

    @property
    def running_tools(self) -> list[ToolRow]:
        return [row for row in self._tools.values() if row.status == "running"]

    @property
    def queued(self) -> list[UserMessage]:
        return list(self._queued)

    @property
    def streaming(self) -> bool:
        return self._reply is not None or self._thinking is not None

    # --- mounting ---------------------------------------------------------------

    def _add(self, widget: Widget) -> Widget:
        # Queued steering stays at the bottom until it is delivered.
        before = self._queued[0] if self._queued and widget not in self._queued else None
        if isinstance(widget, ToolRow):
            previous = self._last_entry(before)
            widget.set_class(isinstance(previous, ToolRow), "-grouped")
        if before is not None and before.parent is self:
            self.mount(widget, before=before)
        else:
            self.mount(widget)
        self._prune()
        return widget

    def _last_entry(self, before: Widget | None) -> Widget | None:
        children = list(self.children)
        if before is not None and before in children:
            children = children[: children.index(before)]
        return children[-1] if children else None

    def _prune(self) -> None:
        entries = self.entries
        excess = len(entries) - MAX_ENTRIES
        if excess > 0:
            doomed = [w for w in entries[:excess] if w not in self._queued]
            for widget in doomed:
                if isinstance(widget, ToolRow):
                    self._tools.pop(widget.call_id, None)
            self._hidden_count += len(doomed)
            self._removing.update(doomed)
            self.remove_children(doomed)
            self._update_hidden_note()

    def _update_hidden_note(self) -> None:
        notes = [c for c in self.children if c.has_class("-hidden-note")]
        text = f"… {self._hidden_count} earlier entries are not shown"
        if notes:
            note = notes[0]
            note.message = text  # type: ignore[attr-defined]
            note.update(text)  # type: ignore[attr-defined]
        else:
            note = NoteRow(text, kind="hidden")
            note.add_class("-hidden-note")
            self.mount(note, before=0)

    def _freeze_old_replies(self) -> None:
        live = [
            c
            for c in self.children
            if _is_live_reply(c) and c.finished and c not in self._removing  # type: ignore[attr-defined]
        ]
        for message in live[:-LIVE_MARKDOWN] if len(live) > LIVE_MARKDOWN else []:
            frozen = FrozenAssistantMessage(message.full_text)  # type: ignore[attr-defined]
            self.mount(frozen, before=message)
            self._removing.add(message)
            message.remove()

    # --- user side ----------------------------------------------------------------

    def add_user(self, text: str) -> UserMessage:
        self.end_stream()
        return self._add(UserMessage(text))  # type: ignore[return-value]

    def add_queued(self, text: str) -> UserMessage:
        message = UserMessage(text, queued=True)
        self._queued.append(message)
        self.mount(message)
        return message

    def steering_delivered(self, text: str) -> None:
        self.end_stream()
        wanted = clean(text)
        match = next((m for m in self._queued if m.text == wanted), None)
        if match is None:
            self._add(UserMessage(text)).state = "delivered"  # type: ignore[attr-defined]
            return
        self._queued.remove(match)
        match.state = "delivered"
        # Move it to where the model actually saw it: after what came before.
        anchor = self._queued[0] if self._queued else None
        if anchor is not None:
            self.move_child(match, before=anchor)
        else:
            self.move_child(match, after=self.children[-1])

    # --- model side ---------------------------------------------------------------

    def text_delta(self, delta: str) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._reply is None:
            self._reply = _new_reply()
            self._add(self._reply)
        self._reply.feed(delta)

    def thinking_delta(self, delta: str) -> None:
        if self._thinking is None:
            self._thinking = ThinkingBlock()
            self._add(self._thinking)
        self._thinking.feed(delta)

    async def reply_done(self, text: str) -> None:
        """One model reply finished: show the final text exactly."""
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        reply, self._reply = self._reply, None
        if reply is None:
            if not text.strip():
                return
            reply = _new_reply()
            self._add(reply)
        await reply.finish(text)
        self._freeze_old_replies()

    def end_stream(self) -> None:
        """Close an unfinished reply (interrupted turn) without waiting."""
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._reply is not None:
            reply, self._reply = self._reply, None
            self.run_worker(reply.finish(), group="finish-reply")

    def tool_started(self, call_id: str, name: str, headline: str) -> ToolRow:
        self.end_stream()
        row = ToolRow(call_id, name, headline)
        self._tools[call_id] = row
        self._add(row)
        return row

    def tool_finished(self, call_id: str, name: str, content: str, is_error: bool) -> ToolRow:
        row = self._tools.get(call_id)
        if row is None:
            row = self.tool_started(call_id, name, name)
        row.finish(content, is_error)
        return row

    def tool_progress(self, call_id: str, line: str) -> None:
        """One progress line (a sub-agent's tool call) in a collapsible row under the call."""
        from rich.text import Text
        from textual.content import Content
        from textual.widgets import Collapsible, Static

        from planshell.sanitize import strip_terminal_controls

        row = self._tools.get(call_id)
        if row is None:
            return
        text = Text(" ".join(strip_terminal_controls(line).split()))
        boxes = list(row.query(".tool-progress").results(Collapsible))
        if boxes:
            box, body = boxes[0], boxes[0].query_one(".progress-lines", Static)
            shown = body.content
            assert isinstance(shown, Text)
            lines = Text("\n").join([shown, text])
            body.update(lines)
        else:
            lines = text.copy()
            box = Collapsible(Static(lines, classes="progress-lines"), collapsed=True, classes="tool-progress")
            row.mount(box)
        count = len(lines.plain.splitlines())
        box.title = Content(f"{count} step{'s' if count != 1 else ''} · {text.plain}")  # type: ignore[assignment]  # Content: not markup

    def add_error(self, message: str) -> ErrorRow:
        self.end_stream()
        return self._add(ErrorRow(message))  # type: ignore[return-value]

    def add_note(self, message: str, kind: str = "info") -> NoteRow:
        return self._add(NoteRow(message, kind=kind))  # type: ignore[return-value]

    def turn_done(self, stop_reason: str, cancelled: bool) -> None:
        self.end_stream()
        for row in self.running_tools:
            row.finish("Interrupted.", True)
        if cancelled:
            self.add_note("⏹ Interrupted: the turn was stopped.", kind="cancelled")
        elif stop_reason == "max_tokens":
            self.add_note("The reply hit the model's token limit.", kind="warning")

    # --- actions ------------------------------------------------------------------

    def toggle_latest_tool(self) -> ToolRow | None:
        rows = [r for r in self.tool_rows if r.status != "running"]
        if not rows:
            return None
        row = rows[-1]
        row.toggle()
        if row.expanded:
            self.call_after_refresh(self._show_row, row)
        return row

    def _show_row(self, row: ToolRow) -> None:
        if self.is_anchored and self.max_scroll_y - self.scroll_y < 1:
            return  # following the stream already shows it
        self.scroll_to_widget(row, animate=False)

    async def clear_entries(self) -> None:
        self._reply = None
        self._thinking = None
        self._tools.clear()
        self._queued.clear()
        self._hidden_count = 0
        await self.remove_children([c for c in self.children if not c.has_class("welcome")])
        self.anchor()

    # --- history ------------------------------------------------------------------

    async def show_history(self, messages: Iterable[Message], registry: ToolRegistry | None) -> None:
        """Render a resumed conversation (the newest part when it is long)."""
        items = list(messages)
        skipped = max(0, len(items) - HISTORY_MESSAGES)
        widgets: list[Widget] = []
        if skipped:
            widgets.append(NoteRow(f"… {skipped} earlier messages are not shown", kind="hidden"))
        rows: dict[str, ToolRow] = {}
        recent = items[skipped:]
        last_texts = [i for i, m in enumerate(recent) if m.role == "assistant" and m.content.strip()]
        live_from = last_texts[-LIVE_MARKDOWN] if len(last_texts) >= LIVE_MARKDOWN else 0
        for index, message in enumerate(recent):
            if message.role == "user":
                widgets.append(UserMessage(message.content))
            elif message.role == "assistant":
                if message.content.strip():
                    if index >= live_from:
                        widgets.append(_new_reply(message.content, finished=True))
                    else:
                        widgets.append(FrozenAssistantMessage(message.content))
                for call in message.tool_calls:
                    row = ToolRow(call.id, call.name, _headline(registry, call.name, call.arguments))
                    rows[call.id] = row
                    widgets.append(row)
            elif message.role == "tool" and message.tool_call_id in rows:
                rows[message.tool_call_id].finish(message.content, message.is_error)
        for row in rows.values():
            if row.status == "running":
                row.finish("(no result recorded)", True)
        if widgets:
            await self.mount_all(widgets)
        self.scroll_end(animate=False)


def _headline(registry: ToolRegistry | None, name: str, arguments: str) -> str:
    tool = registry.get(name) if registry is not None else None
    try:
        raw = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        raw = None
    if tool is not None and isinstance(raw, dict):
        try:
            return tool.headline(tool.Args.model_validate(raw))
        except Exception:
            pass
    if isinstance(raw, dict) and raw:
        first = next(iter(raw.values()))
        return f"{name} {first}"
    return name
