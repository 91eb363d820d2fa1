"""The optional critic: a second model reads a plan before the person reviews it.

``plan.critic = { provider = "…", model = "…" }`` (the user's own config only,
see ``planshell.config.untrusted.USER_ONLY_KEYS``) names a provider; the
runtime builds it with the provider factory and hands :class:`ModelCritic` to
the review rounds. When a plan goes to review, the critic gets the plan and
the files it cites (exact paths of its declared scope that are regular files
inside the project, read with the safe reader and capped) in one call with
*no tools*, and answers with short points, one per line.

The critic never approves and never edits: its answer is text, parsed into at
most :data:`MAX_POINTS` sanitised one-line points that ride on the
``ReviewRequest``. Nothing here writes the plan file; a point becomes a
``> [!REVIEW]`` comment only when the person turns it into one. A failure
(HTTP error, timeout, anything) is a notice, never a blocked review.

Points come only from the critic's answer: ``> [!CRITIC]`` lines the plan's
author wrote into the plan are plan text, never points.

On the offline demo provider, with no critic configured, :class:`DemoCritic`
answers with deterministic points so the demo shows the feature.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from planshell.config import RequestSettings, Settings
from planshell.fsutil import ReadRefused, read_project_file
from planshell.llm.factory import choose_provider, make_provider
from planshell.llm.types import Message, Provider, ProviderError, StreamEnd, TextChunk
from planshell.plan.document import parse_plan
from planshell.plan.scope import plan_scope
from planshell.sanitize import plain_line

__all__ = [
    "CRITIC_PREFIX",
    "MAX_POINTS",
    "MAX_POINT_CHARS",
    "Critic",
    "CriticReport",
    "DemoCritic",
    "ModelCritic",
    "cited_files",
    "critic_factory",
    "critic_request",
    "critic_settings",
    "parse_points",
]

CRITIC_PREFIX = "> [!CRITIC]"
MAX_POINTS = 8
MAX_POINT_CHARS = 300
FILE_MAX_BYTES = 32 * 1024  # per cited file (cut beyond, marked)
FILES_MAX_BYTES = 128 * 1024  # all cited files together
MAX_FILES = 20
MAX_OUTPUT_TOKENS = 800

SYSTEM = (
    "You are a critic reviewing an implementation plan before a person approves it. "
    "You cannot run tools, approve or edit anything. Read the plan and the files it cites, "
    "then list the most important problems: wrong assumptions about the code, missing "
    "steps, risks, missing or weak verification. Answer with at most "
    f"{MAX_POINTS} points, one per line, each starting with '- ', each under "
    f"{MAX_POINT_CHARS // 2} characters. No preamble, no summary. If the plan is sound, "
    "answer with nothing."
)


@dataclass(frozen=True)
class CriticReport:
    """What the critic said about one plan text: its points, who said it, or why it could not."""

    points: tuple[str, ...] = ()
    label: str = "critic"  # "critic (openai · gpt-4.1-mini)", "demo critic"
    notice: str = ""  # "critic unavailable: …" when it failed (the review still opens)


class Critic(Protocol):
    label: str

    async def review(self, path: Path, text: str) -> CriticReport:
        """Points about the plan ``text`` (saved at ``path``); never raises."""
        ...


_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_PREFIX = re.compile(r"^\s*(?:>\s*)?\[!critic\]\s*:?\s*", re.IGNORECASE)


def parse_points(answer: str) -> tuple[str, ...]:
    """The critic's answer as at most ``MAX_POINTS`` one-line, sanitised, distinct points.

    One point per non-empty line; bullets, numbering and a ``[!CRITIC]`` label
    the model may have added are removed; escapes and controls are stripped
    (``plain_line``) and each point is cut at ``MAX_POINT_CHARS``.
    """
    points: list[str] = []
    for raw in answer.splitlines():
        line = plain_line(raw, limit=10 * MAX_POINT_CHARS)
        line = _PREFIX.sub("", _BULLET.sub("", line)).strip()
        line = plain_line(line, limit=MAX_POINT_CHARS)
        if not line or line.startswith("#") or line.strip("-*_`=") == "":
            continue
        if line not in points:
            points.append(line)
        if len(points) == MAX_POINTS:
            break
    return tuple(points)


def cited_files(root: Path, text: str) -> list[tuple[str, str]]:
    """(project-relative path, text) of the files the plan cites that may be sent.

    Exact paths of the plan's declared scope only (no directories, no globs),
    read with ``read_project_file``: regular files whose real path is inside
    ``root`` (no symlink out, no FIFO, no device), each cut at
    ``FILE_MAX_BYTES``, all together at ``FILES_MAX_BYTES``, at most
    ``MAX_FILES``. Missing, refused and non-UTF-8 files are left out.
    """
    found: list[tuple[str, str]] = []
    budget = FILES_MAX_BYTES
    for rel in sorted(plan_scope(text).paths):
        if len(found) == MAX_FILES or budget <= 0:
            break
        if rel.split("/", 1)[0] in (".git", ".planshell"):
            continue
        cap = min(FILE_MAX_BYTES, budget)
        try:
            data = read_project_file(root, root / rel, cap, truncate=True)
        except (ReadRefused, OSError):
            continue
        cut = len(data) > cap
        try:
            body = data[:cap].decode("utf-8", errors="strict" if not cut else "ignore")
        except UnicodeDecodeError:
            continue
        if cut:
            body += "\n[… cut here: the file is longer]"
        budget -= min(len(data), cap)
        found.append((rel, body))
    return found


def critic_request(text: str, files: list[tuple[str, str]]) -> str:
    """The one user message the critic gets: the plan, then each cited file."""
    parts = ["<plan>", text, "</plan>"]
    for rel, body in files:
        parts += [f'<file path="{rel}">', body, "</file>"]
    if not files:
        parts.append("(The plan cites no file that exists in the project.)")
    return "\n".join(parts)


class ModelCritic:
    """A critic backed by a provider: one call, no tools, a time budget."""

    def __init__(self, provider: Provider, root: Path, *, timeout: float = 60.0) -> None:
        self.provider = provider
        self.root = root
        self.timeout = timeout
        self.label = f"critic ({plain_line(provider.label, 60)})"
        self.last_request = ""  # the message last sent (for the record and tests)

    async def review(self, path: Path, text: str) -> CriticReport:
        try:
            files = await asyncio.to_thread(cited_files, self.root, text)
            self.last_request = critic_request(text, files)
            answer = await asyncio.wait_for(self._ask(self.last_request), self.timeout)
        except TimeoutError:
            return self._failed(f"no answer within {self.timeout:g} s")
        except ProviderError as exc:
            return self._failed(exc.message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a provider bug must never block the review
            return self._failed(repr(exc))
        return CriticReport(parse_points(answer), self.label)

    async def _ask(self, message: str) -> str:
        chunks: list[str] = []
        stream = self.provider.stream(
            SYSTEM, [Message("user", message)], [], max_output=MAX_OUTPUT_TOKENS
        )
        async for event in stream:
            if isinstance(event, TextChunk):
                chunks.append(event.text)
            elif isinstance(event, StreamEnd):
                break
        return "".join(chunks)

    def _failed(self, why: str) -> CriticReport:
        return CriticReport((), self.label, f"critic unavailable: {plain_line(why, 200)}")


class DemoCritic:
    """The offline demo's critic: a few deterministic checks, labelled as the demo's."""

    label = "demo critic"

    async def review(self, path: Path, text: str) -> CriticReport:
        return CriticReport(demo_points(text), self.label)


_VAGUE = re.compile(
    r"^(?:improve|update|fix|handle|clean ?up|refactor|make the change|tidy)\b", re.IGNORECASE
)


def demo_points(text: str) -> tuple[str, ...]:
    """Cheap checks a reviewer would make: verification commands, paths in steps, risks."""
    from planshell.plan.report import verification_commands  # review time, not start-up

    doc = parse_plan(text)
    titles = [section.title.strip().casefold() for section in doc.sections]
    points: list[str] = []
    commands = verification_commands(text)
    if not commands:
        points.append(
            "Verification names no command to run: add one (e.g. `make test`) so the result "
            "can be checked."
        )
    elif len(commands) == 1:
        points.append(
            f"Verification runs one command (`{plain_line(commands[0], 60)}`): name the test "
            "that covers the new behaviour."
        )
    pathless = [step.index for step in doc.steps if "`" not in step.text]
    if pathless:
        listed = ", ".join(str(n) for n in pathless[:5])
        noun, verb = ("Step", "cites") if len(pathless) == 1 else ("Steps", "cite")
        points.append(f"{noun} {listed} {verb} no file path: say which files change.")
    vague = next((s for s in doc.steps if _VAGUE.match(plain_line(s.text, 200))), None)
    if vague is not None:
        points.append(
            f"Step {vague.index} ('{plain_line(vague.text, 50)}') is vague: say what changes "
            "and how you will check it."
        )
    if not any("risk" in title for title in titles):
        points.append("No Risks section: what could break, and how would you notice?")
    if not points:
        points.append("The demo critic found nothing to flag; a real critic reads the code too.")
    return tuple(plain_line(point, MAX_POINT_CHARS) for point in points[:MAX_POINTS])


class _Unavailable:
    """A configured critic that could not be built: says why, every review."""

    def __init__(self, why: str) -> None:
        self.label = "critic"
        self.why = plain_line(why, 200)

    async def review(self, path: Path, text: str) -> CriticReport:
        return CriticReport((), self.label, f"critic unavailable: {self.why}")


DEMO_CRITIC = DemoCritic()


def critic_settings(settings: Settings, environ: Mapping[str, str]) -> Settings:
    """The settings the critic's provider is built from (``plan.critic`` over the session's).

    The session's model, base URL, key, headers and request fields carry over
    only when the critic uses the session's own provider: an OpenAI key or an
    Ollama URL is never handed to another provider.
    """
    critic = settings.plan.critic
    own = critic.provider == choose_provider(settings, environ)
    update: dict[str, object] = {
        "provider": critic.provider,
        "model": critic.model or (settings.model if own else None),
        "base_url": critic.base_url or (settings.base_url if own else None),
        "context_window": None,
    }
    if not own:
        update |= {"api_key": None, "headers": {}, "request": RequestSettings()}
    return settings.model_copy(update=update)


def critic_factory(
    settings: Settings,
    root: Path,
    session_provider: Callable[[], Provider],
    environ: Mapping[str, str] | None = None,
) -> Callable[[], Critic | None]:
    """What the review rounds ask at review time: the configured critic, the demo's, or None.

    The configured critic's provider is built on first use (a bad setting is a
    notice at review time, not a failed start-up). With no critic configured,
    a session on the offline demo provider gets :class:`DemoCritic`.
    """
    configured = settings.plan.critic
    built: list[Critic] = []

    def get() -> Critic | None:
        if configured.provider is None:
            return DEMO_CRITIC if getattr(session_provider(), "name", "") == "demo" else None
        if configured.provider == "demo":
            return DEMO_CRITIC
        if not built:
            env = os.environ if environ is None else environ
            try:
                provider = make_provider(critic_settings(settings, env), env)
            except Exception as exc:  # ConfigError, a missing key: a notice, never a crash
                built.append(_Unavailable(str(exc)))
            else:
                built.append(ModelCritic(provider, root, timeout=configured.timeout))
        return built[0]

    return get
