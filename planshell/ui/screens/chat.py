"""The chat screen: transcript above, prompt below, status bar at the bottom.

It holds no engine state: engine events are forwarded into Textual messages
and rendered; user actions call engine methods (``submit``, ``cancel``).
Requests run in workers so the UI never blocks. Slash commands are not its
business: their handlers (``ui/commands.py`` and the ``COMMAND_MODULES``) get
it as a generic ``CommandContext`` and do the rest themselves.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker

from planshell import __version__
from planshell.ui.commands import REGISTRY, SlashCommand, run_handler
from planshell.ui.event_renderer import EventRenderer
from planshell.ui.gc_policy import settle_after_startup
from planshell.ui.keys import DEFAULT_TOGGLE_KEYS, TOGGLE_PLAN_BINDING_ID
from planshell.ui.widgets.history import PromptHistory, history_path
from planshell.ui.widgets.key_footer import FittedFooter
from planshell.ui.widgets.messages import WelcomeBanner
from planshell.ui.widgets.prompt import PromptInput
from planshell.ui.widgets.status import StatusBar
from planshell.ui.widgets.suggestions import CommandSuggestions
from planshell.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from planshell.agent import events as ev
    from planshell.agent.session import LoadedSession
    from planshell.runtime import Runtime
    from planshell.ui.app import PlanshellApp
    from planshell.ui.plan_ui import PlanModeUI
    from planshell.ui.widgets.checklist import ChecklistPanel


class EngineEvents(Message):
    """Engine events are waiting in the screen's inbox (one message for a whole batch).

    A fast model sends thousands of deltas a second: one Textual message each
    cost more than rendering them, and a key press queued behind them waited.
    The inbox keeps their order; each message drains all of it.
    """


log = logging.getLogger(__name__)

# The first screen of a session that starts in PLAN (ui.start_mode = "plan" or --plan).
START_IN_PLAN_NOTE = (
    "Plan mode is on: read-only until you approve a plan. "
    "/plan off or F2 leaves it (ui.start_mode chooses how sessions start)."
)


class ChatScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "interrupt",
            "Stop",
            key_display="esc",
            id="interrupt",
            tooltip="Stop the running turn (or close the completion list)",
        ),
        # What Claude Code and Codex users expect: ctrl+c stops a running turn (idle:
        # clears the prompt), twice within QUIT_WINDOW quits. Priority, so it wins over
        # the prompt's TextArea copy; a selection is still copied first.
        Binding(
            "ctrl+c",
            "ctrl_c",
            "Stop/quit",
            key_display="^c",
            id="ctrl-c",
            priority=True,
            tooltip="Copy a selection; else stop the running turn (idle: clear the prompt); "
            "twice quickly: quit",
        ),
        Binding(
            "ctrl+o",
            "toggle_tool",
            "Tool output",
            id="toggle-tool",
            tooltip="Expand or collapse the latest tool output",
        ),
        # Plan mode (planshell/ui/plan_ui.py). Ctrl+Shift+L arrives as any of the first
        # three names depending on the terminal; F2 works everywhere. Never plain ctrl+l.
        # The id lets settings.plan.shortcuts.toggle_mode remap it (App.update_keymap);
        # priority, so a remapped key wins over the prompt's own (it binds f6, f7, …).
        Binding(
            DEFAULT_TOGGLE_KEYS,
            "toggle_plan_mode",
            "Plan mode",
            key_display="^⇧L/F2",
            id=TOGGLE_PLAN_BINDING_ID,
            priority=True,
            tooltip="Toggle plan mode: ctrl+shift+l or F2 (also /plan, /plan on|off)",
        ),
        # Permission modes (ui/permissions_ui.py): ask -> accept-edits -> plan -> ask.
        Binding(
            "shift+tab",
            "cycle_mode",
            "Mode",
            key_display="⇧tab",
            id="cycle-mode",
            priority=True,
            tooltip="Cycle ask, accept-edits and plan mode (also /mode)",
        ),
        Binding(
            "ctrl+t",
            "toggle_todos",
            "Checklist",
            id="toggle-todos",
            tooltip="Show or hide the plan checklist (also /todos)",
        ),
        Binding(
            "pageup",
            "scroll_transcript(-1)",
            "Scroll up",
            show=False,
            priority=True,
            tooltip="Scroll the transcript up (stops following the stream)",
        ),
        Binding(
            "pagedown",
            "scroll_transcript(1)",
            "Scroll down",
            show=False,
            priority=True,
            tooltip="Scroll down (at the bottom the transcript follows the stream again)",
        ),
    ]
    AUTO_FOCUS = "#prompt"
    QUIT_WINDOW = 1.0  # seconds: a second ctrl+c within this quits
    # Which footer keys stay as the terminal narrows (highest last to go); F1 "more" always stays.
    # At 80 columns ⇧tab Mode and ^p palette stay; esc Stop goes before them (the status
    # bar says "esc to stop" while a turn runs, and ^c Stop/quit stays), ^q Quit too.
    FOOTER_PRIORITY: ClassVar[dict[str, int]] = {
        "submit": 90,
        "toggle_plan_mode": 85,
        "ctrl_c": 75,
        "cycle_mode": 70,
        "command_palette": 65,
        "quit": 60,
        "interrupt": 55,
        "toggle_todos": 50,
        "toggle_tool": 40,
    }

    app: PlanshellApp

    def __init__(self) -> None:
        super().__init__(id="chat")
        self._unsubscribe: Any = None
        self._pending: list[str] = []  # typed before the engine was ready
        self._busy_since: float | None = None
        self._frame = 0
        self._ticker: Timer | None = None
        self._plan_ui: PlanModeUI | None = None
        self.renderer = EventRenderer(self)  # engine events -> transcript, status bar
        self._detached = False  # set at quit: engine events are no longer rendered
        self._inbox: deque[ev.Event] = deque()  # engine events not rendered yet, in order
        self._inbox_posted = False  # an EngineEvents message is on its way
        self._last_ctrl_c: float | None = None
        self.clock: Callable[[], float] = time.monotonic  # tests pin it
        self.ready = False

    # --- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.app
        yield Transcript(WelcomeBanner(__version__), id="transcript")
        suggestions = CommandSuggestions(id="suggestions")
        yield suggestions
        yield PromptInput(
            history=PromptHistory(None),  # the file is read after the first frame
            suggestions=suggestions,
            suggest=lambda text: REGISTRY.suggest(text, self),
            id="prompt",
        )
        yield StatusBar(app.project_label, id="status")
        yield FittedFooter(id="footer")

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def runtime(self) -> Runtime | None:
        return self.app.runtime

    @property
    def plan_ui(self) -> PlanModeUI:
        """Plan mode's part of this screen: /plan, the toggle, chip, checklist."""
        if self._plan_ui is None:
            from planshell.ui.plan_ui import PlanModeUI

            self._plan_ui = PlanModeUI(self)
        return self._plan_ui

    def on_mount(self) -> None:
        self._ticker = self.set_interval(0.1, self.tick, pause=True)
        initial = self.app.initial_mode()
        if initial:
            self.status.chip.set_mode(initial)
        # The first frame goes out before settings, history and the engine load; with
        # --continue it already shows the end of the conversation (a few ms to read).
        self._show_resume_preview()
        self.call_after_refresh(self._boot)

    def _show_resume_preview(self) -> None:
        """The last screen of the conversation being resumed, read from the end of its file.

        Loading a long session and building the engine take a second or more; the
        preview shows its end at once and is replaced by the loaded history
        (:meth:`attach_runtime`). Its entries are built like the loaded ones, so
        model text is sanitised the same way.
        """
        peek, self.app.resume_tail = self.app.resume_tail, None
        if peek is None or self.runtime is not None:
            return
        from planshell.llm.types import Message

        found = peek()
        if found is None:
            return
        stem, raw = found
        messages: list[Message] = []
        for data in raw:
            try:
                message = Message.from_dict(data)
            except (KeyError, TypeError, ValueError):
                continue  # the loader reports unreadable entries
            if message.role in ("user", "assistant", "tool") and isinstance(message.content, str):
                messages.append(message)
        try:
            self.transcript.show_preview(messages, f"Resumed conversation {stem}.")
        except Exception:  # a preview is a nicety: the loaded history decides
            log.exception("the resume preview failed")
            self.transcript.drop_preview()

    def _apply_settings(self) -> None:
        app = self.app
        self.plan_ui.apply_settings()
        self.status.set_project(app.project_label)
        history = self.prompt.prompt_history
        history.path = history_path(app.root) if app.persist else None
        history.load()

    @work(group="boot", exit_on_error=False)
    async def _boot(self) -> None:
        app = self.app
        if not await app.ensure_settings():
            return
        self._apply_settings()
        try:
            runtime = await app.start_runtime()
        except Exception as exc:  # config problems, a broken provider: say so, keep running
            log.error("the engine could not start", exc_info=exc)
            self.transcript.add_error(f"The engine could not start: {exc}")
            self.status.set_provider("not started", demo=False)
            return
        await self.attach_runtime(runtime, app.resume)
        self.ready = True
        settle_after_startup()  # planshell/ui/gc_policy.py: fewer, cheaper collections
        pending = list(self._pending)
        self._pending.clear()
        initial, app.initial_prompt = app.initial_prompt, None
        if initial:
            # As if typed at the prompt: `planshell "/plan review NAME"` (what `planshell
            # review PATH` starts) runs the command instead of sending it to the model.
            self.handle_input(initial)
        for text in pending:
            self.send(text)

    async def attach_runtime(self, runtime: Runtime, resumed: LoadedSession | None = None) -> None:
        """Show a runtime (at start-up, or a resumed one): its events, history and notices."""
        self._connect_runtime(runtime)
        self.transcript.drop_preview()  # the loaded history replaces it, in the same frame
        if resumed is not None:
            await self._show_loaded(resumed.messages, resumed.summary, runtime)
            self.transcript.add_note(f"Resumed conversation {resumed.path.stem}.")
        elif runtime.started_in_plan:
            self.transcript.add_note(START_IN_PLAN_NOTE)
        for problem in [*runtime.read_notices, *runtime.problems]:
            self.notify(problem, severity="warning", timeout=8)

    def _connect_runtime(self, runtime: Runtime) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = runtime.agent.subscribe(self._forward)
        self.show_provider()
        agent = runtime.agent
        self.status.set_context(agent.context_tokens, agent.meter.window, agent.cost)
        self.plan_ui.show_state(runtime)
        self.show_permission_mode()

    async def _show_loaded(
        self, messages: list[Any], summary: str | None, runtime: Runtime
    ) -> None:
        """A resumed history; a compacted one starts with its summary row."""
        from planshell.agent.compaction import is_compacted_block

        if summary is not None and messages and is_compacted_block(messages[0]):
            self.transcript.add_summary("Resumed from a compacted conversation. Summary:", summary)
            messages = messages[1:]
        await self.transcript.show_history(messages, runtime.registry)

    def _forward(self, event: ev.Event) -> None:
        # Called synchronously from inside the engine: never touch widgets here.
        self._inbox.append(event)
        if not self._inbox_posted:
            self._inbox_posted = True
            self.post_message(EngineEvents())

    def detach_engine(self) -> None:
        """Stop rendering engine events (the app is quitting).

        Unsubscribes from the engine and drops events already queued: a turn
        cancelled at quit still emits ``TurnDone``, which must not reach
        widgets that are being unmounted.
        """
        self._detached = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def on_unmount(self) -> None:
        self.detach_engine()

    def show_provider(self) -> None:
        """A new runtime or provider: the status bar's label, the context window and cost
        start over, and the server is asked which models it offers (for /model)."""
        runtime = self.runtime
        if runtime is None:
            return
        self._show_label(runtime)
        self.run_worker(self._served_models(runtime), group="models", exit_on_error=False)
        runtime.start_mcp()  # MCP servers start in the background

    def _show_label(self, runtime: Runtime) -> None:
        agent = runtime.agent
        provider = agent.provider
        self.status.set_provider(
            runtime.model_label(), demo=getattr(provider, "name", "") == "demo"
        )
        self.renderer.reset_context(agent.meter.window, agent.cost)

    async def _served_models(self, runtime: Runtime) -> None:
        """The server's models (for /model); with no model chosen, one it really serves."""
        choice = await runtime.adopt_served_model()
        if choice is None:
            await runtime.load_served_models()
            return
        if runtime is self.runtime:
            self._show_label(runtime)
            self.notify(choice.tui_text(), title="Model", timeout=10, markup=False)

    # --- engine events ------------------------------------------------------------

    async def on_engine_events(self, message: EngineEvents) -> None:
        # Cleared before draining: an event that arrives while one renders posts again.
        self._inbox_posted = False
        inbox = self._inbox
        while inbox:
            if self._detached or not self.is_attached:
                inbox.clear()
                return  # quitting: the views are going away
            await self.renderer.render_some(inbox)

    # --- EventHost: what the renderer asks of the screen (planshell/ui/host.py) -------

    async def plan_event(
        self, event: ev.ModeChanged | ev.PlanUpdated | ev.TodosChanged | ev.PlanReported
    ) -> None:
        from planshell.agent.events import PlanReported

        if isinstance(event, PlanReported):
            self._show_plan_report(event.markdown)
        else:
            await self.plan_ui.on_engine_event(event)

    def _show_plan_report(self, markdown: str) -> None:
        """A plan completed: its report; ``u`` there is the /undo flow, run from here."""
        from planshell.ui.commands_undo import undo_last_plan
        from planshell.ui.screens.plan_report import UNDO, PlanReportScreen

        runtime = self.runtime
        plan = runtime.plan if runtime is not None else None

        def closed(answer: str | None) -> None:
            if answer == UNDO and plan is not None:
                self.run_worker(undo_last_plan(self, plan), group="command", exit_on_error=False)

        preview = plan.undo_preview if plan is not None else None
        self.app.push_screen(PlanReportScreen(markdown, preview), closed)

    def show_notice(self, message: str, level: ev.NoticeLevel) -> None:
        self.app.notify(message, severity=level, markup=False, logged=True)

    # --- activity (one timer for the spinner, elapsed time and running tools) ---

    def work_started(self) -> None:
        """Show the spinner now; the ticker keeps it going until nothing runs.

        It does not ask ``busy`` here: the worker may not be registered yet,
        and pausing the ticker then froze the spinner at "working 0s".
        """
        if self._busy_since is None:
            self._busy_since = time.monotonic()
        if self._ticker is not None and self.is_current:
            self._ticker.resume()
        self._frame += 1
        self.status.set_activity(self._frame, time.monotonic() - self._busy_since)

    @property
    def busy(self) -> bool:
        """A turn or other engine work is running (the spinner shows)."""
        runtime = self.runtime
        engine_busy = runtime is not None and runtime.agent.busy
        workers = any(w.group == "agent" and not w.is_finished for w in self.workers)
        return engine_busy or workers

    def tick(self) -> None:
        if self.busy:
            self._frame += 1
            since = self._busy_since or time.monotonic()
            self.status.set_activity(self._frame, time.monotonic() - since)
            for row in self.transcript.running_tools:
                row.tick(self._frame)
            return
        self._busy_since = None
        self.status.set_activity(None)
        if self._ticker is not None:
            self._ticker.pause()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A turn's worker ended: the app drops a quit question asked while it ran."""
        if event.worker.group == "agent" and event.worker.is_finished and not self.busy:
            self.app.turn_ended()

    def on_screen_suspend(self) -> None:
        """A screen over the chat (a dialog, the review) hides the spinner: stop ticking.

        Under a dialog each tick redrew the whole dimmed background (about 40 ms a
        frame, ten times a second) to move a spinner nobody can read.
        """
        if self._ticker is not None:
            self._ticker.pause()

    def on_screen_resume(self) -> None:
        if self._ticker is not None and self.busy:
            self._ticker.resume()
        self.tick()

    def on_key(self, event: events.Key) -> None:
        # Typing while something else has focus (after clicking the transcript)
        # goes to the prompt instead of being lost.
        prompt = self.prompt
        if event.is_printable and event.character and self.focused is not prompt:
            event.stop()
            prompt.focus()
            prompt.insert(event.character)

    # --- input --------------------------------------------------------------------

    def on_prompt_input_to_bottom(self, message: PromptInput.ToBottom) -> None:
        """End from the prompt: the transcript's bottom, following the stream again."""
        message.stop()
        self.transcript.action_bottom()

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        message.stop()
        text = message.text
        self.transcript.register_pastes(message.pastes)
        prompt = self.prompt
        prompt.remember(text)
        prompt.clear_prompt()
        self.handle_input(text)

    def handle_input(self, text: str) -> None:
        stripped = text.strip()
        if not stripped:
            return
        if stripped.startswith("/") and not stripped.startswith("//"):
            command, name, arg = REGISTRY.parse(stripped)
            if command is None:
                self.notify(
                    f"Unknown command /{name}. /help lists the commands; start with // to "
                    "send a message that begins with a slash.",
                    severity="warning",
                )
                return
            self.run_command(command, arg)
            return
        if stripped.startswith("//"):
            stripped = stripped[1:]
        self.send(stripped)

    def run_command(self, command: SlashCommand, arg: str = "") -> None:
        self.run_worker(self._run_command(command, arg), group="command", exit_on_error=False)

    async def _run_command(self, command: SlashCommand, arg: str) -> None:
        try:
            await run_handler(command, self, arg)
        except Exception as exc:
            log.error("/%s failed", command.name, exc_info=exc)
            self.app.notify(f"/{command.name} failed: {exc}", severity="error", logged=True)

    def send(self, text: str, *, on_failure: Callable[[Exception], None] | None = None) -> None:
        """Submit a request, or steer the running one (the engine decides).

        ``on_failure`` replaces the generic error row when submitting raises
        (plan mode uses it to restore the previous mode).
        """
        runtime = self.runtime
        if runtime is None or not self.ready:
            self._pending.append(text)
            self.notify("Starting up: your message will be sent in a moment.", timeout=2)
            return
        self.work_started()
        # A callable, not a coroutine: a turn stopped before its worker starts
        # (ctrl+c right after Enter) leaves no never-awaited coroutine behind.
        self.run_worker(
            # A partial of a coroutine function (Textual awaits it; a lambda would
            # only be called). mypy cannot solve Textual's WorkType union for it.
            partial(self._submit, runtime, text, on_failure),  # type: ignore[arg-type]
            group="agent",
            exit_on_error=False,
        )

    async def _submit(
        self, runtime: Runtime, text: str, on_failure: Callable[[Exception], None] | None = None
    ) -> None:
        try:
            await runtime.agent.submit(text)
        except Exception as exc:
            log.error("the request could not be sent", exc_info=exc)
            if self._detached:
                pass  # quitting: nothing left to show it in
            elif on_failure is not None:
                on_failure(exc)
            else:
                self.transcript.add_error(f"The request failed unexpectedly: {exc!r}.")
        finally:
            self.call_after_refresh(self.tick)

    def prefill(self, text: str) -> None:
        prompt = self.prompt
        prompt.set_text(text)
        prompt.focus()

    # --- actions (keys; each also reachable from the command palette) ------------

    def action_interrupt(self) -> None:
        if self.prompt.dismiss_suggestions():
            return
        if self._stop_turn():
            self.notify("Stopping…", timeout=1.5)
        # Idle: Esc does nothing (harmless by design).

    def _stop_turn(self) -> bool:
        """Stop the running turn, also one sent a moment ago whose worker has not started it."""
        runtime = self.runtime
        stopped = runtime is not None and runtime.agent.cancel()
        if not stopped:
            pending = [w for w in self.workers if w.group == "agent" and not w.is_finished]
            for worker in pending:
                worker.cancel()
            stopped = bool(pending)
        if stopped:
            self.status.set_activity(self._frame, 0.0)
        return stopped

    def action_ctrl_c(self) -> None:
        """Copy a selection; else stop the turn or clear the prompt; twice quickly: quit."""
        if self.prompt.copy_selection():
            return
        now = self.clock()
        last, self._last_ctrl_c = self._last_ctrl_c, now
        if last is not None and now - last <= self.QUIT_WINDOW:
            self._last_ctrl_c = None
            self.run_worker(self.app.action_quit(), group="quit", exit_on_error=False)
            return
        if self._stop_turn():
            self.notify("Stopping… (ctrl+c again to quit)", timeout=1.5)
            return
        self.prompt.dismiss_suggestions()
        if self.prompt.text:
            self.prompt.clear_prompt()
        self.notify("Press ctrl+c again to quit.", timeout=1.5)

    def action_toggle_tool(self) -> None:
        if self.transcript.toggle_latest_tool() is None:
            self.notify("No tool output yet.", timeout=2)

    def action_toggle_plan_mode(self) -> None:
        self.run_worker(self.plan_ui.toggle(), group="plan", exit_on_error=False)

    def action_cycle_mode(self) -> None:
        from planshell.ui import permissions_ui

        self.run_worker(permissions_ui.cycle(self), group="plan", exit_on_error=False)

    def show_permission_mode(self) -> None:
        from planshell.ui import permissions_ui

        permissions_ui.show(self, self.runtime)

    def action_toggle_todos(self) -> None:
        self.plan_ui.toggle_checklist()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_todos":
            # Shown in the footer only while there is a checklist to show.
            return self._plan_ui is not None and self._plan_ui.checklist_available()
        return True

    @property
    def checklist_visible(self) -> bool:
        from textual.css.query import NoMatches

        try:
            return bool(self.query_one("#checklist").display)
        except NoMatches:
            return False

    async def checklist_panel(self, *, create: bool = False) -> ChecklistPanel | None:
        """The plan checklist, mounted above the prompt on first use (not on the first frame)."""
        from textual.css.query import NoMatches

        from planshell.ui.widgets.checklist import ChecklistPanel

        try:
            return self.query_one("#checklist", ChecklistPanel)
        except NoMatches:
            if not create:
                return None
        panel = ChecklistPanel(id="checklist")
        panel.display = False
        await self.mount(panel, before=self.query_one("#suggestions"))
        return panel

    def action_scroll_transcript(self, direction: int) -> None:
        transcript = self.transcript
        if direction < 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)

    # --- CommandContext: the generic part slash commands use (planshell/ui/host.py) ----

    def run_turn(self, work: Callable[[], Awaitable[object]], *, failed: str) -> None:
        """Engine work shown like a turn (/retry, /compact): spinner, Esc stops it."""
        self.run_worker(
            partial(self._run_turn, work, failed),  # type: ignore[arg-type]  # as in send()
            group="agent",
            exit_on_error=False,
        )
        self.work_started()

    async def _run_turn(self, work: Callable[[], Awaitable[object]], failed: str) -> None:
        try:
            await work()
        except Exception as exc:
            log.error("%s", failed, exc_info=exc)
            self.transcript.add_error(f"{failed}: {exc!r}.")
        finally:
            self.call_after_refresh(self.tick)
