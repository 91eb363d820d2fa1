"""Tests for planshell.plan.document: parsing plans into title, sections and steps."""

from __future__ import annotations

from textwrap import dedent

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planshell.plan.document import (
    MAX_STEPS,
    PLAN_TEMPLATE_HINT,
    PlanDocument,
    Section,
    changed_sections,
    parse_plan,
    set_step_checked,
    validate_plan,
    verification_text,
)


def md(text: str) -> str:
    return dedent(text).lstrip("\n")


def titles(doc: PlanDocument) -> list[str]:
    return [section.title for section in doc.sections]


def step_texts(doc: PlanDocument) -> list[str]:
    return [step.text for step in doc.steps]


SAMPLE = md(
    """
    # Plan: Fix login redirect

    ## Goal
    Users land on the page they asked for.

    ## Steps
    - [x] Reproduce the bug
    - [ ] Patch `auth/redirect.py`
      - keep the `next` parameter
      - [ ] nested checkbox is not a step
    - [ ] Add a regression test

    ## Verification
    ```bash
    pytest tests/test_auth.py -q
    ```
    """
)

# ------------------------------------------------------------------ sections


def test_sections_split_at_headings() -> None:
    doc = parse_plan(SAMPLE)
    assert titles(doc) == ["Plan: Fix login redirect", "Goal", "Steps", "Verification"]
    assert [s.level for s in doc.sections] == [1, 2, 2, 2]
    goal = doc.sections[1]
    assert (goal.start, goal.end) == (2, 5)
    assert goal.text == "## Goal\nUsers land on the page they asked for.\n"
    assert doc.sections[-1].end == len(SAMPLE.splitlines())


def test_sections_cover_every_line_once() -> None:
    doc = parse_plan("intro\n# A\na\n## B\nb\n### C\n")
    spans = [(s.start, s.end) for s in doc.sections]
    assert spans == [(0, 1), (1, 3), (3, 5), (5, 6)]


def test_preamble_only_when_not_blank() -> None:
    assert titles(parse_plan("\n  \n# A\n")) == ["A"]
    doc = parse_plan("Some intro text\n\n# A\n")
    assert doc.sections[0] == Section(
        title="",
        level=0,
        start=0,
        end=2,
        text="Some intro text\n",
        digest=doc.sections[0].digest,
    )


def test_heading_syntax_rules() -> None:
    text = md(
        """
        #NoSpace is not a heading
        ####### seven hashes is not a heading
            # four spaces is code, not a heading
           ### three spaces is fine ###
        #
        ## Closing hashes ##
        ## Keeps#hash
        """
    )
    doc = parse_plan(text)
    assert [(s.level, s.title) for s in doc.sections if s.level] == [
        (3, "three spaces is fine"),
        (1, ""),
        (2, "Closing hashes"),
        (2, "Keeps#hash"),
    ]


def test_hash_inside_backtick_fence_is_not_a_heading() -> None:
    text = md(
        """
        # Real
        ```bash
        # a shell comment
        ## also a comment
        ```
        ## After
        """
    )
    assert titles(parse_plan(text)) == ["Real", "After"]


def test_tilde_fence_not_closed_by_backticks() -> None:
    text = md(
        """
        # A
        ~~~
        ```
        # inside tilde fence
        ```
        ~~~
        # B
        """
    )
    assert titles(parse_plan(text)) == ["A", "B"]


def test_longer_fence_needs_a_long_enough_closer() -> None:
    text = md(
        """
        # A
        ````markdown
        ```
        # still inside: the closer is too short
        ```
        ````
        # B
        """
    )
    assert titles(parse_plan(text)) == ["A", "B"]


def test_closer_must_have_nothing_after_it() -> None:
    text = "# A\n```\n``` not a closer\n# inside\n```\n# B\n"
    assert titles(parse_plan(text)) == ["A", "B"]


def test_fence_indentation_rules() -> None:
    # Up to three spaces opens a fence; four spaces is an indented code line.
    assert titles(parse_plan("# A\n   ```\n# in\n   ```\n# B\n")) == ["A", "B"]
    assert titles(parse_plan("# A\n    ```\n# B\n")) == ["A", "B"]


