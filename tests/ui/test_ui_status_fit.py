"""The status bar and the footer fit the terminal by whole segments, never a cut word.

Issue 26 item 17: at 80 columns the bar showed ``working 2s · esc to sto`` and
``+120 sub-agen``; at 120 columns in EXECUTE the context count lost its label;
the footer dropped ``⇧tab Mode`` and ``^p palette`` at 80.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widget import Widget

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.widgets.status import MARKERS, StatusBar, fit_path
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


def assert_no_cut_words(bar: StatusBar, label: str) -> None:
    """Every token a segment shows is a whole token of that segment's full text."""
    for widget in (w for w in bar.children if w.display and w.region.width > 0):
        full = label if widget.id == "project" else str(widget.render())
        cells = str(widget.render()).rstrip()[: widget.region.width]
        if widget.id == "project":
            parts = full.split("/")
            assert cells in ("", full) or (
                cells.startswith("…/")
                and any(cells[2:] == "/".join(parts[i:]) for i in range(1, len(parts)))
            ), (cells, full)
            continue
        assert set(cells.split()) <= set(full.split()), (widget.id, cells, full)
        assert cells.split()[-1:] == full.split()[-1:], (widget.id, cells, full)


@pytest.mark.parametrize("working", [False, True])
@pytest.mark.parametrize("mode", ["off", "plan", "execute"])
async def test_no_segment_is_cut_inside_a_word_at_80_columns(
    project: Path, tmp_path: Path, mode: str, working: bool
) -> None:
    deep = tmp_path / "walk26" / "a-rather-long-folder-name" / "and-another-long-one" / "proj"
    shutil.copytree(project, deep)
    label = str(deep)
    gate = asyncio.Event()
    app = PlanshellApp(
        Settings(),
        deep,
        provider=ScriptedProvider([Reply(text="hi", hold=gate)]),
        project_label=label,
        persist=False,
        plan=mode == "plan",
    )
    async with app.run_test(size=(80, 24)) as pilot:
        chat = await ready(pilot)
        bar = chat.status
        bar.set_context(12_300, 1_047_000, 0.042)
        if mode == "execute":
            runtime(app).plan.execute_existing(save_plan(deep, text=PLAN))
            await until(pilot, lambda: chip_text(app).startswith("EXECUTE"))
        if working:
            chat.prompt.set_text("go")
            await pilot.press("enter")
            await until(pilot, lambda: chat.busy)
        await pilot.pause(0.1)
        assert_no_cut_words(bar, label)
        if mode == "plan":
            for marker in MARKERS:  # "checking" included: a transient frame while working
                bar.set_marker(marker)
                await pilot.pause()
                assert_no_cut_words(bar, label)
                assert "…" not in str(bar.marker.render())
        gate.set()


def test_a_path_is_shortened_only_between_names() -> None:
    assert fit_path("/tmp/walk26/proj", 40) == "/tmp/walk26/proj"
    assert fit_path("/tmp/walk26/proj", 15) == "…/walk26/proj"
    assert fit_path("/tmp/walk26/proj", 12) == "…/proj"
    assert fit_path("/tmp/walk26/proj", 5) == ""
    assert fit_path("~/a-very-long-name", 10) == ""
