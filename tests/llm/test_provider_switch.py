"""/provider and /model: a configured model and base URL follow the provider they were set for."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.factory import DEFAULT_MODELS, make_provider, switched_settings
from tests.ui_helpers import SIZE, make_app, ready, send, until

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


def test_runtime_switch_provider_rewires_the_engine_headless(project: Path) -> None:
    """The engine switches by itself (no Textual): settings, agent and window follow."""
    from planshell.llm.demo import DemoProvider
    from planshell.runtime import build_runtime
    from tests.engine_helpers import ScriptedDecider

    start = LOCAL.model_copy(update={"provider": "demo"})
    demo = DemoProvider(chunk_delay=0)
    runtime = build_runtime(start, project, ScriptedDecider(), provider=demo, persist=False)
    switch = runtime.switch_provider(provider="openai", environ={})
    assert switch.old is demo and switch.new is runtime.agent.provider is runtime.provider
    assert switch.new.label == "openai · smollm2"
    assert (runtime.settings.provider, runtime.start_settings) == ("openai", start)
    assert switch.close_old() is None  # the demo has nothing to close
    again = runtime.switch_provider(model="qwen2.5-coder", environ={})
    assert again.new.label == "openai · qwen2.5-coder"
    assert runtime.settings.context_window is None  # the window was configured for smollm2
    closing = again.close_old()  # an HTTP provider: closed by whoever runs the coroutine
    assert closing is not None
    closing.close()


def test_runtime_switch_provider_refuses_and_keeps_the_engine(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planshell import runtime as runtime_module
    from planshell.config import ConfigError
    from planshell.llm.demo import DemoProvider
    from planshell.runtime import ProviderSwitchError, build_runtime
    from tests.engine_helpers import ScriptedDecider

    demo = DemoProvider(chunk_delay=0)
    runtime = build_runtime(Settings(), project, ScriptedDecider(), provider=demo, persist=False)
    settings = runtime.settings
    with pytest.raises(ProviderSwitchError, match=r"Unknown provider 'nope': choose one of "):
        runtime.switch_provider(provider="nope", environ={})

    def broken(settings: Settings, environ: object = None) -> None:
        raise ConfigError("no such endpoint")

    monkeypatch.setattr(runtime_module, "make_provider", broken)
    with pytest.raises(ProviderSwitchError, match=r"^Could not switch: no such endpoint$"):
        runtime.switch_provider(provider="anthropic", environ={})
    assert runtime.agent.provider is demo and runtime.settings is settings
