"""The Tool contract: a name, a pydantic argument model and declared effects.

Effects are data, not convention, so that plan mode can decide what may run
without knowing any tool by name (default-deny for anything not purely read).
"""

from __future__ import annotations

import copy
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict

from planshell.llm.types import ToolSpec
from planshell.procfs import is_sensitive_proc_path

#: Characters of one tool result sent to the model (~10k tokens at 4 chars a
#: token): one `cat` or read of a big file must not fill the context window.
RESULT_MAX_CHARS = 40_000


class Effect(StrEnum):
    READ = "read"
    WRITE = "write"
    EXEC = "exec"
    NETWORK = "network"


class ToolArgs(BaseModel):
    """Base for argument models: unknown keys are an error the model can fix."""

    model_config = ConfigDict(extra="forbid")


ArgsT = TypeVar("ArgsT", bound=ToolArgs)

# A tool's structured extras: flat JSON scalars, so they can be logged, compared in
# tests and shown by a view without knowing the tool.
ToolDataValue: TypeAlias = str | int | float | bool | None
ToolData: TypeAlias = dict[str, ToolDataValue]
# ``data[SHOWN_KEY]``: the line a person sees for a result written for the model
# (exit_plan_mode's "The user has not approved the plan … Stay in plan mode" shows as
# "kept planning"). The full result stays one Enter away on the row.
SHOWN_KEY = "shown"


class ToolError(Exception):
    """A refusal or failure whose message is shown to the model as the result."""


@dataclass
class ToolResult:
    """What a tool returns. ``data`` carries structured extras for the UI."""

    content: str
    is_error: bool = False
    data: ToolData = field(default_factory=dict)


@dataclass
class ExecPolicy:
    """How shell commands are run; plan mode tightens it (sandbox, git env)."""

    wrap: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    label: str = ""
    refusal: str | None = None  # when set, shell commands are refused with this message

    @contextmanager
    def launch(self, argv: list[str]) -> Iterator[Launch]:
        """What to start for ``argv``; open for the duration of the spawn (fds passed)."""
        yield Launch([*self.wrap, *argv], {**os.environ, **self.extra_env})

    def prepare(self) -> None:
        """Slow one-off set-up (a sandbox probe); the bash tool runs it off the event loop."""

    def outside(self) -> ExecPolicy:
        """The policy for a call that asked to run outside the sandbox (``sandbox=false``).

        Itself unless a policy says otherwise: plan mode's sandbox has no way out.
        """
        return self

    def explain_failure(self, output: str) -> tuple[str, str] | None:
        """(kind, note for the model) when a failed command's output suggests the sandbox."""
        return None


class RunWatch:
    """A check the agent loop runs around every call that is not read-only.

    This one does nothing; the runtime installs ``workspace.gitwatch.ProjectWatch``
    (no new ``.git`` in the project). ``start`` runs before the call and returns
    a token; ``finish`` gets it afterwards (also after a failure or a cancel)
    and returns a note for the model, or ""; both may run in a worker thread.
    ``announce`` shows a note to the person, on the event loop.
    """

    def start(self, tool: str, args: ToolArgs) -> object:
        return None

    def finish(self, token: object) -> str:
        return ""

    def announce(self, note: str) -> None:
        """Tell the person what ``finish`` found (called on the engine's event loop)."""


