"""The scrolling conversation: one Line-API view over entries, rendering only visible rows.

Why not a widget per entry (and Textual's ``Markdown``, a widget per block):
measured, a 20,000-delta reply then fell 19–36 s behind and key echo took
seconds. Here every entry (:mod:`planshell.ui.widgets.messages`) is a plain
object that renders itself to strips for a width; the view keeps each entry's
height (exact once it has been in view, estimated before: a resumed session of
thousands of entries is not parsed until it is scrolled to) and their offsets in
a :class:`~planshell.ui.virtual_rows.VirtualRows` (shared with the plan view),
and the strips and tokens of only a few entries near the viewport. Streaming
appends are buffered and flushed every ``FLUSH_INTERVAL``: a flush re-parses and re-renders
the last block of the last entry only.

Following: while the view is at the bottom it follows new output; scrolling up
by any means (keys, wheel, scrollbar) detaches it, and reaching the bottom by
any means (PgDn, wheel, End from the prompt at the end of its text, End or ``G``
in the transcript) re-attaches it. A view at the bottom stays
at the bottom across resizes; otherwise the entry at the top stays in place.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar, TypeVar

from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer

from planshell.markdown import Palette
from planshell.text import plural
from planshell.ui.selection import drawn_row, highlight, selected_text
from planshell.ui.styling import solid_component_style
from planshell.ui.virtual_rows import VirtualRows
from planshell.ui.widgets.assistant import FLUSH_INTERVAL, AssistantMessage
from planshell.ui.widgets.messages import (
    Entry,
    ErrorRow,
    Look,
    NoteRow,
    ThinkingBlock,
    UserMessage,
    clean,
)
from planshell.ui.widgets.resumed import resumed_entries
from planshell.ui.widgets.summary import SummaryRow
from planshell.ui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from planshell.llm.types import Message
    from planshell.tools.registry import ToolRegistry

E = TypeVar("E", bound=Entry)

MAX_ENTRIES = 50_000  # older entries are dropped (a note says how many)
# Resuming: the newest messages become entries at once (the first frame); the older
# ones follow in batches between frames, inserted above them, so nothing is left out.
HISTORY_FIRST = 200
HISTORY_BATCH = 250
_BACKFILL_GAP = 0.005  # seconds between batches: keys and frames go in between
_CACHED_ENTRIES = 48  # entries whose strips stay built

# Markdown parts (the shared engine's Palette fields), then the transcript's own.
_MD = (
    "h1", "h2", "h3", "h4", "h1-rule", "rule", "bullet", "task", "task-done", "done", "code",
    "code-block", "fence-info", "quote", "link", "muted",
)  # fmt: skip
_PARTS = (
    "user", "user-bar", "queued-bar", "delivered-bar", "prompt-mark", "note", "note-warning",
    "error", "error-bar", "thinking", "tool-name", "tool-ok", "tool-error", "tool-running",
    "tool-error-text", "tool-body", "cursor", "chip", "welcome-name",
)  # fmt: skip


class Transcript(ScrollView, can_focus=True):
    """Vertical list of entries; the screen feeds it engine events."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {f"transcript--{name}" for name in (*_MD, *_PARTS)}

    DEFAULT_CSS = """
    Transcript {
        overflow-x: hidden;
        overflow-y: auto;
    }
    Transcript > .transcript--h1 { color: $markdown-h1-color; text-style: $markdown-h1-text-style; }
    Transcript > .transcript--h2 { color: $markdown-h2-color; text-style: $markdown-h2-text-style; }
    Transcript > .transcript--h3 { color: $markdown-h3-color; text-style: $markdown-h3-text-style; }
    Transcript > .transcript--h4 { color: $markdown-h4-color; text-style: $markdown-h4-text-style; }
    Transcript > .transcript--h1-rule { color: $markdown-h1-color 70%; }
    Transcript > .transcript--rule { color: $foreground-muted; }
    Transcript > .transcript--bullet { color: $text-accent; }
    Transcript > .transcript--task { color: $foreground-muted; }
    Transcript > .transcript--task-done { color: $text-success; }
    Transcript > .transcript--done { color: $foreground-muted; }
    Transcript > .transcript--code { color: $text-warning; background: $surface; }
    Transcript > .transcript--code-block { background: $surface; }
    Transcript > .transcript--fence-info { color: $foreground-muted; background: $surface; }
    Transcript > .transcript--quote { color: $foreground-muted; text-style: italic; }
    Transcript > .transcript--link { color: $text-primary; text-style: underline; }
    Transcript > .transcript--muted { color: $foreground-muted; }
    Transcript > .transcript--user { background: $boost; }
    Transcript > .transcript--user-bar { color: $primary; }
    Transcript > .transcript--queued-bar { color: $warning; }
    Transcript > .transcript--delivered-bar { color: $secondary; }
    Transcript > .transcript--prompt-mark { color: $primary; text-style: bold; }
    Transcript > .transcript--note { color: $foreground-muted; text-style: italic; }
    Transcript > .transcript--note-warning { color: $text-warning; text-style: italic; }
    Transcript > .transcript--error { color: $text-error; background: $error 15%; }
    Transcript > .transcript--error-bar { color: $error; }
    Transcript > .transcript--thinking { color: $foreground-muted; text-style: italic; }
    Transcript > .transcript--tool-name { text-style: bold; }
    Transcript > .transcript--tool-ok { color: $success; text-style: bold; }
    Transcript > .transcript--tool-error { color: $error; text-style: bold; }
    Transcript > .transcript--tool-running { color: $accent; text-style: bold; }
    Transcript > .transcript--tool-error-text { color: $text-error; }
    Transcript > .transcript--tool-body { color: $foreground-muted; background: $surface; }
    Transcript > .transcript--cursor { background: $boost; }
    Transcript > .transcript--chip { color: $text-accent; text-style: bold; }
    Transcript > .transcript--welcome-name { color: $primary; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Previous row", show=False),
        Binding("down", "cursor(1)", "Next row", show=False),
        Binding("enter", "activate", "Expand / collapse", show=False),
        # g and G are handled in on_key (before the screen sends letters to the prompt);
        # they are listed here for the help.
        Binding("home,g", "top", "Top", show=False, tooltip="Transcript focused: top"),
        Binding(
            "end,G",
            "bottom",
            "Bottom (follow)",
            show=False,
            tooltip="Transcript focused: bottom, following the stream again",
        ),
    ]
    # Printable keys the transcript keeps (vi style); other typing goes to the prompt.
    _LETTER_ACTIONS: ClassVar[dict[str, str]] = {"g": "top", "G": "bottom"}

    def __init__(self, *entries: Entry, id: str | None = None) -> None:
        super().__init__(id=id)
        self._entries: list[Entry] = []
        self._vrows = VirtualRows()  # heights (exact for an entry's version) and offsets
        self._width = 0
        self._look: Look | None = None
        self._generation = 0
        self._built: OrderedDict[int, Entry] = OrderedDict()  # id -> entry with strips
        self._follow = True
        self._scrolling_ourselves = False
        self._flush_timer: Timer | None = None
        self._reply: AssistantMessage | None = None
        self._thinking: ThinkingBlock | None = None
        self._tools: dict[str, ToolRow] = {}
        self._queued: list[UserMessage] = []
        self._pastes: list[str] = []
        self._hidden_count = 0
        self._hidden_note: NoteRow | None = None
        self._bulk = False  # adding a resumed history: nothing is measured yet
        # Older resumed messages still to insert: (messages, how many remain, registry,
        # the entry they go above); see show_history.
        self._backlog: tuple[list[Message], int, ToolRegistry | None, Entry] | None = None
        self._backfill_timer: Timer | None = None
        self._preview: list[Entry] = []  # the resume preview's entries (show_preview)
        self._cursor: ToolRow | UserMessage | ThinkingBlock | None = None
        for entry in entries:
            self._append(entry)

    # --- queries ------------------------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        """Conversation entries (the welcome line and the hidden-entries note excluded)."""
        return [e for e in self._entries if e.kind != "welcome" and e is not self._hidden_note]

    @property
    def all_entries(self) -> list[Entry]:
        return list(self._entries)

    def entries_of(self, cls: type[E]) -> list[E]:
        return [e for e in self._entries if isinstance(e, cls)]

    @property
    def tool_rows(self) -> list[ToolRow]:
        return self.entries_of(ToolRow)

    @property
    def running_tools(self) -> list[ToolRow]:
        return [row for row in self._tools.values() if row.status == "running"]

    @property
    def queued(self) -> list[UserMessage]:
        return list(self._queued)

    @property
    def streaming(self) -> bool:
        return self._reply is not None or self._thinking is not None

    @property
    def following(self) -> bool:
        return self._follow

    @property
    def cursor_entry(self) -> Entry | None:
        return self._cursor

    # --- the list -----------------------------------------------------------------

    def _append(self, entry: Entry, before: Entry | None = None, *, measure: bool = True) -> Entry:
        entry.owner = self._entry_changed
        index = (
            self._entries.index(before)
            if before is not None and before in self._entries
            else len(self._entries)
        )
        self._entries.insert(index, entry)
        self._vrows.insert(index, entry.estimate(self._width or 80))
        if self._width and measure:
            self._measure(index)
            self._changed()
        return entry

    def _add(self, entry: E) -> E:
        """Add an entry at the end (above queued steering, which waits at the bottom)."""
        before = self._queued[0] if self._queued and entry not in self._queued else None
        if isinstance(entry, ToolRow):
            index = self._entries.index(before) if before is not None else len(self._entries)
            entry.grouped = index > 0 and isinstance(self._entries[index - 1], ToolRow)
        self._append(entry, before)
        self._prune()
        return entry

    def _remove(self, entries: list[Entry]) -> None:
        doomed = {id(e) for e in entries}
        keep = [i for i, e in enumerate(self._entries) if id(e) not in doomed]
        for entry in entries:
            entry.owner = None
            self._built.pop(id(entry), None)
            if entry is self._cursor:
                self._cursor = None
        self._entries = [self._entries[i] for i in keep]
        self._vrows.keep(keep)
        self._changed()

    def _prune(self) -> None:
        entries = self.entries
        excess = len(entries) - MAX_ENTRIES
        if excess <= 0:
            return
        doomed = [e for e in entries[:excess] if e not in self._queued]
        for entry in doomed:
            if isinstance(entry, ToolRow):
                self._tools.pop(entry.call_id, None)
        self._hidden_count += len(doomed)
        self._remove(doomed)
        hidden = self._hidden_count
        text = f"… {plural(hidden, 'earlier entry')} {'is' if hidden == 1 else 'are'} not shown"
        if self._hidden_note is None:
            self._hidden_note = NoteRow(text, kind="hidden")
            first = next((e for e in self._entries if e.kind != "welcome"), None)
            self._append(self._hidden_note, before=first)
        else:
            self._hidden_note.message = text

    def _entry_changed(self, entry: Entry) -> None:
        if self._bulk:
            return  # measured when it comes into view
        try:
            index = (
                self._entries.index(entry)
                if entry is not self._entries[-1]
                else len(self._entries) - 1
            )
        except ValueError:
            return
        if self._width:
            self._measure(index)
        self._changed()

    # --- user side ----------------------------------------------------------------

    def register_pastes(self, pastes: Iterable[str]) -> None:
        """Long pastes in the next user message: they show folded (the prompt's chips)."""
        # The screen strips the message: match the pastes the same way.
        self._pastes.extend(p.strip() for p in pastes if p.strip())

    def _take_pastes(self, text: str) -> list[str]:
        found = [p for p in self._pastes if clean(p) in clean(text)]
        self._pastes = [p for p in self._pastes if p not in found]
        return found

    def add_user(self, text: str) -> UserMessage:
        self.end_stream()
        message = self._add(UserMessage(text, pastes=self._take_pastes(text)))
        self.follow()
        return message

    def add_queued(self, text: str) -> UserMessage:
        message = UserMessage(text, queued=True, pastes=self._take_pastes(text))
        self._queued.append(message)
        self._append(message)
        self.follow()
        return message

    def steering_delivered(self, text: str) -> None:
        self.end_stream()
        wanted = clean(text)
        match = next((m for m in self._queued if m.text == wanted), None)
        if match is None:
            self._add(UserMessage(text)).state = "delivered"
            return
        self._queued.remove(match)
        # Move it to where the model actually saw it: after what came before.
        self._remove([match])
        anchor = self._queued[0] if self._queued else None
        self._append(match, before=anchor)
        match.state = "delivered"

    # --- model side ---------------------------------------------------------------

    def text_delta(self, delta: str) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._reply is None:
            self._reply = self._add(AssistantMessage())
        self._reply.feed(delta)
        self._schedule_flush()

    def thinking_delta(self, delta: str) -> None:
        if self._thinking is None:
            self._thinking = self._add(ThinkingBlock())
        self._thinking.feed(delta)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_timer is None and self.is_mounted:
            self._flush_timer = self.set_timer(FLUSH_INTERVAL, self._flush)

    def _flush(self) -> None:
        self._flush_timer = None
        if self._reply is not None:
            self._reply.flush()
        if self._thinking is not None and not self._thinking.collapsed:
            self._thinking.touch()

    async def reply_done(self, text: str) -> None:
        """One model reply finished: show the final text exactly."""
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        reply, self._reply = self._reply, None
        if reply is None:
            if not text.strip():
                return
            reply = self._add(AssistantMessage())
        reply.finish(text)

    def end_stream(self) -> None:
        """Close an unfinished reply (interrupted turn)."""
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._reply is not None:
            reply, self._reply = self._reply, None
            reply.finish()

    def tool_started(self, call_id: str, name: str, headline: str) -> ToolRow:
        self.end_stream()
        row = ToolRow(call_id, name, headline)
        self._tools[call_id] = row
        self._add(row)
        return row

    def tool_finished(
        self, call_id: str, name: str, content: str, is_error: bool, shown: str | None = None
    ) -> ToolRow:
        row = self._tools.get(call_id)
        if row is None:
            row = self.tool_started(call_id, name, name)
        row.finish(content, is_error, shown)
        return row

    def tool_progress(self, call_id: str, line: str) -> None:
        """One progress line (a sub-agent's tool call), folded under the call's row."""
        row = self._tools.get(call_id)
        if row is not None:
            row.add_progress(line)

    def add_error(self, message: str) -> ErrorRow:
        self.end_stream()
        return self._add(ErrorRow(message))

    def add_note(self, message: str, kind: str = "info") -> NoteRow:
        return self._add(NoteRow(message, kind=kind))

    def add_summary(self, title: str, summary: str) -> SummaryRow:
        """A collapsed row for a compaction; expanding it shows the summary."""
        self.end_stream()
        return self._add(SummaryRow(title, summary))

    def turn_done(self, cancelled: bool, cut_off_note: str | None = None) -> None:
        self.end_stream()
        for row in self.running_tools:
            row.finish("Interrupted.", True)
        if cancelled:
            self.add_note("⏹ Interrupted: the turn was stopped.", kind="cancelled")
        elif cut_off_note:
            self.add_note(cut_off_note, kind="warning")

    # --- actions ------------------------------------------------------------------

    def toggle_latest_tool(self) -> ToolRow | None:
        rows = [r for r in self.tool_rows if r.status != "running"]
        if not rows:
            return None
        row = rows[-1]
        row.toggle()
        if row.expanded:
            self._show_entry(row)
        return row

    def _interactive(self) -> list[Entry]:
        return [
            e
            for e in self._entries
            if isinstance(e, ToolRow | ThinkingBlock | SummaryRow)
            or (isinstance(e, UserMessage) and e.folds)
        ]

    def _set_cursor(self, entry: Entry | None) -> None:
        old = self._cursor
        if isinstance(old, ToolRow):
            old.select(False)
        self._cursor = entry  # type: ignore[assignment]
        if isinstance(entry, ToolRow):
            entry.select(True)
        if entry is not None:
            self._show_entry(entry)
        self.refresh()

    def action_cursor(self, step: int) -> None:
        """Up/down walk the rows that expand (tool rows, thinking, folded pastes)."""
        rows = self._interactive()
        if not rows:
            self.scroll_relative(y=step, animate=False)
            return
        if self._cursor not in rows:
            index = len(rows) - 1 if step < 0 else 0
            visible = [r for r in rows if self._is_visible(r)]
            if visible:
                index = rows.index(visible[-1] if step < 0 else visible[0])
        else:
            index = max(0, min(len(rows) - 1, rows.index(self._cursor) + step))
        self._set_cursor(rows[index])

    def action_activate(self) -> None:
        entry = self._cursor
        if entry is None:
            return
        if entry.click(0):
            self._show_entry(entry)

    def action_top(self) -> None:
        self.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.follow()

    def on_key(self, event: events.Key) -> None:
        # Handled here, before the screen sends printable keys to the prompt.
        action = self._LETTER_ACTIONS.get(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            getattr(self, f"action_{action}")()

    def on_blur(self) -> None:
        if isinstance(self._cursor, ToolRow):
            self._cursor.select(False)

    def on_focus(self) -> None:
        if isinstance(self._cursor, ToolRow):
            self._cursor.select(True)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = offset.y + self._top
        if not self._entries or row >= self._total:
            return
        index, inside = self._vrows.locate(row)
        entry = self._entries[index]
        if entry.click(inside) and entry in self._interactive():
            self._set_cursor(entry)

    async def clear_entries(self) -> None:
        self._stop_backfill()
        self._reply = None
        self._thinking = None
        self._tools.clear()
        self._queued.clear()
        self._hidden_count = 0
        self._hidden_note = None
        self._remove([e for e in self._entries if e.kind != "welcome"])
        self.follow()

    # --- history ------------------------------------------------------------------

    async def show_history(
        self, messages: Iterable[Message], registry: ToolRegistry | None
    ) -> None:
        """Render a resumed conversation: the newest part now, the rest in batches after.

        Turning 10,000 logged messages into entries takes seconds; the first frame
        needs only the last screen. The older messages are inserted above it between
        frames (:meth:`_backfill`), so the whole conversation ends up scrollable.
        """
        self._stop_backfill()
        items = list(messages)
        split = _turn_start(items, len(items) - HISTORY_FIRST)
        first = len(self._entries)
        self._bulk = True
        try:
            last = self._entries[-1] if self._entries else None
            for entry in resumed_entries(items[split:], registry, last):
                # Estimated heights only: entries are measured when they come into view.
                self._append(entry, measure=False)
        finally:
            self._bulk = False
        if split > 0 and first < len(self._entries):
            self._backlog = (items, split, registry, self._entries[first])
            self._schedule_backfill()
        self.follow()

    def show_preview(self, messages: list[Message], note: str) -> None:
        """The end of a conversation being resumed, until :meth:`drop_preview` (tool rows
        show their plain headline: the tools are not known yet)."""
        self.drop_preview()
        tail = messages[_turn_start(messages, len(messages) - HISTORY_FIRST) :]
        self._bulk = True
        try:
            last = self._entries[-1] if self._entries else None
            for entry in resumed_entries(tail, None, last):
                self._preview.append(self._append(entry, measure=False))
        finally:
            self._bulk = False
        self._preview.append(self._append(NoteRow(note), measure=False))
        self.follow()
        self.refresh()

    def drop_preview(self) -> None:
        if self._preview:
            preview, self._preview = self._preview, []
            self._remove(preview)

    @property
    def history_pending(self) -> bool:
        """Older messages of a resumed conversation are still being added above."""
        return self._backlog is not None

    def _schedule_backfill(self) -> None:
        if self._backlog is not None and self._backfill_timer is None and self.is_mounted:
            self._backfill_timer = self.set_timer(_BACKFILL_GAP, self._backfill)

    def _stop_backfill(self) -> None:
        self._backlog = None
        if self._backfill_timer is not None:
            self._backfill_timer.stop()
            self._backfill_timer = None

    def _backfill(self) -> None:
        """Insert the next older batch of the resumed conversation above what is shown."""
        self._backfill_timer = None
        if self._backlog is None:
            return
        items, stop, registry, above = self._backlog
        try:
            index = self._entries.index(above)
        except ValueError:  # cleared or pruned meanwhile
            self._backlog = None
            return
        start = _turn_start(items, stop - HISTORY_BATCH)
        previous = self._entries[index - 1] if index else None
        batch = list(resumed_entries(items[start:stop], registry, previous))
        self._insert_batch(index, batch)
        if start > 0:
            self._backlog = (items, start, registry, batch[0] if batch else above)
            self._schedule_backfill()
        else:
            self._backlog = None

    def _insert_batch(self, index: int, batch: list[Entry]) -> None:
        """Entries inserted at ``index``; a view scrolled up keeps its rows where they are."""
        if not batch:
            return
        anchor = None if self._follow or not self._width else self._vrows.anchor(self._top)
        for entry in batch:
            entry.owner = self._entry_changed
        self._entries[index:index] = batch
        width = self._width or 80
        self._vrows.insert_many(index, [entry.estimate(width) for entry in batch])
        if not self._width:
            return
        self._update_virtual_size()
        if self._follow:
            self._scroll_to_end()
        elif anchor is not None:
            if anchor.block >= index:
                anchor = anchor._replace(block=anchor.block + len(batch))
            self._scroll_quietly(self._vrows.row_of(anchor))
        self.refresh()

    # --- following ----------------------------------------------------------------

    def follow(self) -> None:
        """Go to the bottom and follow new output."""
        self._follow = True
        self._scroll_to_end()

    def _scroll_to_end(self) -> None:
        if not self._width:
            return
        self._measure_bottom()
        target = self.max_scroll_y
        if self.scroll_y != target or self.scroll_target_y != target:
            self._scroll_quietly(target)

    def _scroll_quietly(self, target: int) -> None:
        """Scroll to row ``target`` without that counting as the user's scroll (follow stays)."""
        self._scrolling_ourselves = True
        try:
            self.scroll_to(y=target, animate=False, immediate=True)
        finally:
            self._scrolling_ourselves = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._scrolling_ourselves or not self._width:
            return
        # Any scroll that ends at the bottom re-attaches; any other one detaches.
        self._follow = round(new_value) >= self.max_scroll_y
        if self._follow:
            return
        self._settle_viewport()

    def _changed(self) -> None:
        """Heights or rows changed: new virtual size, follow the bottom if attached."""
        if not self._width:
            return
        self._update_virtual_size()
        if self._follow:
            self._scroll_to_end()
        self.refresh()

    def _show_entry(self, entry: Entry) -> None:
        """Scroll the least needed for ``entry`` to be visible (its top first)."""
        if not self._width or entry not in self._entries:
            return
        index = self._entries.index(entry)
        self._measure(index)
        top, bottom = self._vrows.offset(index), self._vrows.offset(index + 1)
        view = self._view_height
        if self._top <= top and bottom <= self._top + view:
            return
        target = top if bottom - top > view or top < self._top else bottom - view
        self._scroll_quietly(target)
        self._follow = round(self.scroll_y) >= self.max_scroll_y
        self.refresh()

    def _is_visible(self, entry: Entry) -> bool:
        if entry not in self._entries:
            return False
        index = self._entries.index(entry)
        top, bottom = self._vrows.offset(index), self._vrows.offset(index + 1)
        return bottom > self._top and top < self._top + self._view_height

    # --- layout -------------------------------------------------------------------

    @property
    def _top(self) -> int:
        return round(self.scroll_y)

    @property
    def _view_height(self) -> int:
        return max(1, self.scrollable_content_region.height)

    @property
    def _total(self) -> int:
        return self._vrows.total

    def _content_width(self) -> int:
        return max(0, self.scrollable_content_region.width)

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self._content_width(), self._total)

    def _get_look(self) -> Look:
        if self._look is None:
            base = self.rich_style

            def part(name: str) -> Style:
                return solid_component_style(self, f"transcript--{name}")

            md = {name.replace("-", "_"): base + part(name) for name in _MD}
            md["code"] = part("code")
            md["link"] = part("link")
            dark = True
            try:
                dark = self.app.current_theme.dark
            except Exception:
                pass
            palette = Palette(text=base, dark=dark, **md)  # type: ignore[arg-type]  # md: Style fields only
            parts = {name.replace("-", "_"): part(name) for name in _PARTS}
            self._generation += 1
            self._look = Look(
                base=base,
                markdown=palette,
                generation=self._generation,
                muted=base + part("muted"),
                **parts,
            )
        return self._look

    def notify_style_update(self) -> None:
        """Theme or CSS changed: rebuild styles (heights do not depend on them)."""
        super().notify_style_update()
        self._look = None
        self.refresh()

    def _measure(self, index: int) -> int:
        """Exact height of entry ``index`` at the current width."""
        entry = self._entries[index]
        if self._vrows.is_exact(index, entry.version):
            return self._vrows.height(index)
        height = len(self._strips(entry))
        self._vrows.measure(index, height, entry.version)
        return height

    def _strips(self, entry: Entry) -> list[Strip]:
        strips = entry.strips(self._width, self._get_look())
        key = id(entry)
        self._built[key] = entry
        self._built.move_to_end(key)
        while len(self._built) > _CACHED_ENTRIES:
            _, old = self._built.popitem(last=False)
            if old is not self._reply:
                old.drop_cache()
        return strips

    def _measure_bottom(self) -> None:
        """Make the entries that fill the bottom screen exact."""
        need = self._view_height
        index = len(self._entries) - 1
        while index >= 0 and need > 0:
            need -= self._measure(index)
            index -= 1
        self._update_virtual_size()

    def _settle_viewport(self) -> None:
        """Measure estimated entries on screen; keep the top entry where it is."""
        vrows = self._vrows
        anchor = vrows.anchor(self._top)
        if anchor is None:
            return
        changed = False
        for _ in range(4):  # heights converge in a pass or two
            first = vrows.index_at(self._top)
            last = vrows.index_at(self._top + self._view_height)
            stale = [
                index
                for index in range(first, last + 1)
                if not vrows.is_exact(index, self._entries[index].version)
            ]
            if not stale:
                break
            for index in stale:
                self._measure(index)
            changed = True
        if changed:
            self._update_virtual_size()
            target = vrows.row_of(anchor)
            if target != self._top:
                self._scroll_quietly(target)

    def _relayout(self) -> None:
        """The width changed: estimate every height, measure what is visible, keep the view."""
        anchor = None if self._follow or not self._width else self._vrows.anchor(self._top)
        old_width = self._width
        self._width = self._content_width()
        self._vrows.rescale(
            old_width, self._width, lambda i: self._entries[i].estimate(self._width)
        )
        if self._follow or anchor is None:
            self._update_virtual_size()
            self._scroll_to_end() if self._follow else None
        else:
            self._measure(anchor.block)
            self._update_virtual_size()
            target = self._vrows.scaled_row_of(anchor)
            self._scroll_quietly(target)
            self._settle_viewport()

    def on_resize(self, event: events.Resize) -> None:
        if self._content_width() != self._width:
            self._relayout()
        else:
            self._update_virtual_size()
            if self._follow:
                self._scroll_to_end()

    def on_mount(self) -> None:
        if self._content_width():
            self._relayout()
        self._schedule_backfill()  # a history shown before mounting still fills in

    # --- rendering ----------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # The first frame can come before the Resize event: lay out for it now.
        if self._content_width() != self._width:
            self._relayout()
        if self._follow:
            self._scroll_to_end()
        else:
            self._settle_viewport()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = self._top + y
        strip = self._strip_at(row)
        if strip is None:
            return Strip.blank(width, self.rich_style)
        return drawn_row(strip, row, self.text_selection, self._highlight)

    def _strip_at(self, row: int) -> Strip | None:
        if not self._width or not self._entries or row < 0 or row >= self._total:
            return None
        index, inside = self._vrows.locate(row)
        strips = self._strips(self._entries[index])
        return strips[inside] if 0 <= inside < len(strips) else None

    def rendered_line(self, row: int) -> str:
        """Plain text of absolute ``row`` (tests and copy)."""
        strip = self._strip_at(row)
        return strip.text if strip is not None else ""

    def visible_text(self) -> str:
        """What is on screen now, one line per row (tests)."""
        return "\n".join(
            self.rendered_line(self._top + y).rstrip() for y in range(self._view_height)
        )

    # --- selection (mouse drag, then ctrl+c: ``Screen.action_copy_text``) ------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        start, end = selection
        if start is None and end is None:
            return "\n\n".join(e.plain() for e in self.entries), "\n"
        self._measure_range(0 if start is None else start.y, None if end is None else end.y)
        return selected_text(selection, self._total, self.rendered_line), "\n"

    def _measure_range(self, first: int, last: int | None) -> None:
        start = self._vrows.index_at(first)
        stop = len(self._entries) - 1 if last is None else self._vrows.index_at(last)
        for index in range(start, stop + 1):
            self._measure(index)
        self._update_virtual_size()

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _highlight(self, strip: Strip, span: tuple[int, int]) -> Strip:
        return highlight(strip, span, self.screen.get_component_rich_style("screen--selection"))


def _turn_start(messages: list[Message], at: int) -> int:
    """The index of the user message at or before ``at`` (0 when there is none).

    Batches of a resumed history start at a user message, so a tool call and its
    result are always in the same batch.
    """
    for index in range(min(at, len(messages) - 1), 0, -1):
        if messages[index].role == "user":
            return index
    return 0
