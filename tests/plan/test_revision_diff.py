"""The word-level revision diff and the "changed without request" rule (planshell/plan/revision_diff.py)."""

from __future__ import annotations

from planshell.plan.revision_diff import (
    named_sections,
    revision_diff,
    unrequested_changes,
)

OLD = """# Plan: Cache

## Goal
Make the thing fast.

## Steps
- [ ] one
- [ ] two

## Risks
None known.

## Verification
pytest -q
"""

NEW = """# Plan: Cache

## Goal
Make the thing very fast.

## Steps
- [ ] one
- [ ] three
- [ ] four

## Verification
pytest -q
"""


def ops(diff, index):
    return [[(f.op, f.text) for f in line.fragments] for line in diff.by_section().get(index, ())]


def test_words_not_lines_are_marked():
    diff = revision_diff(OLD, NEW)
    goal = ops(diff, 1)
    assert goal[1] == [("equal", "Make the thing "), ("insert", "very "), ("equal", "fast.")]
    steps = ops(diff, 2)
    assert ("delete", "two") in steps[2] and ("insert", "three") in steps[2]
    assert steps[3] == [("insert", "- [ ] four")]


def test_a_removed_section_is_struck_after_the_section_before_it():
    diff = revision_diff(OLD, NEW)
    kinds = {(c.index, c.title, c.kind) for c in diff.changes}
    assert (2, "Risks", "removed") in kinds
    removed = next(c for c in diff.changes if c.kind == "removed")
    assert all(f.op == "delete" for line in removed.lines for f in line.fragments)
    # the struck lines sit after the Steps section's own lines
    assert ops(diff, 2)[-2:] == [[("delete", "## Risks")], [("delete", "None known.")]]


def test_unchanged_sections_are_left_out_and_places_are_counted():
    diff = revision_diff(OLD, NEW)
    assert {c.index for c in diff.changes} == {1, 2}  # Verification and the title are the same
    # Goal: one place; Steps: "two"->"three" + the new item is one run; Risks: one
    assert diff.places == 3
    assert diff.place_lines() == [(1, 1), (2, 2), (2, 4)]


def test_source_lines_are_the_new_plans():
    diff = revision_diff(OLD, NEW)
    steps = diff.by_section()[2]
    new_lines = NEW.split("\n")
    for line in steps:
        if line.fragments and all(f.op != "delete" for f in line.fragments):
            shown = "".join(f.text for f in line.fragments if f.op != "delete")
            assert new_lines[line.source] == shown


def test_no_previous_or_same_text_is_no_diff():
    assert revision_diff(None, NEW).empty
    assert revision_diff(NEW, NEW).empty
    assert revision_diff(NEW, NEW).places == 0


def test_an_added_section_is_all_inserted():
    diff = revision_diff(NEW, NEW + "\n## Rollout\nFlip the flag.\n")
    [change] = diff.changes
    assert change.kind == "added" and change.title == "Rollout"
    assert all(f.op == "insert" for line in change.lines for f in line.fragments)


def test_a_huge_replacement_is_not_diffed_word_by_word():
    old = "# P\n\n## Steps\n" + " ".join(f"w{n}" for n in range(20000)) + "\n"
    new = "# P\n\n## Steps\n" + " ".join(f"v{n}" for n in range(20000)) + "\n"
    diff = revision_diff(old, new)
    lines = diff.by_section()[1]
    assert [f.op for f in lines[1].fragments] == ["delete"]  # the old line, struck whole
    assert [f.op for f in lines[2].fragments] == ["insert"]  # the new line after it


# ------------------------------------------------------------------ without request


def test_feedback_naming_a_title_flags_the_other_changed_sections():
    assert unrequested_changes(OLD, NEW, "In the steps, replace two with three and four.") == (
        "Goal",
        "Risks",
    )


def test_feedback_naming_nothing_flags_nothing():
    assert unrequested_changes(OLD, NEW, "make it better overall") == ()
    assert unrequested_changes(OLD, NEW, "") == ()
    assert unrequested_changes(None, NEW, "Steps") == ()


def test_every_changed_section_named_flags_nothing():
    assert unrequested_changes(OLD, NEW, "Goal: say very. Steps: more. Risks: drop it.") == ()


def test_a_quoted_line_names_its_section():
    # the browser review's feedback quotes a block's first characters
    feedback = "- On the paragraph starting 'Make the thing fast.': be bolder"
    assert named_sections(OLD, feedback) == {(2, "goal")}
    assert unrequested_changes(OLD, NEW, feedback) == ("Steps", "Risks")


def test_titles_match_as_whole_words_only():
    # "Goals" or "goalkeeper" do not name "Goal"
    assert (2, "goal") not in named_sections(OLD, "the goalkeeper")
    assert (2, "goal") in named_sections(OLD, "the GOAL section")


def test_a_subsection_of_a_named_section_is_named():
    old = "# P\n\n## Steps\n\n### Part A\nx = 1 here\n\n## Risks\nnone\n"
    new = "# P\n\n## Steps\n\n### Part A\nx = 2 here\n\n## Risks\nsome\n"
    assert unrequested_changes(old, new, "Rework the Steps") == ("Risks",)


# ------------------------------------------------------------------ through the review rounds


async def test_the_review_after_a_refinement_flags_what_was_not_asked_for(tmp_path):
    from planshell.llm.scripted import Reply
    from planshell.plan.decider import Decision, Review
    from tests.engine_helpers import make_runtime, write_and_review

    runtime, _, decider, _ = make_runtime(
        tmp_path,
        [
            *write_and_review("Cache", OLD),
            *write_and_review("Cache", NEW),
            Reply(text="ok"),
        ],
        [Review(Decision.REFINE, feedback="Steps: replace two with three and four")],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan")
    first, second = decider.requests
    assert first.unrequested == () and first.previous_text is None
    assert second.previous_text == first.text
    assert second.unrequested == ("Goal", "Risks")
    runtime.close()
