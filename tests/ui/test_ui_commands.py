"""A slash command is one edit: the decorator alone puts it in the prompt, completion and /help.

The command below is registered by this test only; ``ui/host.py`` and the chat
screen know nothing of it, and the handler does its job through the generic
``CommandContext`` it receives.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.commands import REGISTRY, command
from planshell.ui.host import CommandContext
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.screens.help import HelpScreen
from planshell.ui.widgets.messages import NoteRow
from tests.ui_helpers import until

SIZE = (100, 30)
NAME = "echoarg"


@pytest.fixture
def echo_command() -> Iterator[list[str]]:
    """``/echoarg WORD``: registered with the decorator, unregistered afterwards."""
    calls: list[str] = []

    def words(ctx: CommandContext, arg: str) -> list[str]:
        return ["apple", "banana"]

    @command(NAME, "Echo the argument into the transcript", argument="[WORD]", complete=words)
    def _echo(ctx: CommandContext, arg: str) -> None:
        calls.append(arg)
        ctx.transcript.add_note(f"echo: {arg}")

    registered = REGISTRY.get(NAME)
    assert registered is not None
    try:
        yield calls
    finally:
        REGISTRY.unregister(registered)
    assert REGISTRY.get(NAME) is None


def make_app(project: Path) -> PlanshellApp:
    return PlanshellApp(
        Settings(), project, provider=ScriptedProvider([]), persist=False, project_label="~/proj"
    )


async def test_a_decorated_command_runs_completes_and_shows_in_help(
    project: Path, echo_command: list[str]
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(pilot, lambda: screen.ready)

        # Completion of the name, then of the argument.
        await pilot.press(*"/echoa")
        await pilot.pause()
        await pilot.press("tab")
        assert screen.prompt.text == f"/{NAME} "
        await pilot.press(*"ban")
        await pilot.pause()
        await pilot.press("tab")
        assert screen.prompt.text == f"/{NAME} banana"

        await pilot.press("enter")
        await until(pilot, lambda: echo_command == ["banana"])
        await until(
            pilot,
            lambda: "echo: banana" in [n.message for n in screen.transcript.entries_of(NoteRow)],
        )

        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(help_screen._commands_table())
        listed = console.export_text()
        assert f"/{NAME} [WORD]" in listed
        assert "Echo the argument into the transcript" in listed


def test_the_registry_refuses_a_second_command_of_the_same_name(
    echo_command: list[str],
) -> None:
    with pytest.raises(ValueError, match=f"/{NAME} is already registered"):
        command(NAME, "again")(lambda ctx, arg: None)


# The generic surface every command gets. A name added here means a command
# needed the chat screen's help: put that logic in the handler (or an engine
# method) instead, so the next command is still one edit.
GENERIC_SURFACE = {
    "ready",
    "app",
    "runtime",
    "transcript",
    "status",
    "plan_ui",
    "notify",
    "send",
    "prefill",
    "run_worker",
    "run_turn",
    "show_provider",
    "attach_runtime",
}


def test_command_context_stays_generic() -> None:
    own = [c for c in CommandContext.__mro__ if c.__module__ == CommandContext.__module__]
    members = {
        name
        for cls in own
        for name in {*vars(cls), *inspect.get_annotations(cls)}
        if not name.startswith("_")
    }
    assert members == GENERIC_SURFACE


# ------------------------------------------------------------------ the command palette


def palette_texts(app: PlanshellApp) -> list[str]:
    from textual.command import CommandList, CommandPalette

    screen = app.screen
    if not isinstance(screen, CommandPalette):
        return []
    options = screen.query_one(CommandList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_palette_finds_plan_subcommands_and_runs_them(project: Path) -> None:
    from planshell.ui.screens.plan_why import PlanWhyScreen

    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.ready)
        await pilot.press("ctrl+p")
        await pilot.press(*"why")
        await until(pilot, lambda: any("/plan why" in t for t in palette_texts(app)))
        first = palette_texts(app)[0]
        assert first.startswith("/plan why"), palette_texts(app)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PlanWhyScreen))


async def test_palette_holds_every_command_and_subcommand_with_its_key(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.ready)
        entries = {c.title: c.help for c in app.get_system_commands(app.screen)}
        subcommands = 0
        for slash in REGISTRY:
            assert f"/{slash.name}" in entries
            if slash.key:
                assert f"({slash.key})" in entries[f"/{slash.name}"], slash.name
            for sub in slash.subcommands:
                subcommands += 1
                title = f"/{slash.name} {sub.name}"
                assert title in entries, title
                if sub.key:
                    assert f"({sub.key})" in entries[title], title
        plan = REGISTRY.get("plan")
        assert plan is not None
        names = {sub.name for sub in plan.subcommands}
        assert {"on", "off", "list", "review", "review --browser", "why", "new"} <= names
        assert subcommands >= len(names)


async def test_palette_subcommand_with_an_argument_prefills_the_prompt(project: Path) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.ready)
        chat = app.screen
        assert isinstance(chat, ChatScreen)
        entries = {c.title: c for c in app.get_system_commands(chat)}
        entries["/plan new"].callback()
        await pilot.pause()
        assert chat.prompt.text == "/plan new "
