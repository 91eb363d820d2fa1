"""Engine events -> the chat's widgets: the transcript, the status bar, toasts.

The chat screen owns one ``EventRenderer`` and feeds it every engine event
it receives (as a Textual message); the renderer keeps the stream state
(the context window and cost last reported) and calls back into its host
(``EventHost`` in ``ui/host.py``) for the rest: the spinner, plan mode, the
permission-mode chip and toasts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections import deque

    from planshell.agent import events as ev
    from planshell.ui.host import EventHost


class EventRenderer:
    """Renders engine events into the host's widgets."""

    def __init__(self, host: EventHost) -> None:
        self._host = host
        self._window_cost: tuple[int | None, float | None] = (None, None)  # window, cost

    def reset_context(self, window: int | None, cost: float | None) -> None:
        """A new runtime or provider: the window and cost start from these."""
        self._window_cost = (window, cost)

    async def render_some(self, inbox: deque[ev.Event]) -> None:
        """Render events from the front of ``inbox``: a run of text deltas, or one other event.

        Deltas take a short path (no imports, no match): at thousands a second
        that is most of the work the UI does for them.
        """
        from planshell.agent.events import TextDelta

        event = inbox.popleft()
        if not isinstance(event, TextDelta):
            await self.render(event)
            return
        transcript = self._host.transcript
        transcript.text_delta(event.text)
        while inbox and isinstance(inbox[0], TextDelta):
            transcript.text_delta(inbox.popleft().text)  # type: ignore[union-attr]

    async def render(self, event: ev.Event) -> None:
        # Imported here, not at module level: the first event arrives after the
        # first frame, so the engine's modules stay off the start-up path.
        from planshell.agent import events as ev
        from planshell.plan.init import shown_request
        from planshell.sanitize import strip_terminal_controls
        from planshell.tools.base import SHOWN_KEY

        host = self._host
        transcript = host.transcript
        match event:
            case ev.TurnStarted(text=text):
                transcript.add_user(shown_request(text))
                host.work_started()
            case ev.TextDelta(text=text):
                transcript.text_delta(text)
            case ev.ThinkingDelta(text=text):
                transcript.thinking_delta(text)
            case ev.AssistantDone(text=text):
                await transcript.reply_done(text)
            case ev.ToolStarted() as event:
                transcript.tool_started(event.call_id, event.name, event.headline)
                host.work_started()
            case ev.ToolFinished() as event:
                shown = event.data.get(SHOWN_KEY)
                transcript.tool_finished(
                    event.call_id,
                    event.name,
                    event.content,
                    event.is_error,
                    shown if isinstance(shown, str) else None,
                )
                if event.name == "bash":  # the first command settles whether it is sandboxed
                    host.show_permission_mode()
            case ev.ToolProgress() as event:
                transcript.tool_progress(event.call_id, event.line)
            case ev.UsageUpdated() as event:
                window, cost = self._window_cost
                host.status.set_context(event.context_tokens, window, cost)
            case ev.ContextUpdated() as event:
                self._window_cost = (event.window, event.cost)
                host.status.set_context(event.used, event.window, event.cost)
            case ev.Compacted() as event:
                transcript.add_summary(_compaction_title(event), event.summary)
            case ev.RetryStarted() as event:
                if event.dropped:
                    transcript.add_note(
                        "↻ Regenerating the last reply (the previous one was dropped)."
                    )
                host.work_started()
            case ev.SubagentUsage() as event:
                host.status.set_subagent_tokens(event.total)
            case ev.ErrorEvent() as event:
                transcript.add_error(event.interactive_text())
            case ev.SteeringQueued(text=text):
                transcript.add_queued(text)
            case ev.SteeringDelivered(text=text):
                transcript.steering_delivered(text)
            case ev.TurnDone() as event:
                transcript.turn_done(event.cancelled, event.cut_off_note)
                host.tick()
            case ev.PlanReported() as event:
                await host.plan_event(event)  # sanitised by the report screen
            case ev.ModeChanged() | ev.PlanUpdated() | ev.TodosChanged() as event:
                await host.plan_event(event)
                if isinstance(event, ev.ModeChanged):
                    host.show_permission_mode()
            case ev.PermissionModeChanged():
                host.show_permission_mode()
            case ev.ModelChanged() as event:  # a phase switch: the planning or execution model
                label = f"plan: {event.label}" if event.planning else event.label
                host.status.set_provider(strip_terminal_controls(label), demo=event.demo)
            case ev.Notice() as event:
                # Notices can quote file names and model text: plain text, no markup.
                # The event bus logged it already (planshell/agent/events.py).
                host.show_notice(strip_terminal_controls(event.message), event.level)
            case _:
                pass  # future events: nothing to show here yet


def _compaction_title(event: ev.Compacted) -> str:
    from planshell.ui.widgets.status import format_tokens

    why = {
        "auto": "the context was nearly full",
        "overflow": "the server said the conversation was too long",
        "handoff": "plan approved",
        "manual": "/compact",
    }.get(event.reason, event.reason)
    return (
        f"Conversation compacted ({why}): {format_tokens(event.before_tokens)} → "
        f"{format_tokens(event.after_tokens)} tokens; mode and plan unchanged. Summary:"
    )
