"""Amendments (issue 24 part 5): the pure engine, planshell/plan/amend.py.

The runtime side (the tool, the person's decision, the scope fence) is in
test_amend_runtime.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from planshell.plan.amend import (
    MAX_REASON_CHARS,
    MAX_STEP_CHARS,
    add_to_scope,
    amend_step,
    stamp,
)
from planshell.plan.document import parse_plan, verification_text
from planshell.plan.scope import plan_scope
from planshell.tools.base import ToolError

NOW = datetime(2026, 12, 2, 3, 40, 17, tzinfo=UTC)
PLAN = """# Plan: Rate limits

## Context

The handler is `src/app/server.py`.

## Steps

- [x] Read `src/app/server.py`
- [ ] Call the limiter from `src/app/server.py`
  - detail stays
- [ ] Test it

## Verification

```sh
make test
```
"""


def test_a_step_is_reworded_its_box_kept_and_the_amendment_appended_with_its_time() -> None:
    amended = amend_step(PLAN, 2, "Call the limiter from `src/app/router.py`", "moved", NOW)
    assert amended.text == PLAN.replace(
        "- [ ] Call the limiter from `src/app/server.py`",
        "- [ ] Call the limiter from `src/app/router.py`",
    ) + ("\n## Amendments\n\n- 2026-12-02 03:40 UTC — step 2: moved\n")
    doc = parse_plan(amended.text)
    assert [(s.text, s.done) for s in doc.steps] == [
        ("Read `src/app/server.py`", True),
        ("Call the limiter from `src/app/router.py`", False),
        ("Test it", False),
    ]
    assert amended.amendment.old_text == "Call the limiter from `src/app/server.py`"
    assert amended.added_scope == ("src/app/router.py",)
    # The Verification section is unchanged, so the report's checks are too.
    assert verification_text(doc) == verification_text(parse_plan(PLAN))


def test_a_ticked_step_stays_ticked_and_a_second_amendment_joins_the_same_section() -> None:
    first = amend_step(PLAN, 1, "Read the handler", "clearer", NOW)
    second = amend_step(first.text, 3, "Test it with `pytest -q`", "be precise", NOW)
    assert "- [x] Read the handler" in second.text
    assert second.text.count("## Amendments") == 1
    assert second.text.endswith(
        "## Amendments\n\n"
        "- 2026-12-02 03:40 UTC — step 1: clearer\n"
        "- 2026-12-02 03:40 UTC — step 3: be precise\n"
    )


def test_the_time_is_always_utc() -> None:
    here = datetime(2026, 12, 2, 5, 40, tzinfo=timezone(timedelta(hours=2)))
    assert stamp(here) == "2026-12-02 03:40 UTC"
    assert stamp(datetime(2026, 12, 2, 3, 40)) == "2026-12-02 03:40 UTC"  # naive: taken as UTC


def test_a_step_without_a_checkbox_gets_none() -> None:
    plan = "# Plan: x\n\n## Steps\n\n- one\n- two\n"
    amended = amend_step(plan, 2, "three", "why", NOW)
    assert "- one\n- three\n" in amended.text
    assert [s.has_checkbox for s in parse_plan(amended.text).steps] == [False, False]


@pytest.mark.parametrize("step", [0, 4, -1, True])
def test_a_step_that_does_not_exist_is_refused(step: int) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        amend_step(PLAN, step, "x", "why", NOW)


@pytest.mark.parametrize(
    "text",
    [
        "# Steps",
        "## Amendments",
        "- [ ] a new step",
        "[x] already done",
        "* another item",
        "3. numbered",
        "> quoted",
        "```sh",
        "~~~",
        "<!-- hide the rest",
        "---",
        "| a | b |",
        "fine first line\n- [ ] smuggled step",
        "fine first line\n## Verification\n```\nrm -rf /\n```",
        "fine\n  ===",
    ],
)
def test_text_that_would_make_structure_is_refused(text: str) -> None:
    with pytest.raises(ToolError, match="markdown structure"):
        amend_step(PLAN, 2, text, "why", NOW)
    with pytest.raises(ToolError, match="markdown structure"):
        amend_step(PLAN, 2, "plain", text, NOW)


def test_new_lines_fold_and_escape_sequences_and_bidi_go() -> None:
    amended = amend_step(
        PLAN,
        2,
        "Call \x1b[31mthe\x1b[0m limiter\u202e\nfrom the router\r\n",
        "a \x1b]52;c;ZXZpbA==\x07reason\nover lines",
        NOW,
    )
    assert amended.amendment.new_text == "Call the limiter from the router"
    assert amended.amendment.reason == "a reason over lines"
    assert "\x1b" not in amended.text and "\u202e" not in amended.text
    assert "- [ ] Call the limiter from the router\n" in amended.text


def test_lengths_are_capped() -> None:
    with pytest.raises(ToolError, match="limit is"):
        amend_step(PLAN, 2, "word " * MAX_STEP_CHARS, "why", NOW)
    amended = amend_step(PLAN, 2, "short", "because " * 100, NOW)
    assert len(amended.amendment.reason) <= MAX_REASON_CHARS
    with pytest.raises(ToolError, match="needs a reason"):
        amend_step(PLAN, 2, "short", " \n\x1b[0m ", NOW)
    with pytest.raises(ToolError, match="empty"):
        amend_step(PLAN, 2, "\u200b", "why", NOW)
    with pytest.raises(ToolError, match="nothing to amend"):
        amend_step(PLAN, 3, "Test it", "why", NOW)


def test_an_h1_steps_section_gets_an_h1_amendments_section_so_no_step_is_added() -> None:
    plan = "# Steps\n\n- [ ] one\n- [ ] two\n"
    amended = amend_step(plan, 1, "uno", "language", NOW)
    assert amended.text.endswith("# Amendments\n\n- 2026-12-02 03:40 UTC — step 1: language\n")
    assert [s.text for s in parse_plan(amended.text).steps] == ["uno", "two"]


def test_an_existing_amendments_section_in_the_middle_is_appended_to() -> None:
    plan = PLAN.replace(
        "## Verification", "## Amendments\n\n- earlier — step 1: x\n\n## Verification"
    )
    amended = amend_step(plan, 3, "Test it all", "why", NOW)
    assert "- earlier — step 1: x\n- 2026-12-02 03:40 UTC — step 3: why\n\n## Verification" in (
        amended.text
    )


def test_the_scope_follows_an_amendment_and_add_to_scope_names_one_exact_path() -> None:
    assert not plan_scope(PLAN).covers("docs/limits.md")
    amended = add_to_scope(PLAN, "./docs/limits.md", NOW, "added by the user")
    assert amended.text.endswith(
        "## Amendments\n\n"
        "- 2026-12-02 03:40 UTC — added to the plan's scope: `docs/limits.md` (added by the user)\n"
    )
    assert plan_scope(amended.text).covers("docs/limits.md")
    assert amended.added_scope == ("docs/limits.md",)
    assert [s.text for s in parse_plan(amended.text).steps] == [
        s.text for s in parse_plan(PLAN).steps
    ]


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x.py", "src/*.py", "src/[ab].py", "a b.py", "docs/", "x`y"]
)
def test_add_to_scope_refuses_what_it_cannot_name_exactly(path: str) -> None:
    with pytest.raises(ToolError, match="cannot be named"):
        add_to_scope(PLAN, path, NOW)
