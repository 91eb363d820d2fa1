"""Browser review coverage (issue 25.1): ``api/seen`` records sections the page showed whole.

Against a real loopback server with a raw http.client: the endpoint has the same
guards as every POST (token, Origin, CSRF, JSON, size), validates indices against
the plan's sections, is idempotent, and never decides anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from planshell.review_web.server import SeenSection, _SeenIn
from tests.review_web_helpers import PLAN, Served, running, serve

# PLAN's sections, as the TUI's PlanView splits them (parse_plan).
SECTIONS = (
    SeenSection(0, 1, "Plan: widget cache"),
    SeenSection(1, 2, "Context"),
    SeenSection(2, 2, "Steps"),
    SeenSection(3, 2, "Verification"),
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from running(serve(tmp_path))


def page(served: Served) -> str:
    status, _, body = served.request("GET", served.base)
    assert status == 200
    return body.decode()


def test_the_page_tells_its_script_which_section_each_block_is_in(served: Served) -> None:
    html = page(served)
    assert 'data-sections="4"' in html
    sections = [int(n) for n in re.findall(r'<section class="block[^>]*data-section="(\d+)"', html)]
    # The title, Context (heading, paragraph), Steps (heading, list), Verification (heading, code).
    assert sections == [0, 1, 1, 2, 2, 3, 3]
    outline = re.findall(r'<li class="lvl-\d[^"]*" data-section="(\d+)"', html)
    assert outline == ["0", "1", "2", "3"]
    assert '<span id="coverage" class="coverage"></span>' in html


def test_seen_sections_go_to_the_terminal_once(served: Served) -> None:
    version = served.page_version()
    status, reply = served.post("api/seen", {"version": version, "sections": [2, 0]})
    assert (status, reply) == (200, {"ok": True, "seen": [0, 2]})
    assert served.seen == [(SECTIONS[0], SECTIONS[2])]
    # Idempotent: a repeat reports nothing new; only the new section goes on.
    status, reply = served.post("api/seen", {"version": version, "sections": [0, 2, 2, 3]})
    assert (status, reply) == (200, {"ok": True, "seen": [0, 2, 3]})
    assert served.seen == [(SECTIONS[0], SECTIONS[2]), (SECTIONS[3],)]
    status, _ = served.post("api/seen", {"version": version, "sections": [0, 2, 3]})
    assert status == 200 and len(served.seen) == 2


def test_indices_out_of_range_are_ignored(served: Served) -> None:
    version = served.page_version()
    status, reply = served.post("api/seen", {"version": version, "sections": [-1, 4, 99, 2**62, 1]})
    assert (status, reply) == (200, {"ok": True, "seen": [1]})
    assert served.seen == [(SECTIONS[1],)]
    status, reply = served.post("api/seen", {"version": version, "sections": [-5, 4]})
    assert (status, reply) == (200, {"ok": True, "seen": [1]})
    assert len(served.seen) == 1  # nothing new: nothing handed over


def test_seen_never_decides(served: Served) -> None:
    version = served.page_version()
    status, _ = served.post("api/seen", {"version": version, "sections": [0, 1, 2, 3]})
    assert status == 200
    assert not served.decisions and not served.ended
    assert not served.review.closed
    assert served.path.read_text() == PLAN


@pytest.mark.parametrize(
    "overrides",
    [
        {"X-Planshell-CSRF": ""},
        {"X-Planshell-CSRF": "forged"},
        {"Origin": ""},
        {"Origin": "http://evil.example"},
    ],
)
def test_forged_seen_post_is_refused(served: Served, overrides: dict[str, str]) -> None:
    status, _ = served.post(
        "api/seen", {"version": served.page_version(), "sections": [0, 1, 2, 3]}, **overrides
    )
    assert status == 403
    assert not served.seen
    # The real page still can: nothing was recorded by the forgery.
    status, reply = served.post("api/seen", {"version": served.page_version(), "sections": [1]})
    assert (status, reply["seen"]) == (200, [1])


def test_seen_needs_the_token(served: Served) -> None:
    status, _, _ = served.request(
        "POST",
        "/r/not-the-token/api/seen",
        body=b'{"version": "x", "sections": [0]}',
        headers={
            "Origin": f"http://{served.host}",
            "X-Planshell-CSRF": served.review.csrf,
            "Content-Type": "application/json",
        },
    )
    assert status == 403 and not served.seen


@pytest.mark.parametrize(
    "data",
    [
        {"sections": [0]},  # no version
        {"version": "x"},  # no sections
        {"version": "x", "sections": ["0"]},
        {"version": "x", "sections": [1.0]},
        {"version": "x", "sections": [True]},
        {"version": "x", "sections": [None]},
        {"version": "x", "sections": 0},
        {"version": "x", "sections": [0], "approve": True},  # extra keys are refused
        {"version": "x" * 65, "sections": [0]},
        {"version": "x", "sections": list(range(10_001))},
        ["not", "an", "object"],
    ],
)
def test_malformed_seen_bodies_are_400(served: Served, data: object) -> None:
    if isinstance(data, dict) and data.get("version") == "x":
        data = {**data, "version": served.page_version()}
    status, _ = served.post("api/seen", data)
    assert status == 400
    assert not served.seen and not served.decisions


def test_seen_body_over_the_cap_is_413(served: Served) -> None:
    status, _, _ = served.request(
        "POST",
        served.base + "api/seen",
        body=b"[" + b"0," * (130 * 1024) + b"0]",
        headers={
            "Origin": f"http://{served.host}",
            "X-Planshell-CSRF": served.review.csrf,
            "Content-Type": "application/json",
        },
    )
    assert status == 413 and not served.seen


def test_a_page_of_another_text_marks_nothing(served: Served) -> None:
    """The file changed since the page loaded: its indices are about other sections."""
    version = served.page_version()
    served.store.write(served.path, "# Plan: other\n\n## Only\n\nx\n")
    status, _ = served.post("api/seen", {"version": version, "sections": [0, 1]})
    assert status == 409 and not served.seen


def test_seen_after_a_decision_is_gone(served: Served) -> None:
    version = served.page_version()
    status, _ = served.post("api/approve", {"version": version})
    assert status == 200
    # The server closes on a decision; a report racing it is answered 410, nothing handed over.
    status, _ = served.review.mark_seen(_SeenIn(version=version, sections=[0]))
    assert status == 410 and not served.seen


def test_a_section_with_an_escape_in_its_heading_is_the_tuis_section(tmp_path: Path) -> None:
    """Sections are split from the sanitised text, as the TUI's PlanView splits them."""
    text = "# Plan: x\n\n\x1b[0m## Hidden\n\nbody\n"
    with_escape = serve(tmp_path, text)
    try:
        html = page(with_escape)
        assert 'data-sections="2"' in html
        status, reply = with_escape.post(
            "api/seen", {"version": with_escape.page_version(), "sections": [1]}
        )
        assert (status, reply["seen"]) == (200, [1])
        assert with_escape.seen == [(SeenSection(1, 2, "Hidden"),)]
    finally:
        with_escape.review.close()
