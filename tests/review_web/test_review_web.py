"""Browser review, engine side: the loopback server's guards, the feedback codec, XSS.

Everything runs against a real ThreadingHTTPServer on 127.0.0.1 with a raw
http.client (which can send a foreign Host, no Origin, any method).
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import socket
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planshell.plan.decider import Decision, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.review_format import (
    REVIEW_PREFIX,
    Comment,
    FeedbackError,
    apply_reviews,
    split_reviews,
)
from planshell.plan.store import PlanStore
from planshell.review_web.render import render_plan_html
from planshell.review_web.server import CSP, MAX_BODY_BYTES, SECURITY_HEADERS, BrowserReview
from tests.engine_helpers import HANG_GUARD
from tests.review_web_helpers import PLAN, Served, running, serve

WAIT = 30.0  # generous upper bound for a background event; never asserted as a duration


def ANY(line: str) -> bool:
    """The codec tests: every review line is the person's (the server asks its ledger)."""
    return True


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from running(serve(tmp_path))


def block_after(text: str, heading: str) -> tuple[int, int]:
    """The first block after the heading line ``heading``: (start, end)."""
    blocks = render_plan_html(text)
    for number, block in enumerate(blocks):
        if block.heading and block.title == heading:
            nxt = blocks[number + 1]
            return nxt.start, nxt.end
    raise AssertionError(heading)


# ------------------------------------------------------------------ the server's guards


def test_bound_to_loopback_only(served: Served) -> None:
    assert served.review._server is not None
    assert served.review._server.server_address[0] == "127.0.0.1"
    # 127.0.0.2 is loopback too on Linux: a server bound to 0.0.0.0 would answer there.
    with pytest.raises(OSError) as refused:
        socket.create_connection(("127.0.0.2", served.review.port), timeout=5).close()
    assert refused.value.errno in {errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.ENETUNREACH}


@pytest.mark.parametrize(
    "path",
    ["/", "/r/", "/r/wrong/", "/r/wrong/app.js", "/app.js", "/r//", "/r/%s-/", "/r/%s"[:-2] + "x/"],
)
def test_missing_or_wrong_token_is_403(served: Served, path: str) -> None:
    status, headers, _ = served.request("GET", path.replace("%s", served.review.token))
    assert status == 403
    assert headers["content-security-policy"] == CSP


def test_right_token_serves_page_and_assets(served: Served) -> None:
    for route, kind in [
        ("", "text/html"),
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
    ]:
        status, headers, body = served.request("GET", served.base + route)
        assert status == 200, route
        assert headers["content-type"].startswith(kind)
        assert body
    status, headers, body = served.request("HEAD", served.base)
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


@pytest.mark.parametrize(
    "host",
    [
        None,
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1",
        "127.0.0.1:{port}.evil.example",
        "localhost",
        "[::1]:{port}",
        "127.0.0.1:{other}",
    ],
)
def test_foreign_or_missing_host_is_refused(served: Served, host: str | None) -> None:
    port = served.review.port
    value = None if host is None else host.format(port=port, other=port + 1)
    status, headers, _ = served.request("GET", served.base, host=value)
    assert status in {421, 403}
    assert headers["x-frame-options"] == "DENY"


def test_localhost_host_is_accepted(served: Served) -> None:
    status, _, _ = served.request("GET", served.base, host=f"localhost:{served.review.port}")
    assert status == 200


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"])
def test_other_methods_are_405(served: Served, method: str) -> None:
    status, headers, _ = served.request(method, served.base + "api/save")
    assert status == 405
    assert headers["allow"] == "GET, HEAD, POST"
    assert not served.decisions


def test_body_over_the_cap_is_413(served: Served) -> None:
    body = b"x" * (MAX_BODY_BYTES + 1)
    status, _, _ = served.request(
        "POST",
        served.base + "api/save",
        body=body,
        headers={
            "Origin": f"http://{served.host}",
            "X-Planshell-CSRF": served.review.csrf,
            "Content-Type": "application/json",
        },
    )
    assert status == 413
    assert served.path.read_text() == PLAN


