"""What the model is told in each mode, and what each decision returns."""

from __future__ import annotations

from planshell.plan.document import PLAN_TEMPLATE_HINT

PLAN_MARKER = "## Plan mode is active"
EXECUTE_MARKER = "## Executing an approved plan"


def plan_guidance(plan_path: str | None) -> str:
    target = (
        f"Your plan file is {plan_path}: refine it with write_plan(plan_path=...)."
        if plan_path
        else "Create the plan with write_plan(title, content)."
    )
    return f"""{PLAN_MARKER}
You MUST NOT make any edits or run non-read-only commands: the system enforces it, and
refused calls explain what is allowed. Work in this order:
1. Understand: read the relevant code with read, grep, find, ls and read-only bash.
2. Design: choose the simplest approach that fits the codebase.
3. Review: check the approach against the code you read; note risks.
4. Write the plan: {target}
5. Call exit_plan_mode(plan_path) so the user can review it. Do not ask for approval in text.
Ask the user a question instead if the request is ambiguous.
Recommended plan outline (any markdown is accepted; at most 50 steps):
{PLAN_TEMPLATE_HINT}"""


def execute_guidance(plan_path: str, plan_text: str) -> str:
    return f"""{EXECUTE_MARKER}
The user approved the plan below ({plan_path}). Carry it out step by step with all tools.
After finishing each step, tick it with set_plan_steps (pass the step's text as `expected`).
When every step and the verification are done, call plan_complete.
If a step turns out to be wrong, propose its new wording with amend_plan (the user decides),
or stop and tell the user; never improvise beyond the approved plan.

{plan_text}"""


EXECUTE_PAUSED = f"""{EXECUTE_MARKER}
Execution is paused: the plan file changed after the user approved it, and the user has
not approved the changed plan. Do not continue the plan and make no changes; stop and end
your turn. planshell shows the user what changed."""


EXECUTE_PAUSED_RESULT = (
    "Not run: the plan file changed after the user approved it, so execution is paused until "
    "the user approves the plan again. Stop and end your turn."
)


def approved_result(plan_path: str, plan_text: str) -> str:
    return (
        f"Approved. Plan mode is over and all tools are available again. Execute {plan_path} "
        "step by step; tick each finished step with set_plan_steps; call plan_complete when "
        f"all steps and the verification are done.\n\n{plan_text}"
    )


def refine_result(feedback: str) -> str:
    return (
        f"The user asked for changes to the plan: {feedback}\n"
        "Stay in plan mode, revise the plan with write_plan (same plan_path) and call "
        "exit_plan_mode again."
    )


def keep_result(feedback: str = "") -> str:
    extra = f" {feedback}" if feedback else ""
    return (
        "The user has not approved the plan and wants to keep planning. Stay in plan mode; "
        f"wait for the user's next message.{extra}"
    )


def exit_result(plan_path: str) -> str:
    return (
        f"The user left plan mode without approving. The plan file is kept at {plan_path}. "
        "Do not execute it; wait for the user's next message."
    )


DISCARD_RESULT = (
    "The user discarded the plan and left plan mode. Do not execute it; wait for the user's "
    "next message."
)


LEAVE_ALLOWED_RESULT = (
    "The user agreed to leave plan mode without a review. All tools are available again; "
    "the plan file, if any, is kept."
)

LEAVE_REFUSED_RESULT = (
    "Plan mode stays on: only the user can leave it without a plan review. Keep exploring "
    "read-only, write the plan with write_plan and call exit_plan_mode, or ask the user a "
    "question in text."
)

BARRIER_MODE_CHANGED = (
    "Not run: the plan mode changed while this call waited for the plan-mode snapshot. "
    "Check the current mode and call the tool again if it is still wanted."
)


# Requests the front end sends on the person's behalf after a decision.
EXECUTE_REQUEST = "Execute the approved plan {path}."
REFINE_REQUEST = "Refine the plan {path}: {feedback}"


AMEND_PAUSED = (
    "The plan file changed since the user approved it: nothing was amended. Execution is "
    "paused until the user approves the plan again; stop and end your turn."
)
AMEND_RACED = (
    "The plan changed while the amendment was being reviewed: nothing was amended. Follow the "
    "approved plan as it stands, or end your turn and ask the user."
)
AMEND_DECLINED = (
    "The user declined the amendment: the approved plan stands as it was. Follow it as "
    "approved, or end your turn and ask the user how to go on. Do not propose the same "
    "amendment again."
)
AMEND_NOBODY = (
    "Nobody was there to approve the amendment (a non-interactive run): the approved plan "
    "stands as it was. Follow it as approved, or stop and end your turn so the user can decide."
)


def amend_approved(step: int, text: str) -> str:
    return (
        f"The user approved the amendment: step {step} now reads {text!r}. The amended plan is "
        "the approved plan from now on (its scope follows it); go on with it."
    )
