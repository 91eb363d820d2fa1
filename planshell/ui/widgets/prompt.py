"""The prompt: a multi-line TextArea where Enter sends.

- Enter sends; ctrl+j (and shift+enter where the terminal reports it) inserts a newline.
- ↑/↓ on the first/last row walk the prompt history.
- End / ctrl+end at the end of the text (or in an empty prompt) take the transcript to
  its bottom and follow the stream (the screen does it, on ``ToBottom``).
- A ``/`` at the start shows command completions (Tab completes, ↑/↓ choose).
- ctrl+c copies the selection if there is one; otherwise the chat screen's ctrl+c
  (stop the turn / clear the prompt / twice: quit) applies.
- A long paste shows as a chip, ``[pasted 2,000 lines, 84 KB]``; the chip is
  replaced by the full text when the message is sent (the model gets it all).

The prompt knows nothing about particular commands: it asks ``suggest`` (a
callable the screen provides, backed by the command registry) what to show.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from planshell.ui.commands import Suggestion
from planshell.ui.widgets.history import PromptHistory
from planshell.ui.widgets.key_order import KeysInOrder
from planshell.ui.widgets.messages import normalise_newlines, paste_chip, paste_lines
from planshell.ui.widgets.suggestions import CommandSuggestions

PLACEHOLDER = "Ask anything · / for commands · ctrl+j newline"
PASTE_FOLD_LINES = 8  # a paste with more lines than this is folded (CR, CRLF, LF alike)
PASTE_FOLD_CHARS = 1_000  # ... or with more characters than this


class PromptInput(KeysInOrder, TextArea):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "submit",
            "Send",
            key_display="enter",
            tooltip="Send the message (steers the running turn while one runs)",
        ),
        Binding("ctrl+j,shift+enter", "newline", "Newline", show=False, tooltip="Insert a newline"),
        Binding("tab", "complete", "Complete", show=False, tooltip="Complete the slash command"),
        Binding(
            "end",
            "end",
            "Bottom of the transcript (follow)",
            show=False,
            tooltip="End, ctrl+end: the bottom of the transcript, following the stream, when the "
            "prompt is empty or its cursor is at the end (else: end of the line / of the text)",
        ),
        # No description: the help lists it in End's row.
        Binding("ctrl+end", "end(True)", show=False),
        Binding("up", "up", "Previous prompt (on the first row)", show=False),
        Binding("down", "down", "Next prompt (on the last row)", show=False),
        Binding(
            "ctrl+c",
            "copy_or_clear",
            "Copy / clear prompt",
            show=False,
            tooltip="Copy the selection if there is one, else clear the prompt",
        ),
    ]

    class ToBottom(Message):
        """End with nothing after the cursor: the screen takes the transcript to its bottom."""

    class Submitted(Message):
        """``text`` has every paste chip expanded; ``pastes`` are the folded pastes in it."""

        def __init__(self, prompt: PromptInput, text: str, pastes: tuple[str, ...] = ()) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text
            self.pastes = pastes

    def __init__(
        self,
        *,
        history: PromptHistory | None = None,
        suggestions: CommandSuggestions | None = None,
        suggest: Callable[[str], list[Suggestion]] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            highlight_cursor_line=False,
            compact=True,
            placeholder=PLACEHOLDER,
        )
        self.prompt_history = history or PromptHistory(None)
        self.suggestions = suggestions
        self.suggest = suggest
        self._history_index: int | None = None  # None: editing the draft
        self._draft = ""
        self._muted_for: str | None = None  # text for which Esc hid the completions
        self._suggested_for = ""
        self._pastes: dict[str, str] = {}  # chip -> pasted text

    # --- pastes -------------------------------------------------------------------

    def on_paste(self, event: events.Paste) -> None:
        """Insert a paste with LF line breaks, folding a long one into a chip.

        Terminals send CR for each newline in a bracketed paste: left as it is, the
        model would get one long line and the chip would count one line. TextArea's
        own handler is always replaced, so both forms get the normalised text.
        """
        if self.read_only:
            return
        event.stop()
        event.prevent_default()
        text = normalise_newlines(event.text)
        start, end = self.selection
        if paste_lines(text) <= PASTE_FOLD_LINES and len(text) <= PASTE_FOLD_CHARS:
            result = self.replace(text, start, end, maintain_selection_offset=False)
            self.move_cursor(result.end_location)
            return
        chip = paste_chip(text)
        number = 2
        while chip in self._pastes and self._pastes[chip] != text:
            chip = f"{paste_chip(text)[:-1]} #{number}]"
            number += 1
        self._pastes[chip] = text
        self.replace(chip, start, end, maintain_selection_offset=False)

    def expand_pastes(self, text: str) -> tuple[str, tuple[str, ...]]:
        """``text`` with chips replaced by their pastes, and the pastes used."""
        used: list[str] = []
        for chip, paste in self._pastes.items():
            if chip in text:
                text = text.replace(chip, paste)
                used.append(paste)
        return text, tuple(used)

    # --- keys ---------------------------------------------------------------------

    async def on_key(self, event: events.Key) -> None:
        # TextArea inserts a newline for Enter in its own key handler, before
        # bindings are consulted: claim Enter here (the subclass's handler runs
        # first; prevent_default keeps TextArea's from running).
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()

    def action_submit(self) -> None:
        text = self.text
        open_list = self.suggestions if self._suggesting else None
        choice = open_list.current if open_list is not None else None
        if choice is not None and choice.completion.strip() != text.strip():
            text = choice.completion.strip()
        if not text.strip():
            return
        self._hide_suggestions()
        full, pastes = self.expand_pastes(text)
        self.post_message(self.Submitted(self, full, pastes))

    def action_end(self, whole_text: bool = False) -> None:
        """End / ctrl+end: within the draft they move the cursor; at its end (or in an
        empty prompt, the default focus) there is nowhere to go, so they mean "the bottom
        of the transcript" (the keys the transcript itself uses)."""
        start, end = self.selection
        if start == end == self.document.end:
            self.post_message(self.ToBottom())
        elif whole_text:
            self.move_cursor(self.document.end)
        else:
            self.action_cursor_line_end()

    def action_newline(self) -> None:
        if not self.read_only:
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)

    def action_complete(self) -> None:
        if not self._suggesting:
            return  # Tab never moves focus away from the prompt
        assert self.suggestions is not None
        choice = self.suggestions.current or self.suggestions.items[0]
        self.set_text(choice.completion)

    def action_up(self) -> None:
        if self._suggesting:
            assert self.suggestions is not None
            self.suggestions.move(-1)
            return
        if not self.navigator.is_first_wrapped_line(self.cursor_location):
            self.action_cursor_up()
            return
        self.history_back()

    def action_down(self) -> None:
        if self._suggesting:
            assert self.suggestions is not None
            self.suggestions.move(1)
            return
        if not self.navigator.is_last_wrapped_line(self.cursor_location):
            self.action_cursor_down()
            return
        self.history_forward()

    def action_copy_or_clear(self) -> None:
        if not self.copy_selection():
            self.clear_prompt()

    def copy_selection(self) -> bool:
        """Copy the prompt's selection, else the screen's (transcript) one; False if none."""
        selected = self.selected_text
        if selected:
            self.app.copy_to_clipboard(selected)
            self.app.notify("Copied the selection.", timeout=2)
            return True
        screen_text = self.screen.get_selected_text()
        if screen_text:
            self.app.copy_to_clipboard(screen_text)
            self.screen.clear_selection()
            self.app.notify("Copied the selection.", timeout=2)
            return True
        return False

    def dismiss_suggestions(self) -> bool:
        """Esc while completing: hide the list (the screen calls this first)."""
        if not self._suggesting:
            return False
        self._muted_for = self.text
        self._hide_suggestions()
        return True

    # --- history ------------------------------------------------------------------

    def history_back(self) -> None:
        entries = self.prompt_history.entries
        if not entries:
            return
        if self._history_index is None:
            self._draft = self.text
            index = len(entries) - 1
        else:
            index = max(0, self._history_index - 1)
        self._history_index = index
        self.set_text(entries[index], cursor_at_end=False)

    def history_forward(self) -> None:
        if self._history_index is None:
            return
        index = self._history_index + 1
        if index >= len(self.prompt_history.entries):
            self._history_index = None
            self.set_text(self._draft)
            return
        self._history_index = index
        self.set_text(self.prompt_history.entries[index])

    # --- text ---------------------------------------------------------------------

    def set_text(self, text: str, *, cursor_at_end: bool = True) -> None:
        self.load_text(text)
        if cursor_at_end:
            self.move_cursor(self.document.end)
        else:
            # Recalled entries put the cursor at the end of the first row so
            # another ↑ keeps walking back.
            self.move_cursor((0, len(self.document.get_line(0))))
        self._refresh_suggestions()

    def clear_prompt(self) -> None:
        self._history_index = None
        self._pastes.clear()
        self.set_text("")

    def remember(self, text: str) -> None:
        self.prompt_history.add(text)
        self._history_index = None
        self._draft = ""

    # --- suggestions --------------------------------------------------------------

    @property
    def _suggesting(self) -> bool:
        # Keys can arrive faster than TextArea.Changed messages: bring the list
        # up to date with the text before a key acts on it.
        if self._suggested_for != self.text:
            self._refresh_suggestions()
        return self.suggestions is not None and self.suggestions.is_open

    def _hide_suggestions(self) -> None:
        if self.suggestions is not None:
            self.suggestions.hide()

    def _refresh_suggestions(self) -> None:
        if self.suggestions is None or self.suggest is None:
            return
        text = self.text
        self._suggested_for = text
        if self._muted_for is not None and text == self._muted_for:
            self.suggestions.hide()
            return
        self._muted_for = None
        items = self.suggest(text) if text.startswith("/") else []
        if items:
            self.suggestions.show(items)
        else:
            self.suggestions.hide()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self:
            return
        index = self._history_index
        if index is not None and self.text != self.prompt_history.entries[index]:
            self._history_index = None  # edited a recalled entry: it is a new draft
        if self._suggested_for != self.text:
            self._refresh_suggestions()
