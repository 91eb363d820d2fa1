"""The review's coverage record: a section is seen once every row of it was on screen."""

from __future__ import annotations

from planshell.plan.review_coverage import ReviewCoverage, VisibleSection, unseen_question


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_section_is_seen_only_once_all_its_rows_were_shown() -> None:
    coverage = ReviewCoverage(2, clock=Clock())
    coverage.observe([VisibleSection(0, 0, 9, 30)])
    assert coverage.unseen() == [0, 1]
    coverage.observe([VisibleSection(0, 10, 19, 30)])
    coverage.observe([VisibleSection(0, 25, 29, 30)])
    assert not coverage.seen(0)  # rows 20-24 never shown
    coverage.observe([VisibleSection(0, 20, 29, 30), VisibleSection(1, 0, 3, 8)])
    assert coverage.seen(0) and not coverage.seen(1)
    assert coverage.unseen() == [1]


def test_a_plan_that_fits_is_seen_at_once_and_one_that_does_not_is_not() -> None:
    fits = ReviewCoverage(3, clock=Clock())
    fits.observe(
        [VisibleSection(0, 0, 4, 5), VisibleSection(1, 0, 2, 3), VisibleSection(2, 0, 0, 1)]
    )
    assert fits.complete
    overflows = ReviewCoverage(3, clock=Clock())
    overflows.observe(
        [VisibleSection(0, 0, 4, 5), VisibleSection(1, 0, 2, 3), VisibleSection(2, 0, 0, 4)]
    )
    assert overflows.unseen() == [2]


def test_a_reflow_forgets_partial_rows_but_not_seen_sections() -> None:
    coverage = ReviewCoverage(2, clock=Clock())
    coverage.observe([VisibleSection(0, 0, 9, 10)])
    coverage.observe([VisibleSection(1, 0, 9, 20)])
    coverage.observe([VisibleSection(1, 0, 9, 12)])  # narrower: another 12 rows
    coverage.observe([VisibleSection(1, 10, 11, 12)])
    assert coverage.seen(1)
    coverage2 = ReviewCoverage(1, clock=Clock())
    coverage2.observe([VisibleSection(0, 0, 9, 20)])
    coverage2.observe([VisibleSection(0, 10, 19, 25)])  # reflowed: rows 0-9 no longer count
    assert not coverage2.seen(0)
    assert coverage.seen(0)  # seen stays seen


def test_time_on_screen_is_credited_from_the_injected_clock() -> None:
    clock = Clock()
    coverage = ReviewCoverage(2, clock=clock)
    coverage.observe([VisibleSection(0, 0, 3, 10)])
    clock.now += 2.5
    coverage.observe([VisibleSection(0, 4, 7, 10), VisibleSection(1, 0, 1, 5)])
    clock.now += 1.0
    coverage.pause()
    clock.now += 50.0
    coverage.observe(())
    assert coverage.dwell(0) == 3.5
    assert coverage.dwell(1) == 1.0


def test_next_unseen_wraps_and_empty_sections_count_as_seen() -> None:
    coverage = ReviewCoverage(4, clock=Clock())
    coverage.observe([VisibleSection(1, 0, -1, 0)])
    assert coverage.seen(1)
    assert coverage.next_unseen(0) == 2
    assert coverage.next_unseen(3) == 0
    coverage.mark_seen([0, 2, 3, 99])
    assert coverage.next_unseen(0) is None and coverage.complete


def test_a_new_revision_keeps_unchanged_sections_seen() -> None:
    coverage = ReviewCoverage(3, keys=["a", "b", "c"], clock=Clock())
    coverage.mark_seen([0, 1])
    revised = coverage.carry_over(["a", "B2", "c", "d"])
    assert revised.seen_flags == (True, False, False, False)


def test_the_question_names_the_unseen_sections() -> None:
    assert unseen_question(["Risks", "Verification"]) == (
        "Not viewed: Risks, Verification — approve anyway?"
    )
    assert unseen_question(["a", "b", "c", "d", "e", "f"]) == (
        "Not viewed: a, b, c, d and 2 more — approve anyway?"
    )
