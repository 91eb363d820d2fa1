"""``/model`` picks from the server's list (issue 26, item 15), against a real loopback server.

The OpenAI-compatible provider asks ``GET /v1/models`` of tests/sse_server.py;
the picker lists what it answered, marks the current model, filters as you type,
switches on Enter and changes nothing on Esc. ``/model NAME`` still switches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.ui.app import PlanshellApp
from planshell.ui.screens.model_picker import CURRENT_MARK, ModelPickerScreen, model_matches
from tests.sse_server import SSEServer
from tests.ui.model_helpers import openai_app, serve_models
from tests.ui_helpers import SIZE, ready, screen_text, send, until

SERVED = ["llama-3.1-8b", "model-b", "qwen2.5-coder:7b"]
HOSTILE = ["\x1b]0;evil\x07", "[red]markup[/red]", "two words"]


@pytest.fixture
def models_server(sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch) -> SSEServer:
    serve_models(sse_server, monkeypatch, [*HOSTILE, *reversed(SERVED)])
    return sse_server


def local_app(project: Path, server: SSEServer) -> PlanshellApp:
    return openai_app(project, server, "model-b")


def rows(picker: ModelPickerScreen) -> list[str]:
    listing = picker.query_one("#model-list")
    return [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]


async def open_picker(pilot, app: PlanshellApp) -> ModelPickerScreen:  # type: ignore[no-untyped-def]
    await send(pilot, "/model")
    await until(pilot, lambda: isinstance(app.screen, ModelPickerScreen))
    picker = app.screen
    assert isinstance(picker, ModelPickerScreen)
    await until(pilot, lambda: not picker.asking_server)
    await pilot.pause()
    return picker


async def test_model_opens_a_filterable_picker_and_enter_switches(
    project: Path, models_server: SSEServer
) -> None:
    app = local_app(project, models_server)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        runtime = app.runtime
        assert runtime is not None
        picker = await open_picker(pilot, app)
        assert picker.shown == SERVED  # the server's names; the hostile ones never listed
        assert any(r.startswith(CURRENT_MARK) and "model-b" in r for r in rows(picker))
        assert picker.highlighted_name == "model-b"  # the current one first
        assert "3 models from the server" in str(picker.query_one("#model-status").render())
        assert any(r.path == "/v1/models" for r in models_server.requests)
        assert f"{CURRENT_MARK} model-b  current" in screen_text(app)  # drawn, not just listed

        await pilot.press(*"coder")
        await pilot.pause()
        assert picker.shown == ["qwen2.5-coder:7b"]
        assert picker.highlighted_name == "qwen2.5-coder:7b"
        await pilot.press("enter")
        await until(pilot, lambda: runtime.agent.provider.model == "qwen2.5-coder:7b")
        assert app.screen is screen
        assert "openai · qwen2.5-coder:7b" in str(screen.query_one("#provider").render())


async def test_arrows_move_and_escape_changes_nothing(
    project: Path, models_server: SSEServer
) -> None:
    app = local_app(project, models_server)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        runtime = app.runtime
        assert runtime is not None
        picker = await open_picker(pilot, app)
        await pilot.press("up")
        assert picker.highlighted_name == "llama-3.1-8b"
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        assert runtime.agent.provider.model == "model-b"
        picker = await open_picker(pilot, app)
        await pilot.press("down", "enter")
        await until(pilot, lambda: runtime.agent.provider.model == "qwen2.5-coder:7b")


async def test_model_name_still_switches_to_any_name(
    project: Path, models_server: SSEServer
) -> None:
    app = local_app(project, models_server)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        runtime = app.runtime
        assert runtime is not None
        await send(pilot, "/model not-listed-7b")
        await until(pilot, lambda: runtime.agent.provider.model == "not-listed-7b")
        assert not isinstance(app.screen, ModelPickerScreen)


def test_filter_words_all_match_ignoring_case() -> None:
    assert model_matches("Qwen2.5-Coder:7b", "coder QWEN")
    assert not model_matches("qwen2.5-coder:7b", "coder llama")
    assert model_matches("anything", "")
