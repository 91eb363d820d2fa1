"""Behaviour of the chat screen, driven with Pilot against the scripted provider."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from planshell.agent.session import SessionLog, project_dir
from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.llm.types import Message, ProviderError
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.help import HelpScreen
from planshell.ui.screens.model_picker import ModelPickerScreen
from planshell.ui.widgets.assistant import AssistantMessage
from planshell.ui.widgets.messages import ErrorRow, NoteRow, UserMessage
from planshell.ui.widgets.tool_row import ToolRow
from tests.engine_helpers import HANG_GUARD
from tests.ui_helpers import SIZE, idle, make_app, ready, send, until


def markdown_text(message: AssistantMessage, width: int = 80) -> str:
    """The reply's rows as the transcript draws them (markup rendered, not shown)."""
    from planshell.ui.widgets.messages import Look

    return "\n".join(strip.text.rstrip() for strip in message.strips(width, Look()))


def shown(screen: ChatScreen) -> str:
    """Every row of the transcript as text."""
    transcript = screen.transcript
    return "\n".join(transcript.rendered_line(row) for row in range(transcript.virtual_size.height))


async def test_submit_streams_markdown_answer(project: Path) -> None:
    text = "Hello **there**, this is a *streamed* answer.\n\n- one\n- two"
    app = make_app(project, [Reply(text=text, chunk=3, delay=0.005)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "say hi")
        await until(pilot, lambda: bool(screen.transcript.entries_of(AssistantMessage)))
        await idle(pilot, screen)
        users = [u.text for u in screen.transcript.entries_of(UserMessage)]
        assert users == ["say hi"]
        (reply,) = screen.transcript.entries_of(AssistantMessage)
        assert reply.full_text == text
        assert reply.finished
        shown = markdown_text(reply)
        assert "streamed answer" in shown and "one" in shown and "two" in shown
        assert screen.prompt.text == ""


async def test_model_text_is_sanitised(project: Path) -> None:
    app = make_app(project, [Reply(text="safe\x1b]52;c;ZXZpbA==\x07 text\x1b[31m red")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "x")
        await idle(pilot, screen)
        (reply,) = screen.transcript.entries_of(AssistantMessage)
        assert "\x1b" not in reply.full_text
        assert reply.full_text == "safe text red"


async def test_tool_row_expands_and_collapses(project: Path) -> None:
    replies = [
        Reply(text="Reading.", calls=[("read", {"path": "README.md"})]),
        Reply(text="It is a widget service."),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "what is this?")
        await idle(pilot, screen)
        (row,) = screen.transcript.entries_of(ToolRow)
        assert row.headline.startswith("read README.md")
        assert row.status == "ok"
        assert not row.expanded
        assert "Widget Service" not in shown(screen)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert row.expanded
        assert "Widget Service" in shown(screen)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not row.expanded and "Widget Service" not in shown(screen)


async def test_tool_error_row_and_engine_error_row(project: Path) -> None:
    replies = [
        Reply(calls=[("read", {"path": "missing.txt"})]),
        Reply(error=ProviderError("The model provider answered 500 (server error).")),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "read it")
        await idle(pilot, screen)
        (row,) = screen.transcript.entries_of(ToolRow)
        assert row.status == "error"
        assert row.header_text().startswith("✗ read missing.txt")
        assert "✗ read missing.txt" in shown(screen)
        (error,) = screen.transcript.entries_of(ErrorRow)
        assert error.message.startswith("The model provider answered 500")
        assert "/retry" in error.message


async def test_escape_cancels_running_turn(project: Path) -> None:
    slow = Reply(text="word " * 400, chunk=5, delay=0.02)
    app = make_app(project, [slow])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "talk a lot")
        runtime = app.runtime
        assert runtime is not None
        await until(pilot, lambda: bool(screen.transcript.entries_of(AssistantMessage)))
        assert runtime.agent.busy
        await pilot.press("escape")
        await until(
            pilot,
            lambda: any("Interrupted" in n.message for n in screen.transcript.entries_of(NoteRow)),
        )
        await idle(pilot, screen)
        assert not runtime.agent.busy
        # A second Esc with an empty prompt is harmless.
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen) and not runtime.agent.busy