@dataclass(frozen=True)
class Launch:
    """One command ready to start: full argv, whole environment, fds the child inherits."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()


KILL_GRACE = 1.0  # the bash tool's default seconds between SIGTERM and SIGKILL


@dataclass
class ToolContext:
    """Everything a tool may touch: the project root and its limits."""

    root: Path
    allow_outside_root: bool = False
    read_max_bytes: int = 256 * 1024
    bash_timeout: float = 120.0
    bash_max_output: int = 30_000
    # Seconds a stopped command's process group gets between SIGTERM and SIGKILL
    # (timeout, cancel, or the command's end while children still run).
    bash_kill_grace: float = KILL_GRACE
    result_max_chars: int = RESULT_MAX_CHARS
    exec_policy: ExecPolicy = field(default_factory=ExecPolicy)
    watch: RunWatch = field(default_factory=RunWatch)  # around calls that may write
    # Called with a file's resolved path just before edit or write replaces it (in the
    # tool's worker thread): the runtime lets an executing plan's checkpoint copy it first.
    before_write: Callable[[Path], None] | None = None

    def resolve(self, raw: str) -> Path:
        """Resolve a model-given path against the root, refusing escapes.

        Symlinks are resolved first, so a link inside the project that points
        outside it is refused as well.
        """
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
        if is_sensitive_proc_path(str(resolved)):
            # Even with allow_outside_root: /proc/self/environ is planshell's own
            # environment, API keys included (one rule with the bash guard: procfs).
            raise ToolError(
                f"{raw} is a process file ({resolved}) that can hold secrets such as API "
                "keys; no tool reads it."
            )
        root = self.root.resolve()
        if not self.allow_outside_root and resolved != root and root not in resolved.parents:
            raise ToolError(
                f"{raw} is outside the project root {root}; only files inside the project "
                "can be used (set tools.allow_outside_root = true to lift this)."
            )
        return resolved

    def display(self, path: Path) -> str:
        """A path as the user thinks of it: relative to the root when inside."""
        try:
            return str(path.relative_to(self.root.resolve())) or "."
        except ValueError:
            return str(path)


class Tool(ABC, Generic[ArgsT]):
    """A tool the model can call. Subclasses set the class attributes.

    Generic over its argument model (``class EchoTool(Tool[EchoArgs])``), so ``run``
    and ``headline`` receive the validated model with its own type; the registry
    and the loop hold ``Tool[Any]`` and validate with ``Args`` before calling.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Args: type[ArgsT]  # a class attribute; ClassVar cannot hold a type variable
    effects: ClassVar[frozenset[Effect]]
    #: How to get what a capped result left out (said in the truncation note).
    more_hint: ClassVar[str] = "ask for a narrower result"
    #: Safe to run at the same time as other calls of concurrent tools in one reply
    #: (the loop runs a run of such calls together, bounded; results keep call order).
    concurrent: ClassVar[bool] = False

    @property
    def read_only(self) -> bool:
        return self.effects <= {Effect.READ}

    @property
    def plan_permitted(self) -> bool:
        """May run in plan mode by the effect rule (an MCP tool also needs the person's opt-in)."""
        return self.read_only

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, args_schema(self.Args))

    def headline(self, args: ArgsT) -> str:
        """One line for the transcript, e.g. ``read planshell/config.py``."""
        first = next(iter(args.model_dump().values()), "")
        return f"{self.name} {first}".strip()

    @abstractmethod
    async def run(self, args: ArgsT, ctx: ToolContext) -> ToolResult: ...

    def capped(self, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """``result`` cut to ``ctx.result_max_chars`` with a note on getting the rest.

        The last line of defence for every tool: the file tools already stop
        at the budget with a more precise note (a line to continue from).
        """
        content = cap_text(result.content, ctx.result_max_chars, self.more_hint)
        if content is result.content:
            return result
        return ToolResult(content, result.is_error, {**result.data, "capped": True})


# The running call's progress sink, set by the agent loop around ``Tool.run`` (a
# context variable, so calls running at the same time each report to their own row).
_progress: ContextVar[Callable[[str], None] | None] = ContextVar("tool_progress", default=None)


def current_progress() -> Callable[[str], None]:
    """The running call's progress sink, to hand to code running elsewhere (a sub-agent)."""
    return _progress.get() or (lambda line: None)


@contextmanager
def progress_to(sink: Callable[[str], None]) -> Iterator[None]:
    """Route ``report_progress`` of the code run inside to ``sink``."""
    token = _progress.set(sink)
    try:
        yield
    finally:
        _progress.reset(token)


_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def args_schema(args: type[BaseModel]) -> dict[str, Any]:
    """The lean JSON schema of an argument model, generated once per class.

    The agent asks for every tool's spec several times per model call (to send,
    to count tokens, to compact); pydantic builds a schema in ~1-2 ms, so doing
    it afresh cost ~0.1 s of a ``planshell -p`` run. Each caller gets its own
    copy: a schema handed to a provider must not change the cached one.
    """
    cached = _SCHEMAS.get(args)
    if cached is None:
        cached = _SCHEMAS[args] = lean_schema(args.model_json_schema())
    return copy.deepcopy(cached)


def lean_schema(schema: Any) -> Any:
    """A JSON schema without pydantic's ``title`` annotations.

    Titles repeat the property names ("path" -> "Path") and are sent with
    every request: on a small local model the tool list is a large part of
    the context. Only schema keywords are dropped, never a property that
    happens to be called ``title``. Optional fields are advertised as their
    type alone (``anyOf [T, null]`` with a null default becomes ``T``).
    """
    if isinstance(schema, list):
        return [lean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if (
        "default" in schema
        and schema["default"] is None
        and isinstance(options, list)
        and len(options) == 2
        and {"type": "null"} in options
    ):
        # An optional field: the model may simply leave it out (null still validates).
        other = next(o for o in options if o != {"type": "null"})
        rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
        schema = {**other, **rest} if isinstance(other, dict) else schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: lean_schema(sub) for name, sub in value.items()}
        else:
            out[key] = lean_schema(value)
    return out


def cap_text(text: str, limit: int, hint: str) -> str:
    """``text`` unchanged when it fits, else its start and a truncation note.

    Cut at a line break when one is near, so the model never sees half a line
    it could take for the whole.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    newline = head.rfind("\n")
    if newline >= limit * 3 // 4:
        head = head[:newline]
    dropped = len(text) - len(head)
    lines = text.count("\n", len(head)) + 1
    return (
        f"{head}\n[output truncated: {dropped:,} more characters (about {lines:,} lines) not "
        f"shown, to keep the context window free; {hint}]"
    )
