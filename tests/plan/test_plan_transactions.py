"""Plan-mode flows as engine transactions, tested headless (issue 11, section 1)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.plan.controller import Mode, ModeChangeRefused, PlanChanged
from planshell.plan.decider import Decision, Review
from planshell.plan.prompts import EXECUTE_REQUEST
from planshell.runtime import build_runtime
from tests.engine_helpers import ScriptedDecider

PLAN = "# Plan: cache\n\n## Steps\n\n- [ ] one\n- [ ] two\n"


def make(project: Path, decider, replies=()):
    return build_runtime(
        Settings.model_validate({"plan": {"sandbox": "off"}}),
        project,
        decider,
        provider=ScriptedProvider(list(replies)),
        persist=False,
    )


def saved(runtime, name: str = "cache.md", text: str = PLAN) -> Path:
    runtime.store.ensure_dir()
    return runtime.store.write(runtime.store.plans_dir / name, text)


class GatedDecider(ScriptedDecider):
    """Holds each review open until the test answers it."""

    def __init__(self) -> None:
        super().__init__()
        self.opened = asyncio.Event()
        self.answer: asyncio.Future[Review] | None = None

    async def review_plan(self, request):
        self.requests.append(request)
        self.answer = asyncio.get_running_loop().create_future()
        self.opened.set()
        try:
            return await self.answer
        finally:
            self.opened.clear()


async def test_no_mode_change_while_a_review_is_open(project: Path) -> None:
    decider = GatedDecider()
    runtime = make(project, decider)
    path = saved(runtime)
    runtime.plan.enter_plan(plan_path=path)
    review = asyncio.create_task(runtime.plan.review(str(path)))
    await asyncio.wait_for(decider.opened.wait(), 30)
    assert runtime.plan.review_pending
    for attempt in (
        runtime.plan.leave,
        runtime.plan.toggle,
        runtime.plan.enter_plan,
        lambda: runtime.plan.execute_existing(path),
        lambda: runtime.plan.discard(path),
        lambda: runtime.plan.start_plan(name="other"),
    ):
        with pytest.raises(ModeChangeRefused):
            attempt()
        assert runtime.plan.mode is Mode.PLAN
    assert decider.answer is not None
    decider.answer.set_result(Review(Decision.APPROVE, reviewed_text=PLAN))
    result = await asyncio.wait_for(review, 30)
    assert result.startswith("Approved")
    assert runtime.plan.mode is Mode.EXECUTE
    assert not runtime.plan.review_pending


async def test_review_existing_from_off_approves_through_the_same_rounds(project: Path) -> None:
    decider = ScriptedDecider([Review(Decision.APPROVE, reviewed_text=PLAN)])
    runtime = make(project, decider)
    path = saved(runtime)
    outcome = await runtime.plan.review_existing(path)
    assert outcome.decision is Decision.APPROVE
    assert runtime.plan.mode is Mode.EXECUTE and runtime.plan.plan_path == path
    assert outcome.message == EXECUTE_REQUEST.format(path=runtime.agent.ctx.display(path))
    assert [item.content for item in runtime.todos.items] == ["one", "two"]


async def test_review_existing_reopens_when_the_file_changed_during_review(project: Path) -> None:
    def edit_then_approve(request):
        request.path.write_text(PLAN.replace("two", "rm -rf two"))
        return Review(Decision.APPROVE, reviewed_text=request.text)

    decider = ScriptedDecider([edit_then_approve, Review(Decision.KEEP)])
    runtime = make(project, decider)
    path = saved(runtime)
    outcome = await runtime.plan.review_existing(path)
    assert len(decider.requests) == 2
    assert "changed while you were reviewing" in decider.requests[1].notice
    assert outcome.decision is Decision.KEEP and runtime.plan.mode is Mode.OFF


async def test_review_existing_in_plan_rechecks_the_receipt_after_approval(project: Path) -> None:
    """A file changed outside the plan while the person read: the review opens again."""

    def change_then_approve(request):
        (project / "src" / "app" / "server.py").write_text("changed behind your back\n")
        return Review(Decision.APPROVE, reviewed_text=request.text)

    decider = ScriptedDecider([change_then_approve, Review(Decision.KEEP)])
    runtime = make(project, decider)
    path = saved(runtime)
    runtime.plan.enter_plan(plan_path=path)
    outcome = await runtime.plan.review_existing(path)
    assert len(decider.requests) == 2
    assert "Files changed while you were reviewing" in decider.requests[1].notice
    assert decider.requests[1].receipt is not None and not decider.requests[1].receipt.clean
    assert outcome.decision is Decision.KEEP and runtime.plan.mode is Mode.PLAN


async def test_review_existing_refine_enters_plan_and_says_what_to_send(project: Path) -> None:
    decider = ScriptedDecider([Review(Decision.REFINE, feedback="add tests")])
    runtime = make(project, decider)
    path = saved(runtime)
    outcome = await runtime.plan.review_existing(path)
    assert runtime.plan.mode is Mode.PLAN and runtime.plan.plan_path == path
    assert outcome.message is not None and outcome.message.endswith(": add tests")


@pytest.mark.parametrize("decision", [Decision.EXIT, Decision.DISCARD])
async def test_review_existing_exit_and_discard(project: Path, decision: Decision) -> None:
    runtime = make(project, ScriptedDecider([Review(decision)]))
    path = saved(runtime)
    runtime.plan.enter_plan(plan_path=path)
    outcome = await runtime.plan.review_existing(path)
    assert outcome.message is None
    assert runtime.plan.mode is Mode.OFF
    assert path.exists() is (decision is Decision.EXIT)


def test_execute_existing_binds_to_the_text_the_person_read(project: Path) -> None:
    runtime = make(project, ScriptedDecider())
    path = saved(runtime)
    with pytest.raises(PlanChanged):
        runtime.plan.execute_existing(path, reviewed=PLAN + "- [ ] sneaked in\n")
    assert runtime.plan.mode is Mode.OFF
    assert runtime.plan.execute_existing(path, reviewed=PLAN) == PLAN
    assert runtime.plan.mode is Mode.EXECUTE


def test_start_plan_switches_to_a_new_named_plan(project: Path) -> None:
    runtime = make(project, ScriptedDecider())
    path = saved(runtime)
    runtime.plan.enter_plan(plan_path=path)
    runtime.plan.start_plan(name="other")
    assert runtime.plan.mode is Mode.PLAN
    assert runtime.plan.plan_path is None and runtime.plan.pending_name == "other"


async def test_exit_plan_mode_approval_needs_plan_mode_to_still_be_on(project: Path) -> None:
    """Defence in depth: even if the mode moved during a review, approval does not apply."""

    def leave_then_approve(request):
        runtime.plan.reviews.questions_open -= 1  # simulate a front end that bypassed the freeze
        try:
            runtime.plan.leave()
        finally:
            runtime.plan.reviews.questions_open += 1
        return Review(Decision.APPROVE, reviewed_text=request.text)

    runtime = make(project, ScriptedDecider([leave_then_approve]))
    path = saved(runtime)
    runtime.plan.enter_plan(plan_path=path)
    result = await runtime.plan.review(str(path))
    assert "not approved" in result
    assert runtime.plan.mode is Mode.OFF
