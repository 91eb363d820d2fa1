"""The ``bash`` tool: one command in its own process group, always cleaned up.

Each command gets a new session (so a new process group). Whatever happens —
normal exit, timeout, or the agent cancelling the call — the whole group is
terminated afterwards, so nothing the model started can outlive the call.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from collections import deque
from dataclasses import dataclass, field

from pydantic import Field

from planshell.tools.base import (
    KILL_GRACE,
    Effect,
    ExecPolicy,
    Tool,
    ToolArgs,
    ToolContext,
    ToolData,
    ToolError,
    ToolResult,
)

MAX_TIMEOUT = 600.0
_DRAIN_GRACE = 2.0  # how long to wait for output after the group is gone
_POLL = 0.02
_HEADLINE_CHARS = 100


class BashArgs(ToolArgs):
    command: str = Field(description="Command line for `bash -c`.")
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Seconds (max {MAX_TIMEOUT:g}).",
    )
    description: str | None = Field(None, description="Purpose, shown to the user.")
    sandbox: bool = Field(True, description="false: run unsandboxed (asks).")


@dataclass
class HeadTail:
    """Keeps the first and last ``limit // 2`` characters of a stream.

    Memory stays bounded however much a command prints, and the end (where
    errors and summaries usually are) is never lost.
    """

    limit: int
    total: int = 0
    _head: list[str] = field(default_factory=list)
    _head_len: int = 0
    _tail: deque[str] = field(default_factory=deque)
    _tail_len: int = 0

    @property
    def _head_limit(self) -> int:
        return self.limit // 2

    @property
    def _tail_limit(self) -> int:
        return self.limit - self._head_limit

    def add(self, text: str) -> None:
        self.total += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += len(self._head[-1])
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail_len - len(self._tail[0]) >= self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def render(self) -> str:
        head, tail = "".join(self._head), "".join(self._tail)
        if not self.truncated:
            return head + tail
        tail = tail[len(tail) - self._tail_limit :]
        dropped = self.total - len(head) - len(tail)
        return (
            f"{head}\n[... {dropped} characters truncated; to see them, send the output to a "
            f"file and read or grep parts of it ...]\n{tail}"
        )


async def _pump(stream: asyncio.StreamReader, sink: HeadTail) -> None:
    """Decode the merged stdout/stderr into ``sink`` until EOF."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := await stream.read(65536):
        sink.add(decoder.decode(chunk))
    sink.add(decoder.decode(b"", final=True))


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _has_live_member(pgid: int) -> bool:
    """Whether a non-zombie process is in the group, read from ``/proc``.

    Orphans are reparented to PID 1, and in a container that PID 1 may never
    reap them: a group of zombies still answers ``killpg(pgid, 0)``.
    """
    with os.scandir("/proc") as entries:
        return any(_live_in_group(entry.path, pgid) for entry in entries if entry.name.isdigit())


def _live_in_group(proc_dir: str, pgid: int) -> bool:
    """One ``/proc/<pid>/stat``: in group ``pgid`` and not a zombie?"""
    try:
        with open(os.path.join(proc_dir, "stat")) as handle:
            state, _ppid, group = handle.read().rsplit(")", 1)[1].split()[:3]
    except (OSError, ValueError):
        return False
    return group == str(pgid) and state not in ("Z", "X")


def _group_alive(pgid: int) -> bool:
    if not _signal_group(pgid, 0):
        return False
    return _has_live_member(pgid) if os.path.isdir("/proc/self") else True


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """Wait for the leader to exit.

    ``proc.wait()`` also waits for the output pipe to close, which a
    background child can hold open long after the command itself is done.
    """
    while proc.returncode is None:
        await asyncio.sleep(_POLL)
    return proc.returncode


async def stop_group(proc: asyncio.subprocess.Process, grace: float = KILL_GRACE) -> None:
    """SIGTERM the command's process group, SIGKILL it after ``grace``, reap the leader.

    The SIGKILL is in a ``finally`` so that even a second cancellation while
    waiting out the grace period cannot leave processes behind.
    """
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    if _signal_group(pgid, signal.SIGTERM):
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + grace
            while loop.time() < deadline and _group_alive(pgid):
                await asyncio.sleep(_POLL)
        finally:
            _signal_group(pgid, signal.SIGKILL)
    await _exited(proc)


