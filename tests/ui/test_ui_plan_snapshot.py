"""Entering PLAN does not wait for the receipt's snapshot (issue 28): the chip shows at once.

The snapshot is the real one held back on an event until the test lets it go,
so the chip can only say PLAN while the scan is still running if entering
plan mode does not wait for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.plan import controller as controller_module
from tests.engine_helpers import HeldSnapshot
from tests.ui.plan_helpers import SIZE, chip_text, make_app, runtime
from tests.ui_helpers import ready, until


@pytest.fixture
def held(monkeypatch):
    holder = HeldSnapshot()
    monkeypatch.setattr(controller_module, "take_snapshot", holder)
    yield holder
    holder.release.set()


async def test_the_plan_chip_shows_while_the_snapshot_is_still_held(
    project: Path, held: HeldSnapshot
) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f2")
        await until(pilot, lambda: chip_text(app).startswith("PLAN"))
        snapshot = runtime(app).plan._pending
        assert snapshot is not None and not snapshot.done and held.entered.is_set()
        held.release.set()
        await until(pilot, lambda: snapshot.done)
        assert snapshot.result().kind == "walk"
        await pilot.press("f2")
        await until(pilot, lambda: chip_text(app) == "OFF")
