"""How the plan picker, the plan action screen and the checklist panel look.

Deterministic: plan files with fixed mtimes, a fixed ``now`` for the ages, the
filter's cursor blink off. Update with
``pytest tests/ui/test_ui_picker_snapshots.py --snapshot-update`` and look at the
SVGs before committing them.
"""

from __future__ import annotations

import os
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from planshell.plan.store import PlanStore
from planshell.ui.screens.plan_actions import PlanActionScreen
from planshell.ui.widgets.checklist import ChecklistPanel
from tests.ui.picker_helpers import NOW, PickerHost, plan_text, settle_picker, three_plans
from tests.ui.samples import ITEMS


def _themes(app: App[None], theme: str) -> None:
    from planshell.ui.themes import load_themes

    for loaded in load_themes().themes:
        app.register_theme(loaded)
    app.theme = theme


def picker_with_broken(root: Path, theme: str = "planshell-dark") -> PickerHost:
    store = three_plans(root)
    broken = store.plans_dir / "2024-11-02-0800-old-notes.md"
    broken.write_bytes(b"\x00\x01binary")
    os.utime(broken, (NOW - 40 * 86400, NOW - 40 * 86400))
    return PickerHost(store, theme=theme)


def test_picker_three_plans(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = PickerHost(three_plans(tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await settle_picker(pilot, "down")

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_picker_light_with_a_broken_file(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = picker_with_broken(tmp_path, theme="planshell-light")
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_picker)


def test_picker_filtered_to_nothing(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = PickerHost(three_plans(tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await settle_picker(pilot, *"websockets")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_create_modal(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = PickerHost(three_plans(tmp_path))

    async def run_before(pilot: Pilot[None]) -> None:
        await settle_picker(pilot, "enter", *"rate limiting")
        await settle_picker(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


class ActionHost(App[None]):
    def __init__(self, path: Path, text: str, theme: str) -> None:
        super().__init__()
        self.path = path
        self.text = text
        _themes(self, theme)

    def on_mount(self) -> None:
        self.push_screen(PlanActionScreen(self.path, self.text))


def _action_host(root: Path, theme: str) -> ActionHost:
    store = PlanStore(root)
    text = plan_text(
        "Add rate limiting to the widget server",
        5,
        2,
        extra="\nA token bucket per client in `src/app/limits.py`.\n\n> Keep the defaults generous.",
    )
    path = store.write("2025-01-03-1200-rate-limit.md", text)
    return ActionHost(path, text, theme)


def test_action_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = _action_host(tmp_path, "planshell-dark")

    async def run_before(pilot: Pilot[None]) -> None:
        await settle_picker(pilot, "tab", "right")

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_action_screen_light_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = _action_host(tmp_path, "planshell-light")
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle_picker)


def test_action_screen_discard_confirmation(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = _action_host(tmp_path, "planshell-dark")

    async def run_before(pilot: Pilot[None]) -> None:
        await settle_picker(pilot, "D")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


class ChecklistHost(App[None]):
    CSS = """
    #transcript { height: 1fr; padding: 1 2; }
    ChecklistPanel { dock: right; width: 40; height: auto; }
    """

    def __init__(self, theme: str) -> None:
        super().__init__()
        _themes(self, theme)

    def compose(self) -> ComposeResult:
        yield Static("The chat transcript would be here.", id="transcript")
        yield ChecklistPanel(
            [
                *ITEMS[:2],
                (
                    "Add a per-client token bucket in src/app/limits.py with a configurable burst",
                    "pending",
                ),
                *ITEMS[2:],
            ]
        )


def test_checklist_panel(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ChecklistHost("planshell-dark"), terminal_size=(80, 16))


def test_checklist_panel_light(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ChecklistHost("planshell-light"), terminal_size=(80, 16))