async def test_history_up_restores_previous_prompts(project: Path) -> None:
    app = make_app(project, [Reply(text="one"), Reply(text="two")], persist=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "first question")
        await idle(pilot, screen)
        await send(pilot, "second question")
        await idle(pilot, screen)
        prompt = screen.prompt
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert prompt.text == "second question"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == "second question"
        await pilot.press("down")
        assert prompt.text == "draft"
    history = project_dir(project) / "history.jsonl"
    lines = [json.loads(line)["text"] for line in history.read_text().splitlines()]
    assert lines == ["first question", "second question"]


async def test_history_is_loaded_from_the_project_file(project: Path) -> None:
    history = project_dir(project) / "history.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text(json.dumps({"text": "from last time"}) + "\nnot json\n")
    app = make_app(project, [], persist=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("up")
        assert screen.prompt.text == "from last time"


async def test_slash_completion_with_tab(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("/", "h", "e")
        await pilot.pause()
        suggestions = screen.query_one("#suggestions")
        assert suggestions.display
        await pilot.press("tab")
        assert screen.prompt.text == "/help"
        await pilot.pause()
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))


async def test_enter_on_partial_command_runs_the_highlighted_one(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        # Typed faster than the Changed messages arrive: Enter must use the final text.
        await pilot.press("/", "t", "h", "e", "m", "e", "enter")
        await pilot.pause()
        await until(pilot, lambda: any("Current theme" in str(n.message) for n in app.toasts))


async def test_argument_completion_for_theme(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press(*"/theme planshell-l")
        await pilot.pause()
        await pilot.press("tab")
        assert screen.prompt.text == "/theme planshell-light"


async def test_theme_switch_is_applied_and_remembered(project: Path, isolated_env: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.theme == "planshell-dark"
        await send(pilot, "/theme planshell-light")
        await until(pilot, lambda: app.theme == "planshell-light")
        await pilot.pause()
    config = isolated_env / "config" / "planshell" / "config.toml"
    assert 'theme = "planshell-light"' in config.read_text()


async def test_unknown_command_warns(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/nonsense")
        await pilot.pause()
        assert any("Unknown command /nonsense" in n.message for n in app.toasts)


async def test_steering_while_busy_is_queued_then_delivered(project: Path) -> None:
    release = asyncio.Event()  # the first reply streams until the steering is queued
    replies = [
        Reply(text="working " * 60, chunk=6, hold=release),
        Reply(text="Noted the extra request."),
    ]
    app = make_app(project, replies)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "do the thing")
        await until(pilot, lambda: bool(screen.transcript.entries_of(AssistantMessage)))
        await send(pilot, "also check the tests")
        await until(
            pilot,
            lambda: any(u.state == "queued" for u in screen.transcript.entries_of(UserMessage)),
        )
        queued = next(u for u in screen.transcript.entries_of(UserMessage) if u.state == "queued")
        assert queued.text == "also check the tests"
        assert "⧗ queued" in shown(screen)
        release.set()
        await until(pilot, lambda: queued.state == "delivered")
        await idle(pilot, screen)
        assert "↳ steering delivered" in shown(screen)
        # The delivered message sits after the first reply, before the answer to it.
        children = screen.transcript.all_entries
        replies_shown = [c for c in children if isinstance(c, AssistantMessage)]
        assert children.index(queued) < children.index(replies_shown[-1])


async def test_ctrl_c_clears_the_prompt(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press(*"some draft")
        assert screen.prompt.text == "some draft"
        await pilot.press("ctrl+c")
        assert screen.prompt.text == ""


class FakeClock:
    """A pinned clock for the double ctrl+c window (tests never depend on real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_ctrl_c_stops_a_running_turn(project: Path) -> None:
    """Issue 12, item 4: ctrl+c interrupts like Esc (Claude Code / Codex habit)."""
    app = make_app(project, [Reply(text="word " * 400, chunk=5, delay=0.02)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.clock = clock = FakeClock()
        await send(pilot, "talk a lot")
        runtime = app.runtime
        assert runtime is not None
        await until(pilot, lambda: bool(screen.transcript.entries_of(AssistantMessage)))
        assert runtime.agent.busy
        await pilot.press("ctrl+c")
        await until(
            pilot,
            lambda: any("Interrupted" in n.message for n in screen.transcript.entries_of(NoteRow)),
        )
        await idle(pilot, screen)
        clock.now += 5  # a later, single ctrl+c does not quit
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and screen.prompt.text == ""


async def test_ctrl_c_right_after_sending_stops_the_turn_about_to_start(project: Path) -> None:
    """The turn's worker may not have started the engine yet: ctrl+c still stops it."""
    app = make_app(project, [Reply(text="word " * 400, chunk=5, delay=0.02)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.clock = FakeClock()
        screen.send("talk a lot")
        screen.action_ctrl_c()  # same tick: nothing is running in the engine yet
        await idle(pilot, screen)
        assert any("Stopping" in n.message for n in app.toasts)
        assert not any("Press ctrl+c again" in n.message for n in app.toasts)
        assert not screen.transcript.entries_of(AssistantMessage)


async def test_ctrl_c_twice_within_a_second_quits(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.clock = clock = FakeClock()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("ctrl+c again to quit" in n.message for n in app.toasts)
        clock.now += 0.5
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_ctrl_c_twice_during_a_turn_asks_before_quitting(project: Path) -> None:
    app = make_app(project, [Reply(text="slow " * 300, chunk=5, delay=0.02)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.clock = FakeClock()
        runtime = app.runtime
        assert runtime is not None
        # A turn slow to stop: the first ctrl+c asks it to stop, it keeps running.
        screen._stop_turn = lambda: True  # type: ignore[method-assign]
        await send(pilot, "go")
        await until(pilot, lambda: runtime.agent.busy)
        await pilot.press("ctrl+c", "ctrl+c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_ctrl_c_copies_a_selection_first(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.clock = FakeClock()
        await pilot.press(*"keep me")
        screen.prompt.select_all()
        await pilot.press("ctrl+c", "ctrl+c")
        await pilot.pause()
        assert app.is_running and screen.prompt.text == "keep me"
        assert app.clipboard == "keep me"


async def test_footer_keeps_more_and_the_main_keys_at_80_and_50_columns(project: Path) -> None:
    """Issue 12, item 10: whole keys dropped, least important first; F1 "more" always shown."""
    for width in (120, 80, 50):
        app = make_app(project, [])
        async with app.run_test(size=(width, 24)) as pilot:
            screen = await ready(pilot)
            await pilot.pause(0.1)
            # Keys that do not fit are hidden, not removed: count the displayed ones.
            visible = [k for k in screen.query("FooterKey") if k.display]
            keys = [(str(k.key_display), str(k.description)) for k in visible]
            shown = {d for _, d in keys}
            assert "more" in shown and "Send" in shown and "Plan mode" in shown, (width, keys)
            if width >= 80:  # issue 26 item 17: Mode and palette before esc Stop and ^q Quit
                assert {"Stop/quit", "Mode", "palette"} <= shown, keys
            if width >= 120:
                assert {"Stop", "Quit"} <= shown, keys
            # The keys as laid out, not an estimate: the last one ends inside the screen.
            assert max(k.region.right for k in visible) <= width, keys


async def test_footer_is_not_rebuilt_when_its_keys_stay_the_same(project: Path) -> None:
    """The screen's bindings are updated on every focus change; rebuilding a dozen keys each
    time cost about 40 ms, so the footer keeps its keys while what they show is the same."""
    app = make_app(project, [])
    async with app.run_test(size=(120, 24)) as pilot:
        screen = await ready(pilot)
        await pilot.pause()
        before = list(screen.query("FooterKey"))
        assert before
        for _ in range(2):
            screen.refresh_bindings()
            await pilot.pause()
        assert all(a is b for a, b in zip(screen.query("FooterKey"), before, strict=True))


async def test_quit_during_a_turn_asks_first(project: Path) -> None:
    app = make_app(project, [Reply(text="slow " * 300, chunk=5, delay=0.02)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: app.runtime is not None and app.runtime.agent.busy)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
        assert app.is_running and app.runtime.agent.busy
        screen.action_interrupt()
        await idle(pilot, screen)


async def test_quit_command_exits_when_idle(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/quit")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_model_command_shows_and_switches(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/provider")
        await until(pilot, lambda: any("scripted · script" in n.message for n in app.toasts))
        # A bare /model is a picker (tests/ui/test_ui_model_picker.py); this provider lists none.
        await send(pilot, "/model")
        await until(pilot, lambda: isinstance(app.screen, ModelPickerScreen))
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        assert picker.shown == ["script"]  # only the current one, marked
        assert "does not list its models" in str(picker.query_one("#model-status").render())
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen)
        await send(pilot, "/provider demo")
        runtime = app.runtime
        assert runtime is not None
        await until(pilot, lambda: runtime.agent.provider.name == "demo")
        assert runtime.provider is runtime.agent.provider
        assert "demo (offline)" in str(screen.query_one("#provider").render())


async def test_clear_starts_a_new_conversation(project: Path) -> None:
    app = make_app(project, [Reply(text="first answer")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot, screen)
        assert app.runtime is not None and app.runtime.agent.messages
        await send(pilot, "/clear")
        await until(pilot, lambda: not screen.transcript.entries_of(AssistantMessage))
        assert app.runtime.agent.messages == []
        assert not screen.transcript.entries_of(UserMessage)


async def test_initial_prompt_is_submitted_at_start(project: Path) -> None:
    app = make_app(project, [Reply(text="right away")], prompt="start with this")
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: bool(screen.transcript.entries_of(AssistantMessage)))
        await idle(pilot, screen)
        assert [u.text for u in screen.transcript.entries_of(UserMessage)] == ["start with this"]


async def test_resumed_history_is_rendered(project: Path) -> None:
    log = SessionLog.create(project)
    log.append_message(Message("user", "earlier question"))
    log.append_message(Message("assistant", "earlier **answer**"))
    log.close()
    loaded = SessionLog.load(log.path)
    app = make_app(project, [], resume=loaded)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.pause()
        assert [u.text for u in screen.transcript.entries_of(UserMessage)] == ["earlier question"]
        (reply,) = screen.transcript.entries_of(AssistantMessage)
        assert reply.full_text == "earlier **answer**"
        assert app.runtime is not None and len(app.runtime.agent.messages) == 2


async def test_confirm_enter_plan_uses_the_modal(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        task = asyncio.ensure_future(app.decider.confirm_enter_plan("big change"))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "plan first" in str(app.screen.query_one("#question").render())
        await pilot.press("y")
        assert await asyncio.wait_for(task, HANG_GUARD) is True
        task = asyncio.ensure_future(app.decider.confirm_enter_plan(""))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        assert await asyncio.wait_for(task, HANG_GUARD) is False


async def test_model_asking_to_leave_plan_mode_gets_a_dialog_that_defaults_to_keep(
    project: Path,
) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        # Enter (the focused, safe button) and Esc both keep planning.
        for key in ("enter", "escape", "n"):
            task = asyncio.ensure_future(app.decider.confirm_leave_plan("\x1b]52;c;aGk=\x07done"))
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            assert "leave plan mode" in str(app.screen.query_one("#question").render())
            detail = str(app.screen.query_one("#detail").render())
            assert "Reason: done" in detail and "\x1b" not in detail
            await pilot.press(key)
            assert await asyncio.wait_for(task, 5) is False
        task = asyncio.ensure_future(app.decider.confirm_leave_plan(""))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        assert await asyncio.wait_for(task, 5) is True


async def test_help_lists_keys_and_commands(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        keys = " ".join(key for key, _ in help_screen.keys).lower()
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(help_screen._commands_table())
        commands = console.export_text()
        for key in ("esc", "ctrl+o", "ctrl+q", "f1", "enter", "ctrl+j"):
            assert key in keys
        for name in (
            "/help",
            "/clear",
            "/model",
            "/provider",
            "/theme",
            "/resume",
            "/retry",
            "/quit",
        ):
            assert name in commands


@pytest.mark.parametrize("width", [40, 120])
async def test_project_path_truncates_from_the_left(project: Path, width: int) -> None:
    app = PlanshellApp(
        Settings(),
        project,
        provider=ScriptedProvider([]),
        persist=False,
        project_label="~/a/very/long/path/to/some/deeply/nested/project",
    )
    async with app.run_test(size=(width, 20)) as pilot:
        await ready(pilot)
        shown = str(app.screen.query_one("#project").render())
        assert shown.endswith("/project")
        if width == 40:
            assert shown.startswith("…")


async def test_deferred_settings_load_after_the_first_frame(
    project: Path, isolated_env: Path
) -> None:
    settings = Settings.model_validate({"ui": {"theme": "planshell-light"}})
    calls: list[str] = []

    def load() -> tuple[Settings, Path, None]:
        calls.append("load")
        return settings, project, None

    app = PlanshellApp(
        None, project, loader=load, provider=ScriptedProvider([Reply(text="ok")]), persist=False
    )
    assert app.theme == "planshell-dark"  # nothing configured: the default until loaded
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert calls == ["load"]
        assert app.settings is settings
        await until(pilot, lambda: app.theme == "planshell-light")
        await send(pilot, "hi")
        await idle(pilot, screen)
        assert [u.text for u in screen.transcript.entries_of(UserMessage)] == ["hi"]
    # Applied from the settings, not chosen by the user: nothing written.
    assert not (isolated_env / "config" / "planshell" / "config.toml").exists()


async def test_deferred_settings_error_exits_with_the_message(project: Path) -> None:
    from planshell.config import ConfigError

    def load() -> tuple[Settings, Path, None]:
        raise ConfigError("config error in x.toml: ui.theme: bad value.")

    app = PlanshellApp(None, project, loader=load, provider=ScriptedProvider([]), persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: not app.is_running)
    assert app.startup_error == "config error in x.toml: ui.theme: bad value."
    assert app.return_code == 1


async def test_a_broken_project_file_starts_with_a_warning_naming_it(project: Path) -> None:
    from planshell.config import load_settings

    broken = project / ".planshell" / "config.toml"
    broken.parent.mkdir()
    broken.write_text("[ui]\ntheme = [not toml\n")

    def load() -> tuple[Settings, Path, None]:
        return load_settings(project), project, None

    app = PlanshellApp(
        None, project, loader=load, provider=ScriptedProvider([Reply(text="ok")]), persist=False
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: any(str(broken) in t.message for t in app.toasts))
        shown = next(t.message for t in app.toasts if str(broken) in t.message)
        assert "invalid TOML" in shown and "ignores that file until it is fixed" in shown
        await send(pilot, "hi")
        await idle(pilot, screen)
        assert app.is_running and app.startup_error is None


def test_peek_configured_theme(
    project: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planshell.ui.themes import peek_configured_theme

    assert peek_configured_theme(project) is None
    user = isolated_env / "config" / "planshell" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[ui]\ntheme = "planshell-light"\n')
    assert peek_configured_theme(project) == "planshell-light"
    (project / ".planshell").mkdir()
    (project / ".planshell" / "config.toml").write_text('[ui]\ntheme = "nord"\n')
    assert peek_configured_theme(project) == "nord"
    monkeypatch.setenv("PLANSHELL_UI__THEME", "dracula")
    assert peek_configured_theme(project) == "dracula"


async def test_thinking_is_shown_dimmed_then_collapsed(project: Path) -> None:
    from planshell.ui.widgets.messages import ThinkingBlock

    app = make_app(project, [Reply(thinking="First I consider the options.", text="Done.")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "think")
        await idle(pilot, screen)
        (block,) = screen.transcript.entries_of(ThinkingBlock)
        assert block.text == "First I consider the options."
        assert block.collapsed and block.finished
        assert "consider the options" not in shown(screen)
        transcript = screen.transcript
        row = next(
            r
            for r in range(transcript.virtual_size.height)
            if "▸ thinking" in transcript.rendered_line(r)
        )
        await pilot.click(transcript, offset=(4, row - round(transcript.scroll_y)))
        await pilot.pause()
        assert not block.collapsed
        assert "consider the options" in shown(screen)


async def test_long_sessions_keep_rows_for_a_few_entries_only(project: Path) -> None:
    """Entries are data, not widgets: only entries near the view keep their rows built."""
    from planshell.ui.widgets import transcript as transcript_module

    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        transcript = screen.transcript
        for i in range(300):
            transcript.add_user(f"question {i}")
            await transcript.reply_done(f"Answer **{i}**\n\n```py\nx = {i}\n```")
        await pilot.pause()
        assert not list(transcript.children)  # no widget per entry
        built = [e for e in transcript.all_entries if e._key is not None]
        assert len(built) <= transcript_module._CACHED_ENTRIES
        assert "Answer 299" in transcript.visible_text()
        assert "x = 299" in transcript.visible_text()
        await pilot.press("home")  # the transcript is not focused: the prompt takes it
        transcript.focus()
        await pilot.press("home")
        await pilot.pause()
        assert "question 0" in transcript.visible_text()


async def test_transcript_keeps_a_bounded_number_of_entries(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planshell.ui.widgets import transcript as transcript_module

    monkeypatch.setattr(transcript_module, "MAX_ENTRIES", 10)
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for i in range(30):
            screen.transcript.add_note(f"note {i}")
        await pilot.pause()
        notes = [n.message for n in screen.transcript.entries_of(NoteRow)]
        assert notes[0] == "… 20 earlier entries are not shown"  # the welcome line stays
        assert notes[-1] == "note 29"
        assert len(screen.transcript.entries) <= 10


async def test_follows_the_stream_until_the_user_scrolls_up(project: Path) -> None:
    long = "\n\n".join(f"Paragraph {i} of a long answer." for i in range(60))
    app = make_app(project, [Reply(text=long, chunk=40, delay=0.01), Reply(text=long)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        transcript = screen.transcript
        await send(pilot, "long please")
        await until(pilot, lambda: transcript.max_scroll_y > 20)
        assert transcript.scroll_y == pytest.approx(transcript.max_scroll_y, abs=1)
        await pilot.press("pageup")
        await pilot.pause()
        held = transcript.scroll_y
        assert held < transcript.max_scroll_y - 5
        await idle(pilot, screen)
        assert transcript.scroll_y == pytest.approx(held, abs=1)  # not dragged down
        # Back at the bottom, following resumes for the next answer.
        while transcript.scroll_y < transcript.max_scroll_y:
            await pilot.press("pagedown")
            await pilot.pause()
        await send(pilot, "again")
        await idle(pilot, screen)
        await pilot.pause()
        assert transcript.scroll_y == pytest.approx(transcript.max_scroll_y, abs=1)


async def test_resume_picker_loads_an_earlier_conversation(project: Path) -> None:
    from textual.widgets import OptionList

    from planshell.ui.screens.resume import ResumeScreen

    SessionLog.create(project).close()  # an empty log: not listed
    log = SessionLog.create(project)
    log.append_message(Message("user", "old question"))
    log.append_message(Message("assistant", "old answer"))
    log.close()
    app = make_app(project, [Reply(text="fresh")])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await send(pilot, "/resume")
        await until(pilot, lambda: isinstance(app.screen, ResumeScreen))
        picker = app.screen
        await until(pilot, lambda: picker.query_one("#sessions", OptionList).option_count == 1)
        await pilot.press("enter")
        await until(
            pilot,
            lambda: [u.text for u in screen.transcript.entries_of(UserMessage)] == ["old question"],
        )
        assert app.runtime is not None
        assert [m.content for m in app.runtime.agent.messages] == ["old question", "old answer"]
        assert any(
            "Resumed conversation" in n.message for n in screen.transcript.entries_of(NoteRow)
        )


async def test_mode_chip_follows_mode_changes(project: Path) -> None:
    from planshell.ui.widgets.mode_chip import ModeChip

    app = make_app(project, [], plan=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chip = screen.query_one(ModeChip)
        assert chip.mode == "plan" and chip.has_class("-plan")
        assert "PLAN" in str(chip.render())
        assert app.runtime is not None
        app.runtime.plan.leave()
        await until(pilot, lambda: chip.mode == "off")
        assert chip.has_class("-off") and not chip.has_class("-plan")
        assert any("Plan mode off" in n.message for n in app.toasts)


async def test_mode_chip_custom_colour_from_settings(project: Path) -> None:
    from planshell.ui.widgets.mode_chip import ModeChip

    settings = Settings.model_validate(
        {
            "plan": {
                "labels": {
                    "off": {
                        "notify": "off",
                        "widget": "NORMAL",
                        "widget_with_title": "NORMAL",
                        "widget_color": "#112233",
                    }
                }
            }
        }
    )
    app = PlanshellApp(settings, project, provider=ScriptedProvider([]), persist=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        chip = screen.query_one(ModeChip)
        assert "NORMAL" in str(chip.render())
        assert chip.styles.background.hex6 == "#112233"


async def test_typing_always_reaches_the_prompt(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("tab")  # nothing to complete: focus stays
        assert app.focused is screen.prompt
        screen.transcript.focus()
        await pilot.pause()
        await pilot.press("h", "i")
        assert app.focused is screen.prompt
        assert screen.prompt.text == "hi"


async def test_palette_lists_slash_commands_and_actions(project: Path) -> None:
    app = make_app(project, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        titles = [c.title for c in app.get_system_commands(screen)]
        for title in (
            "/help",
            "/clear",
            "/model",
            "/theme",
            "/resume",
            "/retry",
            "/quit",
            "Stop",
            "Tool output",
            "Clear prompt",
            "Help",
            "Theme",
            "Quit",
        ):
            assert title in titles
        assert titles.count("Quit") == 1
        # A command that takes an argument prefills the prompt instead of running.
        command = next(c for c in app.get_system_commands(screen) if c.title == "/theme")
        command.callback()
        await pilot.pause()
        assert screen.prompt.text == "/theme "


async def test_no_model_chosen_takes_the_servers_model_with_a_notice(
    project: Path, sse_server
) -> None:
    """A local server and no --model: the status bar names what it serves, a toast says so."""
    from textual.widgets import Static

    from tests.sse_server import Response

    sse_server.routes["/v1/models"] = Response.json(
        200, {"data": [{"id": "qwen2.5-coder:7b"}, {"id": "llama3.2"}]}
    )
    settings = Settings(provider="openai", base_url=f"{sse_server.url}/v1")
    app = PlanshellApp(settings, project, persist=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await until(pilot, lambda: any("No model was chosen" in t.message for t in app.toasts))
        toast = next(t.message for t in app.toasts if "No model was chosen" in t.message)
        assert "using qwen2.5-coder:7b (the first of 2 it lists)" in toast
        assert "/model changes it" in toast
        label = str(screen.status.query_one("#provider", Static).render())
        assert "qwen2.5-coder:7b" in label and "gpt-4.1-mini" not in label
