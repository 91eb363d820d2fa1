"""/provider and /model: a configured model and base URL follow the provider they were set for."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.factory import DEFAULT_MODELS, make_provider, switched_settings
from tests.test_ui_chat import SIZE, make_app, ready, send
from tests.ui_helpers import until

LOCAL = Settings(base_url="http://127.0.0.1:8080/v1", model="smollm2", context_window=4096)


def test_from_the_demo_to_the_provider_the_settings_were_written_for():
    """Seen by hand: started with --provider demo, /provider openai used gpt-4.1-mini."""
    start = LOCAL.model_copy(update={"provider": "demo"})  # `--provider demo` over the file
    after = switched_settings(start, start, {}, provider="openai")
    assert (after.provider, after.model, after.base_url) == ("openai", "smollm2", LOCAL.base_url)
    assert after.context_window == 4096
    provider = make_provider(after, {})
    assert provider.label == "openai · smollm2"


@pytest.mark.parametrize("start_provider", ["openai", "auto", "demo"])
def test_another_provider_starts_from_its_own_defaults(start_provider):
    start = LOCAL.model_copy(update={"provider": start_provider})
    after = switched_settings(start, start, {}, provider="anthropic")
    assert after.model is None and after.base_url is None and after.context_window is None
    provider = make_provider(after, {"ANTHROPIC_API_KEY": "k"})
    assert provider.model == DEFAULT_MODELS["anthropic"]
    assert "127.0.0.1" not in getattr(provider, "base_url", "")
    # ... and switching back brings the configured ones back.
    back = switched_settings(start, after, {}, provider="openai")
    assert (back.model, back.base_url, back.context_window) == ("smollm2", LOCAL.base_url, 4096)


def test_an_explicit_provider_owns_the_configured_model():
    start = Settings(provider="anthropic", model="claude-opus-4-1")
    assert switched_settings(start, start, {}, provider="openai").model is None
    assert switched_settings(start, start, {}, provider="anthropic").model == "claude-opus-4-1"


def test_model_switch_drops_a_window_configured_for_another_model():
    after = switched_settings(LOCAL, LOCAL, {}, model="qwen2.5-coder")
    assert after.model == "qwen2.5-coder" and after.context_window is None
    again = switched_settings(LOCAL, after, {}, model="smollm2")
    assert again.context_window == 4096


async def test_provider_command_uses_the_configured_model(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        runtime = app.runtime
        assert runtime is not None
        runtime.start_settings = runtime.settings = LOCAL.model_copy(update={"provider": "demo"})
        await send(pilot, "/provider openai")
        await until(pilot, lambda: runtime.agent.provider.name == "openai")
        assert runtime.agent.provider.model == "smollm2"
        assert "openai · smollm2" in str(screen.query_one("#provider").render())
