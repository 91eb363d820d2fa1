"""The Tool contract: a name, a pydantic argument model and declared effects.

Effects are data, not convention, so that plan mode can decide what may run
without knowing any tool by name (default-deny for anything not purely read).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, Generic, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict

from planshell.llm.types import ToolSpec


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


@dataclass(frozen=True)
class Launch:
    """One command ready to start: full argv, whole environment, fds the child inherits."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...] = ()


@dataclass
class ToolContext:
    """Everything a tool may touch: the project root and its limits."""

    root: Path
    allow_outside_root: bool = False
    read_max_bytes: int = 256 * 1024
    bash_timeout: float = 120.0
    bash_max_output: int = 30_000
    exec_policy: ExecPolicy = field(default_factory=ExecPolicy)

    def resolve(self, raw: str) -> Path:
        """Resolve a model-given path against the root, refusing escapes.

        Symlinks are resolved first, so a link inside the project that points
        outside it is refused as well.
        """
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
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

    @property
    def read_only(self) -> bool:
        return self.effects <= {Effect.READ}

    def spec(self) -> ToolSpec:
        schema = self.Args.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(self.name, self.description, schema)

    def headline(self, args: ArgsT) -> str:
        """One line for the transcript, e.g. ``read planshell/config.py``."""
        first = next(iter(args.model_dump().values()), "")
        return f"{self.name} {first}".strip()

    @abstractmethod
    async def run(self, args: ArgsT, ctx: ToolContext) -> ToolResult: ...
