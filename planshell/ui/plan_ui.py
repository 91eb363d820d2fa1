"""Plan mode in the chat TUI: ``/plan``, ``/todos``, the toggle key, the mode chip, the checklist.

Imported through ``PlanshellApp.COMMAND_MODULES`` (which registers the slash
commands) and lazily by the chat screen, which owns one :class:`PlanModeUI`.

The UI holds no engine state. The mode and the plan are read from the
runtime's ``PlanController`` and from engine events (``ModeChanged``,
``PlanUpdated``, ``TodosChanged``); they are changed only through engine
methods: ``enter_plan``, ``leave``, ``execute_existing``, ``PlanStore.delete``
and ``Agent.submit``. What this module remembers is view state only (whether
the user hid the checklist).

``/plan`` forms (see docs/plan-mode.md, "Plan mode in the TUI")::

    /plan                 OFF: the picker when plans exist, else plan mode at once;
                          PLAN/EXECUTE: plan mode off
    /plan on | off        enter / leave plan mode, no turn is started
    /plan list            the picker
    /plan review [PATH]   the review screen on the newest plan (or PATH)
    /plan review --browser [PATH]   the same, opened in the browser too (anchored comments)
    /plan why             what plan mode allows, and why (capabilities)
    /plan NAME            one word: that plan's action menu if it exists, else a new plan NAME
    /plan REQUEST         several words: plan mode on, then REQUEST as the first planning turn

While a turn runs, every form that enters plan mode does so at once (the
read-only gate applies from the next tool call) and any request text is
queued as steering.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planshell.ui.commands import REGISTRY, Subcommand
from planshell.ui.keys import DEFAULT_TOGGLE_KEYS, TOGGLE_PLAN_BINDING_ID
from planshell.ui.plan_args import RESERVED, parse_plan_argument, toggle_keys

if TYPE_CHECKING:
    from planshell.agent.events import ModeChanged, PlanUpdated, TodosChanged
    from planshell.plan.controller import PlanController
    from planshell.runtime import Runtime
    from planshell.ui.host import CommandContext, PlanHost
    from planshell.ui.screens.plan_picker import PickerChoice

REFINE_PREFILL = "Refine the plan: "
CREATE_HINT = "Plan mode on: describe what to plan"
MODE_TOAST_SECONDS = 2.5  # the chip in the status bar already shows the mode

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{4}-")


# --- the chat screen's plan-mode behaviour ------------------------------------------------


class PlanModeUI:
    """Everything plan mode adds to one chat screen."""

    def __init__(self, screen: PlanHost) -> None:
        self.screen = screen
        self._lock = asyncio.Lock()  # transitions run one at a time (fast double F2)
        self._checklist_hidden = False  # the user hid the checklist (view state)

    # -- small helpers

    @property
    def app(self) -> Any:
        return self.screen.app

    @property
    def runtime(self) -> Runtime | None:
        return self.screen.runtime

    def _controller(self) -> PlanController | None:
        runtime = self.runtime
        if runtime is None or not self.screen.ready:
            self.screen.notify("Still starting up; try again in a moment.", severity="warning")
            return None
        return runtime.plan

    def _display(self, path: Path) -> str:
        runtime = self.runtime
        if runtime is None:
            return str(path)
        return runtime.agent.ctx.display(path)

    def _note(self, text: str, kind: str = "info") -> None:
        self.screen.transcript.add_note(text, kind=kind)

    # -- settings

    def apply_settings(self) -> None:
        """Labels, hide_widget and the toggle keymap, once settings are loaded."""
        settings = self.app.settings.plan
        chip = self.screen.status.chip
        chip.labels = settings.labels
        self.screen.status.hide_chip(settings.ui.hide_widget)
        chip.set_mode(chip.mode, chip.title, chip.progress)
        keys, warnings = toggle_keys(settings.shortcuts.toggle_mode)
        for warning in warnings:
            self.screen.notify(warning, severity="warning", timeout=8)
        # Keep the binding's own key_display ("^⇧L/F2") when the keys are the defaults:
        # a keymap entry replaces it with Textual's rendering of the first key.
        if keys != DEFAULT_TOGGLE_KEYS:
            self.app.update_keymap({TOGGLE_PLAN_BINDING_ID: keys})

    # -- showing the mode

    def show_state(self, runtime: Runtime) -> None:
        """Chip, marker and checklist from the controller (start-up, resume)."""
        controller = runtime.plan
        mode = str(controller.mode.value)
        title, progress = None, None
        if controller.plan_path is not None and mode != "off":
            title, progress = self._plan_facts(controller.plan_path)
        self.screen.status.chip.set_mode(mode, title, progress if mode == "execute" else None)
        self._show_marker(mode)
        items = tuple(item.shown() for item in runtime.todos.items)
        self.screen.run_worker(
            self._sync_checklist(items, show=mode == "execute"),
            group="checklist",
            exit_on_error=False,
        )
        change = controller.changed_plan
        if change is not None and not controller.review_pending:
            # Resumed with a plan changed since its approval: show what changed and review it.
            self.screen.run_worker(
                self._review(controller, str(change.path)),
                group="changed-plan",
                exit_on_error=False,
            )

    def _plan_facts(self, path: Path) -> tuple[str | None, tuple[int, int] | None]:
        runtime = self.runtime
        if runtime is None:
            return None, None
        try:
            from planshell.plan.document import parse_plan

            doc = parse_plan(runtime.store.read(path))
        except Exception:
            return path.stem, None
        return doc.title or path.stem, (doc.done_count, doc.total_steps)

    def _show_marker(self, mode: str) -> None:
        status = self.screen.status
        if mode != "plan":
            status.set_marker(None, hidden=self._widget_hidden())
            return
        status.set_marker("checking", hidden=self._widget_hidden())  # until the probe answers
        self.screen.run_worker(self._resolve_marker(), group="plan-marker", exit_on_error=False)

    async def _resolve_marker(self) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        controller = runtime.plan
        try:
            label = await asyncio.to_thread(lambda: controller.plan_exec_policy.label)
        except Exception:
            label = "guarded"
        if self.screen.status.chip.mode == "plan":
            self.screen.status.set_marker(label or "guarded", hidden=self._widget_hidden())

    def _widget_hidden(self) -> bool:
        settings = getattr(self.app, "settings", None)
        return bool(settings is not None and settings.plan.ui.hide_widget)

    async def on_engine_event(self, event: ModeChanged | PlanUpdated | TodosChanged) -> None:
        from planshell.agent import events as ev

        match event:
            case ev.ModeChanged():
                await self._mode_changed(event)
            case ev.PlanUpdated():
                chip = self.screen.status.chip
                if chip.mode != "off":
                    progress = (event.done, event.total) if chip.mode == "execute" else None
                    chip.set_mode(chip.mode, event.title, progress)
            case ev.TodosChanged():
                await self._sync_checklist(tuple(event.items))

    async def _mode_changed(self, event: ModeChanged) -> None:
        mode, title = event.mode.value, event.title
        progress = None
        if mode == "execute" and event.plan_path:
            _, progress = self._plan_facts(Path(event.plan_path))
        self.screen.status.chip.set_mode(mode, title, progress)
        self._show_marker(mode)
        if mode == "execute":
            self._checklist_hidden = False
            await self._sync_checklist(None, show=True)
        elif event.previous == "execute":
            await self._sync_checklist(None, show=False)
        self.screen.refresh_bindings()
        self._toast(mode, title)

    def _toast(self, mode: str, title: str | None) -> None:
        plan = self.app.settings.plan
        if plan.ui.hide_notify:
            return
        label = getattr(plan.labels, mode, None)
        if label is None:
            return
        try:
            text = label.notify.format(title=title or "the plan")
        except (KeyError, IndexError, ValueError):
            text = label.notify
        from planshell.sanitize import strip_terminal_controls

        # The title is model-authored: plain text, never Textual markup ([@click=...]).
        text = strip_terminal_controls(text)
        self.screen.notify(
            text, severity=label.notify_type, timeout=MODE_TOAST_SECONDS, markup=False
        )

    # -- the checklist

    def _todo_items(self) -> tuple[tuple[str, str], ...]:
        runtime = self.runtime
        if runtime is None:
            return ()
        return tuple(item.shown() for item in runtime.todos.items)

    async def _sync_checklist(
        self, items: tuple[tuple[str, str], ...] | None, *, show: bool | None = None
    ) -> None:
        """Give the panel ``items`` (None: the engine's current list) and maybe show/hide it."""
        if items is None:
            items = self._todo_items()
        panel = await self.screen.checklist_panel(create=bool(items))
        if panel is None:
            return
        panel.update_items(items)
        if show is not None:
            panel.display = show and bool(items) and not self._checklist_hidden
        elif not items:
            panel.display = False
        self.screen.refresh_bindings()

    def checklist_available(self) -> bool:
        return bool(self._todo_items())

    def toggle_checklist(self) -> None:
        if not self.checklist_available():
            self.screen.notify(
                "No checklist yet: it appears while an approved plan runs "
                "(and when the agent keeps a todo list).",
                timeout=4,
            )
            return
        self.screen.run_worker(self._toggle_checklist(), group="checklist", exit_on_error=False)

    async def _toggle_checklist(self) -> None:
        panel = await self.screen.checklist_panel(create=True)
        assert panel is not None
        panel.update_items(self._todo_items())
        visible = not panel.display
        panel.display = visible
        self._checklist_hidden = not visible

    # -- transitions (engine methods only)

    async def _enter(
        self, controller: PlanController, *, name: str | None = None, plan_path: Path | None = None
    ) -> bool:
        """OFF/EXECUTE -> PLAN (or a different plan while in PLAN)."""
        if not controller.agent.busy:
            # The one-off sandbox probe, off the event loop. While a turn runs the
            # gate must apply at once, so then enter_plan probes inline (~10 ms).
            await asyncio.to_thread(lambda: controller.plan_exec_policy)
        was_plan = controller.mode.value == "plan"
        try:
            controller.start_plan(name=name, plan_path=plan_path)
        except Exception as exc:
            self.screen.notify(f"Could not enter plan mode: {exc}", severity="error")
            return False
        if was_plan and controller.mode.value == "plan" and self.runtime is not None:
            self.show_state(self.runtime)  # same mode, another plan: no event says so
        return True

    def _leave(self, controller: PlanController) -> None:
        if controller.mode.value == "off":
            return
        try:
            controller.leave()
        except Exception as exc:
            self.screen.notify(str(exc), severity="warning")

    def _submit(self, controller: PlanController, text: str) -> None:
        """Send ``text`` (a turn, or steering when busy); a failure never changes the mode.

        The mode is the person's choice: an error while sending leaves it as it
        is (rolling PLAN back to OFF would be a way out of plan mode that no
        person took).
        """

        def failed(exc: BaseException) -> None:
            self.screen.transcript.add_error(
                f"The request could not be sent ({exc}); the mode stays "
                f"{controller.mode.value.upper()}."
            )

        self.screen.send(text, on_failure=failed)

    async def toggle(self) -> None:
        """ctrl+shift+l / F2 / the palette: OFF -> PLAN, PLAN or EXECUTE -> OFF."""
        controller = self._controller()
        if controller is None:
            return
        async with self._lock:
            if controller.mode.value == "off":
                await self._enter(controller)
            else:
                self._leave(controller)

    # -- /plan

    async def command(self, arg: str) -> None:
        controller = self._controller()
        if controller is None:
            return
        form, value = parse_plan_argument(arg)
        busy = controller.agent.busy
        match form:
            case "bare":
                if controller.mode.value != "off":
                    async with self._lock:
                        self._leave(controller)
                elif busy or controller.store.newest() is None:
                    await self._turn_on(controller, hint=not busy)
                else:
                    await self._pick()
            case "on":
                if controller.mode.value == "plan":
                    self.screen.notify("Plan mode is already on.", timeout=3)
                else:
                    await self._turn_on(controller, hint=not busy)
            case "off":
                if controller.mode.value == "off":
                    self.screen.notify("Plan mode is already off.", timeout=3)
                else:
                    async with self._lock:
                        self._leave(controller)
            case "list":
                await self._pick()
            case "why":
                await self._why(controller)
            case "review" | "review-browser":
                await self._review(controller, value or None, browser=form == "review-browser")
            case "new":
                await self._new_plan(controller, value)
            case "name":
                await self._named(controller, value)
            case _:
                await self._request(controller, value)

    async def init(self) -> None:
        """``/init``: AGENTS.md through plan mode (enter PLAN, send the request)."""
        from planshell.plan.init import INIT_PLAN_NAME, INIT_REQUEST

        controller = self._controller()
        if controller is None:
            return
        if controller.agent.busy:
            self.screen.notify(
                "Wait for the current turn to finish (or esc), then /init.", severity="warning"
            )
            return
        async with self._lock:
            if not await self._enter(controller, name=INIT_PLAN_NAME):
                return
            self._submit(controller, INIT_REQUEST)

    async def _turn_on(self, controller: PlanController, *, hint: bool) -> None:
        async with self._lock:
            if controller.mode.value == "plan":
                return
            entered = await self._enter(controller)
        if entered and hint:
            self._note(f"{CREATE_HINT}.")

    async def _request(self, controller: PlanController, text: str) -> None:
        async with self._lock:
            if controller.mode.value != "plan" and not await self._enter(controller):
                return
            self._submit(controller, text)

    async def _new_plan(self, controller: PlanController, text: str) -> None:
        """``/plan new REQUEST``: a new plan file for REQUEST, the current plan kept as it is."""
        if not text:
            self.screen.notify("/plan new needs a request, e.g. /plan new add a search box.")
            return
        async with self._lock:
            if not await self._enter(controller, name=text):
                return
            self._submit(controller, text)

    async def _named(self, controller: PlanController, name: str) -> None:
        existing = controller.store.find_by_name(name)
        if existing is None:
            if await self._enter(controller, name=name):
                self._note(f"{CREATE_HINT} (it will be saved as {name}).")
            return
        try:
            text = await asyncio.to_thread(controller.store.read, existing)
        except Exception as exc:
            self.screen.notify(f"Cannot open {existing.name}: {exc}", severity="error")
            return
        from planshell.ui.screens.plan_actions import PlanActionScreen
        from planshell.ui.screens.plan_picker import PickerChoice

        action = await self._ask(PlanActionScreen(existing, text))
        if action == "execute":
            # The menu showed this text: run exactly that, or nothing.
            if self._execute(controller, existing, reviewed=text) == "changed":
                self.screen.notify(
                    f"{existing.name} changed while it was open; nothing was executed.",
                    severity="warning",
                )
        elif action:
            await self.apply_choice(PickerChoice(action, path=existing))

    async def _pick(self) -> None:
        runtime = self.runtime
        assert runtime is not None
        from planshell.ui.screens.plan_picker import PlanPickerScreen

        choice = await self._ask(PlanPickerScreen(runtime.store))
        if choice is not None:
            await self.apply_choice(choice)

    async def _ask(self, screen: Any) -> Any:
        return await self.app.decider.ask(screen)

    async def apply_choice(self, choice: PickerChoice) -> None:
        """Act on the picker's (or the action menu's) choice."""
        runtime = self.runtime
        if runtime is None:
            return
        controller = runtime.plan
        path = choice.path
        match choice.action:
            case "create":
                if await self._enter(controller, name=choice.name):
                    named = f" (it will be saved as {choice.name})" if choice.name else ""
                    self._note(f"{CREATE_HINT}{named}.")
                    self.screen.prompt.focus()
            case "execute" if path is not None:
                self._execute(controller, path)
            case "refine" if path is not None:
                if await self._enter(controller, plan_path=path):
                    self.screen.prefill(REFINE_PREFILL)
            case "exit":
                if controller.is_active(path):
                    self._leave(controller)
                self.screen.notify(
                    f"Kept {path.name}." if path is not None else "Plan kept.", timeout=3
                )
            case "discard" if path is not None:
                self._discard(controller, path)
            case _:
                pass

    def _execute(self, controller: PlanController, path: Path, reviewed: str | None = None) -> str:
        """Approve ``path`` as saved and tell the agent to run it: "ok", "failed" or "changed".

        With ``reviewed``, the engine executes only if the file still holds exactly
        the text the user read (nothing changes otherwise: "changed").
        """
        from planshell.plan.controller import PlanChanged

        try:
            controller.execute_existing(path, reviewed=reviewed)
        except PlanChanged:
            return "changed"
        except Exception as exc:
            self.screen.notify(f"Cannot execute {path.name}: {exc}", severity="error")
            return "failed"
        self._submit(controller, controller.execute_request(path))
        return "ok"

    def _discard(self, controller: PlanController, path: Path) -> None:
        try:
            controller.discard(path)
        except Exception as exc:
            self.screen.notify(f"Could not delete {path.name}: {exc}", severity="error")
            return
        self.screen.notify(f"Deleted {path.name}.", timeout=3)

    # -- /plan review: the engine's review rounds, from any mode

    async def _review(
        self, controller: PlanController, target: str | None, *, browser: bool = False
    ) -> None:
        store = controller.store
        if target is None:
            path = store.newest()
            if path is None:
                self.screen.notify("No plans yet: /plan <request> writes one.", timeout=4)
                return
        else:
            try:
                path = store.resolve(target)
            except Exception as exc:
                self.screen.notify(f"Cannot review {target}: {exc}", severity="error")
                return
        from planshell.ui.browser_review import review_origin

        try:
            with review_origin(open_browser=browser):  # a person's review: no browser approval
                outcome = await controller.review_existing(path)
        except Exception as exc:
            self.screen.notify(f"Cannot review {path.name}: {exc}", severity="error")
            return
        if outcome.notice:
            self.screen.notify(outcome.notice, severity="warning")
        if outcome.message:
            self._submit(controller, outcome.message)

    def plan_names(self) -> list[str]:
        """Completions for ``/plan``: the reserved words, then recent plan names."""
        names: list[str] = list(RESERVED)
        runtime = self.runtime
        if runtime is None:
            return names
        try:
            stems = sorted(p.stem for p in runtime.store.plans_dir.glob("*.md"))
        except OSError:
            return names
        for stem in reversed(stems):
            name = _STAMP.sub("", stem)
            if name and name not in names:
                names.append(name)
            if len(names) > 25:
                break
        return names

    # -- /plan why

    async def _why(self, controller: PlanController) -> None:
        try:
            text = await asyncio.to_thread(controller.capabilities)
        except Exception as exc:
            self.screen.notify(f"/plan why failed: {exc}", severity="error")
            return
        from planshell.ui.screens.plan_why import PlanWhyScreen

        self.app.push_screen(PlanWhyScreen(text))


# --- slash commands -------------------------------------------------------------------


def _plan_names(ctx: CommandContext, arg: str) -> Iterable[str]:
    return ctx.plan_ui.plan_names()


@REGISTRY.command(
    "plan",
    "Plan mode: on/off, pick a plan, or plan a request read-only (ctrl+shift+l / F2 toggle)",
    argument="[on|off|list|review [--browser] [PATH]|why|new REQUEST|NAME|REQUEST]",
    complete=_plan_names,
    key="f2",
    subcommands=(
        Subcommand("on", "Enter plan mode (read-only); nothing is sent to the model"),
        Subcommand("off", "Leave plan mode"),
        Subcommand("list", "Pick a plan: review, execute, rename or delete it"),
        Subcommand(
            "review", "Review the newest plan (or PATH): approve, refine, comment", "[PATH]"
        ),
        Subcommand(
            "review --browser", "Review the newest plan (or PATH) in the browser too", "[PATH]"
        ),
        Subcommand("why", "What plan mode allows, and why (tools, bash guard, sandbox)"),
        Subcommand("new", "Plan REQUEST in a new plan file (the current plan stays)", "REQUEST"),
    ),
)
async def _plan(ctx: CommandContext, arg: str) -> None:
    await ctx.plan_ui.command(arg)


@REGISTRY.command("init", "Write or update AGENTS.md through plan mode (you approve the plan)")
async def _init(ctx: CommandContext, arg: str) -> None:
    await ctx.plan_ui.init()


@REGISTRY.command("todos", "Show or hide the plan checklist", key="ctrl+t")
def _todos(ctx: CommandContext, arg: str) -> None:
    ctx.plan_ui.toggle_checklist()  # what ctrl+t does too (ChatScreen.action_toggle_todos)
