"""docs/plan-mode.md quotes what planshell prints: the quotes must match the code (issue 12, item 17).

Each entry takes the string from the code (a constant, a formatted template, a
real run of ``planshell check-command``) and checks the doc quotes it, so a
reworded message fails here until the doc follows.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from planshell.config import PlanLabels
from planshell.plan import prompts
from planshell.plan.coverage import UnshownLine
from planshell.plan.staleness import Staleness
from planshell.plan.undo_keeper import EXECUTE_REFUSED, NOTHING_RECORDED, PLAN_REFUSED
from planshell.ui.decider import ENTER_PLAN_QUESTION, LEAVE_PLAN_QUESTION, changed_question
from planshell.ui.screens.unshown import unshown_notice
from planshell.ui.widgets.review_footer import DECISION_HINTS, SEPARATOR, decision_hints
from tests.paths import DOCS

DOC = DOCS / "plan-mode.md"


def doc_text() -> str:
    # Joined lines: a quote may wrap across lines in the markdown source.
    return " ".join(DOC.read_text(encoding="utf-8").split())


def _placeholders(template: str) -> str:
    """``{path}`` -> ``<path>``, as the doc writes template fields."""
    return re.sub(r"\{(\w+)\}", r"<\1>", template)


class _Receipt:
    changed = ("src/app.py", "README.md")


def code_strings() -> list[tuple[str, str]]:
    labels = PlanLabels()
    first_words = ENTER_PLAN_QUESTION.split(":")[0]
    return [
        ("leave question", LEAVE_PLAN_QUESTION),
        ("enter question", first_words),
        ("plan-on toast", labels.plan.notify),
        ("approved toast", labels.execute.notify.replace("{title}", "<title>")),
        ("off toast", labels.off.notify),
        ("execute request", _placeholders(prompts.EXECUTE_REQUEST)),
        ("refine request", _placeholders(prompts.REFINE_REQUEST)),
        ("changed-files question", changed_question(_Receipt())),
        ("review footer", SEPARATOR.join(str(h) for h in DECISION_HINTS)),
        ("footer outside PLAN", str(decision_hints("off")[0])),
        ("discard question", "Delete this plan file?"),
        ("unshown-lines notice", unshown_notice([UnshownLine(n, "", "") for n in range(3)])),
        ("/undo in plan mode", PLAN_REFUSED),
        ("/undo while executing", EXECUTE_REFUSED),
        ("/undo with no checkpoint", NOTHING_RECORDED),
        ("amendment, headless", prompts.AMEND_NOBODY.split(" (")[0]),
        (
            "staleness chip",
            Staleness("abc1234ff", ("src/app.py", "src/db.py")).summary,
        ),
    ]


@pytest.mark.parametrize(("what", "text"), code_strings(), ids=[w for w, _ in code_strings()])
def test_the_doc_quotes_the_code(what: str, text: str) -> None:
    assert " ".join(text.split()) in doc_text(), (
        f"docs/plan-mode.md does not quote the {what}: {text!r}"
    )


def test_discard_question_is_the_dialogs() -> None:
    from planshell.ui.screens.review import ConfirmDiscard

    assert ConfirmDiscard(Path("x.md")).question == "Delete this plan file?"


def test_check_command_example_matches_a_real_run(project: Path) -> None:
    """The doc's `planshell check-command` example, run: each line is what it prints (… cuts)."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"\$ planshell check-command (.+?)\n((?:(?:allow|block)\t.*\n)+)", text)
    assert block, "the check-command example is gone from docs/plan-mode.md"
    args = re.findall(r"'([^']*)'", block.group(1))
    proc = subprocess.run(
        [sys.executable, "-m", "planshell", "check-command", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    printed = proc.stdout.splitlines()
    documented = block.group(2).splitlines()
    assert len(printed) == len(documented)
    for shown, real in zip(documented, printed, strict=True):
        if shown.endswith(" …"):
            assert real.startswith(shown[:-2]), (shown, real)
        else:
            assert real == shown
