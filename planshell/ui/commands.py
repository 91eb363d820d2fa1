"""Slash commands: one registry for the prompt, its completion, /help and the palette.

Adding a command is one decorated function; nothing else changes (not the
prompt, not ``ui/host.py``, not the chat screen)::

    from planshell.ui.commands import command

    @command("hello", "Say hello", argument="[NAME]")
    def _hello(ctx: CommandContext, arg: str) -> None:
        ctx.transcript.add_note(f"Hello {arg or 'you'}.")

A handler receives a :class:`planshell.ui.host.CommandContext` (the chat
screen implements it: the app, the runtime, the transcript, notify, send,
workers; nothing command-specific) and the text after the command name
(stripped), and may be sync or async. The command's behaviour lives in the
handler; engine work stays in engine methods. ``complete`` returns candidate
values for the argument being typed.

This module holds the registry and the app-level commands; groups that belong
together live beside their subject (``commands_conversation.py``,
``commands_model.py``, ``permissions_ui.py``, ``plan_ui.py``), each imported at
start-up through ``PlanshellApp.COMMAND_MODULES``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planshell.runtime import Runtime
    from planshell.ui.host import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[None] | None]
Completer = Callable[["CommandContext", str], Iterable[str]]


@dataclass(frozen=True)
class Subcommand:
    """A fixed first word of a command's argument (``/plan why``): its own palette entry.

    ``argument`` says what may follow it: required (``"REQUEST"``: the palette
    prefills the prompt) or optional (``"[PATH]"``: the palette runs it as it is).
    """

    name: str
    summary: str
    argument: str = ""
    key: str = ""

    @property
    def needs_argument(self) -> bool:
        """An argument to type first (``REQUEST``); an optional one (``[PATH]``) may follow."""
        return bool(self.argument) and not self.argument.startswith("[")


@dataclass(frozen=True)
class SlashCommand:
    name: str
    summary: str
    handler: Handler
    argument: str = ""  # shown in usage, e.g. "[NAME]"; empty: takes no argument
    complete: Completer | None = None
    aliases: tuple[str, ...] = ()
    key: str = ""  # a key that does the same, shown in /help
    subcommands: tuple[Subcommand, ...] = ()

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument}".strip()


@dataclass(frozen=True)
class PaletteEntry:
    """One command-palette line, generated from the registry (never kept by hand).

    Chosen, it runs at once, unless ``needs_argument``: then the prompt is
    prefilled with ``title`` and a space for the user to finish.
    """

    title: str  # "/plan why": what it types
    help: str
    command: SlashCommand
    argument: str  # the argument the handler receives when run at once
    needs_argument: bool


def with_key(summary: str, key: str) -> str:
    return f"{summary} ({key})" if key else summary


def palette_entries(commands: Iterable[SlashCommand]) -> Iterator[PaletteEntry]:
    """Every command, then each of its subcommands, with its key when it has one."""
    for slash in commands:
        yield PaletteEntry(
            f"/{slash.name}", with_key(slash.summary, slash.key), slash, "", bool(slash.argument)
        )
        for sub in slash.subcommands:
            yield PaletteEntry(
                f"/{slash.name} {sub.name}",
                with_key(sub.summary, sub.key),
                slash,
                sub.name,
                sub.needs_argument,
            )


@dataclass(frozen=True)
class Suggestion:
    completion: str  # the whole prompt text after accepting it
    label: str
    summary: str = ""
    is_command: bool = True  # a command name (else an argument value)


@dataclass
class CommandRegistry:
    _commands: dict[str, SlashCommand] = field(default_factory=dict)

    def register(self, command: SlashCommand, *, replace: bool = False) -> SlashCommand:
        for name in (command.name, *command.aliases):
            existing = self._commands.get(name)
            if existing is not None and not replace and existing is not command:
                raise ValueError(f"/{name} is already registered")
        for name in (command.name, *command.aliases):
            self._commands[name] = command
        return command

    def unregister(self, command: SlashCommand) -> None:
        """Forget ``command`` under all its names (a plugin unloading, a test cleaning up)."""
        for name in (command.name, *command.aliases):
            if self._commands.get(name) is command:
                del self._commands[name]

    def command(
        self,
        name: str,
        summary: str,
        *,
        argument: str = "",
        complete: Completer | None = None,
        aliases: tuple[str, ...] = (),
        key: str = "",
        subcommands: tuple[Subcommand, ...] = (),
        replace: bool = False,
    ) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self.register(
                SlashCommand(name, summary, handler, argument, complete, aliases, key, subcommands),
                replace=replace,
            )
            return handler

        return decorate

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name.lower())

    def __iter__(self) -> Iterator[SlashCommand]:
        """Each command once, sorted by name."""
        unique = {id(c): c for c in self._commands.values()}
        return iter(sorted(unique.values(), key=lambda c: c.name))

    def parse(self, text: str) -> tuple[SlashCommand | None, str, str]:
        """``"/theme dark"`` -> (command, "theme", "dark")."""
        body = text.strip()[1:]
        name, _, arg = body.partition(" ")
        if "\n" in name:
            name, _, rest = name.partition("\n")
            arg = f"{rest} {arg}".strip()
        return self.get(name), name, arg.strip()

    def suggest(self, text: str, ctx: CommandContext | None = None) -> list[Suggestion]:
        """Completions for what is typed in the prompt (empty when not a command)."""
        if not text.startswith("/") or "\n" in text or text.startswith("//"):
            return []
        body = text[1:]
        if " " not in body:
            prefix = body.lower()
            out: list[Suggestion] = []
            for candidate in self:
                names = (candidate.name, *candidate.aliases)
                if any(n.startswith(prefix) for n in names):
                    tail = " " if candidate.argument else ""
                    out.append(
                        Suggestion(f"/{candidate.name}{tail}", candidate.usage, candidate.summary)
                    )
            return out
        name, _, arg = body.partition(" ")
        command = self.get(name)
        if command is None or command.complete is None or ctx is None:
            return []
        try:
            values = list(command.complete(ctx, arg))
        except Exception:
            return []
        typed = arg.strip().lower()
        return [
            Suggestion(f"/{command.name} {value}", value, "", is_command=False)
            for value in values
            if value.lower().startswith(typed) and value.lower() != typed
        ]


async def run_handler(command: SlashCommand, ctx: CommandContext, arg: str) -> None:
    result: Any = command.handler(ctx, arg)
    if inspect.isawaitable(result):
        await result


REGISTRY = CommandRegistry()
register = REGISTRY.register
command = REGISTRY.command


# --- what handlers share ------------------------------------------------------------


def idle_runtime(ctx: CommandContext, doing: str) -> Runtime | None:
    """The runtime, or None after telling the user why not (starting up, or a turn runs).

    Commands that replace or rewrite the conversation must not race a running turn.
    """
    runtime = ctx.runtime
    if runtime is None:
        ctx.notify("Still starting up; try again in a moment.", severity="warning")
        return None
    if runtime.agent.busy:
        ctx.notify(f"A turn is running: press Esc to stop it before {doing}.", severity="warning")
        return None
    return runtime


# --- app-level commands (the rest: see COMMAND_MODULES) --------------------------------


@command("help", "Show keys and commands", key="f1")
def _help(ctx: CommandContext, arg: str) -> None:
    ctx.app.action_show_help()


def _theme_names(ctx: CommandContext, arg: str) -> list[str]:
    return sorted(ctx.app.available_themes)


@command(
    "theme",
    "Show the theme, or switch to another (remembered)",
    argument="[NAME]",
    complete=_theme_names,
)
def _theme(ctx: CommandContext, arg: str) -> None:
    ctx.app.switch_theme(arg or None)


@command("quit", "Quit planshell (asks first while a turn runs)", aliases=("exit",), key="ctrl+q")
async def _quit(ctx: CommandContext, arg: str) -> None:
    await ctx.app.action_quit()
