"""The Textual app: themes, the runtime's lifetime, quitting, the command palette.

Start-up is kept short: this module imports Textual and the theme loader
only; the engine (tools, plan mode, the bash guard) is imported in a thread
and built after the first frame (see ``ChatScreen._boot``).
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, CSSPathType, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen, ScreenResultCallbackType

from planshell.ui import themes as theme_files
from planshell.ui.commands import REGISTRY, PaletteEntry, palette_entries
from planshell.ui.screens.chat import ChatScreen
from planshell.ui.toasts import ToastLog
from planshell.ui.widgets.status import abbreviate_home

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from planshell.agent.session import LoadedSession
    from planshell.config import Settings
    from planshell.llm.types import Provider
    from planshell.runtime import Runtime
    from planshell.ui.decider import TuiDecider

log = logging.getLogger(__name__)


class PlanshellApp(ToastLog[int]):
    TITLE = "planshell"
    # dialogs.tcss is loaded by the dialog screens themselves, on first use.
    CSS_PATH: ClassVar[CSSPathType | None] = ["app.tcss", "screens/chat.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "f1",
            "show_help",
            "more",
            id="help",
            tooltip="Every key of this screen (the footer shows the main ones)",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            priority=True,
            id="quit",
            tooltip="Quit (asks first while a turn runs); also /quit",
        ),
    ]
    # Modules imported at start-up that register slash commands beside ui/commands.py's
    # own; the registry is global, so importing is enough. A command added to one of
    # these is one edit; only a new module needs a line here.
    COMMAND_MODULES: tuple[str, ...] = (
        "planshell.ui.commands_conversation",
        "planshell.ui.commands_model",
        "planshell.ui.permissions_ui",
        "planshell.ui.plan_ui",
        "planshell.ui.commands_undo",
        "planshell.ui.commands_mcp",
    )

    def __init__(
        self,
        settings: Settings | None,
        root: Path,
        *,
        prompt: str | None = None,
        plan: bool = False,
        resume: LoadedSession | None = None,
        provider: Provider | None = None,
        persist: bool = True,
        theme_dirs: list[Path] | None = None,
        project_label: str | None = None,
        remember_theme: bool = True,
        loader: Loader | None = None,
        theme_hint: str | None = None,
        mode_hint: str | None = None,
        resume_tail: ResumeTail | None = None,
    ) -> None:
        """``settings`` may be None with a ``loader``: it then runs after the first frame.

        ``root`` is the project root, or (with a loader) the directory to show
        until the loader has found the root. ``mode_hint`` is the mode a resumed
        session will restore (``session_peek``), shown until the loader has run;
        ``resume_tail`` reads that session's last messages, shown until then too.
        """
        super().__init__()
        if settings is None and loader is None:
            raise ValueError("PlanshellApp needs settings or a loader")
        self.settings: Settings = settings  # type: ignore[assignment]  # set by the loader
        self.root = root.resolve()
        self.initial_prompt = prompt
        self.start_plan = plan
        self.resume = resume
        self._mode_hint = mode_hint
        self.resume_tail = resume_tail
        self.persist = persist
        self._fixed_label = project_label
        self.project_label = project_label or abbreviate_home(self.root)
        self.runtime: Runtime | None = None
        self.startup_error: str | None = None
        self._loader = loader
        self._provider_override = provider
        self._decider: TuiDecider | None = None
        self._remember_theme = remember_theme
        self._theme_not_remembered: str | None = None
        self._theme_warnings: list[str] = []
        self._quit_dialog: Screen[bool] | None = None
        self._quitting = False
        if settings is not None:
            wanted = settings.ui.theme
        else:
            wanted = (
                theme_hint
                or theme_files.peek_configured_theme(self.root)
                or theme_files.DEFAULT_THEME
            )
        self._load_themes(theme_dirs, wanted)

    # --- themes -------------------------------------------------------------------

    def _load_themes(self, dirs: list[Path] | None, wanted: str) -> None:
        loaded = theme_files.load_themes(dirs)
        for theme in loaded.themes:
            self.register_theme(theme)
        self._theme_warnings = list(loaded.warnings)
        fallback = (
            theme_files.DEFAULT_THEME
            if theme_files.DEFAULT_THEME in self.available_themes
            else "textual-dark"
        )
        if wanted not in self.available_themes:
            self._theme_warnings.append(f"Unknown theme {wanted!r}; using {fallback}.")
            wanted = fallback
        self._apply_initial_theme(wanted)

    def _apply_initial_theme(self, name: str) -> None:
        """Set the theme before start-up without ``App.theme``'s watcher.

        The watcher schedules a full re-parse of every stylesheet, which would
        run before the first frame; nothing is parsed yet here, so updating the
        variables and classes is enough.
        """
        self._validate_theme(name)
        self.set_reactive(App.theme, name)
        theme = self.current_theme
        self.stylesheet.set_variables(self.get_css_variables())
        classes = {c: False for c in self.classes if c.startswith("-theme-")}
        classes[f"-theme-{name}"] = True
        classes["-dark-mode"] = theme.dark
        classes["-light-mode"] = not theme.dark
        self.update_classes(classes, update=False)
        self._refresh_truecolor_filter(self.ansi_theme)
        self._sync_rich_styles()

    def _sync_rich_styles(self) -> None:
        """Give Rich-rendered markdown (finished replies) the theme's markdown colours."""
        from rich.theme import Theme as RichTheme

        variables = self.get_css_variables()
        styles = theme_files.rich_markdown_styles(variables)
        if getattr(self, "_rich_theme_pushed", False):
            self.console.pop_theme()
        self.console.push_theme(RichTheme(styles))
        self._rich_theme_pushed = True

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Literal colours for planshell's variables, derived from the active theme
        # (Textual's built-in themes do not define them).
        return theme_files.variable_defaults(self.current_theme)

    def get_css_variables(self) -> dict[str, str]:
        # Same result as App.get_css_variables, but the colour system is generated
        # once per theme (it is the costly part, and start-up asks twice).
        theme = self.current_theme
        key = (theme.name, id(theme))
        cache: dict[tuple[str, int], dict[str, str]] = self.__dict__.setdefault("_css_cache", {})
        if key not in cache:
            generated = theme.to_color_system().generate()
            defaults = theme_files.defaults_from_system(generated, theme.dark)
            cache[key] = {**defaults, **generated, **theme.variables}
        self.theme_variables = dict(cache[key])
        return dict(cache[key])

    def _theme_changed(self, theme: Any) -> None:
        self._sync_rich_styles()
        name = getattr(theme, "name", None) or self.theme
        if name == self._theme_not_remembered:
            self._theme_not_remembered = None
            return  # applied from the settings, not chosen by the user
        if not self._remember_theme:
            return
        from planshell.config import ConfigError, remember_user_setting

        try:
            remember_user_setting("ui", "theme", name)
        except (OSError, ConfigError) as exc:  # unwritable, or a broken file left as it is
            self.notify(f"Could not remember the theme: {exc}", severity="warning")

    def switch_theme(self, name: str | None) -> None:
        if not name:
            names = ", ".join(sorted(self.available_themes))
            self.notify(
                f"Current theme: {self.theme}. Available: {names}.", title="Theme", timeout=8
            )
            return
        if name not in self.available_themes:
            self.notify(f"No theme named {name!r}. /theme lists them.", severity="error")
            return
        self.theme = name
        self.notify(f"Theme: {name} (remembered).", timeout=3)

    # --- start-up -----------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return ChatScreen()

    def on_mount(self) -> None:
        for module in self.COMMAND_MODULES:
            try:
                importlib.import_module(module)
            except Exception as exc:
                self.notify(f"Could not load {module}: {exc}", severity="error")
        for warning in self._theme_warnings:
            self.notify(warning, severity="warning", timeout=8, markup=False)
        self.theme_changed_signal.subscribe(self, self._theme_changed)

    def initial_mode(self) -> str | None:
        """The mode to show before the engine is built (avoids an OFF flash)."""
        if self.start_plan:
            return "plan"
        if self.resume is not None and self.resume.mode:
            return str(self.resume.mode.get("mode", "off"))
        if self.resume is None and self._loader is not None and self.settings is None:
            return self._mode_hint  # the loader has not run yet
        return None

    async def ensure_settings(self) -> bool:
        """Run the deferred loader (off the event loop); False if start-up failed."""
        if self.settings is not None:
            return True
        assert self._loader is not None
        try:
            loaded = await asyncio.to_thread(self._loader)
            settings, root, resume = await self._settle_trust(loaded)
        except Exception as exc:  # ConfigError, SessionNotFound: one sentence for the user
            self.startup_error = str(exc) or type(exc).__name__
            log.error("start-up failed: %s", self.startup_error, exc_info=exc)
            self.exit(return_code=1)
            return False
        if settings.project_config_error:  # a broken repository file never locks anyone out
            self.notify(settings.project_config_error, severity="warning", timeout=15, markup=False)
        self.settings = settings
        self.root = root.resolve()
        self.resume = resume
        if self._fixed_label is None:
            self.project_label = abbreviate_home(self.root)
        wanted = settings.ui.theme
        if wanted != self.theme:
            if wanted in self.available_themes:
                self._theme_not_remembered = wanted
                self.theme = wanted
            else:
                self.notify(f"Unknown theme {wanted!r}; using {self.theme}.", severity="warning")
        return True

    async def _settle_trust(self, loaded: Any) -> Any:
        """Ask about an untrusted project config; on yes record trust and load again."""
        untrusted = loaded[0].untrusted_project
        if untrusted is None:
            return loaded
        from planshell.ui.screens.trust import TrustScreen

        if await self.decider.ask(TrustScreen(untrusted)):
            from planshell.config.trust import trust

            try:
                await asyncio.to_thread(trust, untrusted.file)
            except Exception as exc:  # an unwritable config folder: keep going untrusted
                self.notify(f"Could not record trust: {exc}", severity="error", markup=False)
            else:
                assert self._loader is not None
                loaded = await asyncio.to_thread(self._loader)
                untrusted = loaded[0].untrusted_project
                if untrusted is None:
                    self.notify("Project config trusted: its settings apply.", timeout=5)
                    return loaded
        self.notify(untrusted.warning(), severity="warning", timeout=10, markup=False)
        return loaded

    @property
    def decider(self) -> TuiDecider:
        if self._decider is None:
            from planshell.ui.decider import TuiDecider

            self._decider = TuiDecider(self)
        return self._decider

    async def start_runtime(self) -> Runtime:
        """Import and build the engine off the event loop, then publish it.

        The build (provider, tools, sub-agent profiles, the session file, the
        plan controller) touches no widget and runs in a thread, so keys typed
        meanwhile echo at once. ``self.runtime`` is set only here, on the event
        loop, once the build is whole: until then the chat queues what is sent
        (``ChatScreen.send``) and nothing can reach a half-built engine.
        """
        decider = self.decider  # created on the event loop: it belongs to this app
        runtime = await asyncio.to_thread(
            _build,
            self.settings,
            self.root,
            decider,
            provider=self._provider_override,
            resume=self.resume,
            persist=self.persist,
            plan=self.start_plan,
        )
        self.runtime = runtime
        return runtime

    async def restart_runtime(self, resume: LoadedSession) -> Runtime:
        """Resume another conversation: a fresh runtime that keeps the current provider."""
        from planshell.runtime import build_runtime

        old = self.runtime
        # The session's model (runtime.provider), never the planning model it may be using now.
        provider = old.provider if old is not None else self._provider_override
        settings = old.settings if old is not None else self.settings
        runtime = build_runtime(
            settings,
            self.root,
            self.decider,
            provider=provider,
            resume=resume,
            persist=self.persist,
        )
        if old is not None:
            await old.stop_mcp()  # the new runtime starts its own servers when it is shown
            old.close()
        self.runtime = runtime
        return runtime

    # --- quitting -----------------------------------------------------------------

    async def action_quit(self) -> None:
        if self._turn_running():
            if self._quit_dialog is not None:
                return  # already asking
            self._ask_to_quit()
            return
        self.shutdown()

    def _turn_running(self) -> bool:
        runtime = self.runtime
        chat = self.chat
        return (runtime is not None and runtime.agent.busy) or (chat is not None and chat.busy)

    def _ask_to_quit(self) -> None:
        from planshell.ui.screens.confirm import ConfirmScreen

        self._quit_dialog = ConfirmScreen(
            "A turn is still running. Quit anyway?",
            detail="The request is stopped; the conversation so far stays in /resume.",
            yes="Quit",
            no="Keep working",
        )
        super().push_screen(self._quit_dialog, self._quit_answer)

    def _quit_answer(self, answer: bool | None) -> None:
        self._quit_dialog = None
        if answer:
            self.shutdown()

    def push_screen(
        self,
        screen: Screen[Any] | str,
        callback: ScreenResultCallbackType[Any] | None = None,
        wait_for_dismiss: bool = False,
        *,
        mode: str | None = None,
    ) -> Any:
        """Push a screen; a pending quit question stays on top of it.

        The turn that ctrl+q asks about can open a screen of its own a moment
        later (the review, a permission dialog): pushed above the question it
        hid it, and the question came back once the review had ended the turn.
        So the question is taken down and asked again above the new screen.
        """
        dialog = self._quit_dialog
        if dialog is None or screen is dialog or self.screen is not dialog:
            return self._push(screen, callback, wait_for_dismiss, mode)
        self._quit_dialog = None
        self.pop_screen()  # its answer callback is dropped: the new question answers
        pushed = self._push(screen, callback, wait_for_dismiss, mode)
        self._ask_to_quit()
        return pushed

    def _push(
        self,
        screen: Screen[Any] | str,
        callback: ScreenResultCallbackType[Any] | None,
        wait_for_dismiss: bool,
        mode: str | None,
    ) -> Any:
        # Textual's overloads tell the two return types apart by a literal flag.
        if wait_for_dismiss:
            return super().push_screen(screen, callback, wait_for_dismiss=True, mode=mode)
        return super().push_screen(screen, callback, wait_for_dismiss=False, mode=mode)

    def turn_ended(self) -> None:
        """The turn ended while the quit question was up: it no longer applies, drop it."""
        dialog = self._quit_dialog
        if dialog is None or self._quitting or self._turn_running():
            return
        if self.screen is dialog:
            self._quit_dialog = None
            self.pop_screen()
            self.notify("The turn has ended: ctrl+q quits now.", timeout=3)

    def shutdown(self, code: int = 0) -> None:
        """Quit cleanly, also while a turn runs.

        Order matters: the chat stops receiving engine events first (its widgets
        are about to be torn down, and a cancelled turn still emits its end),
        then the turn is cancelled and awaited so the session file ends on
        whole records, then the app exits.
        """
        if self._quitting:
            return
        self._quitting = True
        chat = self.chat
        if chat is not None:
            chat.detach_engine()
        self.run_worker(self._quit_cleanly(code), group="shutdown", exit_on_error=False)

    async def _quit_cleanly(self, code: int) -> None:
        runtime = self.runtime
        try:
            if runtime is not None:
                await runtime.agent.stop()
        except Exception as exc:  # never keep the user from quitting
            log.error("stopping the turn at quit failed", exc_info=exc)
        finally:
            self.exit(return_code=code)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
        logged: bool = False,
    ) -> None:
        """Every warning or error toast, from any screen, also goes to the log file
        (and every toast to ``toasts``).

        ``logged``: the engine's event bus already logged it (a ``Notice``).
        """
        if severity != "information" and not logged:
            log.log(
                logging.ERROR if severity == "error" else logging.WARNING,
                "notified: %s%s",
                f"{title}: " if title else "",
                message,
            )
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def close_runtime(self) -> None:
        if self.runtime is not None:
            self.runtime.close()

    # --- help and palette -------------------------------------------------------------

    def action_show_help(self) -> None:
        from planshell.ui.screens.help import EXTRA_KEYS, HelpScreen, collect_keys

        if isinstance(self.screen, HelpScreen):
            return
        screen = self.screen
        nodes: list[Any] = [self, screen]
        chat = isinstance(screen, ChatScreen)
        if isinstance(screen, ChatScreen):
            nodes += [screen.prompt, screen.transcript]
        if screen.focused is not None:
            nodes += list(screen.focused.ancestors_with_self)
        # Keys outside BINDINGS that this screen offers (mouse, the palette); slash
        # commands only where there is a prompt to type them.
        extra = getattr(screen, "HELP_EXTRA_KEYS", None)
        if extra is None:
            extra = EXTRA_KEYS if chat else [EXTRA_KEYS[0]]
        self.push_screen(HelpScreen(collect_keys(self, nodes, extra), commands=chat))

    @property
    def chat(self) -> ChatScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, ChatScreen):
                return screen
        return None

    def run_slash(self, entry: PaletteEntry) -> None:
        """A palette entry: run it, or prefill the prompt when it needs an argument."""
        chat = self.chat
        if chat is None:
            return
        if entry.needs_argument:
            chat.prefill(f"{entry.title} ")
        else:
            chat.run_command(entry.command, entry.argument)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for item in super().get_system_commands(screen):
            if item.title == "Quit":
                continue  # ours asks first while a turn runs
            yield item
        yield SystemCommand(
            "Quit", "Quit planshell (asks first while a turn runs)", self.action_quit
        )
        chat = self.chat
        if chat is not None:
            yield SystemCommand(
                "Plan mode",
                "Toggle plan mode: read-only until you approve a plan (ctrl+shift+l / F2)",
                chat.action_toggle_plan_mode,
            )
            yield SystemCommand(
                "Checklist", "Show or hide the plan checklist (ctrl+t)", chat.action_toggle_todos
            )
            yield SystemCommand(
                "Stop", "Stop the running turn (esc or ctrl+c)", chat.action_interrupt
            )
            yield SystemCommand(
                "Tool output",
                "Expand or collapse the latest tool output (ctrl+o)",
                chat.action_toggle_tool,
            )
            yield SystemCommand(
                "Clear prompt",
                "Clear the text in the prompt (ctrl+c when idle)",
                chat.prompt.clear_prompt,
            )
        yield SystemCommand("Help", "Keys and commands (F1)", self.action_show_help)
        for entry in palette_entries(REGISTRY):
            yield SystemCommand(entry.title, entry.help, partial(self.run_slash, entry))