def test_security_headers_on_every_answer(served: Served) -> None:
    answers = [
        served.request("GET", served.base),
        served.request("GET", served.base + "app.js"),
        served.request("GET", "/r/nope/"),
        served.request("GET", served.base + "nothing-here"),
        served.request("DELETE", served.base),
        served.request("GET", served.base, host="evil.example"),
    ]
    for status, headers, _ in answers:
        for name, value in SECURITY_HEADERS:
            assert headers[name.lower()] == value, (status, name)
        assert headers["server"] == "planshell"  # no Python version advertised


@pytest.mark.parametrize(
    "overrides",
    [
        {"Origin": ""},
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"X-Planshell-CSRF": ""},
        {"X-Planshell-CSRF": "guess"},
    ],
)
def test_posts_need_same_origin_and_csrf_token(served: Served, overrides: dict[str, str]) -> None:
    version = served.page_version()
    start, end = block_after(PLAN, "Steps")
    status, _ = served.post(
        "api/save",
        {"version": version, "comments": [{"start": start, "end": end, "text": "x"}]},
        **overrides,
    )
    assert status == 403
    assert served.path.read_text() == PLAN and not served.decisions


def test_cross_site_form_post_is_refused(served: Served) -> None:
    """What an HTML form on another site can send: a form type, no CSRF header."""
    status, _, _ = served.request(
        "POST",
        served.base + "api/approve",
        body=b"version=x",
        headers={
            "Origin": "http://evil.example",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert status == 403
    status, _ = served.post("api/approve", {"version": "x"}, **{"Content-Type": "text/plain"})
    assert status == 415
    assert not served.decisions


# ------------------------------------------------------------------ decisions and lifecycle


def test_save_writes_review_line_after_the_block_and_refines(served: Served) -> None:
    start, end = block_after(PLAN, "Steps")
    status, reply = served.post(
        "api/save",
        {
            "version": served.page_version(),
            "comments": [{"start": start, "end": end, "text": "Say which tests cover the cache."}],
        },
    )
    assert status == 200, reply
    lines = served.path.read_text().split("\n")
    assert lines[end : end + 3] == ["", f"{REVIEW_PREFIX} Say which tests cover the cache.", ""]
    [review] = served.decisions
    assert review.decision is Decision.REFINE
    assert "Say which tests cover the cache." in review.feedback
    assert "> [!REVIEW]" in review.feedback
    assert served.review.wait_closed(WAIT)  # closed on decision
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", served.review.port), timeout=5).close()


def test_save_answers_409_when_the_file_changed(served: Served) -> None:
    version = served.page_version()
    changed = PLAN.replace("slow", "very slow")
    served.store.write(served.path, changed)
    start, end = block_after(PLAN, "Steps")
    status, _ = served.post(
        "api/save", {"version": version, "comments": [{"start": start, "end": end, "text": "x"}]}
    )
    assert status == 409
    assert served.path.read_text() == changed and not served.decisions
    assert served.page_version() != version  # the page's Reload gets the new text


def test_save_refuses_anchor_that_is_not_a_block(served: Served) -> None:
    status, reply = served.post(
        "api/save",
        {"version": served.page_version(), "comments": [{"start": 13, "end": 14, "text": "x"}]},
    )
    assert status == 400 and "not a block" in reply["error"]
    assert served.path.read_text() == PLAN


def test_failed_save_leaves_the_plan_intact(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Atomic: the write goes to a temp file renamed over the plan; a failed rename changes nothing."""
    import planshell.fsutil as fsutil

    def broken_replace(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "disk on fire")

    monkeypatch.setattr(fsutil.os, "replace", broken_replace)
    start, end = block_after(PLAN, "Steps")
    status, reply = served.post(
        "api/save",
        {"version": served.page_version(), "comments": [{"start": start, "end": end, "text": "x"}]},
    )
    assert status == 500, reply
    assert served.path.read_text() == PLAN
    assert not [p.name for p in served.path.parent.iterdir() if p.name.endswith(".tmp")]
    assert not served.decisions


def test_approve_binds_to_the_reviewed_text(served: Served) -> None:
    status, _ = served.post("api/approve", {"version": served.page_version()})
    assert status == 200
    [review] = served.decisions
    assert review.decision is Decision.APPROVE and review.reviewed_text == PLAN
    assert served.review.wait_closed(WAIT)


def test_approve_refused_after_drift(served: Served) -> None:
    version = served.page_version()
    served.store.write(served.path, PLAN + "\nmore\n")
    status, _ = served.post("api/approve", {"version": version})
    assert status == 409 and not served.decisions


def test_approve_only_when_offered(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, allow_approve=False)):
        _, _, page = served.request("GET", served.base)
        assert b'id="approve"' not in page
        status, _ = served.post("api/approve", {"version": served.page_version()})
        assert status == 403 and not served.decisions


def test_second_decision_is_refused(served: Served) -> None:
    version = served.page_version()
    assert served.post("api/approve", {"version": version})[0] == 200
    assert not served.review._decide(served.decisions[0])
    assert len(served.decisions) == 1


def open_stream(served: Served) -> socket.socket:
    """The page's event stream, as a browser tab holds it open."""
    sock = socket.create_connection(("127.0.0.1", served.review.port), timeout=WAIT)
    sock.sendall(f"GET {served.base}events HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode())
    assert b"text/event-stream" in sock.recv(4096)
    return sock


def test_a_closed_tab_is_not_the_end(tmp_path: Path) -> None:
    """Issue 26, item 9: a reload after a break finds the review still served."""
    for served in running(serve(tmp_path, grace=0.1, heartbeat=0.05)):
        open_stream(served).close()  # the tab goes away
        served.wait_for_pages([False])  # the grace is over: the terminal is told
        time.sleep(0.2)  # well past the grace
        assert not served.review.closed and not served.ended
        status, _, _ = served.request("GET", served.base)  # the reload
        assert status == 200
        sock = open_stream(served)  # the reloaded page connects again
        served.wait_for_pages([False, True])
        sock.close()
        assert not served.decisions


def test_stream_told_when_the_terminal_closes_the_review(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, heartbeat=0.05)):
        sock = socket.create_connection(("127.0.0.1", served.review.port), timeout=WAIT)
        sock.sendall(f"GET {served.base}events HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode())
        received = sock.recv(4096)
        served.review.close("decided in the terminal")
        while b"event: closed" not in received:
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
        sock.close()
        assert b"event: closed\ndata: decided in the terminal" in received
        assert not served.ended  # the terminal knows: no callback


def test_page_close_ends_without_decision(served: Served) -> None:
    assert served.post("api/close", {})[0] == 200
    assert served.review.wait_closed(WAIT)
    assert served.ended == ["closed in the browser"] and not served.decisions


def test_same_plan_gets_its_port_again(tmp_path: Path) -> None:
    first = serve(tmp_path)
    port = first.review.port
    first.review.close()
    for again in running(serve(tmp_path)):
        assert again.review.port == port
        assert again.review.token != first.review.token


# ------------------------------------------------------------------ the page renders inert

HOSTILE = """# Plan: <script>alert('title')</script>

## Steps

- [ ] <script>alert(1)</script>
- [ ] <img src=x onerror=alert(2)>
- [ ] [click](javascript:alert(3)) [v](vbscript:x) [d](data:text/html,<script>alert(4)</script>)
- [ ] ![pic](javascript:alert(5)) ![t](http://tracker.example/p.png "x\\" onerror=\\"alert(6)")
- [ ] <javascript:alert(7)> [x]( javascript:alert(8) ) [y](JaVaScRiPt:alert(9))
- [ ] [ref][r] <a href="javascript:alert(10)">a</a> <style>body{display:none}</style>

[r]: javascript:alert(11)

<iframe src="http://evil.example"></iframe>

```html
<script>alert(12)</script>
```

| <b onmouseover=alert(13)>x</b> |
|---|
| <svg onload=alert(14)> |
"""


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_hostile_plan_renders_inert(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, HOSTILE)):
        _, _, body = served.request("GET", served.base)
        page = body.decode()
        parser = _Tags()
        parser.feed(page)
        tags = parser.tags
        scripts = [attrs for tag, attrs in tags if tag == "script"]
        assert scripts == [{"src": "app.js", "defer": None}]
        for tag, attrs in tags:
            assert tag not in {"img", "iframe", "svg", "style", "object", "embed", "base", "form"}
            for name, value in attrs.items():
                assert not name.startswith("on"), (tag, name)
                assert name != "style", tag
                if name in {"href", "src"}:
                    assert value is not None
                    assert value.startswith(("http://", "https://", "#", "app.js", "style.css")), (
                        value
                    )
        ids = [attrs["id"] for _, attrs in tags if "id" in attrs]
        assert all(i and (i.startswith("b-") or i in _PAGE_IDS) for i in ids)
        # The text is shown, escaped.
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "&lt;img src=x onerror=alert(2)&gt;" in page
        assert "<title>&lt;script&gt;" in page


_PAGE_IDS = {
    "status",
    "save",
    "approve",
    "close",
    "banner",
    "banner-text",
    "reload",
    "plan",
    "confirm",
    "confirm-cancel",
    "confirm-ok",
    "confirm-unseen",
    "coverage",
    "extras",
    "confirm-extras",
}


def test_page_script_builds_no_html_from_strings() -> None:
    source = resources.files("planshell.review_web").joinpath("assets", "app.js").read_text()
    script = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "Function(",
        "srcdoc",
    ):
        assert sink not in script, sink


# ------------------------------------------------------------------ the feedback codec


def test_round_trip_and_idempotent() -> None:
    context = block_after(PLAN, "Context")
    steps = block_after(PLAN, "Steps")
    verify = block_after(PLAN, "Verification")
    comments = [
        Comment(*context, "Why now?"),
        Comment(*steps, "Name the tests.\nAnd the cache size."),
        Comment(*verify, "Add a benchmark."),
    ]
    written = apply_reviews(PLAN, comments, ANY)
    assert split_reviews(written, ANY) == (PLAN, comments)
    assert apply_reviews(written, comments, ANY) == written  # saving again changes nothing
    assert apply_reviews(written, [], ANY) == PLAN  # removing every comment restores the plan
    assert apply_reviews(written, [comments[1]], ANY) == apply_reviews(PLAN, [comments[1]], ANY)


def test_review_line_inside_code_is_content() -> None:
    text = "# Plan: x\n\n## Steps\n\n```md\n> [!REVIEW] this is an example\n```\n\n    > [!REVIEW] indented code\n"
    assert split_reviews(text, ANY) == (text, [])
    fence = block_after(text, "Steps")
    written = apply_reviews(text, [Comment(*fence, "ok")], ANY)
    assert "> [!REVIEW] this is an example" in written
    assert written.count(REVIEW_PREFIX) == 3
    base, comments = split_reviews(written, ANY)
    assert base == text and comments == [Comment(*fence, "ok")]


def test_anchor_inside_a_fence_is_refused() -> None:
    text = "# Plan: x\n\n```\nline one\nline two\n```\n"
    with pytest.raises(FeedbackError):
        apply_reviews(text, [Comment(3, 4, "split the fence")], ANY)
    with pytest.raises(FeedbackError):  # an unclosed fence swallows whatever follows
        apply_reviews("# Plan: x\n\n```\nopen", [Comment(2, 4, "x")], ANY)


def test_comment_text_is_one_review_line_per_line_without_controls() -> None:
    steps = block_after(PLAN, "Steps")
    written = apply_reviews(PLAN, [Comment(*steps, "a\x1b[31m red\n\n  b  ")], ANY)
    assert f"{REVIEW_PREFIX} a red\n{REVIEW_PREFIX} b\n" in written


_LINE = st.sampled_from(
    [
        "# Title",
        "## Section",
        "text",
        "more text",
        "",
        "- item",
        "- [ ] task",
        "1. one",
        "```",
        "~~~",
        "    code",
        "> quote",
        "| a |",
        "|---|",
        "---",
        "> [!REVIEW] old",
    ]
)


@given(st.lists(_LINE, max_size=30), st.data())
def test_any_plan_round_trips(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines)
    base, _ = split_reviews(text, ANY)
    blocks = render_plan_html(base)
    if not blocks:
        return
    chosen = data.draw(st.lists(st.sampled_from(blocks), unique_by=lambda b: b.start, max_size=4))
    comments = sorted(
        (Comment(b.start, b.end, f"c{b.start}") for b in chosen), key=lambda c: c.start
    )
    try:
        written = apply_reviews(text, comments, ANY)
    except FeedbackError:
        return  # refused rather than written ambiguously (unclosed fence)
    assert split_reviews(written, ANY) == (base, comments)
    assert apply_reviews(written, comments, ANY) == written


def test_outline_marks_sections_changed_since_the_last_review(tmp_path: Path) -> None:
    previous = PLAN.replace("- [ ] add the cache", "- [ ] add a cache")
    for served in running(serve(tmp_path, previous=previous)):
        _, _, body = served.request("GET", served.base)
        parser = _Tags()
        parser.feed(body.decode())
        marked = [
            attrs.get("class")
            for tag, attrs in parser.tags
            if tag == "li" and "lvl-" in (attrs.get("class") or "")
        ]
        assert marked == ["lvl-1", "lvl-2", "lvl-2 changed", "lvl-2"]
        assert b"1/2 steps done" in body


def test_close_all_closes_every_open_review(tmp_path: Path) -> None:
    from planshell.review_web.server import close_all

    first = serve(tmp_path / "a")
    second = serve(tmp_path / "b")
    close_all()  # what planshell's exit runs (atexit)
    assert first.review.wait_closed(WAIT) and second.review.wait_closed(WAIT)


def test_the_page_shows_the_revision_diff_as_a_toggle(tmp_path: Path) -> None:
    previous = PLAN.replace("- [ ] add the cache", "- [ ] add a cache")
    for served in running(serve(tmp_path, previous=previous)):
        _, _, body = served.request("GET", served.base)
        page = body.decode()
        assert '<details id="revision-diff">' in page  # closed until the person opens it
        assert "(1 changed place)" in page
        assert "<del>a</del><ins>the</ins>" in page


def test_the_diff_escapes_plan_text(tmp_path: Path) -> None:
    previous = PLAN.replace("- [ ] add the cache", "- [ ] add <b>x</b>")
    text = PLAN.replace("- [ ] add the cache", "- [ ] add <script>alert(1)</script>")
    for served in running(serve(tmp_path, text, previous=previous)):
        _, _, body = served.request("GET", served.base)
        page = body.decode()
        assert "<script>alert" not in page and "<b>x" not in page
        assert "&lt;script&gt;" in page


def test_no_earlier_review_no_diff(served: Served) -> None:
    _, _, body = served.request("GET", served.base)
    assert b"revision-diff" not in body


def test_the_page_says_changed_without_request_and_stale(served: Served) -> None:
    from dataclasses import replace

    from planshell.plan.staleness import Staleness

    served.review.request = replace(
        served.review.request,
        unrequested=("Risks <i>",),
        staleness=Staleness("abc1234def", ("src/a.py",)),
    )
    _, _, body = served.request("GET", served.base)
    page = body.decode()
    assert "Changed without request: Risks &lt;i&gt;" in page
    assert "Plan written at abc1234; 1 cited file changed since: src/a.py" in page


def test_the_page_says_which_mcp_tools_ran_while_planning(served: Served) -> None:
    from dataclasses import replace

    served.review.request = replace(
        served.review.request, mcp_ran=(("mcp__jira__get_issue<b>\x1b[31m", 2),)
    )
    _, _, body = served.request("GET", served.base)
    page = body.decode()
    assert "MCP tools ran while planning: mcp__jira__get_issue&lt;b&gt; (2×)" in page
    assert "\x1b" not in page and "<b>" not in page


_CREATOR: contextvars.ContextVar[str] = contextvars.ContextVar("creator")


async def test_a_decision_from_the_page_runs_in_the_context_that_made_the_review(
    tmp_path: Path,
) -> None:
    """The page's decision arrives on a server thread; its callback runs on the loop in the
    context the review was created in. Textual finds its app in a context variable: a
    callback in the server thread's context ran without one, and a screen dismissed from
    it could fail mid-removal ("NoActiveAppError", seen in the browser review's tests)."""
    store = PlanStore(tmp_path)
    store.ensure_dir()
    path = store.write(store.plans_dir / "cache.md", PLAN)
    loop = asyncio.get_running_loop()
    heard: asyncio.Future[tuple[Decision, str | None]] = loop.create_future()
    _CREATOR.set("the app's context")
    review = BrowserReview(
        ReviewRequest(path, PLAN, parse_plan(PLAN).title),
        store,
        allow_approve=True,
        on_decision=lambda decided: heard.set_result((decided.decision, _CREATOR.get(None))),
        loop=loop,
    )
    review.start()
    page = Served(review, store, path)
    try:
        version = await asyncio.to_thread(page.page_version)
        status, _ = await asyncio.to_thread(page.post, "api/approve", {"version": version})
        assert status == 200
        assert await asyncio.wait_for(heard, HANG_GUARD) == (Decision.APPROVE, "the app's context")
    finally:
        review.close()
