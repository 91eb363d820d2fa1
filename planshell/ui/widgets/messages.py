"""Transcript entries: user and assistant messages, thinking, tool rows, errors, notes.

Entries are plain objects, not widgets: the :class:`~planshell.ui.widgets.transcript.Transcript`
(one Line-API scroll view) asks each for its rows at a width and caches them,
so a session of thousands of entries costs memory for its text, not for a
widget tree. An entry that changes bumps ``version`` and tells its owner.

Everything shown here may come from the model or a tool, so text is
sanitised (:func:`planshell.sanitize.strip_terminal_controls`) and never
parsed as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from planshell.markdown import DEFAULT_PALETTE, Palette, wrap_spans
from planshell.markdown.wrap import chop
from planshell.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    from collections.abc import Sequence

PASTE_CHIP = "[pasted {lines:,} lines, {size}]"


def clean(text: str) -> str:
    return strip_terminal_controls(text)


def human_size(size: int) -> str:
    """``84 KB`` style sizes for paste chips."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024):,} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def normalise_newlines(text: str) -> str:
    """CR and CRLF as LF: terminals send CR for each newline in a paste (xterm, tmux)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paste_lines(text: str) -> int:
    """How many lines a paste holds, counting CR, CRLF and LF as line breaks."""
    text = normalise_newlines(text)
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def paste_chip(text: str) -> str:
    """The folded form of a long paste: ``[pasted 2,000 lines, 84 KB]``."""
    text = normalise_newlines(text)
    size = human_size(len(text.encode("utf-8", "replace")))
    return PASTE_CHIP.format(lines=paste_lines(text), size=size)


@dataclass(frozen=True)
class Look:
    """Every style the transcript draws with, resolved from the theme once."""

    base: Style = field(default_factory=Style)
    markdown: Palette = DEFAULT_PALETTE
    user: Style = field(default_factory=Style)
    user_bar: Style = field(default_factory=Style)
    queued_bar: Style = field(default_factory=Style)
    delivered_bar: Style = field(default_factory=Style)
    prompt_mark: Style = field(default_factory=lambda: Style(bold=True))
    muted: Style = field(default_factory=lambda: Style(dim=True))
    note: Style = field(default_factory=lambda: Style(italic=True, dim=True))
    note_warning: Style = field(default_factory=lambda: Style(italic=True))
    error: Style = field(default_factory=Style)
    error_bar: Style = field(default_factory=Style)
    thinking: Style = field(default_factory=lambda: Style(italic=True, dim=True))
    tool_name: Style = field(default_factory=lambda: Style(bold=True))
    tool_ok: Style = field(default_factory=lambda: Style(bold=True))
    tool_error: Style = field(default_factory=lambda: Style(bold=True))
    tool_running: Style = field(default_factory=lambda: Style(bold=True))
    tool_error_text: Style = field(default_factory=Style)
    tool_body: Style = field(default_factory=Style)
    cursor: Style = field(default_factory=lambda: Style(reverse=True))
    chip: Style = field(default_factory=lambda: Style(bold=True))
    welcome_name: Style = field(default_factory=lambda: Style(bold=True))
    generation: int = 0


Rows = list[list[Segment]]


def _strips(rows: Rows, width: int, style: Style, margin: int = 0) -> list[Strip]:
    """Rows as strips exactly ``width`` cells wide, after ``margin`` blank rows."""
    blank = Strip.blank(width, style)
    out = [blank] * margin
    out.extend(Strip(row).crop_extend(0, width, style) for row in rows)
    return out


def _framed(
    rows: Rows,
    width: int,
    look: Look,
    *,
    bar: Style | None,
    background: Style | None,
    left: int,
    right: int,
    margin: int = 1,
) -> list[Strip]:
    """``rows`` (already wrapped to ``width - left - right``) with a bar, padding and background."""
    base = look.base + background if background is not None else look.base
    out = [Strip.blank(width, look.base)] * margin
    for row in rows:
        prefix: list[Segment] = []
        if bar is not None:
            prefix.append(Segment("▌", base + bar))
            prefix.append(Segment(" " * (left - 1), base))
        elif left:
            prefix.append(Segment(" " * left, base))
        segments = [*prefix, *(Segment(s.text, base + s.style if s.style else base) for s in row)]
        out.append(Strip(segments).crop_extend(0, width, base))
    return out


class Entry:
    """One item of the transcript. ``rows`` is cached per (width, version, look)."""

    kind = "entry"

    def __init__(self) -> None:
        self.version = 0
        self.owner: Callable[[Entry], None] | None = None
        self._key: tuple[int, int, int] | None = None
        self._strips: list[Strip] = []

    def touch(self) -> None:
        """The entry changed: its rows are rebuilt and the owner re-measures it."""
        self.version += 1
        if self.owner is not None:
            self.owner(self)

    def strips(self, width: int, look: Look) -> list[Strip]:
        key = (width, self.version, look.generation)
        if key != self._key:
            self._strips = self.build(max(1, width), look)
            self._key = key
        return self._strips

    def drop_cache(self) -> None:
        """Forget the built rows (the transcript keeps only a few entries' rows)."""
        self._key = None
        self._strips = []

    def estimate(self, width: int) -> int:
        """A cheap guess of the height at ``width`` (before the entry is measured)."""
        return 2

    def build(self, width: int, look: Look) -> list[Strip]:
        raise NotImplementedError

    def plain(self) -> str:
        """The entry's text (what "copy everything" gives)."""
        return ""

    def toggle(self) -> bool:
        """Expand or collapse; True when it changed something (nothing folds by default)."""
        return False

    def click(self, row: int) -> bool:
        """A click on ``row`` of this entry; True when it changed something."""
        return self.toggle()


def _wrap_text(text: str, width: int, style: Style, first: Sequence[Segment] = ()) -> Rows:
    rows: Rows = []
    lines = text.split("\n")
    for number, line in enumerate(lines):
        prefix = first if number == 0 else [Segment(" " * sum(len(s.text) for s in first))]
        rows.extend(wrap_spans([(line, style)], width, prefix) if line else [list(prefix)])
    return rows


class WelcomeBanner(Entry):
    """The first line of an empty transcript."""

    kind = "welcome"

    def __init__(self, version: str) -> None:
        super().__init__()
        self.version_text = version

    def build(self, width: int, look: Look) -> list[Strip]:
        spans = [
            ("planshell", look.welcome_name),
            (f" {self.version_text}", look.muted),
            ("  ·  type a request, ", look.muted),
            ("/", look.base + Style(bold=True)),
            (" for commands, ", look.muted),
            ("F1", look.base + Style(bold=True)),
            (" for keys", look.muted),
        ]
        rows = wrap_spans(spans, max(1, width - 2), [Segment(" ")])
        return _strips(rows, width, look.base, margin=1)

    def plain(self) -> str:
        return f"planshell {self.version_text}"


@dataclass
class Fold:
    """A long paste inside a user message, shown as a chip until expanded."""

    start: int
    end: int
    expanded: bool = False


class UserMessage(Entry):
    """Something the user sent; steering messages start as *queued*.

    Long pastes (registered by the prompt) show folded as a chip; a click or
    Enter on the message expands them. The model always receives the full text.
    """

    kind = "user"

    def __init__(self, text: str, *, queued: bool = False, pastes: Sequence[str] = ()) -> None:
        super().__init__()
        self.text = clean(text)
        self._state = "queued" if queued else "sent"
        self.folds: list[Fold] = []
        for paste in pastes:
            paste = clean(paste)
            start = self.text.find(paste)
            if paste and start >= 0 and not any(f.start <= start < f.end for f in self.folds):
                self.folds.append(Fold(start, start + len(paste)))
        self.folds.sort(key=lambda f: f.start)

    @property
    def state(self) -> str:
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        if value != self._state:
            self._state = value
            self.touch()

    @property
    def folded(self) -> bool:
        return any(not fold.expanded for fold in self.folds)

    def toggle(self) -> bool:
        if not self.folds:
            return False
        expand = self.folded
        for fold in self.folds:
            fold.expanded = expand
        self.touch()
        return True

    def shown_text(self) -> str:
        """The text as displayed: folded pastes replaced by their chips."""
        parts: list[str] = []
        position = 0
        for fold in self.folds:
            parts.append(self.text[position : fold.start])
            chunk = self.text[fold.start : fold.end]
            parts.append(chunk if fold.expanded else paste_chip(chunk))
            position = fold.end
        parts.append(self.text[position:])
        return "".join(parts)

    def estimate(self, width: int) -> int:
        return 2 + self.shown_text().count("\n")

    def build(self, width: int, look: Look) -> list[Strip]:
        inner = max(1, width - 3)
        spans: list[tuple[str, Style]] = [("› ", look.prompt_mark)]
        position = 0
        for fold in self.folds:
            spans.append((self.text[position : fold.start], Style()))
            chunk = self.text[fold.start : fold.end]
            spans.append((chunk, Style()) if fold.expanded else (paste_chip(chunk), look.chip))
            position = fold.end
        spans.append((self.text[position:], Style()))
        rows: Rows = [[]]
        used_first = True
        for text, style in spans:
            for number, line in enumerate(text.split("\n")):
                if number:
                    rows.append([Segment("  ")])
                    used_first = False
                if line:
                    rows[-1].append(Segment(line, style))
        del used_first
        wrapped: Rows = []
        for row in rows:
            pieces = [(seg.text, seg.style or Style()) for seg in row]
            wrapped.extend(_wrap_row(pieces, inner))
        if self._state == "queued":
            wrapped.append(
                [Segment("⧗ queued: the model sees it at its next step", look.note_warning)]
            )
        elif self._state == "delivered":
            wrapped.append([Segment("↳ steering delivered", look.note)])
        bar = {"queued": look.queued_bar, "delivered": look.delivered_bar}.get(
            self._state, look.user_bar
        )
        return _framed(wrapped, width, look, bar=bar, background=look.user, left=2, right=1)

    def plain(self) -> str:
        return self.text


def _wrap_row(pieces: list[tuple[str, Style]], width: int) -> Rows:
    """Wrap one logical line of spans, keeping leading spaces (indentation)."""
    text = "".join(t for t, _ in pieces)
    if not text.strip():
        return [[Segment(t, s) for t, s in pieces]]
    return wrap_spans(pieces, width)


class ThinkingBlock(Entry):
    """Reasoning text: dimmed, collapsible (click the title)."""

    kind = "thinking"

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[str] = []
        self.finished = False
        self.collapsed = False

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def feed(self, delta: str) -> None:
        self._parts.append(clean(delta))  # the transcript flushes (touches) on its timer

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self.collapsed = True
        self.touch()

    def toggle(self) -> bool:
        self.collapsed = not self.collapsed
        self.touch()
        return True

    def title(self) -> str:
        mark = "▸" if self.collapsed else "▾"
        label = "thinking" if self.finished else "thinking…"
        lines = self.text.count("\n") + 1 if self.text else 0
        extra = f"  ({lines} lines)" if self.collapsed and lines else ""
        return f"{mark} {label}{extra}"

    def estimate(self, width: int) -> int:
        return 2 if self.collapsed else 2 + len(self.text) // max(1, width)

    def build(self, width: int, look: Look) -> list[Strip]:
        rows: Rows = [[Segment("  "), Segment(self.title(), look.thinking)]]
        if not self.collapsed and self.text:
            rows.extend(_wrap_text(self.text, max(1, width - 5), look.thinking, [Segment("    ")]))
        return _strips(rows, width, look.base, margin=1)

    def plain(self) -> str:
        return self.text


class ErrorRow(Entry):
    """The engine's one-sentence error, in red."""

    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = clean(message)

    def build(self, width: int, look: Look) -> list[Strip]:
        rows = _wrap_text(
            self.message,
            max(1, width - 3),
            look.error,
            [Segment("✗ ", look.error + Style(bold=True))],
        )
        return _framed(
            rows, width, look, bar=look.error_bar, background=look.error, left=2, right=1
        )

    def plain(self) -> str:
        return self.message


class NoteRow(Entry):
    """A quiet line: interruptions, cleared conversations, resumed sessions."""

    kind = "note"

    def __init__(self, message: str, *, kind: str = "info") -> None:
        super().__init__()
        self._message = message
        self.note_kind = kind

    @property
    def message(self) -> str:
        return self._message

    @message.setter
    def message(self, value: str) -> None:
        self._message = value
        self.touch()

    def build(self, width: int, look: Look) -> list[Strip]:
        style = look.note_warning if self.note_kind == "warning" else look.note
        rows = _wrap_text(self._message, max(1, width - 3), style, [Segment("  ")])
        return _strips(rows, width, look.base, margin=1)

    def plain(self) -> str:
        return self._message


def chop_lines(text: str, width: int, limit: int) -> list[str]:
    """At most ``limit`` display rows of ``text`` hard-wrapped at ``width``."""
    out: list[str] = []
    for line in text.split("\n"):
        out.extend(chop(line.expandtabs(4), width))
        if len(out) >= limit:
            return out[:limit]
    return out
