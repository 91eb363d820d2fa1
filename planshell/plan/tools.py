"""The plan tools the model calls; each delegates to the controller."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planshell.plan.controller import Mode, PlanController
from planshell.tools.base import (
    SHOWN_KEY,
    ArgsT,
    Effect,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolResult,
)

MAX_LISTED = 30  # lint findings listed in write_plan's result (a plan can cite 200 missing files)


class _PlanTool(Tool[ArgsT]):
    def __init__(self, controller: PlanController) -> None:
        self.controller = controller


class EnterPlanArgs(ToolArgs):
    reason: str = Field("", description="Why planning first would help (shown to the user).")


class EnterPlanModeTool(_PlanTool[EnterPlanArgs]):
    name = "enter_plan_mode"
    description = (
        "Ask the user to plan first: read-only exploration, then a plan the user approves "
        "before any change. For large or risky changes."
    )
    Args = EnterPlanArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    async def run(self, args: EnterPlanArgs, ctx: ToolContext) -> ToolResult:
        if self.controller.mode is Mode.PLAN:
            raise ToolError("Plan mode is already active.")
        if not await self.controller.decider.confirm_enter_plan(args.reason):
            return ToolResult("The user declined plan mode. Continue normally.")
        self.controller.enter_plan()
        return ToolResult(
            "Plan mode is active: explore read-only, write the plan with write_plan, then call "
            "exit_plan_mode."
        )


class WritePlanArgs(ToolArgs):
    title: str = Field(description="Short plan title.")
    content: str = Field(
        description="The whole plan in markdown (starting with '# Plan: <title>')."
    )
    plan_path: str | None = Field(
        None, description="Existing plan to overwrite when refining; omit to create a new plan."
    )


class WritePlanTool(_PlanTool[WritePlanArgs]):
    name = "write_plan"
    description = (
        "Create or overwrite (refine) the plan file under .planshell/plans/. The only write "
        "allowed in plan mode. Returns the path to pass to exit_plan_mode."
    )
    Args = WritePlanArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE})

    def headline(self, args: WritePlanArgs) -> str:
        return f"write_plan {args.title}"

    async def run(self, args: WritePlanArgs, ctx: ToolContext) -> ToolResult:
        path = self.controller.write_plan(args.title, args.content, args.plan_path)
        await self.controller.record_cited(path)  # for the staleness check at review
        size = path.stat().st_size
        shown = ctx.display(path)
        return ToolResult(
            f"Plan saved: {shown} ({size} bytes). {self._lint(args.content, shown)}"
            f"Call exit_plan_mode(plan_path={shown!r}) when it is ready for review.",
            data={"path": str(path)},
        )

    def _lint(self, content: str, shown: str) -> str:
        """Plan lint's findings, so the model can fix them before the person reads the plan."""
        from planshell.plan.lint import lint_plan, summary  # with the first plan, not at start-up

        findings = lint_plan(content, self.controller.store.root)
        if not findings:
            return "Plan lint: no findings. "
        lines = "\n".join(f"- {finding.line()}" for finding in findings[:MAX_LISTED])
        if len(findings) > MAX_LISTED:
            lines += f"\n- … and {len(findings) - MAX_LISTED} more"
        return (
            f"Plan lint: {summary(findings)} (the reviewer sees these too; fix them with "
            f"write_plan(plan_path={shown!r}) first, errors above all):\n{lines}\n"
        )


class ExitPlanArgs(ToolArgs):
    plan_path: str = Field(description="The plan file returned by write_plan.")


class ExitPlanModeTool(_PlanTool[ExitPlanArgs]):
    name = "exit_plan_mode"
    description = (
        "Present the written plan to the user for review. The result says whether it was "
        "approved (then execute it), needs changes (refine it), or planning continues."
    )
    Args = ExitPlanArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    async def run(self, args: ExitPlanArgs, ctx: ToolContext) -> ToolResult:
        result, shown = await self.controller.review_outcome(args.plan_path)
        return ToolResult(result, data={SHOWN_KEY: shown})


class NoArgs(ToolArgs):
    pass


class CancelPlanArgs(ToolArgs):
    reason: str = Field("", description="Why planning should stop (shown to the user).")


