"""The transcript entries of a resumed conversation, built from its logged messages.

Kept apart from the transcript view (which only lays entries out and draws them):
turning messages into user, assistant and tool rows is about the log's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from planshell.plan.init import shown_request
from planshell.ui.widgets.assistant import AssistantMessage
from planshell.ui.widgets.messages import Entry, UserMessage
from planshell.ui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from planshell.llm.types import Message
    from planshell.tools.registry import ToolRegistry

__all__ = ["resumed_entries"]


def resumed_entries(
    messages: Iterable[Message], registry: ToolRegistry | None, last: Entry | None
) -> Iterator[Entry]:
    """Entries for ``messages``, in order, following ``last`` (the transcript's last entry).

    A tool row is yielded as soon as its call is seen and finished when its result
    comes (or at the end, as "no result recorded"): the caller appends each entry
    as it is yielded, so it takes the entry's estimate at that point.
    """
    rows: dict[str, ToolRow] = {}
    for message in messages:
        if message.role == "user":
            last = UserMessage(shown_request(message.content))
            yield last
        elif message.role == "assistant":
            if message.content.strip():
                last = AssistantMessage(message.content, finished=True)
                yield last
            for call in message.tool_calls:
                row = ToolRow(call.id, call.name, _headline(registry, call.name, call.arguments))
                row.grouped = isinstance(last, ToolRow)
                rows[call.id] = row
                last = row
                yield row
        elif message.role == "tool" and message.tool_call_id in rows:
            rows[message.tool_call_id].finish(message.content, message.is_error)
    for row in rows.values():
        if row.status == "running":
            row.finish("(no result recorded)", True)


def _headline(registry: ToolRegistry | None, name: str, arguments: str) -> str:
    """The row's one-line summary of a call: the tool's own headline, else its first argument."""
    tool = registry.get(name) if registry is not None else None
    try:
        raw = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        raw = None
    if tool is not None and isinstance(raw, dict):
        try:
            return tool.headline(tool.Args.model_validate(raw))
        except Exception:
            pass
    if isinstance(raw, dict) and raw:
        first = next(iter(raw.values()))
        return f"{name} {first}"
    return name
