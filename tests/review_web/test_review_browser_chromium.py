"""The browser review in a real headless Chromium, against the real engine.

The agent's ``exit_plan_mode`` review (``PlanController.review``) is answered by
a decider that serves it with :class:`BrowserReview` (as the TUI's ``w`` does):
a comment on the second section is saved into the plan file and goes back to
the model as a refinement; the revised plan is then approved through the
page's confirmation (which starts on Cancel) and the engine enters EXECUTE.

Set BROWSER_REVIEW_SCREENSHOT=path.png to keep the screenshot (docs/plan-mode.md).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from planshell.plan.blocks import plan_blocks
from planshell.plan.controller import Mode
from planshell.plan.document import parse_plan
from planshell.plan.review_format import REVIEW_PREFIX
from tests.plan_samples import generated_plan
from tests.review_web_helpers import PLAN, Served, planning_in_the_browser, running, serve
from tests.webdriver import MISSING, Browser, chromium

pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=f"headless Chromium test {MISSING}"),
    pytest.mark.timeout(180),
]

COMMENT = "Name the tests that cover the cache."
WAIT = 60.0


def comment_and_save(browser: Browser, url: str, shot: Path) -> None:
    browser.go(url)
    browser.wait_for("return document.querySelectorAll('.add-comment').length > 0")
    sections = browser.run(
        "return [...document.querySelectorAll('section.block h2')].map(h => h.textContent)"
    )
    assert sections[:2] == ["Context", "Steps"]
    # The block under the second section's heading.
    target = browser.run(
        "const h = [...document.querySelectorAll('section.block h2')][1].parentElement;"
        "return '#' + h.nextElementSibling.id;"
    )
    browser.click(f"{target} .add-comment")
    browser.type(f"{target} + .comment textarea", COMMENT)
    # Nothing typed is lost: Save refuses while the box holds text not yet Done.
    browser.click("#save")
    assert "unsaved text" in browser.run("return document.getElementById('status').textContent")
    browser.click(f"{target} + .comment button.done")
    browser.screenshot(shot)
    browser.click("#save")
    browser.wait_for("return !document.getElementById('banner').hidden")


def approve_through_confirmation(browser: Browser, url: str) -> None:
    browser.go(url)
    browser.wait_for("return !!document.getElementById('approve')")
    browser.click("#approve")
    assert browser.run("return document.getElementById('confirm').open")
    assert browser.run("return document.activeElement.id") == "confirm-cancel"
    browser.click("#confirm-cancel")
    assert not browser.run("return document.getElementById('confirm').open")
    browser.click("#approve")
    browser.click("#confirm-ok")
    browser.wait_for("return document.body.classList.contains('finished')")


async def test_comment_save_then_approve_in_chromium(project: Path, tmp_path: Path) -> None:
    runtime, decider, path = planning_in_the_browser(project, PLAN)
    shot = Path(os.environ.get("BROWSER_REVIEW_SCREENSHOT") or tmp_path / "review.png")

    with chromium(tmp_path / "profile") as browser:
        # Round 1: a comment on the second section, saved -> a refinement, still PLAN.
        first = asyncio.create_task(runtime.plan.review(str(path)))
        url = (await asyncio.wait_for(decider.served.get(), WAIT)).review.url
        await asyncio.to_thread(comment_and_save, browser, url, shot)
        result = await asyncio.wait_for(first, WAIT)
        assert COMMENT in result and "Stay in plan mode" in result
        assert runtime.plan.mode is Mode.PLAN
        lines = path.read_text().split("\n")
        steps = lines.index("## Steps")
        assert lines[steps + 2 : steps + 7] == [
            "- [ ] add the cache",
            "- [x] measure",
            "",
            f"{REVIEW_PREFIX} {COMMENT}",
            "",
        ]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

        # Round 2: the model revised the plan; approve it through the confirmation.
        revised = PLAN.replace(
            "- [x] measure", "- [x] measure\n- [ ] test the cache (tests/test_cache.py)"
        )
        runtime.store.write(path, revised)
        second = asyncio.create_task(runtime.plan.review(str(path)))
        url = (await asyncio.wait_for(decider.served.get(), WAIT)).review.url
        await asyncio.to_thread(approve_through_confirmation, browser, url)
        result = await asyncio.wait_for(second, WAIT)

    assert runtime.plan.mode is Mode.EXECUTE  # the engine received the approval
    assert runtime.plan.plan_path == path
    assert "approved" in result.lower()
    assert [item.content for item in runtime.todos.items][:3] == [
        "add the cache",
        "measure",
        "test the cache (tests/test_cache.py)",
    ]


def long_plan() -> str:
    """Twelve sections, one of them a code block far taller than the window (900 px)."""
    parts = ["# Plan: scrolled", ""]
    for number in range(1, 12):
        parts += [f"## Part {number}", ""]
        if number == 6:
            parts += ["```text", *(f"line {i} of a tall block" for i in range(120)), "```", ""]
        else:
            for i in range(1, 4):
                parts += [f"Paragraph {number}.{i} of the plan.", ""]
    return "\n".join(parts)


def seen_in_page(browser: Browser) -> list[int]:
    return browser.run(  # type: ignore[no-any-return]
        "return [...document.querySelectorAll('.outline li.seen')].map(li => +li.dataset.section)"
    )


def reported(served: Served) -> set[int]:
    return {section.index for report in served.seen for section in report}


def test_scrolling_marks_sections_seen_in_chromium(tmp_path: Path) -> None:
    """A section is seen once all of it was in the window; a jump over a tall one does not count.

    What the page saw reaches planshell through api/seen (``on_seen``), as the TUI receives it.
    """
    text = long_plan()
    for served in running(serve(tmp_path, text)):
        with chromium(tmp_path / "profile") as browser:
            browser.go(served.review.url)
            browser.wait_for("return document.getElementById('coverage').textContent !== ''")
            # The first screen: the title and the first parts, never the last one.
            browser.wait_for("return document.querySelectorAll('.outline li.seen').length > 0")
            first = seen_in_page(browser)
            assert 0 in first and 11 not in first
            # Show the top of the tall part 6, then jump to the end: the last part is seen,
            # part 6 is not (its code block was on screen, but never its end).
            browser.run(
                "document.querySelector('.outline li[data-section=\"6\"] a').click();"
                "return new Promise(done => requestAnimationFrame(() =>"
                " requestAnimationFrame(() => done(true))));"
            )
            browser.run("window.scrollTo(0, document.documentElement.scrollHeight)")
            browser.wait_for(
                "return document.querySelector('.outline li[data-section=\"11\"]')"
                ".classList.contains('seen')"
            )
            jumped = seen_in_page(browser)
            assert 6 not in jumped
            assert browser.run("return document.getElementById('coverage').textContent") == (
                f"{len(jumped)}/12 sections seen"
            )
            # Scroll through from the top, a third of a window at a time: everything is seen.
            browser.run("window.scrollTo(0, 0)")
            browser.run(
                "return new Promise(done => { const step = () => {"
                " const before = window.scrollY; window.scrollBy(0, innerHeight / 3);"
                " if (window.scrollY === before) done(true);"
                " else requestAnimationFrame(() => requestAnimationFrame(step)); }; step(); })"
            )
            browser.wait_for("return document.querySelectorAll('.outline li.seen').length === 12")
            assert browser.run("return document.getElementById('coverage').textContent") == (
                "12/12 sections seen"
            )
            # The page reports 250 ms after it saw the last section.
            served.wait_for(lambda s=served: reported(s) == set(range(12)), "not all reported")
        assert not served.decisions  # coverage never decides


# --- issue 28.4: a long plan arrives in chunks; it is all readable, its end counts as seen ---


def test_a_long_plan_loads_in_chunks_and_its_last_section_counts_in_chromium(
    tmp_path: Path,
) -> None:
    text = generated_plan(5_000, title="Long", intro="A long plan, served in chunks.")
    sections = parse_plan(text).sections
    last = len(sections) - 1
    for served in running(serve(tmp_path, text)):
        with chromium(tmp_path / "profile") as browser:
            browser.go(served.review.url)
            loaded = browser.run("return Number(document.body.dataset.loaded)")
            assert loaded < len(sections)  # the page itself carried only its first screen
            browser.wait_for("return document.getElementById('plan').dataset.complete === 'true'")
            # Every block of the plan is in the page, once, in order.
            starts = browser.run(
                "return [...document.querySelectorAll('section.block')].map(b => +b.dataset.start)"
            )
            assert starts == [block.start for block in plan_blocks(text)]
            # Every loaded block can take a comment, as the first screen's can.
            assert browser.run("return document.querySelectorAll('.add-comment').length") == len(
                starts
            )
            # The outline's last heading leads to it; at the end it is seen and reported.
            browser.run("[...document.querySelectorAll('.outline a')].pop().click()")
            browser.run("window.scrollTo(0, document.documentElement.scrollHeight)")
            browser.wait_for(
                f"return document.querySelector('.outline li[data-section=\"{last}\"]')"
                ".classList.contains('seen')"
            )
            served.wait_for(lambda s=served: last in reported(s), "the last section not reported")
        assert not served.decisions


# --- issue 26, item 20: the header at 1200 px, and no stale status next to the banner --------

LONG_TITLE_PLAN = PLAN.replace(
    "# Plan: widget cache",
    "# Plan: add rate limiting to the public widget API with per-client quotas and tests",
)

WRAPPED_BUTTONS = """
return [...document.querySelectorAll('header.bar button')].filter(b => {
  const range = document.createRange();
  range.selectNodeContents(b);
  const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
  return tops.size > 1;
}).map(b => b.textContent);
"""


def comment_at_1200_px_then_save(browser: Browser, url: str) -> tuple[list[str], str, str]:
    browser.resize(1200, 900)
    browser.go(url)
    browser.wait_for("return document.querySelectorAll('.add-comment').length > 0")
    target = browser.run("return '#' + document.querySelector('section.block').id")
    browser.click(f"{target} .add-comment")
    browser.type(f"{target} + .comment textarea", COMMENT)
    browser.click(f"{target} + .comment button.done")
    kept = browser.run("return document.getElementById('status').textContent")
    assert kept == "Comment kept; Save feedback sends it."
    wrapped = browser.run(WRAPPED_BUTTONS)
    browser.click("#save")
    browser.wait_for("return !document.getElementById('banner').hidden")
    banner = browser.run("return document.getElementById('banner-text').textContent")
    status = browser.run("return document.getElementById('status').textContent")
    return wrapped, banner, status


async def test_header_buttons_do_not_wrap_and_the_banner_clears_the_status(
    tmp_path: Path,
) -> None:
    with chromium(tmp_path / "profile") as browser:
        for served in running(serve(tmp_path / "project", LONG_TITLE_PLAN)):
            wrapped, banner, status = await asyncio.to_thread(
                comment_at_1200_px_then_save, browser, served.review.url
            )
            assert wrapped == []  # "Save feedback" stays on one line
            assert banner.startswith("Feedback saved")
            assert status == ""  # not "Comment kept; Save feedback sends it." beside it