def test_backtick_info_string_with_backtick_is_not_a_fence() -> None:
    assert titles(parse_plan("# A\n``` a`b\n# B\n")) == ["A", "B"]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert titles(parse_plan("# A\n```\n# swallowed\n")) == ["A"]


def test_crlf_documents() -> None:
    doc = parse_plan(SAMPLE.replace("\n", "\r\n"))
    assert titles(doc) == titles(parse_plan(SAMPLE))
    assert step_texts(doc) == step_texts(parse_plan(SAMPLE))


# --------------------------------------------------------------------- title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Overview\n# Plan: The real one\n", "The real one"),
        ("## Intro\n# First H1\n# Second H1\n", "First H1"),
        ("### Deep\n## Shallow\n", "Deep"),
        ("\n\n  Just a line of text  \n# \n", "Just a line of text"),
        ("```\n# fenced\n```\n", "Untitled plan"),
        ("", "Untitled plan"),
        ("   \n\t\n", "Untitled plan"),
        ("# plan:   lower case prefix\n", "lower case prefix"),
        ("# Plan: \x1b[31mred\x1b[0m\u202e title\n", "red title"),
    ],
)
def test_title_rules(text: str, title: str) -> None:
    assert parse_plan(text).title == title


def test_title_from_long_line_is_truncated() -> None:
    title = parse_plan("x" * 200).title
    assert len(title) == 80
    assert title.endswith("…")


# --------------------------------------------------------------------- steps


def test_steps_from_steps_section() -> None:
    doc = parse_plan(SAMPLE)
    assert step_texts(doc) == [
        "Reproduce the bug",
        "Patch `auth/redirect.py`",
        "Add a regression test",
    ]
    assert [s.done for s in doc.steps] == [True, False, False]
    assert [s.index for s in doc.steps] == [1, 2, 3]
    lines = SAMPLE.split("\n")
    assert all(lines[s.line].lstrip().startswith("- [") for s in doc.steps)
    assert (doc.done_count, doc.total_steps) == (1, 3)


def test_steps_ignore_other_sections_lists() -> None:
    text = md(
        """
        ## Context
        - a context bullet
        ## Steps
        - first
        ## Risks
        - a risk
        """
    )
    assert step_texts(parse_plan(text)) == ["first"]


def test_checkbox_variants() -> None:
    text = "## Steps\n- [x] a\n- [X] b\n- [ ] c\n- d\n- [x]\n- [y] e\n- [x]f\n"
    doc = parse_plan(text)
    assert [(s.text, s.done, s.has_checkbox) for s in doc.steps] == [
        ("a", True, True),
        ("b", True, True),
        ("c", False, True),
        ("d", False, False),
        ("", True, True),
        ("[y] e", False, False),
        ("[x]f", False, False),
    ]


def test_numbered_steps() -> None:
    text = md(
        """
        ## Steps
        1. [ ] one
        2) two
           - detail under two
        10. ten
            3. nested: indented to the content column of "10. "
        11. eleven
        """
    )
    doc = parse_plan(text)
    assert step_texts(doc) == ["one", "two", "ten", "eleven"]
    assert [s.has_checkbox for s in doc.steps] == [True, False, False, False]


def test_nested_items_belong_to_their_parent() -> None:
    text = md(
        """
        ## Steps
        - [ ] parent
          - [x] child
            - [ ] grandchild
            continuation text
        * [ ] sibling with a different bullet
         + [ ] one-space indent: still top level
        """
    )
    doc = parse_plan(text)
    assert step_texts(doc) == [
        "parent",
        "sibling with a different bullet",
        "one-space indent: still top level",
    ]
    assert [s.done for s in doc.steps] == [False, False, False]


def test_list_items_inside_fences_are_not_steps() -> None:
    text = md(
        """
        ## Steps
        - [ ] real step
          ```
          - [ ] inside an indented fence
          ```
        ```
        - [ ] inside a top-level fence
        ```
        - [ ] second real step
        """
    )
    assert step_texts(parse_plan(text)) == ["real step", "second real step"]


