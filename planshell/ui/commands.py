"""Slash commands: one registry for the prompt, its completion, /help and the palette.

Other modules add commands without touching the prompt widget::

    from planshell.ui.commands import REGISTRY

    @REGISTRY.command("plan", "Enter plan mode (read-only until a plan is approved)",
                      argument="[TASK]")
    async def _plan(ctx, arg):
        ...

A handler receives a :class:`planshell.ui.host.CommandContext` (the chat
screen implements it) and the text after the command name (stripped), and
may be sync or async. ``complete`` returns candidate values
for the argument being typed.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planshell.ui.host import CommandContext

Handler = Callable[["CommandContext", str], Awaitable[None] | None]
Completer = Callable[["CommandContext", str], Iterable[str]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    summary: str
    handler: Handler
    argument: str = ""  # shown in usage, e.g. "[NAME]"; empty: takes no argument
    complete: Completer | None = None
    aliases: tuple[str, ...] = ()
    key: str = ""  # a key that does the same, shown in /help

    @property
    def usage(self) -> str:
        return f"/{self.name} {self.argument}".strip()


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

    def command(
        self,
        name: str,
        summary: str,
        *,
        argument: str = "",
        complete: Completer | None = None,
        aliases: tuple[str, ...] = (),
        key: str = "",
        replace: bool = False,
    ) -> Callable[[Handler], Handler]:
        def decorate(handler: Handler) -> Handler:
            self.register(
                SlashCommand(name, summary, handler, argument, complete, aliases, key),
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


# --- built-in commands ------------------------------------------------------------
# Handlers stay thin: the screen (through CommandContext) owns the behaviour.


@command("help", "Show keys and commands", key="f1")
def _help(ctx: CommandContext, arg: str) -> None:
    ctx.show_help()


@command("clear", "Start a new conversation (the old one stays in /resume)")
async def _clear(ctx: CommandContext, arg: str) -> None:
    await ctx.clear_conversation()


def _model_names(ctx: CommandContext, arg: str) -> list[str]:
    from planshell.llm.factory import DEFAULT_MODELS

    names = list(dict.fromkeys([*ctx.model_names(), *DEFAULT_MODELS.values()]))
    current = ctx.current_model()
    if current and current not in names:
        names.insert(0, current)
    return names


@command(
    "model",
    "Show the model (and what the server offers), or switch it",
    argument="[NAME]",
    complete=_model_names,
)
def _model(ctx: CommandContext, arg: str) -> None:
    ctx.switch_provider(model=arg or None)


def _provider_names(ctx: CommandContext, arg: str) -> list[str]:
    from planshell.llm.factory import PROVIDER_CHOICES

    return list(PROVIDER_CHOICES)


@command(
    "provider",
    "Show the provider, or switch it for this session",
    argument="[NAME]",
    complete=_provider_names,
)
def _provider(ctx: CommandContext, arg: str) -> None:
    ctx.switch_provider(provider=arg or None)


def _theme_names(ctx: CommandContext, arg: str) -> list[str]:
    return ctx.theme_names()


@command(
    "theme",
    "Show the theme, or switch to another (remembered)",
    argument="[NAME]",
    complete=_theme_names,
)
def _theme(ctx: CommandContext, arg: str) -> None:
    ctx.switch_theme(arg or None)


def _session_ids(ctx: CommandContext, arg: str) -> list[str]:
    return ctx.session_ids()


@command(
    "resume",
    "Pick an earlier conversation of this project to continue",
    argument="[ID]",
    complete=_session_ids,
)
def _resume(ctx: CommandContext, arg: str) -> None:
    ctx.pick_session(arg or None)


@command("retry", "Regenerate the last reply (or ask again after an error)")
def _retry(ctx: CommandContext, arg: str) -> None:
    ctx.retry()


@command(
    "compact",
    "Summarise the older conversation now (the plan and mode are kept)",
    argument="[WHAT TO KEEP]",
)
def _compact(ctx: CommandContext, arg: str) -> None:
    ctx.compact(arg)


@command("quit", "Quit planshell (asks first while a turn runs)", aliases=("exit",), key="ctrl+q")
async def _quit(ctx: CommandContext, arg: str) -> None:
    await ctx.quit()


def _mode_names(ctx: CommandContext, arg: str) -> list[str]:
    return ["ask", "accept-edits", "auto"]


@command(
    "mode",
    "Show or set the permission mode: ask, accept-edits, auto",
    argument="[MODE]",
    complete=_mode_names,
    key="shift+tab",
)
def _mode(ctx: CommandContext, arg: str) -> None:
    ctx.permission_mode(arg)