async def _finish(pump: asyncio.Task[None]) -> None:
    """Let the reader drain; give up if an escaped process still holds the pipe."""
    done, _ = await asyncio.wait({pump}, timeout=_DRAIN_GRACE)
    if not done:
        pump.cancel()


def _first_line(command: str) -> str:
    lines = command.strip().splitlines() or [""]
    line = lines[0]
    if len(line) > _HEADLINE_CHARS:
        return line[: _HEADLINE_CHARS - 1] + "…"
    return line + (" …" if len(lines) > 1 else "")


def _timeout_message(output: str, timeout: float) -> str:
    advice = (
        f"pass a larger timeout (up to {MAX_TIMEOUT:g} seconds) if it needs longer"
        if timeout < MAX_TIMEOUT
        else f"{MAX_TIMEOUT:g} seconds is the maximum, so split the work into shorter steps"
    )
    return (
        f"{output}\n\nCommand timed out after {timeout:g} seconds and was stopped "
        f"(its whole process group was killed); {advice}."
    )


class BashTool(Tool[BashArgs]):
    name = "bash"
    description = (
        "Run `bash -c` in the project root (no stdin; `cd` does not persist); returns output "
        "(long: start and end) and exit code. Prefer the file tools for files."
    )
    more_hint = "send the output to a file and read or grep parts of it, or pipe it through head, tail or grep"
    Args = BashArgs
    effects = frozenset({Effect.EXEC, Effect.WRITE, Effect.NETWORK})

    def headline(self, args: BashArgs) -> str:
        return f"bash {_first_line(args.command)}"

    async def run(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        if ctx.exec_policy.refusal:
            return ToolResult(ctx.exec_policy.refusal, is_error=True, data={"refused": True})
        timeout = args.timeout if args.timeout is not None else ctx.bash_timeout
        # sandbox=false reaches here only past the permission gate, which asked (or auto mode).
        policy = ctx.exec_policy if args.sandbox else ctx.exec_policy.outside()
        await asyncio.to_thread(policy.prepare)
        proc = await self._spawn(args.command, ctx, policy)
        assert proc.stdout is not None
        output = HeadTail(min(ctx.bash_max_output, ctx.result_max_chars - 200))
        pump = asyncio.create_task(_pump(proc.stdout, output))
        timed_out = False
        try:
            await asyncio.wait_for(_exited(proc), timeout)
        except TimeoutError:
            timed_out = True
        finally:
            try:
                await stop_group(proc, ctx.bash_kill_grace)
                await _finish(pump)
            finally:
                pump.cancel()  # no-op once it has drained; else don't leave it pending
        text = output.render() or "(no output)"
        data: ToolData = {
            "exit_code": proc.returncode,
            "timed_out": timed_out,
            "truncated": output.truncated,
            "description": args.description,
        }
        if timed_out:
            return ToolResult(_timeout_message(text, timeout), is_error=True, data=data)
        code = proc.returncode
        body = text.rstrip("\n") + f"\nexit code {code}"
        failure = policy.explain_failure(text) if code != 0 else None
        if failure is not None:
            data["sandbox_failure"] = failure[0]
            body += f"\n{failure[1]}"
        return ToolResult(body, is_error=code != 0, data=data)

    async def _spawn(
        self, command: str, ctx: ToolContext, policy: ExecPolicy
    ) -> asyncio.subprocess.Process:
        """Start ``command`` as the leader of a new process group.

        The command runs before asyncio has wired up its pipes. A cancel in
        that window would make asyncio kill the leader alone and leave its
        children running, so the start is shielded: a cancel waits for it
        and then stops the whole group. The launch (sandbox argv, environment,
        the seccomp fd) stays open until the process has started.
        """
        try:
            with policy.launch(["bash", "-c", command]) as launch:
                start = asyncio.ensure_future(
                    asyncio.create_subprocess_exec(
                        *launch.argv,
                        cwd=ctx.root,
                        env=launch.env,
                        pass_fds=launch.pass_fds,
                        stdin=asyncio.subprocess.DEVNULL,
                        stdout=asyncio.subprocess.PIPE,
                        stderr=asyncio.subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
                try:
                    return await asyncio.shield(start)
                except asyncio.CancelledError:
                    with contextlib.suppress(OSError):
                        await stop_group(await asyncio.shield(start))
                    raise
        except OSError as exc:
            raise ToolError(f"could not start the command: {exc}.") from None
