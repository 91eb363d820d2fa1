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
from planshell.project_tests import TEST_EVIDENCE_FILES, TestCommand, find_test_command
from planshell.sanitize import cut_at_word
from planshell.text import plural

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
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        max_output: int | None = None,  # the demo's replies are short anyway
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
        if "write" in tools:
            writing = _init_write(system, done)
            if writing is not None:
                return writing
        return _execute(system, done)
    if done and done[-1].name == "plan_complete":
        return _after_complete(done), []
    if request.startswith(INIT_PREFIX) and "write_plan" in tools:
        return _init(request, done, tools)
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
    if "read" not in names and "find" not in names:
        readme = _readme_name(done)
        reads: list[tuple[str, dict[str, Any]]] = []
        if readme and "read" in tools:
            reads.append(("read", {"path": readme, "limit": README_LINES}))
        if "write_plan" in tools:  # a plan names the test command and the code: find both
            entries = _entries(done)
            if "read" in tools:
                reads += [
                    ("read", {"path": n, "limit": 200}) for n in TEST_EVIDENCE_FILES if n in entries
                ]
            if "find" in tools and not any(_is_source(m) for m in _matched_files(done)):
                reads.append(("find", {"pattern": SOURCE_GLOB}))
        if reads:
            return "", reads
    return None


# Source files by extension: what "Related code" names (a README is not code).
SOURCE_EXTENSIONS = (
    "py js jsx ts tsx mjs cjs go rs java kt kts scala rb php c h cc cpp hpp cs swift m "
    "lua pl sh bash zsh ex exs erl hs ml clj dart r jl zig nim vue svelte sql"
).split()
SOURCE_GLOB = "**/*.{" + ",".join(SOURCE_EXTENSIONS) + "}"
README_LINES = 200


