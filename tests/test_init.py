"""/init: AGENTS.md through plan mode, driven here by the offline demo model.

The demo reads the real files, so these tests check what a newcomer sees: the
plan names only commands a file backs, AGENTS.md is written only after approval,
an accurate file gives a no-op plan, skipped questions become assumptions.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from planshell.agent.events import Mode
from planshell.config import Settings
from planshell.headless import EXIT_AWAITING_APPROVAL, run_print
from planshell.llm.demo import QUESTIONS, DemoProvider
from planshell.plan.decider import Decision, HeadlessDecider, Review
from planshell.plan.init import INIT_PLAN_NAME, INIT_REQUEST, start_init
from planshell.runtime import Runtime, build_runtime
from tests.engine_helpers import ScriptedDecider, finishes

ACCURATE = """# AGENTS.md

A tiny widget library.

## Commands

- `make test` runs the tests; `make lint` checks the style.
"""


class AskingDecider(ScriptedDecider):
    """Approves the plan; answers (or skips) the questions."""

    def __init__(self, answers: list[str] | None) -> None:
        super().__init__([lambda r: Review(Decision.APPROVE, reviewed_text=r.text)])
        self.answers = answers
        self.questions: list[list[str]] = []

    async def ask_questions(self, questions: list[str]) -> list[str] | None:
        self.questions.append(questions)
        return self.answers


def _makefile_repo(root: Path) -> Path:
    (root / "Makefile").write_text(
        ".PHONY: test\ntest:\n\tpython -m pytest -q\nlint:\n\truff check .\n"
    )
    (root / "README.md").write_text("# Widgets\n\nA tiny widget library.\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_widgets.py").write_text("def test_x():\n    assert True\n")
    return root


def _runtime(root: Path, decider) -> Runtime:  # type: ignore[no-untyped-def]
    return build_runtime(
        Settings(), root, decider, provider=DemoProvider(chunk_delay=0), persist=False
    )


async def _headless_init(root: Path) -> tuple[int, str, str]:
    decider = HeadlessDecider()
    runtime = _runtime(root, decider)
    out = io.StringIO()
    code = await finishes(run_print(runtime, decider, "/init", out=out, err=io.StringIO()), "/init")
    assert decider.awaiting is not None and INIT_PLAN_NAME in decider.awaiting.name
    return code, decider.awaiting.read_text(), out.getvalue()


def _content_block(plan: str) -> str | None:
    match = re.search(r"\n    ````markdown\n(.*?)\n    ````\n", plan, re.S)
    if match is None:
        return None
    return "\n".join(line[4:] for line in match.group(1).splitlines()) + "\n"


async def test_init_on_an_empty_repository_invents_no_command(tmp_path: Path) -> None:
    code, plan, _ = await _headless_init(tmp_path)
    assert code == EXIT_AWAITING_APPROVAL
    assert not (tmp_path / "AGENTS.md").exists()  # only after approval
    content = _content_block(plan)
    assert content is not None
    assert "No build or test commands were found" in content
    assert not re.search(r"`(make|npm|pytest|python|cargo|go) ", content)
    assert "Assumptions (the questions were skipped)" in plan  # headless: nobody to ask


async def test_init_with_a_makefile_and_tests_names_the_real_test_command(tmp_path: Path) -> None:
    _makefile_repo(tmp_path)
    _, plan, _ = await _headless_init(tmp_path)
    content = _content_block(plan)
    assert content is not None
    assert "- `make test` (Makefile target `test`)" in content
    assert "- `make lint` (Makefile target `lint`)" in content
    assert "Tests live in `tests/` (1 file: `tests/test_widgets.py`)" in content
    assert "A tiny widget library." in content
    assert "```sh\nmake test\n```" in plan  # the plan's verification
    assert "npm" not in content and "pytest" not in content  # nothing it did not find
    assert not (tmp_path / "AGENTS.md").exists()


async def test_approved_init_plan_writes_exactly_the_planned_file(tmp_path: Path) -> None:
    _makefile_repo(tmp_path)
    answers = [
        "Widgets for dashboards.",
        "Run `make test` and `make lint`.",
        "",
        "Never edit vendor/.",
    ]
    decider = AskingDecider(answers)
    runtime = _runtime(tmp_path, decider)
    text = start_init(runtime.plan)
    assert runtime.plan.mode is Mode.PLAN and text == INIT_REQUEST
    await finishes(runtime.agent.submit(text), "/init")
    assert decider.questions == [QUESTIONS]  # one dialog, four questions
    plan = decider.requests[0].text
    content = _content_block(plan)
    assert content is not None
    assert (tmp_path / "AGENTS.md").read_text() == content
    assert content.splitlines()[2] == "Widgets for dashboards."
    assert "## Never touch\n\nNever edit vendor/." in content
    assert "## Rules" not in content  # left empty: not invented
    assert runtime.plan.mode is Mode.OFF  # executed and completed
    runtime.close()


async def test_init_with_an_accurate_agents_md_plans_no_change(tmp_path: Path) -> None:
    _makefile_repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text(ACCURATE)
    decider = AskingDecider(None)
    runtime = _runtime(tmp_path, decider)
    await finishes(runtime.agent.submit(start_init(runtime.plan)), "/init")
    plan = decider.requests[0].text
    assert "No changes needed" in plan and _content_block(plan) is None
    assert (tmp_path / "AGENTS.md").read_text() == ACCURATE
    assert runtime.plan.mode is Mode.OFF
    runtime.close()


async def test_init_removes_a_command_the_repository_does_not_back(tmp_path: Path) -> None:
    _makefile_repo(tmp_path)
    (tmp_path / "AGENTS.md").write_text(ACCURATE + "- `make deploy` ships it.\n")
    _, plan, _ = await _headless_init(tmp_path)
    assert "`make deploy` has no evidence in the repository" in plan
    content = _content_block(plan)
    assert content is not None and "make deploy" not in content and "make test" in content


async def test_skipped_questions_are_recorded_as_assumptions(tmp_path: Path) -> None:
    _makefile_repo(tmp_path)
    decider = AskingDecider(None)
    runtime = _runtime(tmp_path, decider)
    await finishes(runtime.agent.submit(start_init(runtime.plan)), "/init")
    assert decider.questions == [QUESTIONS]
    tool = [
        m for m in runtime.agent.messages if m.role == "tool" and m.tool_name == "ask_questions"
    ]
    assert tool[0].content.startswith("The user skipped the questions")
    plan = decider.requests[0].text
    assert "Assumptions (the questions were skipped)" in plan
    assert "Run `make test`." in (tmp_path / "AGENTS.md").read_text()
    runtime.close()


async def test_ask_questions_only_in_plan_and_at_most_four(tmp_path: Path) -> None:
    from planshell.plan.tools import AskQuestionsArgs

    runtime = _runtime(tmp_path, AskingDecider(["x"]))
    assert "ask_questions" not in runtime.registry.active
    runtime.plan.enter_plan()
    assert "ask_questions" in runtime.registry.active
    with pytest.raises(ValueError):
        AskQuestionsArgs(questions=["a", "b", "c", "d", "e"])
    runtime.close()


async def test_init_finds_the_test_command_a_plan_would(tmp_path: Path) -> None:
    """The README's "Run the tests with `python -m pytest`": /init and a plan agree."""
    (tmp_path / "README.md").write_text(
        "# Calc\n\nA small calculator.\n\nRun the tests with `python -m pytest`.\n"
    )
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    _, plan, _ = await _headless_init(tmp_path)
    assert "No test command found" not in plan
    assert "Test command found: `python -m pytest`." in plan
    content = _content_block(plan)
    assert content is not None
    assert "- `python -m pytest` (README.md)" in content
    assert "Run `python -m pytest`." in content


async def test_init_execution_says_it_wrote_agents_md(tmp_path: Path) -> None:
    """The demo writes AGENTS.md after approval: it must not then claim it edits nothing."""
    _makefile_repo(tmp_path)
    decider = AskingDecider(None)
    runtime = _runtime(tmp_path, decider)
    await finishes(runtime.agent.submit(start_init(runtime.plan)), "/init")
    assert (tmp_path / "AGENTS.md").exists()
    said = "\n".join(m.content for m in runtime.agent.messages if m.role == "assistant")
    assert "I do not edit code" not in said
    assert "Wrote `AGENTS.md` exactly as the approved plan says." in said
    assert "Plan complete: wrote `AGENTS.md`" in runtime.agent.messages[-1].content
    runtime.close()