class CancelPlanModeTool(_PlanTool[CancelPlanArgs]):
    name = "cancel_plan_mode"
    description = (
        "Ask the user to leave plan mode without a plan review (for example when no change "
        "is needed). Only the user can agree; the plan file, if any, is kept."
    )
    Args = CancelPlanArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    def headline(self, args: CancelPlanArgs) -> str:
        return self.name

    async def run(self, args: CancelPlanArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(await self.controller.request_leave(args.reason))


MAX_QUESTIONS = 4
QUESTION_MAX_CHARS = 300
SKIPPED_RESULT = (
    "The user skipped the questions. Do not ask again: go on with what the files show and "
    "write your assumptions down in the plan (under Context, marked as assumptions)."
)


class AskQuestionsArgs(ToolArgs):
    questions: list[str] = Field(min_length=1, max_length=MAX_QUESTIONS)


class AskQuestionsTool(_PlanTool[AskQuestionsArgs]):
    name = "ask_questions"
    description = (
        f"Ask the user up to {MAX_QUESTIONS} questions in one dialog (skippable); once, after "
        "exploring, for what the files cannot tell."
    )
    Args = AskQuestionsArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.READ})

    def headline(self, args: AskQuestionsArgs) -> str:
        return f"ask_questions {len(args.questions)} question(s)"

    async def run(self, args: AskQuestionsArgs, ctx: ToolContext) -> ToolResult:
        if self.controller.mode is not Mode.PLAN:
            raise ToolError("ask_questions works only in plan mode.")
        questions = [_question(q) for q in args.questions]
        answers = await self.controller.decider.ask_questions(questions)
        if answers is None:
            return ToolResult(SKIPPED_RESULT, data={"skipped": True})
        pairs = [
            f"Q: {q}\nA: {a.strip() or '(no answer)'}"
            for q, a in zip(questions, [*answers, *[""] * len(questions)], strict=False)
        ]
        return ToolResult("The user answered:\n\n" + "\n\n".join(pairs), data={"skipped": False})


def _question(text: str) -> str:
    """One line of at most QUESTION_MAX_CHARS (the dialog shows it as plain text)."""
    line = " ".join(text.split())
    return line if len(line) <= QUESTION_MAX_CHARS else line[: QUESTION_MAX_CHARS - 1] + "…"


class StepUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1, description="1-based step number in the plan's Steps list.")
    status: Literal["done", "skipped", "pending"] = Field(
        description="done ticks, skipped closes the step undone (give a reason), pending unticks."
    )
    expected: str = Field("", description="The step's text, to detect a changed plan.")
    reason: str = Field("", max_length=300, description="Why the step was skipped (required).")

    @model_validator(mode="after")
    def _skip_needs_reason(self) -> StepUpdate:
        if self.status == "skipped" and not self.reason.strip():
            raise ValueError(
                f"step {self.step} is skipped without a reason; say why in `reason` "
                "(one short sentence)"
            )
        return self


class SetStepsArgs(ToolArgs):
    updates: list[StepUpdate] = Field(min_length=1, description="Steps to tick or untick.")


class SetPlanStepsTool(_PlanTool[SetStepsArgs]):
    name = "set_plan_steps"
    description = (
        "Tick or untick numbered steps of the approved plan (all-or-nothing). Pass each "
        "step's text as `expected`; the call is refused if the plan changed. A step you "
        "will not do is `skipped` with a `reason`. Edits and commands are recorded against "
        "the first open step, so tick each step when its work is done."
    )
    Args = SetStepsArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE})

    def headline(self, args: SetStepsArgs) -> str:
        shown = {"done": "✓", "skipped": "⊘", "pending": "○"}
        marks = ", ".join(f"{u.step}{shown[u.status]}" for u in args.updates)
        return f"set_plan_steps {marks}"

    async def run(self, args: SetStepsArgs, ctx: ToolContext) -> ToolResult:
        updates = [(u.step, u.status != "pending", u.expected) for u in args.updates]
        reasons = {u.step: u.reason.strip() for u in args.updates if u.status == "skipped"}
        return ToolResult(self.controller.set_steps(updates, reasons))


class AmendPlanArgs(ToolArgs):
    step: int = Field(ge=1, description="1-based number of the step to reword.")
    reason: str = Field(
        min_length=1, max_length=2000, description="Why the step must change (one sentence)."
    )
    new_text: str = Field(
        min_length=1,
        max_length=2000,
        description="The step's new wording: one line of plain text (its checkbox is kept).",
    )


class AmendPlanTool(_PlanTool[AmendPlanArgs]):
    name = "amend_plan"
    description = (
        "Propose new wording for one step of the approved plan when it turns out wrong. "
        "The user decides; approved, the plan (and its scope) is amended. Declined, follow "
        "the plan as approved or end your turn and ask."
    )
    Args = AmendPlanArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE})

    def headline(self, args: AmendPlanArgs) -> str:
        return f"amend_plan step {args.step}"

    async def run(self, args: AmendPlanArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(await self.controller.amend(args.step, args.reason, args.new_text))


class PlanCompleteTool(_PlanTool[NoArgs]):
    name = "plan_complete"
    description = "Finish executing the approved plan and return to normal mode."
    Args = NoArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.WRITE})  # may delete the plan

    def headline(self, args: NoArgs) -> str:
        return self.name

    async def run(self, args: NoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(await self.controller.complete())


def plan_tools(controller: PlanController) -> list[Tool[Any]]:
    return [
        cls(controller)
        for cls in (
            EnterPlanModeTool,
            WritePlanTool,
            ExitPlanModeTool,
            CancelPlanModeTool,
            AskQuestionsTool,
            SetPlanStepsTool,
            AmendPlanTool,
            PlanCompleteTool,
        )
    ]