def test_thematic_breaks_are_not_steps() -> None:
    text = "## Steps\n- a\n* * *\n---\n- - -\n___\n- b\n"
    assert step_texts(parse_plan(text)) == ["a", "b"]


def test_lazy_continuation_and_paragraph_after_blank() -> None:
    text = md(
        """
        ## Steps
        - [ ] a step whose text
        wraps onto the next line
        - [ ] b

        A paragraph ends the list.

        - [ ] c (a second list in the same section still counts)
        """
    )
    assert step_texts(parse_plan(text)) == [
        "a step whose text",
        "b",
        "c (a second list in the same section still counts)",
    ]


def test_steps_heading_variants() -> None:
    for heading in ("## Steps", "### steps", "# STEPS:", "## Implementation steps", "## **Steps**"):
        assert step_texts(parse_plan(f"- not me\n{heading}\n- me\n")) == ["me"], heading


def test_exact_steps_heading_beats_suffix_match() -> None:
    text = "## Verification steps\n- run tests\n## Steps\n- do it\n"
    assert step_texts(parse_plan(text)) == ["do it"]


def test_steps_section_includes_its_subsections() -> None:
    text = md(
        """
        ## Steps
        ### Phase 1
        - [x] a
        - [ ] b
        ### Phase 2
        - [ ] c
        ## Risks
        - not a step
        """
    )
    doc = parse_plan(text)
    assert step_texts(doc) == ["a", "b", "c"]


def test_steps_heading_inside_fence_does_not_count() -> None:
    text = "- fallback\n```\n## Steps\n- fenced\n```\n"
    assert step_texts(parse_plan(text)) == ["fallback"]


def test_fallback_uses_first_list_only() -> None:
    text = md(
        """
        # Plan: no steps heading
        Intro paragraph.

        - [ ] first
          - nested
        - [x] second

        Another paragraph.

        - not in the first list
        """
    )
    doc = parse_plan(text)
    assert step_texts(doc) == ["first", "second"]
    assert doc.done_count == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- one\n# Next\n- two\n", ["one"]),  # a heading ends the list
        ("- one\n---\n- two\n", ["one"]),  # so does a thematic break
        ("- one\n~~~\ncode\n~~~\n- two\n", ["one"]),  # and an unindented fence
        ("- one\n  ~~~\n  code\n  ~~~\n- two\n", ["one", "two"]),  # item content
        ("- one\nlazy continuation\n- two\n", ["one", "two"]),
        ("- one\n\n  indented paragraph\n\n- two\n", ["one", "two"]),
        ("- one\n\nparagraph\n- two\n", ["one"]),
    ],
)
def test_fallback_list_boundaries(text: str, expected: list[str]) -> None:
    assert step_texts(parse_plan(text)) == expected


def test_empty_steps_section_has_no_steps() -> None:
    assert parse_plan("- elsewhere\n## Steps\nTBD\n").steps == ()


def test_no_lists_no_steps() -> None:
    doc = parse_plan("# Plan: x\nJust prose.\n")
    assert doc.steps == ()
    assert (doc.done_count, doc.total_steps) == (0, 0)


# ------------------------------------------------------------- validation


def _plan_with_steps(count: int) -> str:
    return "# Plan: big\n## Steps\n" + "".join(f"- [ ] step {n}\n" for n in range(count))


def test_validate_accepts_up_to_the_cap() -> None:
    assert MAX_STEPS == 50
    assert validate_plan(_plan_with_steps(50)) is None
    assert validate_plan(SAMPLE) is None
    assert validate_plan("") is None


def test_validate_refuses_51_steps() -> None:
    message = validate_plan(_plan_with_steps(51))
    assert message is not None
    assert "51" in message
    assert "50" in message
    assert "split it into phases or group small steps" in message


def test_nested_items_do_not_count_towards_the_cap() -> None:
    text = "## Steps\n- parent\n" + "".join(f"  - sub {n}\n" for n in range(80))
    assert validate_plan(text) is None