def _is_source(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[-1].lower() in SOURCE_EXTENSIONS


def _matched_files(done: list[_Done]) -> list[str]:
    """Files the grep matched, in order, once each."""
    return list(dict.fromkeys(m.split(":", 1)[0] for m in _matches(done)))


def _source_files(done: list[_Done]) -> list[str]:
    """Source files the ``find`` for code listed (test files last: the change comes first)."""
    found = [f for f in _found(done, SOURCE_GLOB) if _is_source(f)]
    return sorted(
        found, key=lambda f: ("test" in f.lower(), f.endswith("__init__.py"), f.count("/"), f)
    )


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
    readme = _readme_name(done)
    read = next(
        (d for d in reversed(done) if d.name == "read" and d.args.get("path") == readme), None
    )
    if readme is None or read is None or read.is_error:
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
    summary = cut_at_word(" ".join(para), 300)  # a whole last word, then "…"
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


def _test_command(done: list[_Done]) -> TestCommand | None:
    """The project's test command from the files read (the same rule as ``/init``)."""
    return find_test_command(_entries(done), lambda name: _read_text(done, name))


def _plan_text(request: str, done: list[_Done], feedback: list[str] | None) -> tuple[str, str]:
    title = cut_at_word(request.strip().splitlines()[0], 60, "") if request.strip() else "Demo plan"
    entries = [e for e in _entries(done) if not e.startswith(".")]
    files = [e for e in entries if not e.endswith("/")][:4] or ["README.md"]
    dirs = [e.rstrip("/") for e in entries if e.endswith("/")][:3]
    matched = _matched_files(done)
    related = [m for m in matched if _is_source(m)][:3]
    code = related or _source_files(done)[:3]
    targets = code or matched[:3] or files[:2]
    context = [f"- Top-level files: {', '.join(f'`{f}`' for f in files)}."]
    if dirs:
        context.append(f"- Source folders: {', '.join(f'`{d}/`' for d in dirs)}.")
    summary = _readme_summary(done)
    if summary:
        context.append(f"- README: {summary}")
    if related:
        context.append(f"- Related code: {', '.join(f'`{t}`' for t in related)}.")
    elif code:
        context.append(
            f"- Code to read first (no source file mentions the request's words): "
            f"{', '.join(f'`{t}`' for t in code)}."
        )
    test = _test_command(done)
    if test:
        context.append(f"- Test command: `{test.command}` (from {test.source}).")
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
        lines += ["## Feedback addressed", "", *(f"- {point}" for point in feedback), ""]
    if test:
        lines += ["## Verification", "", "```sh", test.command, "```", ""]
    else:
        lines += [
            "## Verification",
            "",
            "No test command was found in the files read (README, Makefile, package.json, "
            "pyproject.toml, tox.ini, noxfile.py); check the change by hand and say how.",
            "",
        ]
    return title, "\n".join(lines)


_SAVED_RE = re.compile(r"Plan saved: (\S+\.md)")
# The person's comments in the refinement message (plan/review_comments.py comments_message):
# "1. [id] On section "Steps", about:" ... "   Comment: <text>".
_COMMENT_ON_RE = re.compile(r"^\d+\. \[[^\]\n]*\] On (.+?), about:$", re.MULTILINE)
_COMMENT_TEXT_RE = re.compile(r"^ {3}Comment: (.*)$", re.MULTILINE)
_ALSO_WROTE = "The user also wrote: "


# exit_plan_mode's results are written for the model ("… Stay in plan mode; wait for the
# user's next message"); the demo's reply is read by the person, so it says what happened.
_DECISION_REPLIES = (
    ("The user has not approved the plan", "You kept planning. Tell me what to change."),
    ("The user left plan mode without approving", "You left plan mode; the plan file is kept."),
    ("The user discarded the plan", "You discarded the plan."),
    ("Approved.", "Approved: executing the plan."),
)


def decision_reply(result: str) -> str:
    """The demo's words to the person after a review decision (never the engine's text)."""
    for start, reply in _DECISION_REPLIES:
        if result.startswith(start):
            return reply
    return result.splitlines()[0] if result else ""


def feedback_points(result: str) -> list[str]:
    """What the person asked for, from exit_plan_mode's "asked for changes" result.

    Comments arrive as one message listing each (where, the quoted block, the
    comment): the demo names each comment with its place, not the message's
    first line. Plain feedback is its first line.
    """
    body = result.split(":", 1)[-1].strip()
    places = _COMMENT_ON_RE.findall(body)
    texts = _COMMENT_TEXT_RE.findall(body)
    if texts and len(places) == len(texts):
        points = [
            f"{text.strip()[:200]} ({place})" for place, text in zip(places, texts, strict=True)
        ]
        also = next((ln for ln in body.splitlines() if ln.startswith(_ALSO_WROTE)), None)
        if also is not None:
            points.append(also[len(_ALSO_WROTE) :].strip()[:200])
        return points
    first = body.splitlines()[0] if body else ""
    return [first[:200]]


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
            feedback = feedback_points(result)
            title, content = _plan_text(request, done, feedback)
            path = _SAVED_RE.search(_last(done, "write_plan").content or "")  # type: ignore[union-attr]
            args: dict[str, Any] = {"title": title, "content": content}
            if path:
                args["plan_path"] = path.group(1)
            return "Revising the plan with your feedback.\n", [("write_plan", args)]
        return f"{DEMO_BANNER}\n\n{decision_reply(result)}", []
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
            wrote = _written(done)
            note = (
                f"Wrote {', '.join(f'`{w}`' for w in wrote)} exactly as the approved plan says."
                if wrote
                else "(Demo: recording it as done; I do not edit code.)"
            )
            return (
                f"Step {index}: {text}. {note}\n",
                [
                    (
                        "set_plan_steps",
                        {"updates": [{"step": index, "status": "done", "expected": text}]},
                    )
                ],
            )
    last = done[-1] if done else None
    if last is not None and last.name == "set_plan_steps" and last.is_error:
        return f"{DEMO_BANNER}\n\nI could not tick the step: {last.content}", []
    return "Every step is ticked; finishing the plan.\n", [("plan_complete", {})]


def _is_steps_heading(line: str) -> bool:
    return line.startswith("#") and line.lstrip("# ").strip().lower().endswith("steps")


def _written(done: list[_Done]) -> list[str]:
    """Files this turn wrote (only an approved /init plan's AGENTS.md ever is)."""
    return list(
        dict.fromkeys(str(d.args.get("path")) for d in done if d.name == "write" and not d.is_error)
    )


def _after_complete(done: list[_Done]) -> str:
    ticks = sum(1 for d in done if d.name == "set_plan_steps" and not d.is_error)
    wrote = _written(done)
    if wrote:
        return (
            f"{DEMO_BANNER}\n\nPlan complete: wrote {', '.join(f'`{w}`' for w in wrote)} as "
            "approved, back to normal mode. Read it and adjust anything the files could not "
            "tell me."
        )
    return (
        f"{DEMO_BANNER}\n\nPlan complete: {plural(ticks, 'step')} ticked, back to normal mode. "
        "A real model would have edited code and run the verification commands."
    )


# --- /init: AGENTS.md from evidence ---------------------------------------------------
# The request starts with "/init:" (planshell/plan/init.py). The demo reads the manifests,
# README, CI and tests it finds, asks its questions once, and proposes AGENTS.md content
# naming only commands backed by a file it read. After approval it writes exactly that.

INIT_PREFIX = "/init:"
AGENTS = "AGENTS.md"
_EVIDENCE_FILES = (
    *TEST_EVIDENCE_FILES, "Cargo.toml", "go.mod", ".gitlab-ci.yml", "AGENTS.md", "CLAUDE.md",
)  # fmt: skip
_TEST_DIRS = ("tests/", "test/", "spec/")
_MAKE_TARGET_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:(?!=)")
_CI_RUN_RE = re.compile(r"^\s*(?:-\s*)?(?:run|script):\s*(?:-\s*)?([^|>\s].*?)\s*$")
_COMMAND_RE = re.compile(r"`([^`\n]+)`")
_TOOL_WORDS = frozenset(
    "make npm yarn pnpm npx python python3 pytest uv poetry tox nox cargo go just ruff mypy "
    "bundle rake gradle mvn dotnet".split()
)
QUESTIONS = [
    "What is this project for, in one sentence?",
    "How should a change be verified (which command or check)?",
    "Are there non-obvious rules an agent must follow here?",
    "Is there anything an agent must never touch?",
]
NO_CHANGES = "No changes needed"


def _read_text(done: list[_Done], path: str) -> str | None:
    """The text of the last successful ``read`` of ``path`` (line numbers removed)."""
    for item in reversed(done):
        if item.name == "read" and item.args.get("path") == path and not item.is_error:
            return "\n".join(re.sub(r"^\s*\d+\t", "", ln) for ln in item.content.splitlines())
    return None


def _found(done: list[_Done], pattern: str) -> list[str]:
    for item in reversed(done):
        if item.name == "find" and item.args.get("pattern") == pattern and not item.is_error:
            return [ln for ln in item.content.splitlines() if ln and not ln.startswith("[")]
    return []


@dataclass
class _Evidence:
    """Commands with where they come from, and what the repository looks like."""

    commands: list[tuple[str, str]]  # (command, source)
    test: str | None
    entries: list[str]
    tests: tuple[str, list[str]] | None  # (directory, files)
    readme: str
    existing: str | None


def _gather(done: list[_Done]) -> _Evidence:
    commands: list[tuple[str, str]] = []
    test: str | None = None
    entries = _entries(done)
    makefile = next((n for n in ("Makefile", "makefile", "GNUmakefile") if n in entries), None)
    targets: list[str] = []
    if makefile:
        for line in (_read_text(done, makefile) or "").splitlines():
            match = _MAKE_TARGET_RE.match(line)
            if match and not match.group(1).startswith(".") and match.group(1) not in targets:
                targets.append(match.group(1))
        commands += [(f"make {t}", f"{makefile} target `{t}`") for t in targets[:8]]
    package = _read_text(done, "package.json") if "package.json" in entries else None
    if package:
        try:
            scripts = json.loads(package).get("scripts") or {}
        except (json.JSONDecodeError, AttributeError):
            scripts = {}
        for name in list(scripts)[:8]:
            command = "npm test" if name == "test" else f"npm run {name}"
            commands.append((command, f"package.json script `{name}`"))
    if "Cargo.toml" in entries:
        commands += [("cargo build", "Cargo.toml"), ("cargo test", "Cargo.toml")]
    found = _test_command(done)  # the same rule as a plan's Verification
    if found is not None:
        test = found.command
        if not any(c == test for c, _ in commands):
            commands.append((test, found.source))
    for workflow in [*_found(done, ".github/workflows/*")[:3], ".gitlab-ci.yml"]:
        for line in (_read_text(done, workflow) or "").splitlines():
            match = _CI_RUN_RE.match(line)
            if match and not any(c == match.group(1) for c, _ in commands):
                commands.append((match.group(1), f"CI step in `{workflow}`"))
    tests = None
    for folder in _TEST_DIRS:
        if folder in entries:
            tests = (folder, _found(done, f"{folder}**"))
            break
    summary = _readme_summary(done)
    existing = _read_text(done, AGENTS) if AGENTS in entries else None
    return _Evidence(commands, test, entries, tests, summary, existing)


def _answers(done: list[_Done]) -> list[str] | None:
    """The answers to the four questions, or None when they were skipped (or not asked)."""
    asked = _last(done, "ask_questions")
    if asked is None or asked.is_error or not asked.content.startswith("The user answered"):
        return None
    answers = [ln[3:].strip() for ln in asked.content.splitlines() if ln.startswith("A: ")]
    return [("" if a == "(no answer)" else a) for a in answers]


def _backed(command: str, evidence: _Evidence) -> bool:
    known = {c for c, _ in evidence.commands}
    return command in known or any(command in c for c in known)


def _claims(text: str) -> list[str]:
    """Backticked spans of ``text`` that look like commands (first word is a known tool)."""
    return [
        span.strip()
        for span in _COMMAND_RE.findall(text)
        if span.split() and span.split()[0] in _TOOL_WORDS
    ]


def _agents_content(evidence: _Evidence, answers: list[str] | None) -> str:
    purpose, verify, rules, never = (answers or []) + [""] * (4 - len(answers or []))
    lines = ["# AGENTS.md", ""]
    lines.append(purpose or evidence.readme or "(What this project is for was not recorded.)")
    lines += ["", "## Commands", ""]
    if evidence.commands:
        lines += [f"- `{c}` ({source})" for c, source in evidence.commands]
    else:
        lines.append("- No build or test commands were found in the repository yet.")
    folders = [e for e in evidence.entries if e.endswith("/") and not e.startswith(".")]
    if folders or evidence.tests:
        lines += ["", "## Layout", ""]
        if folders:
            lines.append(f"- Top-level folders: {', '.join(f'`{f}`' for f in folders[:8])}.")
        if evidence.tests:
            folder, files = evidence.tests
            sample = ", ".join(f"`{f}`" for f in files[:3])
            lines.append(
                f"- Tests live in `{folder}` ({plural(len(files), 'file')}"
                f"{': ' + sample if sample else ''})."
            )
    lines += ["", "## Verifying a change", ""]
    if verify:
        lines.append(verify)
    elif evidence.test:
        lines.append(f"Run `{evidence.test}`.")
    else:
        lines.append("No test command was found; say how a change was checked.")
    if rules:
        lines += ["", "## Rules", "", rules]
    if never:
        lines += ["", "## Never touch", "", never]
    return "\n".join(lines) + "\n"


def _fenced(content: str) -> list[str]:
    return [
        "    ````markdown",
        *[f"    {ln}" if ln else "" for ln in content.splitlines()],
        "    ````",
    ]


def _init_plan(request: str, done: list[_Done], feedback: list[str] | None) -> tuple[str, str]:
    evidence = _gather(done)
    answers = _answers(done)
    sources = sorted({s.split(" ")[0].strip("`") for _, s in evidence.commands})
    context = [
        f"- Evidence read: {', '.join(f'`{n}`' for n in _reads(done)) or 'nothing (an empty repository)'}.",
        f"- Test command found: `{evidence.test}`."
        if evidence.test
        else "- No test command found.",
    ]
    if sources:
        context.append(f"- Commands come only from: {', '.join(sources)}.")
    if answers is None:
        context.append(
            "- Assumptions (the questions were skipped): the purpose is taken from the README "
            "(or left open), verification is the test command found, no extra rules or "
            "off-limits files are recorded."
        )
    else:
        context.append(
            "- The user's answers are used for purpose, verification, rules and off-limits files."
        )
    if evidence.existing is not None:
        wrong = [c for c in _claims(evidence.existing) if not _backed(c, evidence)]
        missing = evidence.test is not None and evidence.test not in evidence.existing
        if not wrong and not missing and feedback is None:
            title = f"{AGENTS}: {NO_CHANGES.lower()}"
            steps = [
                f"Leave `{AGENTS}` as it is ({NO_CHANGES}: every command it names is backed by the repository)"
            ]
            body: list[str] = []
        else:
            kept = [ln for ln in evidence.existing.splitlines() if not any(w in ln for w in wrong)]
            content = "\n".join(kept).rstrip() + "\n"
            if missing:
                content += f"\n## Verifying a change\n\nRun `{evidence.test}`.\n"
            why = [f"`{w}` has no evidence in the repository" for w in wrong]
            if missing:
                why.append(f"the test command `{evidence.test}` is missing")
            context.append(f"- The existing {AGENTS} needs edits: {'; '.join(why) or 'as asked'}.")
            title = f"Update {AGENTS}"
            steps = [f"Replace `{AGENTS}` with exactly this content:"]
            body = _fenced(content)
    else:
        title = f"Write {AGENTS}"
        steps = [f"Write `{AGENTS}` with exactly this content:"]
        body = _fenced(_agents_content(evidence, answers))
    lines = [
        f"# Plan: {title}",
        "",
        "## Goal",
        "",
        f"Give agents working here accurate project instructions in `{AGENTS}`.",
        "",
        f"> {DEMO_BANNER} Every command below was found in a file it read.",
        "",
        "## Context",
        "",
        *context,
        "",
        "## Steps",
        "",
        f"- [ ] {steps[0]}",
        *(["", *body] if body else []),
        "",
    ]
    if feedback:
        lines += ["## Feedback addressed", "", *(f"- {point}" for point in feedback), ""]
    lines += ["## Verification", "", f"Read `{AGENTS}` back; each command matches its source."]
    if evidence.test:
        lines += ["", "```sh", evidence.test, "```"]
    return title, "\n".join(lines) + "\n"


def _reads(done: list[_Done]) -> list[str]:
    return list(
        dict.fromkeys(str(d.args.get("path")) for d in done if d.name == "read" and not d.is_error)
    )


def _init(request: str, done: list[_Done], tools: set[str]) -> Decision:
    names = _names(done)
    last = done[-1] if done else None
    if last is not None and last.name in ("write_plan", "exit_plan_mode"):
        if last.name == "exit_plan_mode" and last.content.startswith("The user asked for changes"):
            feedback = feedback_points(last.content)
            title, content = _init_plan(request, done, feedback)
            args: dict[str, Any] = {"title": title, "content": content}
            saved = _last(done, "write_plan")
            match = _SAVED_RE.search(saved.content) if saved else None
            if match:
                args["plan_path"] = match.group(1)
            return "Revising the plan with your feedback.\n", [("write_plan", args)]
        return _plan(request, done)
    if "ls" not in names:
        return "Looking for the manifests, README, CI configuration and tests.\n", [
            ("ls", {"path": "."})
        ]
    if "read" not in names and "find" not in names:
        entries = _entries(done)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("read", {"path": name, "limit": 200}) for name in _EVIDENCE_FILES if name in entries
        ]
        readme = _readme_name(done)
        if readme:
            calls.append(("read", {"path": readme, "limit": README_LINES}))
        if ".github/" in entries:
            calls.append(("find", {"pattern": ".github/workflows/*", "include_hidden": True}))
        folder = next((f for f in _TEST_DIRS if f in entries), None)
        if folder:
            calls.append(("find", {"pattern": f"{folder}**"}))
        if calls:
            return "Reading what the repository says about itself.\n", calls
    workflows = _found(done, ".github/workflows/*")[:3]
    unread = [
        w
        for w in workflows
        if _read_text(done, w) is None
        and not any(d.name == "read" and d.args.get("path") == w for d in done)
    ]
    if unread:
        return "", [("read", {"path": w, "limit": 200}) for w in unread]
    if "ask_questions" in tools and "ask_questions" not in names:
        return "A few questions the files cannot answer (you may skip them).\n", [
            ("ask_questions", {"questions": QUESTIONS})
        ]
    title, content = _init_plan(request, done, None)
    return "Writing the plan from what I found.\n", [
        ("write_plan", {"title": title, "content": content})
    ]


_CONTENT_START = "    ````markdown"


def _approved_content(system: str) -> str | None:
    """The AGENTS.md content of an approved /init plan (the fenced block of its step)."""
    lines = system.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln == _CONTENT_START]
    if not starts or f"`{AGENTS}` with exactly this content" not in lines[starts[-1] - 2]:
        return None
    body: list[str] = []
    for line in lines[starts[-1] + 1 :]:
        if line == "    ````":
            return "\n".join(body) + "\n"
        body.append(line[4:])
    return None


def _init_write(system: str, done: list[_Done]) -> Decision | None:
    content = _approved_content(system)
    if content is None:
        return None
    if any(d.name == "write" and d.args.get("path") == AGENTS for d in done):
        return None
    return f"Writing `{AGENTS}` exactly as the approved plan says.\n", [
        ("write", {"path": AGENTS, "content": content})
    ]
