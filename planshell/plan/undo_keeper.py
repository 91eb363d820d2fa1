"""The plan's checkpoint over its life: taken when EXECUTE starts, ended with the plan, undone on request.

The controller calls :meth:`CheckpointKeeper.start` on approval; the walk and
hashing run in a thread so the event loop keeps painting, and the next tool
call or model call awaits it (:meth:`settle_async`), so no change of the plan
lands before the project is recorded. Its warnings become engine notices
there, on the loop's thread. The end of a plan (:meth:`end`) walks the tree
again, in a thread too; the report awaits it (:meth:`settle_async`). The manifest
(``checkpoint_manifest.py``) is written beside the copies so ``--continue``
can still undo; the session's ``mode`` entry carries the id.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from planshell.agent import events as ev
from planshell.plan.checkpoint import (
    MAX_BYTES,
    Checkpoint,
    like_of,
    rel_path,
    state_of,
    take_checkpoint,
)
from planshell.plan.checkpoint_manifest import load_manifest, save_manifest
from planshell.plan.checkpoint_prune import KEEP_PLANS, prune_checkpoints
from planshell.plan.undo import UndoPlan, apply_undo, plan_undo

NOTHING_RECORDED = (
    "Nothing to undo: no plan has been executed here yet "
    "(a checkpoint is taken when a plan's execution starts)."
)
PLAN_REFUSED = (
    "Plan mode is read-only: /undo writes files, so it does not run here. "
    "Leave plan mode (/plan off) first."
)
EXECUTE_REFUSED = "A plan is executing: end it first (/plan off), then /undo."


class UndoRefused(Exception):
    """``/undo`` cannot run now: plan mode (read-only), a plan executing, or no checkpoint."""


@dataclass
class CheckpointKeeper:
    """Holds the checkpoint of the current or last plan; ``on_change`` records it in the session."""

    root: Path
    emit: Callable[[ev.Event], None]
    on_change: Callable[[], None]
    checkpoint: Checkpoint | None = None
    max_bytes: int = MAX_BYTES  # content a new checkpoint records (tests make it small)
    keep_plans: int = KEEP_PLANS  # checkpoints of this many recent plans are kept
    _job: Future[Checkpoint] | None = field(default=None, repr=False)
    # The plan's end being recorded (mark_end in a thread): None, or the OSError to tell.
    _end: Future[OSError | None] | None = field(default=None, repr=False)
    _copying: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def ident(self) -> str | None:
        return self.checkpoint.ident if self.checkpoint is not None else None

    def start(self) -> None:
        """EXECUTE starts: record the project in a thread.

        A plan paused (its file changed) and approved again keeps the checkpoint
        of its first approval: undo goes back to before the whole plan. The end
        of a previous plan still being recorded finishes first.
        """
        if self._job is not None:
            return
        if self._end is None and self.checkpoint is not None and self.checkpoint.after is None:
            return
        job: Future[Checkpoint] = Future()
        root, ending, max_bytes = self.root, self._end, self.max_bytes
        offered = self.ident  # the last plan's: /undo offers it until the new one is in

        def take() -> None:
            try:
                if ending is not None:
                    ending.exception()  # wait: the last plan's end is recorded first
                cp = take_checkpoint(root, data_dir=self.data_dir(), max_bytes=max_bytes)
                save_manifest(cp)
                keep = {cp.ident} | ({offered} if offered is not None else set())
                for problem in prune_checkpoints(root, self.data_dir(), keep, self.keep_plans):
                    cp.warnings.append(f"old {problem}")
            except BaseException as exc:  # handed to the loop's thread by settle()
                job.set_exception(exc)
            else:
                job.set_result(cp)

        threading.Thread(target=take, name="planshell-checkpoint", daemon=True).start()
        self._job = job

    def settle(self) -> None:
        """Wait (blocking: off the loop) for the work in threads and take it in.

        On the loop, await :meth:`settle_async` instead.
        """
        for job in (self._end, self._job):
            if job is not None:
                job.exception()  # waits; the outcome is taken in below
        self._take_in()

    async def settle_async(self) -> None:
        """:meth:`settle` without blocking the event loop while the threads work."""
        jobs = [asyncio.wrap_future(job) for job in (self._end, self._job) if job is not None]
        if jobs:
            await asyncio.wait(jobs)
        self._take_in()

    def _take_in(self) -> None:
        """The finished work of the threads, on the loop's thread: warnings become notices."""
        end = self._end
        if end is not None and end.done():
            self._end = None
            problem = end.result()
            if problem is not None:
                self.emit(
                    ev.Notice(
                        f"Checkpoint: could not record the plan's end ({problem}).", "warning"
                    )
                )
        job = self._job
        if job is None or not job.done():
            return
        self._job = None
        try:
            cp = job.result()
        except Exception as exc:
            self.emit(
                ev.Notice(
                    f"No checkpoint of the project ({exc}): /undo cannot undo this plan.", "warning"
                )
            )
            return
        self.checkpoint = cp
        for warning in cp.warnings:
            self.emit(ev.Notice(f"Checkpoint: {warning}", "warning"))
        self.on_change()

    def end(self) -> None:
        """The plan ended: record what it left (hand edits after this are told apart).

        The walk runs in a thread (after the checkpoint's, if that is still
        running): this returns at once; :meth:`settle_async` awaits it.
        """
        if self._end is not None:
            return
        taking, cp = self._job, self.checkpoint
        if taking is None and (cp is None or cp.after is not None):
            return
        done: Future[OSError | None] = Future()

        def mark() -> None:
            try:
                ended = cp if taking is None else taking.result()
            except BaseException:  # no checkpoint: settle tells it
                done.set_result(None)
                return
            try:
                if ended is not None and ended.after is None:
                    ended.mark_end()
                    save_manifest(ended)
            except OSError as exc:
                done.set_result(exc)
            except BaseException as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)

        threading.Thread(target=mark, name="planshell-checkpoint-end", daemon=True).start()
        self._end = done

    def before_write(self, path: Path) -> None:
        """A file tool is about to replace ``path`` during the plan: keep a skipped file's bytes.

        Runs in the tool's worker thread. The checkpoint skipped files over its size cap
        (or ignored and large): the first write of one copies it first, and the manifest
        is saved again so ``--continue`` can still restore it. Never fails the write.
        """
        cp = self.checkpoint
        if cp is None or cp.after is not None:
            return
        with self._copying:
            if not cp.remember_before_write(path):
                return
            try:
                save_manifest(cp)
            except OSError:
                pass  # this session's undo still has the copy

    def wrote_after_end(self, path: Path) -> None:
        """planshell wrote ``path`` once the plan ended (its report): end state, not a hand edit."""
        cp = self.checkpoint
        rel = rel_path(cp.root, path) if cp is not None else None
        if cp is None or cp.after is None or rel is None:
            return
        try:
            st = os.lstat(cp.root / rel)
        except OSError:
            return
        state = state_of(cp.root, rel, "file", stat.S_IMODE(st.st_mode), like_of(cp, rel))
        if state is None or not stat.S_ISREG(st.st_mode):
            return
        cp.after[rel] = state
        try:
            save_manifest(cp)
        except OSError:
            pass  # undo then asks about this file as edited by hand: safe

    def data_dir(self) -> Path:
        """Where this project's checkpoints live: ``<data>/projects/<key>/checkpoints``."""
        from planshell.agent.session import project_dir

        return project_dir(self.root.resolve()) / "checkpoints"

    def load(self, ident: object) -> None:
        """A resumed session: the checkpoint its ``mode`` entry names, if its manifest is still there."""
        if not isinstance(ident, str):
            return
        self.checkpoint = load_manifest(self.root, ident, self.data_dir())
        if self.checkpoint is None:
            self.emit(
                ev.Notice("The last plan's checkpoint is gone: /undo cannot undo it.", "warning")
            )

    def preview(self) -> UndoPlan:
        """What undo would do now (reads the tree: call it from a worker)."""
        self.settle()
        if self.checkpoint is None:
            raise UndoRefused(NOTHING_RECORDED)
        return plan_undo(self.checkpoint)

    def undo(self, overwrite_hand_edits: bool, plan: UndoPlan | None = None) -> list[str]:
        """Carry out ``plan`` (the one shown), or a fresh one; returns the problems."""
        if plan is None:
            plan = self.preview()
        return apply_undo(plan, overwrite_hand_edits=overwrite_hand_edits)
