"""The plan's checkpoint and its end run in threads: the event loop keeps going meanwhile.

A slow walk (a big repository) is stood in for by a take/mark_end that blocks
until the test, a coroutine on the same loop, releases it: the test can only
release it if the loop is free. A fake that is never released gives up after a
hang guard and records that, so a blocked loop fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.plan import undo_keeper
from planshell.plan.checkpoint import Checkpoint
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from tests.engine_helpers import HANG_GUARD, finishes, make_runtime, saved_plan_path, wait_for

SERVER = "src/app/server.py"
OLD = "    # TODO: rate limiting\n"
NEW = "    limiter.take()\n"


class Held:
    """A stand-in for slow work in a thread: it waits until the test lets it go."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.released_by_test = False

    def hold(self) -> None:
        self.entered.set()
        # Only the guard against a hang: a blocked loop never sets ``release``.
        self.released_by_test = self.release.wait(HANG_GUARD / 3)


async def ticks_while(held: Held, ticker: list[int]) -> None:
    """While ``held`` blocks, other coroutines on this loop keep running."""
    await wait_for(held.entered.is_set)
    start = ticker[0]
    await wait_for(lambda: ticker[0] >= start + 20)


@pytest.fixture
def slow(monkeypatch):
    take, end = Held(), Held()
    real_take, real_mark_end = undo_keeper.take_checkpoint, Checkpoint.mark_end

    def slow_take(root, **options):
        take.hold()
        return real_take(root, **options)

    def slow_mark_end(self):
        end.hold()
        real_mark_end(self)

    monkeypatch.setattr(undo_keeper, "take_checkpoint", slow_take)
    monkeypatch.setattr(Checkpoint, "mark_end", slow_mark_end)
    return take, end


async def test_a_slow_checkpoint_and_end_leave_the_loop_free(project, slow):
    take, end = slow
    server = project / SERVER
    replies = [
        Reply(calls=[("write_plan", {"title": "Add rate limiting", "content": "# P\n1. x\n"})]),
        # Approved by the first call; the edit in the same reply meets the gate at once.
        lambda req: Reply(
            calls=[
                ("exit_plan_mode", {"plan_path": saved_plan_path(req)}),
                ("edit", {"path": SERVER, "old_string": OLD, "new_string": NEW}),
            ]
        ),
        Reply(calls=[("plan_complete", {})]),
        Reply(text="done"),
    ]
    runtime, _provider, _decider, rec = make_runtime(
        project, replies, [lambda req: Review(Decision.APPROVE, reviewed_text=req.text)]
    )
    runtime.plan.enter_plan()
    ticker = [0]

    async def tick() -> None:
        while True:
            ticker[0] += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(tick())
    turn = asyncio.create_task(runtime.agent.submit("plan rate limiting"))
    try:
        # The checkpoint is being taken: the loop ticks, the edit waits for it.
        await ticks_while(take, ticker)
        assert runtime.plan.mode is Mode.EXECUTE
        assert OLD in server.read_text() and not turn.done()
        take.release.set()

        # The plan ends: its end state is walked in a thread, the report waits for it.
        await ticks_while(end, ticker)
        assert NEW in server.read_text()  # the edit landed once the checkpoint was recorded
        assert runtime.plan.mode is Mode.OFF and not rec.of(ev.PlanReported)
        assert not turn.done()
        end.release.set()
        await finishes(turn, "the plan's turn")
    finally:
        take.release.set()
        end.release.set()
        ticking.cancel()

    assert take.released_by_test and end.released_by_test  # neither blocked the loop
    cp = runtime.plan.undo_keeper.checkpoint
    assert cp is not None and cp.after is not None  # the end state was recorded
    assert cp.after[SERVER].digest != cp.before[SERVER].digest
    assert rec.of(ev.PlanReported)  # the report, built after the end
    restore = {c.path: c.action for c in runtime.plan.undo_preview().changes}
    assert restore == {SERVER: "restore"}  # the checkpoint holds the content before the edit
    runtime.plan.undo()
    assert OLD in server.read_text()
    assert not [n for n in rec.of(ev.Notice) if n.level == "error"]