# ---------------------------------------------------------------- checking


def test_set_step_checked_round_trip() -> None:
    ticked = set_step_checked(SAMPLE, 2, True)
    assert parse_plan(ticked).steps[1].done
    changed = [a for a, b in zip(SAMPLE.split("\n"), ticked.split("\n"), strict=True) if a != b]
    assert changed == ["- [ ] Patch `auth/redirect.py`"]
    assert set_step_checked(ticked, 2, False) == SAMPLE


def test_set_step_checked_is_idempotent() -> None:
    assert set_step_checked(SAMPLE, 1, True) == SAMPLE


def test_set_step_checked_adds_missing_checkbox() -> None:
    text = "## Steps\n- plain\n1. numbered\n-\n 2)\ttabbed\n"
    out = set_step_checked(text, 1, True)
    out = set_step_checked(out, 2, False)
    out = set_step_checked(out, 3, True)
    out = set_step_checked(out, 4, True)
    assert out == "## Steps\n- [x] plain\n1. [ ] numbered\n- [x]\n 2)\t[x] tabbed\n"
    assert [(s.done, s.has_checkbox) for s in parse_plan(out).steps] == [
        (True, True),
        (False, True),
        (True, True),
        (True, True),
    ]


def test_set_step_checked_keeps_crlf_and_uppercase_x() -> None:
    text = "## Steps\r\n- [X] a\r\n- [ ] b\r\n"
    assert set_step_checked(text, 1, True) == text
    assert set_step_checked(text, 2, True) == "## Steps\r\n- [X] a\r\n- [x] b\r\n"
    assert set_step_checked(text, 1, False) == "## Steps\r\n- [ ] a\r\n- [ ] b\r\n"


@pytest.mark.parametrize("index", [0, -1, 4, 100])
def test_set_step_checked_bad_index(index: int) -> None:
    with pytest.raises(IndexError, match="3 steps"):
        set_step_checked(SAMPLE, index, True)


