"""The collector's settings once the chat is up (planshell/ui/gc_policy.py, issue 28)."""

from __future__ import annotations

import gc
from pathlib import Path

from planshell.ui.gc_policy import OLDER_EVERY, YOUNG_OBJECTS
from tests.ui_helpers import SIZE, make_app, until


async def test_start_up_is_frozen_and_collections_become_rare(tmp_path: Path) -> None:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's defaults, whatever ran before in this process
    try:
        app = make_app(tmp_path, [])
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.screen.ready)
            assert gc.get_threshold() == (YOUNG_OBJECTS, OLDER_EVERY, 10)
            assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*saved)
