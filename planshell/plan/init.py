"""``/init``: write or update AGENTS.md through plan mode.

A person's command: it enters PLAN through the controller (``start_plan``, like
``/plan NAME``) and sends the request below. The model explores read-only, may
ask up to four questions in one dialog (``ask_questions``), and writes a plan
whose steps hold the exact file content or edits; AGENTS.md itself is written
only after the plan is approved, by the normal EXECUTE flow. Nothing here
writes a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.agent.prompt import AGENTS_FILE

if TYPE_CHECKING:
    from planshell.plan.controller import PlanController

INIT_COMMAND = "/init"
INIT_PLAN_NAME = "agents-md"

# The demo model (llm/demo.py) recognises this request by its first words, "/init:".
INIT_REQUEST = f"""{INIT_COMMAND}: write or update {AGENTS_FILE}, the project instructions file \
planshell (and other coding agents) read at the start of every session.

1. Explore read-only (task with agent="explore" helps on a large repository): the manifests \
(pyproject.toml, package.json, Cargo.toml, go.mod, Makefile, ...), the README, the CI \
configuration (.github/workflows, .gitlab-ci.yml, ...), the test layout, and any existing \
{AGENTS_FILE} or CLAUDE.md.
2. Then ask the user at most four questions in ONE ask_questions call, only what the files \
cannot tell: the project's purpose, how to verify a change, non-obvious rules, things never to \
touch. If the user skips, write your assumptions down in the plan's Context section.
3. Write the plan with write_plan, then call exit_plan_mode. Its steps hold the exact new \
{AGENTS_FILE} content (one step: write the file, with the whole content in a fenced block) or \
the exact edits to the existing file.

Rules:
- Name only commands you found evidence for (a Makefile target, a manifest script, a CI step) \
and say where each comes from. Never invent a command, a path or a convention.
- Keep it short and specific to this project: commands (build, test, lint), layout, conventions, \
rules, things never to touch. No generic advice.
- If {AGENTS_FILE} exists and is accurate, the plan says "No changes needed" and changes no \
file."""


def shown_request(text: str) -> str:
    """What the person sees for a request they sent: ``/init`` for /init's own request.

    The model needs the whole request; the person typed ``/init`` and should see that,
    not fifteen lines of instructions meant for the model (live and in a resumed session).
    """
    return INIT_COMMAND if text.strip() == INIT_REQUEST else text


def start_init(controller: PlanController) -> str:
    """Enter PLAN for the AGENTS.md plan; returns the request to send (a person's command)."""
    controller.start_plan(name=INIT_PLAN_NAME)
    return INIT_REQUEST
