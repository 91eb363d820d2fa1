"""Counted nouns the chat shows read right with a count of one (issue 26.22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.ui.widgets.messages import NoteRow
from tests.ui_helpers import SIZE, make_app, ready


async def test_one_hidden_entry_is_one_entry(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planshell.ui.widgets import transcript as transcript_module

    monkeypatch.setattr(transcript_module, "MAX_ENTRIES", 10)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        count = 0
        while not any(n.message.startswith("…") for n in screen.transcript.entries_of(NoteRow)):
            screen.transcript.add_note(f"note {count}")
            count += 1
        await pilot.pause()
        notes = [n.message for n in screen.transcript.entries_of(NoteRow)]
        assert notes[0] == "… 1 earlier entry is not shown"
