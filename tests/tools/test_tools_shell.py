"""bash: output, exit codes, truncation, and killing the whole process group."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from planshell.tools.base import KILL_GRACE, ExecPolicy, ToolContext, ToolError, ToolResult
from planshell.tools.shell import BashArgs, BashTool, HeadTail, _has_live_member
from tests.engine_helpers import HANG_GUARD, finishes


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(root=tmp_path)


async def bash(ctx: ToolContext, command: str, **kwargs: object) -> ToolResult:
    return await BashTool().run(BashArgs(command=command, **kwargs), ctx)


def alive(pid: int) -> bool:
    """Running, i.e. neither gone nor a zombie waiting for a (possibly absent) reaper."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_dead(pids: list[int], within: float = HANG_GUARD) -> list[int]:
    """The pids still alive after ``within`` seconds (SIGKILL delivery is asynchronous).

    The last pid written by the tests is ``$$``, the group leader: the whole
    group, including children whose pids we never saw, must be gone too.
    """
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        living = [p for p in pids if alive(p)]
        if not living and not _has_live_member(pids[-1]):
            return []
        time.sleep(0.02)
    return living or [pids[-1]]


async def wait_for_file(path: Path, within: float = HANG_GUARD) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text()).endswith("\n"):
            return text
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


async def test_output_and_exit_code_zero(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo out; echo err >&2; pwd")
    assert result.content == f"out\nerr\n{ctx.root}\nexit code 0"
    assert not result.is_error
    assert result.data["exit_code"] == 0


async def test_nonzero_exit_is_an_error(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo failing; exit 2")
    assert result.content == "failing\nexit code 2"
    assert result.is_error


async def test_no_output_and_no_stdin(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat")  # stdin is /dev/null, so this ends at once
    assert result.content == "(no output)\nexit code 0"


async def test_exec_policy_wrap_and_env(ctx: ToolContext) -> None:
    ctx.exec_policy = ExecPolicy(wrap=["env", "WRAPPED=yes"], extra_env={"EXTRA": "1"})
    result = await bash(ctx, 'echo "$WRAPPED $EXTRA"')
    assert result.content == "yes 1\nexit code 0"


async def test_missing_wrapper_is_a_clear_error(ctx: ToolContext) -> None:
    ctx.exec_policy = ExecPolicy(wrap=["/nonexistent/sandbox"])
    with pytest.raises(ToolError, match="could not start the command"):
        await bash(ctx, "true")


async def test_invalid_utf8_is_replaced(ctx: ToolContext) -> None:
    result = await bash(ctx, r"printf 'caf\xe9\n'")
    assert result.content == "caf\ufffd\nexit code 0"


async def test_output_truncation_keeps_head_and_tail(ctx: ToolContext) -> None:
    ctx.bash_max_output = 100
    result = await bash(
        ctx, "printf 'H%.0s' $(seq 60); printf 'm%.0s' $(seq 1000); printf 'T%.0s' $(seq 60)"
    )
    head, note, tail = result.content.split("\n")[:3]
    assert head == "H" * 50
    assert (
        note
        == "[... 1020 characters truncated; to see them, send the output to a file and read or grep parts of it ...]"
    )
    assert tail == "T" * 50
    assert result.data["truncated"] is True


def test_head_tail_is_exact_under_the_limit() -> None:
    sink = HeadTail(10)
    for piece in ["ab", "cdef", "ghij"]:
        sink.add(piece)
    assert sink.render() == "abcdefghij"
    sink.add("K")
    assert (
        sink.render()
        == "abcde\n[... 1 characters truncated; to see them, send the output to a file and read or grep parts of it ...]\nghijK"
    )


async def test_timeout_kills_the_whole_group(ctx: ToolContext) -> None:
    # The timeout runs from the spawn; 2 s leaves a loaded machine time to start
    # bash and print before it (the command itself would run 300 s).
    command = "sleep 300 & echo $! $$ > pids; echo started; sleep 300"
    result = await finishes(bash(ctx, command, timeout=2), "bash with timeout=2")
    assert result.is_error
    assert result.content.startswith("started\n")
    assert "timed out after 2 seconds" in result.content
    assert "pass a larger timeout (up to 600 seconds)" in result.content
    assert result.data["timed_out"] is True
    assert wait_dead(pids_in(ctx.root / "pids")) == []


async def test_term_ignoring_process_gets_killed(ctx: ToolContext) -> None:
    """Processes that ignore SIGTERM get SIGKILL once the kill grace is over.

    The test stops the command as soon as both shells have set their traps (the
    ``ready`` file), and a 0.1 s grace stands in for the default second: what is
    under test is that the SIGKILL comes, not how long the grace is.
    """
    ctx.bash_kill_grace = 0.1
    command = "trap '' TERM; (trap '' TERM; echo > ready; sleep 300) & echo $! $$ > pids; sleep 300"
    task = asyncio.create_task(bash(ctx, command))
    await wait_for_file(ctx.root / "pids")
    await wait_for_file(ctx.root / "ready")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishes(task, "bash after the cancel")
    assert wait_dead(pids_in(ctx.root / "pids")) == []


def test_the_kill_grace_defaults_to_one_second(tmp_path: Path) -> None:
    assert ToolContext(root=tmp_path).bash_kill_grace == KILL_GRACE == 1.0


async def test_cancel_kills_the_whole_group(ctx: ToolContext) -> None:
    # 300 s: longer than wait_dead's guard, so a leak cannot pass by dying of age.
    task = asyncio.create_task(bash(ctx, "sleep 300 & echo $! $$ > pids; sleep 300"))
    await wait_for_file(ctx.root / "pids")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(pids_in(ctx.root / "pids")) == []


async def test_cancel_while_starting_kills_the_whole_group(ctx: ToolContext) -> None:
    """The agent cancels while the event loop is still wiring up the new process's pipes.

    On a busy machine the command runs before the spawn returns; found that way.
    """
    children = Path(f"/proc/self/task/{os.getpid()}/children")
    before = children.read_text().split()
    task = asyncio.create_task(bash(ctx, "sleep 300 & echo $! $$ > pids; sleep 300"))
    deadline = time.monotonic() + HANG_GUARD
    while children.read_text().split() == before:  # one loop turn at a time, until the fork
        if time.monotonic() > deadline:  # a hang guard, not a speed budget
            raise AssertionError("bash was never started")
        await asyncio.sleep(0)
    # asyncio is now wiring up the pipes; without a loop turn it cannot finish.
    pids = ctx.root / "pids"
    while not (pids.exists() and pids.read_text().endswith("\n")):
        if time.monotonic() > deadline:
            raise AssertionError("bash never wrote its pids")
        time.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_dead(pids_in(pids)) == []


async def test_background_jobs_do_not_outlive_the_command(ctx: ToolContext) -> None:
    # Waiting for the background job (or the pipe it holds) would take 300 s.
    result = await finishes(bash(ctx, "sleep 300 & echo $! $$ > pids; echo done"), "bash")
    assert result.content == "done\nexit code 0"
    assert wait_dead(pids_in(ctx.root / "pids")) == []


def test_timeout_is_capped_at_600() -> None:
    with pytest.raises(ValidationError):
        BashArgs(command="true", timeout=601)
    assert "600" in BashArgs.model_json_schema()["properties"]["timeout"]["description"]


def test_headline_is_first_line() -> None:
    tool = BashTool()
    assert tool.headline(BashArgs(command="git status")) == "bash git status"
    assert tool.headline(BashArgs(command="cd src\nmake test")) == "bash cd src …"