def _build(*args: Any, **kwargs: Any) -> Runtime:
    """The engine's imports and ``build_runtime``: run in a thread after the first frame."""
    importlib.import_module("planshell.ui.widgets.assistant")  # Textual's Markdown
    from planshell.runtime import build_runtime

    return build_runtime(*args, **kwargs)


Loader = Callable[[], "tuple[Settings, Path, LoadedSession | None]"]
"""Loads (settings, project root, resumed session); raises with a one-sentence message."""

ResumeTail = Callable[[], "tuple[str, list[dict[str, Any]]] | None"]
"""Peeks (session id, raw last messages) of the session to resume (``session_peek``)."""


def run_tui(
    load: Loader,
    start: Path,
    *,
    prompt: str | None = None,
    plan: bool = False,
    theme: str | None = None,
    mode_hint: str | None = None,
    resume_tail: ResumeTail | None = None,
) -> int:
    """Run the TUI; settings are loaded after the first frame.

    Loading settings imports pydantic and validates every layer (~90 ms):
    doing it in a thread once the screen is up keeps start-up close to a bare
    Textual app. A loader error is printed as ``planshell: <message>`` and
    returns 1, as the CLI does.
    """
    app = PlanshellApp(
        None,
        start,
        prompt=prompt,
        plan=plan,
        loader=load,
        theme_hint=theme,
        mode_hint=mode_hint,
        resume_tail=resume_tail,
    )
    code = _run(app)
    if app.startup_error:
        print(f"planshell: {app.startup_error}", file=sys.stderr)
        return 1
    return code


def _run(app: PlanshellApp) -> int:
    # Everything imported so far lives for the whole session: keep the cyclic
    # GC from walking it while the first frame is built (~10 ms here).
    gc.freeze()
    try:
        app.run()
    finally:
        app.close_runtime()
    return app.return_code or 0
