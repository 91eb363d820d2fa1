"""The plan picker and action screen on their own: plan files with fixed ages, host apps, settling."""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input

from planshell.plan.store import PlanStore
from planshell.ui.screens.plan_actions import PlanActionScreen
from planshell.ui.screens.plan_picker import PickerChoice, PlanPickerScreen
from planshell.ui.screens.results import push_answering
from planshell.ui.toasts import ToastLog
from planshell.ui.widgets.plan_view import PlanView
from tests.ui_helpers import until

NOW = 1_750_000_000.0


def plan_text(title: str, steps: int, done: int, extra: str = "") -> str:
    lines = [f"# Plan: {title}", "", "## Goal", "Make it so.", extra, "", "## Steps"]
    lines += [f"- [{'x' if n < done else ' '}] Step {n + 1}" for n in range(steps)]
    lines += ["", "## Verification", "```sh", "pytest -q", "```", ""]
    return "\n".join(lines)


def write_plan(store: PlanStore, name: str, text: str, age: float) -> Path:
    path = store.write(name, text)
    os.utime(path, (NOW - age, NOW - age))
    return path


def three_plans(root: Path) -> PlanStore:
    """Newest first: rate limiting (5 min, 2/5), docs (2 h, 3/3), cache (3 d, no steps)."""
    store = PlanStore(root)
    write_plan(store, "2025-01-01-0900-docs.md", plan_text("Rewrite the docs", 3, 3), 2 * 3600)
    write_plan(store, "2025-01-03-1200-rate-limit.md", plan_text("Add rate limiting", 5, 2), 300)
    write_plan(store, "2024-12-28-1000-cache.md", "# Plan: Cache lookups\n\nNotes.\n", 3 * 86400)
    return store


class PickerHost(ToastLog[None]):
    """Pushes one PlanPickerScreen and records what it was dismissed with."""

    def __init__(self, store: PlanStore, theme: str = "planshell-dark") -> None:
        super().__init__()
        self.store = store
        self.results: list[PickerChoice | None] = []
        self.picker: PlanPickerScreen | None = None
        from planshell.ui.themes import load_themes

        for loaded in load_themes().themes:
            self.register_theme(loaded)
        self.theme = theme

    def on_mount(self) -> None:
        self.picker = PlanPickerScreen(self.store, now=lambda: NOW)
        push_answering(self, self.picker, self.results.append)


class ActionHost(App[None]):
    """Pushes one PlanActionScreen and records what it was dismissed with."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__()
        self.path = path
        self.text = text
        self.results: list[str | None] = []

    def on_mount(self) -> None:
        push_answering(self, PlanActionScreen(self.path, self.text), self.results.append)


async def settle_picker(pilot: Pilot[None], *keys: str) -> None:
    await pilot.pause()
    for widget in pilot.app.screen.query(Input):
        widget.cursor_blink = False
    if keys:
        await pilot.press(*keys)
    for view in pilot.app.screen.query(
        PlanView
    ):  # until done: 200 pauses was not enough under load
        await until(pilot, lambda view=view: view.layout_complete)
    await pilot.pause()
