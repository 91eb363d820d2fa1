"""A long plan's browser page: the first screen in the page, the rest in chunks (issue 28.4).

Against a real loopback server with a raw http.client. The page carries the
sections of its first screen and the whole outline; ``GET sections`` serves the
rest in order and ``GET extras`` the O(plan) notices (unshown lines, hidden
characters, the revision diff). What the chunks add up to must be exactly what
one page of the whole plan holds, with the same guards as every other URL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from planshell.plan.document import parse_plan
from planshell.review_web import server as review_server
from tests.plan_samples import generated_plan
from tests.review_web_helpers import Served, running, serve

LONG = generated_plan(5_000, title="Long", intro="A long plan served in chunks.")
# Over INLINE_EXTRAS_CHARS: its notices are fetched after the page.
LONGER = generated_plan(8_000, title="Longer", intro="A plan whose notices come later.")
HIDDEN_STEP = '[note]: https://example.com "step 0: rm -rf build/"'

SECTION = re.compile(r'<section class="block[^>]*data-section="(\d+)"')


def main_html(page: str) -> str:
    return page.split('<main id="plan">', 1)[1].split("</main>", 1)[0]


def attr(page: str, name: str) -> str:
    match = re.search(rf'<body [^>]*data-{name}="([^"]*)"', page)
    assert match is not None, name
    return match.group(1)


def get(served: Served, route: str) -> tuple[int, dict[str, object]]:
    status, _, body = served.request("GET", served.base + route)
    return status, json.loads(body or b"{}")


def load_all(served: Served) -> tuple[str, list[str]]:
    """The page, and every chunk's HTML fetched as its script does (in order, to the end)."""
    status, _, body = served.request("GET", served.base)
    assert status == 200
    page = body.decode()
    version, total, loaded = (
        attr(page, "version"),
        int(attr(page, "sections")),
        int(attr(page, "loaded")),
    )
    chunks: list[str] = []
    while loaded < total:
        status, reply = get(served, f"sections?from={loaded}&version={quote(version)}")
        assert status == 200, reply
        following = int(str(reply["next"]))
        assert following > loaded
        chunks.append(str(reply["html"]))
        loaded = following
    assert loaded == total
    return page, chunks


def test_the_page_carries_only_its_first_screen_and_the_chunks_are_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for served in running(serve(tmp_path / "lazy", LONG)):
        page, chunks = load_all(served)
    assert len(chunks) >= 2  # 5,000 lines: the first screen, then more than one chunk
    first = main_html(page)
    total = int(attr(page, "sections"))
    assert 0 < int(attr(page, "loaded")) < total
    assert len(SECTION.findall(first)) < len(SECTION.findall("".join(chunks)))
    # The whole outline is in the page at once, the last heading included.
    sections = parse_plan(LONG).sections
    assert page.count('<li class="lvl-') == sum(1 for s in sections if 1 <= s.level <= 3)
    last = [line for line in LONG.splitlines() if line.startswith("## ")][-1][3:]
    assert last in page.split('<nav class="outline"', 1)[1].split("</nav>", 1)[0]
    assert last not in first

    # The same plan in one page (the first screen made as long as the plan).
    monkeypatch.setattr(review_server, "FIRST_LINES", 10**9)
    for served in running(serve(tmp_path / "whole", LONG)):
        _, _, body = served.request("GET", served.base)
    whole = body.decode()
    assert attr(whole, "loaded") == attr(whole, "sections")
    assert first + "".join(chunks) == main_html(whole)


def test_chunks_are_guarded_like_every_other_url(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, LONG)):
        version = served.page_version()
        base = served.base
        for route in (f"sections?from=1&version={version}", f"extras?version={version}"):
            token = base.split("/")[2]
            status, _, _ = served.request("GET", base.replace(token, "x" * len(token)) + route)
            assert status == 403
            status, _, _ = served.request("GET", base + route, host="evil.example:80")
            assert status == 421
            status, headers, _ = served.request("GET", base + route)
            assert status == 200
            assert headers["content-security-policy"] == review_server.CSP
        # Another text's page gets 409, a section that is not there 400.
        assert get(served, "sections?from=1&version=0")[0] == 409
        assert get(served, "extras?version=0")[0] == 409
        for first in ("", "-1", "x", "99999999", "1e3", "9" * 20):
            assert get(served, f"sections?from={first}&version={version}")[0] == 400, first
        # The plan changed on disk: the old page's next chunk is refused.
        served.store.write(served.path, LONG.replace("Phase 120:", "Phase 120 (revised):"))
        assert get(served, f"sections?from=1&version={version}")[0] == 409


def test_a_hostile_line_far_down_is_escaped_in_its_chunk(tmp_path: Path) -> None:
    hostile = LONG + (
        "\n## Last\n\n<script>alert(1)</script>\n\n[run](javascript:alert(1)) "
        '<img src=x onerror="alert(2)"> [docs](https://example.com)\n'
    )
    for served in running(serve(tmp_path, hostile)):
        page, chunks = load_all(served)
    assert "<script>alert" not in page
    tail = chunks[-1]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in tail
    assert "<script" not in tail and "<img" not in tail
    assert 'href="javascript' not in tail
    assert 'rel="noopener noreferrer"' in tail  # the links of a chunk are hardened too


def test_a_long_plans_notices_come_after_the_page(tmp_path: Path) -> None:
    previous = LONGER.replace("Phase 7:", "Phase seven:")
    text = LONGER + f"\n{HIDDEN_STEP}\n\nzero\u200bwidth\n"
    for served in running(serve(tmp_path, text, previous=previous)):
        status, _, body = served.request("GET", served.base)
        page = body.decode()
        assert attr(page, "extras") == "lazy"
        assert '<div id="extras"></div>' in page and '<div id="confirm-extras"></div>' in page
        assert "unshown-lines" not in page and "revision-diff" not in page
        status, reply = get(served, f"extras?version={quote(attr(page, 'version'))}")
    assert status == 200
    top, confirm = str(reply["top"]), str(reply["confirm"])
    assert "step 0: rm -rf build/" in top  # the unshown line, escaped
    assert "1 invisible or bidi character" in top
    assert 'id="revision-diff"' in top and "seven" in top
    assert "the agent will read them too" in confirm


def test_a_short_plans_page_is_whole_with_its_notices(tmp_path: Path) -> None:
    text = f"# Plan: short\n\n## Steps\n\n- [ ] one\n\n{HIDDEN_STEP}\n"
    for served in running(serve(tmp_path, text)):
        status, _, body = served.request("GET", served.base)
    assert status == 200
    page = body.decode()
    assert attr(page, "extras") == "inline"
    assert attr(page, "loaded") == attr(page, "sections")
    assert "unshown-lines" in page and "the agent will read them too" in page


def test_seen_reports_count_sections_served_in_later_chunks(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, LONG)):
        page, _ = load_all(served)
        last = int(attr(page, "sections")) - 1
        status, reply = served.post(
            "api/seen", {"version": attr(page, "version"), "sections": [last]}
        )
        assert (status, reply) == (200, {"ok": True, "seen": [last]})
        served.wait_for(lambda s=served: bool(s.seen), "the seen report")
    assert [s.index for s in served.seen[0]] == [last]
    assert served.seen[0][0].title == parse_plan(LONG).sections[last].title
