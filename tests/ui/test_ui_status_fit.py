"""The status bar and the footer fit the terminal by whole segments, never a cut word.

Issue 26 item 17: at 80 columns the bar showed ``working 2s · esc to sto`` and
``+120 sub-agen``; at 120 columns in EXECUTE the context count lost its label;
the footer dropped ``⇧tab Mode`` and ``^p palette`` at 80.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widget import Widget

from planshell.llm.scripted import Reply
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.widgets.status import StatusBar
from tests.ui.plan_helpers import chip_text, make_app, runtime, save_plan
from tests.ui_helpers import ready, until

LONG_TITLE = "Add a write-through cache to the widget server"
PLAN = f"# Plan: {LONG_TITLE}\n\n## Steps\n\n- [ ] Read the server\n- [ ] Add the cache\n"


def segments(bar: StatusBar) -> list[Widget]:
    return [w for w in bar.children if w.display and w.id != "project"]


def assert_whole(app: PlanshellApp, bar: StatusBar) -> None:
    width = app.size.width
    for widget in segments(bar):
        text = str(widget.render())
        assert widget.region.width >= cell_len(text.rstrip()), (widget.id, text, widget.region)
        assert widget.region.right <= width, (widget.id, text, widget.region)


def shown(bar: StatusBar) -> dict[str, str]:
    return {str(w.id): str(w.render()).strip() for w in segments(bar)}


async def busy_chat(pilot: object, app: PlanshellApp, gate: asyncio.Event) -> ChatScreen:
    chat = await ready(pilot)  # type: ignore[arg-type]
    chat.status.set_context(12_300, 1_047_000, 0.042)
    chat.status.set_subagent_tokens(120_000)
    chat.prompt.set_text("go")
    await pilot.press("enter")  # type: ignore[attr-defined]
    await until(pilot, lambda: chat.busy)  # type: ignore[arg-type]
    await pilot.pause(0.1)  # type: ignore[attr-defined]
    return chat


@pytest.mark.parametrize("width", [80, 120])
async def test_status_bar_drops_whole_segments_and_keeps_chip_and_activity(
    project: Path, width: int
) -> None:
    gate = asyncio.Event()
    app = make_app(project, [Reply(text="hi", hold=gate)])
    async with app.run_test(size=(width, 24)) as pilot:
        chat = await busy_chat(pilot, app, gate)
        bar = chat.status
        assert_whole(app, bar)
        texts = shown(bar)
        assert texts["mode-chip"] == "OFF"
        assert texts["activity"].endswith("esc to stop"), texts
        if width >= 120:
            assert "ctx" in texts["tokens"] and "sub-agents" in texts.get("subagents", ""), texts
        gate.set()


@pytest.mark.parametrize("width", [80, 120])
async def test_execute_chip_and_context_keep_their_words(project: Path, width: int) -> None:
    path = save_plan(project, text=PLAN)
    gate = asyncio.Event()
    app = make_app(project, [Reply(text="hi", hold=gate)])
    async with app.run_test(size=(width, 24)) as pilot:
        chat = await busy_chat(pilot, app, gate)
        runtime(app).plan.execute_existing(path)
        await until(pilot, lambda: chip_text(app).startswith("EXECUTE"))
        await pilot.pause(0.1)
        bar = chat.status
        assert_whole(app, bar)
        texts = shown(bar)
        assert texts["mode-chip"].startswith("EXECUTE") and "0/2" in texts["mode-chip"], texts
        assert texts["activity"].endswith("esc to stop"), texts
        if width >= 120:
            assert texts["tokens"].startswith("12.3k / 1047k ctx"), texts
        gate.set()


@pytest.mark.parametrize("width", [80, 120])
async def test_footer_keeps_mode_and_palette(project: Path, width: int) -> None:
    app = make_app(project, [])
    async with app.run_test(size=(width, 24)) as pilot:
        chat = await ready(pilot)
        await pilot.pause(0.1)
        visible = [k for k in chat.query("FooterKey") if k.display]
        described = {str(k.description) for k in visible}
        for wanted in ("Send", "Plan mode", "Mode", "palette", "Stop/quit", "more"):
            assert wanted in described, (width, described)
        assert max(k.region.right for k in visible) <= width