def test_set_step_checked_no_steps_or_bad_type() -> None:
    with pytest.raises(IndexError, match="no steps"):
        set_step_checked("# nothing", 1, True)
    with pytest.raises(ValueError, match="integer"):
        set_step_checked(SAMPLE, "1", True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer"):
        set_step_checked(SAMPLE, True, True)


# ---------------------------------------------------------- change tracking


def test_digest_shape_and_stability() -> None:
    doc = parse_plan(SAMPLE)
    for section in doc.sections:
        assert len(section.digest) == 16
        int(section.digest, 16)
    assert parse_plan(SAMPLE).sections == doc.sections


def test_changed_sections() -> None:
    old = parse_plan(SAMPLE)
    assert changed_sections(None, old) == {0, 1, 2, 3}
    assert changed_sections(old, old) == set()

    edited = parse_plan(SAMPLE.replace("Users land on", "Everyone lands on"))
    assert changed_sections(old, edited) == {1}

    renamed = parse_plan(SAMPLE.replace("## Goal", "## Objective"))
    assert changed_sections(old, renamed) == {1}

    added = parse_plan(SAMPLE + "\n## Risks\nNone.\n")
    assert changed_sections(old, added) == {4}


def test_changed_sections_ignores_whitespace_noise_and_order() -> None:
    old = parse_plan(SAMPLE)
    noisy = parse_plan(SAMPLE.replace("\n", "   \r\n").replace("## Goal", "## Goal ##") + "\n\n")
    assert changed_sections(old, noisy) == set()

    text = "## A\na\n## B\nb\n"
    swapped = "## B\nb\n## A\na\n"
    assert changed_sections(parse_plan(text), parse_plan(swapped)) == set()


def test_level_change_counts_as_changed() -> None:
    assert changed_sections(parse_plan("## A\nx\n"), parse_plan("### A\nx\n")) == {0}


# ----------------------------------------------------- template, verification


def test_template_hint_is_a_valid_plan() -> None:
    doc = parse_plan(PLAN_TEMPLATE_HINT)
    assert doc.title == "<short title>"
    assert titles(doc)[1:] == ["Goal", "Context", "Approach", "Steps", "Risks", "Verification"]
    assert doc.total_steps == 3
    assert all(s.has_checkbox and not s.done for s in doc.steps)
    assert validate_plan(PLAN_TEMPLATE_HINT) is None
    verification = verification_text(doc)
    assert verification is not None
    assert verification.startswith("```") and verification.endswith("```")


def test_verification_text() -> None:
    assert verification_text(parse_plan(SAMPLE)) == "```bash\npytest tests/test_auth.py -q\n```"
    assert verification_text(parse_plan("# A\n## Verification\n\n   \n")) is None
    assert verification_text(parse_plan("# A\nno such section\n")) is None
    nested = "## Verification\nRun:\n### Unit\npytest\n## Notes\nx\n"
    assert verification_text(parse_plan(nested)) == "Run:\n### Unit\npytest"
    crlf = "## Verification\r\nmake test\r\n"
    assert verification_text(parse_plan(crlf)) == "make test"


# ------------------------------------------------------------ big inputs
# Speed (linear scaling) is measured in bench/scaling.py, not asserted here.


def test_ten_thousand_lines_parse() -> None:
    lines = (PLAN_TEMPLATE_HINT * 600).split("\n")[:10_000]
    doc = parse_plan("\n".join(lines))
    assert len(doc.sections) > 1000
    assert doc.sections[-1].end == 10_000  # every line is in a section


def test_pathological_input_parses() -> None:
    pieces = ["#" * 200_000, "- " * 100_000, "1. " * 100_000, " " * 100_000 + "x", "`" * 200_000]
    text = "## Steps\n" + "\n".join(pieces)
    doc = parse_plan(text)
    assert [section.title for section in doc.sections] == ["Steps"]  # "###...#" is no heading
    assert doc.done_count <= doc.total_steps <= MAX_STEPS


# ------------------------------------------------------------- properties

MARKDOWN_LINES = st.one_of(
    st.sampled_from(
        [
            "",
            "   ",
            "# Plan: t",
            "## Steps",
            "### Phase",
            "## Risks",
            "## Verification",
            "```",
            "````",
            "~~~",
            "  ```py",
            "- [ ] a",
            "- [x] b",
            "  - [ ] nested",
            "    - deeper",
            "* star",
            "+ plus",
            "1. one",
            "2) two",
            "10. ten",
            "-",
            "1.",
            "- [X]",
            "-\tTab",
            "* * *",
            "---",
            "text",
            "  continuation",
            "- [ ]x",
            "#",
            "\t- tabbed",
            "- item\r",
        ]
    ),
    st.text(alphabet=" \t#-*+[]xX`~.)1\r>", max_size=12),
)
MARKDOWN = st.lists(MARKDOWN_LINES, max_size=40).map("\n".join)


@given(st.text())
def test_parse_never_raises_on_arbitrary_text(text: str) -> None:
    doc = parse_plan(text)
    assert doc.title
    assert doc.done_count <= doc.total_steps


@given(MARKDOWN)
@settings(max_examples=300)
def test_parse_never_raises_on_markdownish_text(text: str) -> None:
    doc = parse_plan(text)
    line_count = len(text.split("\n")) - (1 if text.endswith("\n") or not text else 0)
    previous_end = 0
    for section in doc.sections:
        assert section.start >= previous_end
        assert section.start < section.end <= line_count or (section.level == 0)
        previous_end = section.end
    for number, step in enumerate(doc.steps, start=1):
        assert step.index == number
        assert 0 <= step.line < line_count


@given(MARKDOWN, st.data())
@settings(max_examples=300)
def test_set_step_checked_changes_one_line_and_reparses(text: str, data: st.DataObject) -> None:
    before = parse_plan(text)
    if not before.steps:
        return
    index = data.draw(st.integers(1, before.total_steps), label="index")
    done = data.draw(st.booleans(), label="done")
    target = before.steps[index - 1]
    # CommonMark: an empty item ("-") cannot be continued lazily, an item with
    # text can, so giving an empty item its box may pull the next line into it.
    assume(target.has_checkbox or bool(target.text))
    out = set_step_checked(text, index, done)
    old_lines, new_lines = text.split("\n"), out.split("\n")
    assert len(old_lines) == len(new_lines)
    diff = [n for n, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    target = before.steps[index - 1]
    assert diff in ([], [target.line])
    if target.has_checkbox and target.done == done:
        assert diff == []
    after = parse_plan(out)
    assert after.total_steps == before.total_steps
    for old, new in zip(before.steps, after.steps, strict=True):
        if old.index == index:
            assert (new.done, new.has_checkbox, new.text, new.line) == (
                done,
                True,
                old.text,
                old.line,
            )
        else:
            assert new == old
    # And back again: unticking restores the state without touching other lines.
    again = parse_plan(set_step_checked(out, index, not done))
    assert again.steps[index - 1].done is (not done)


@given(MARKDOWN)
@settings(max_examples=300)
def test_steps_are_exactly_the_task_items_the_review_shows(body: str) -> None:
    """Issue 13: one grammar. A step with a box is a top-level task item on screen, and back."""
    import re

    from planshell.markdown import parse_blocks, render_blocks

    text = "## Steps\n" + body
    doc = parse_plan(text)
    later = [s.start for s in doc.sections[1:] if 1 <= s.level <= 2]
    end = later[0] if later else len(text.split("\n"))
    shown: set[tuple[int, bool]] = set()
    seen_lines: set[int] = set()
    for row in render_blocks(parse_blocks(text.replace("\r", " ")), 200):
        if not row.segments or row.start in seen_lines or not 0 < row.start < end:
            continue
        seen_lines.add(row.start)
        match = re.match(r"(?:\d+[.)] )?([☐☑])", row.text)
        if match:
            shown.add((row.start, match[1] == "☑"))
    steps = {(s.line, s.done) for s in doc.steps if s.has_checkbox}
    assert steps == shown


@given(MARKDOWN)
@settings(max_examples=300)
def test_steps_are_exactly_the_task_items_the_plan_view_shows(body: str) -> None:
    """Issue 13: the review's PlanView (section by section) shows a box for each step, and back."""
    import re

    from planshell.sanitize import strip_terminal_controls
    from planshell.ui.widgets.plan_view import render_section

    text = strip_terminal_controls("## Steps\n" + body)  # what PlanView shows
    doc = parse_plan(text)
    lines = text.split("\n")
    steps_end = next((s.start for s in doc.sections[1:] if 1 <= s.level <= 2), len(lines))
    shown: set[tuple[int, bool]] = set()
    for section in doc.sections:
        if section.start >= steps_end:
            break
        seen: set[int] = set()
        for row in render_section(lines, section, 200):
            if not row.segments or row.start in seen:
                continue
            seen.add(row.start)
            match = re.match(r"(?:\d+[.)] )?([☐☑])", row.text)
            if match:
                shown.add((row.start, match[1] == "☑"))
    assert {(s.line, s.done) for s in doc.steps if s.has_checkbox} == shown


def test_an_indented_box_is_code_not_a_step() -> None:
    doc = parse_plan("## Steps\n\n    - [ ] x\n")
    assert doc.steps == ()
    doc = parse_plan("## Steps\n\n- [ ] real\n\n    - [ ] nested detail\n")
    assert [s.text for s in doc.steps] == ["real"]


def test_a_text_parsed_again_gives_the_same_document() -> None:
    from planshell.plan.document import parse_plan_uncached

    """``planshell review`` reads the title, then the view parses the same text: one parse."""
    text = "# Plan: shared\n\n## Steps\n\n1. [ ] one\n"
    first = parse_plan(text)
    assert parse_plan(text) is first
    assert parse_plan("".join(text)) is first  # an equal string, another object
    other = parse_plan(text + "2. [ ] two\n")
    assert other is not first and other.total_steps == 2 and first.total_steps == 1
    fresh = parse_plan_uncached(text)  # what the scaling bench times: a parse each call
    assert fresh == first and fresh is not first
