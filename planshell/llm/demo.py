"""The offline demo model: deterministic, no network, clearly labelled.

It is a tiny state machine over the current request: it really calls the
read-only tools on the real project and answers from what they returned, so
a newcomer sees the whole workflow (tools, plan mode, review, execution)
without an API key. It never pretends to write code.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from planshell.llm.types import (
    Message,
    StreamEnd,
    StreamEvent,
    TextChunk,
    ToolCall,
    ToolCallReady,
    ToolSpec,
    Usage,
    UsageReport,
)
from planshell.sanitize import cut_at_word

DEMO_BANNER = "*Offline demo model* — a built-in stand-in, not a real LLM."

_STOPWORDS = frozenset(
    "what which where when this that there these those with from into about have does "
    "show tell please could would should repo repository project code file files the "
    "and for are how why can you your plan make write some more than then them they".split()
)
_README_RE = re.compile(r"^readme(\.\w+)?/?$", re.IGNORECASE)


@dataclass
class _Done:
    name: str
    args: dict[str, Any]
    content: str
    is_error: bool


def _current_turn(messages: list[Message]) -> tuple[str, list[_Done]]:
    """The request text and the tool results that followed it.

    A request starts at the first user message after the last assistant reply
    that called no tools (later user messages in the same turn are steering).
    """
    boundary = max(
        (i for i, m in enumerate(messages) if m.role == "assistant" and not m.tool_calls),
        default=-1,
    )
    start = next((i for i in range(boundary + 1, len(messages)) if messages[i].role == "user"), -1)
    request = messages[start].content if start >= 0 else ""
    calls: dict[str, ToolCall] = {}
    done: list[_Done] = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            calls[call.id] = call
        if message.role == "tool" and message.tool_call_id in calls:
            call = calls[message.tool_call_id]
            try:
                args = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                args = {}
            done.append(_Done(call.name, args, message.content, message.is_error))
    return request, done


def keywords(request: str, limit: int = 3) -> list[str]:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", request)
    out: list[str] = []
    for word in words:
        low = word.lower()
        if low not in _STOPWORDS and low not in out:
            out.append(low)
    return out[:limit]


class DemoProvider:
    """Deterministic offline 'model' that drives the real tools."""

    name = "demo"

    def __init__(self, model: str = "offline", chunk_delay: float = 0.004) -> None:
        self.model = model
        self.chunk_delay = chunk_delay
        self._ids = 0

    @property
    def label(self) -> str:
        return "demo (offline)"

    async def stream(
        self, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        request, done = _current_turn(messages)
        available = {t.name for t in tools}
        text, calls = _decide(system, request, done, available)
        for i in range(0, len(text), 24):
            yield TextChunk(text[i : i + 24])
            await asyncio.sleep(self.chunk_delay)
        for name, args in calls:
            self._ids += 1
            yield ToolCallReady(ToolCall(f"demo_{self._ids}", name, json.dumps(args)))
        words = sum(len(m.content.split()) for m in messages)
        yield UsageReport(Usage(input_tokens=words * 4 // 3, output_tokens=len(text) // 4))
        yield StreamEnd("tool_use" if calls else "end_turn")


Decision = tuple[str, list[tuple[str, dict[str, Any]]]]


def _decide(system: str, request: str, done: list[_Done], tools: set[str]) -> Decision:
    # The mode shows in the tools offered (each mode offers only the plan tools
    # that can succeed there), so the demo needs nothing from the plan package.
    if "plan_complete" in tools:
        return _execute(system, done)
    if done and done[-1].name == "plan_complete":
        return _after_complete(done), []
    explored = _explore(request, done, tools)
    if explored is not None:
        return explored
    if "write_plan" in tools:
        return _plan(request, done)
    return _answer(request, done), []


def _names(done: list[_Done]) -> list[str]:
    return [d.name for d in done]


def _last(done: list[_Done], name: str) -> _Done | None:
    return next((d for d in reversed(done) if d.name == name), None)


def _explore(request: str, done: list[_Done], tools: set[str]) -> Decision | None:
    names = _names(done)
    if "ls" in tools and "ls" not in names:
        calls: list[tuple[str, dict[str, Any]]] = [("ls", {"path": "."})]
        words = keywords(request)
        if words and "grep" in tools:
            calls.append(
                ("grep", {"pattern": "|".join(words), "ignore_case": True, "max_results": 12})
            )
        return "I'll look around the project first.\n", calls
    readme = _readme_name(done)
    if readme and "read" in tools and "read" not in names:
        return "", [("read", {"path": readme, "limit": 60})]
    return None


def _readme_name(done: list[_Done]) -> str | None:
    listing = _last(done, "ls")
    if listing is None or listing.is_error:
        return None
    for line in listing.content.splitlines():
        name = line.split()[0] if line.split() else ""
        if _README_RE.match(name) and not name.endswith("/"):
            return name
    return None


def _entries(done: list[_Done]) -> list[str]:
    listing = _last(done, "ls")
    if listing is None or listing.is_error:
        return []
    names = []
    for line in listing.content.splitlines():
        parts = line.split()
        if parts and not line.startswith(("[", "(")) and not parts[0].endswith(":"):
            names.append(parts[0])
    return names


def _readme_summary(done: list[_Done]) -> str:
    read = _last(done, "read")
    if read is None or read.is_error:
        return ""
    lines = [re.sub(r"^\s*\d+\t", "", line) for line in read.content.splitlines()]
    heading = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("#")), "")
    para: list[str] = []
    in_fence = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or stripped.startswith(("#", "[", "!", "<", "|")):
            if para:
                break
            continue
        para.append(stripped)
    summary = " ".join(para)[:300]
    return f"**{heading}**: {summary}" if heading else summary


def _matches(done: list[_Done]) -> list[str]:
    grep = _last(done, "grep")
    if grep is None or grep.is_error:
        return []
    # Earlier plans would echo the request back at itself: skip them.
    return [
        ln
        for ln in grep.content.splitlines()
        if re.match(r"^[^:\s]+:\d+:", ln) and not ln.startswith(".planshell/")
    ][:8]


def _answer(request: str, done: list[_Done]) -> str:
    entries = [e for e in _entries(done) if not e.startswith(".")]
    parts = [DEMO_BANNER, "", "Here is what I found by reading the project:", ""]
    if entries:
        shown = ", ".join(f"`{e}`" for e in entries[:12])
        more = f" and {len(entries) - 12} more" if len(entries) > 12 else ""
        parts.append(f"- **Top level** ({len(entries)} entries): {shown}{more}.")
    summary = _readme_summary(done)
    if summary:
        parts.append(f"- **README** — {summary}")
    words = keywords(request)
    matches = _matches(done)
    if words:
        if matches:
            parts.append(f"- **Where {', '.join(words)} appear**:")
            parts += [f"  - `{m[:110]}`" for m in matches]
        else:
            parts.append(f"- No file mentions {', '.join(words)}.")
    parts += [
        "",
        "I can only explore and summarise. For real answers, set `ANTHROPIC_API_KEY` or "
        "`OPENAI_API_KEY` (or point `base_url` at Ollama); see docs/providers.md. "
        "Try `/plan <task>` to see plan mode.",
    ]
    return "\n".join(parts)


# --- plan mode ---------------------------------------------------------------


def _test_command(done: list[_Done]) -> str:
    entries = set(_entries(done))
    if "Makefile" in entries:
        return "make test"
    if "pyproject.toml" in entries or "pytest.ini" in entries or "setup.py" in entries:
        return "python -m pytest"
    if "package.json" in entries:
        return "npm test"
    if "Cargo.toml" in entries:
        return "cargo test"
    if "go.mod" in entries:
        return "go test ./..."
    return "git status"


def _plan_text(request: str, done: list[_Done], feedback: str | None) -> tuple[str, str]:
    title = cut_at_word(request.strip().splitlines()[0], 60, "") if request.strip() else "Demo plan"
    entries = [e for e in _entries(done) if not e.startswith(".")]
    files = [e for e in entries if not e.endswith("/")][:4] or ["README.md"]
    dirs = [e.rstrip("/") for e in entries if e.endswith("/")][:3]
    matches = [m.split(":", 1)[0] for m in _matches(done)]
    targets = list(dict.fromkeys(matches))[:3] or files[:2]
    context = [f"- Top-level files: {', '.join(f'`{f}`' for f in files)}."]
    if dirs:
        context.append(f"- Source folders: {', '.join(f'`{d}/`' for d in dirs)}.")
    summary = _readme_summary(done)
    if summary:
        context.append(f"- README: {summary}")
    if matches:
        context.append(f"- Related code: {', '.join(f'`{t}`' for t in targets)}.")
    steps = [f"Read {', '.join(f'`{t}`' for t in targets)} and note what must change"]
    steps += [f"Make the change for: {title}", "Add or update tests for the change"]
    steps.append("Update the docs that describe this behaviour")
    lines = [
        f"# Plan: {title}",
        "",
        "## Goal",
        "",
        f"{request.strip() or title}",
        "",
        f"> {DEMO_BANNER} This plan is grounded in the files it read; it will not edit code.",
        "",
        "## Context",
        "",
        *context,
        "",
        "## Approach",
        "",
        "Keep the change small: touch the files above, test it, document it.",
        "",
        "## Steps",
        "",
        *[f"- [ ] {s}" for s in steps],
        "",
        "## Risks",
        "",
        "- The demo model cannot judge real design risks; review carefully.",
        "",
    ]
    if feedback:
        lines += ["## Feedback addressed", "", f"- {feedback}", ""]
    lines += ["## Verification", "", "```sh", _test_command(done), "```", ""]
    return title, "\n".join(lines)


_SAVED_RE = re.compile(r"Plan saved: (\S+\.md)")


def _plan(request: str, done: list[_Done]) -> Decision:
    last = done[-1] if done else None
    if last is not None and last.name == "write_plan":
        match = _SAVED_RE.search(last.content)
        if last.is_error or match is None:
            return f"{DEMO_BANNER}\n\nI could not save the plan: {last.content}", []
        return "The plan is written. Asking you to review it.\n", [
            ("exit_plan_mode", {"plan_path": match.group(1)})
        ]
    if last is not None and last.name == "exit_plan_mode":
        result = last.content
        if result.startswith("The user asked for changes"):
            feedback = result.split(":", 1)[-1].strip().splitlines()[0][:200]
            title, content = _plan_text(request, done, feedback)
            path = _SAVED_RE.search(_last(done, "write_plan").content or "")  # type: ignore[union-attr]
            args: dict[str, Any] = {"title": title, "content": content}
            if path:
                args["plan_path"] = path.group(1)
            return "Revising the plan with your feedback.\n", [("write_plan", args)]
        return f"{DEMO_BANNER}\n\n{result.splitlines()[0]}", []
    title, content = _plan_text(request, done, None)
    return "Writing the plan from what I found.\n", [
        ("write_plan", {"title": title, "content": content})
    ]


_STEP_RE = re.compile(r"^\s*[-*+]\s+\[( |x|X)\]\s+(.*)$")


def _execute(system: str, done: list[_Done]) -> Decision:
    # The approved plan is the last part of the system prompt, so its Steps
    # section is the last one there (an AGENTS.md "Steps" section comes earlier).
    lines = system.splitlines()
    heads = [i for i, ln in enumerate(lines) if _is_steps_heading(ln)]
    index = 0
    for line in lines[heads[-1] + 1 :] if heads else []:
        if line.startswith("#"):
            break
        match = _STEP_RE.match(line)
        if match is None:
            continue
        index += 1
        if match.group(1) == " ":
            text = match.group(2).strip()
            return (
                f"Step {index}: {text}. (Demo: recording it as done; I do not edit code.)\n",
                [("set_plan_steps", {"updates": [{"step": index, "status": "done", "expected": text}]})],
            )
    last = done[-1] if done else None
    if last is not None and last.name == "set_plan_steps" and last.is_error:
        return f"{DEMO_BANNER}\n\nI could not tick the step: {last.content}", []
    return "Every step is ticked; finishing the plan.\n", [("plan_complete", {})]


def _is_steps_heading(line: str) -> bool:
    return line.startswith("#") and line.lstrip("# ").strip().lower().endswith("steps")


def _after_complete(done: list[_Done]) -> str:
    ticks = sum(1 for d in done if d.name == "set_plan_steps" and not d.is_error)
    return (
        f"{DEMO_BANNER}\n\nPlan complete: {ticks} steps ticked, back to normal mode. "
        "A real model would have edited code and run the verification commands."
    )
