"""The browser review and tracked comments (issue 25.3): status on the page, saves tracked.

The statuses come from the engine (``ReviewRequest.comments``), the same as the
TUI's comments panel; a save sends its comments, and the last round's open
ones, as tracked comments in one message. Real HTTP on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

from planshell.plan.decider import Decision
from planshell.plan.review_comments import CommentStatus, ReviewComment
from planshell.review_web.render import render_plan_html
from tests.review_web_helpers import PLAN, running, serve

ADDRESSED = ReviewComment(
    "c1",
    "Context",
    "Widgets are slow to serve.",
    "Why slow?",
    CommentStatus.ADDRESSED,
    reply="Measured: <script>alert(1)</script> 40 ms",
)
OPEN = ReviewComment("c2", "Verification", "pytest -q", "Which tests?", note="changed, no reply")


def _steps() -> tuple[int, int]:
    block = next(b for b in render_plan_html(PLAN) if b.kind == "bullet_list")
    return block.start, block.end


def test_the_page_shows_each_comment_status_escaped(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, comments=(ADDRESSED, OPEN))):
        status, _, body = served.request("GET", served.base)
        page = body.decode()
        assert status == 200
        assert "Your last comments: 1 addressed, 1 open" in page
        assert '<li class="comment-status -addressed"><strong>addressed</strong>' in page
        assert '<li class="comment-status -open"><strong>open</strong>' in page
        assert "(changed, no reply)" in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page


def test_a_save_is_tracked_with_the_open_comments_carried(tmp_path: Path) -> None:
    for served in running(serve(tmp_path, comments=(ADDRESSED, OPEN))):
        start, end = _steps()
        status, reply = served.post(
            "api/save",
            {
                "version": served.page_version(),
                "comments": [{"start": start, "end": end, "text": "Split step one"}],
            },
        )
        assert status == 200, reply
        [review] = served.decisions
        assert review.decision is Decision.REFINE
        carried, saved = review.comments
        assert carried == OPEN  # the addressed one is done; the open one goes along
        assert (saved.id, saved.section, saved.text) == ("c3", "Steps", "Split step one")
        assert saved.quote == "- [ ] add the cache\n- [x] measure" and saved.open
        assert review.feedback.count("Comment: ") == 2
        assert "[c2]" in review.feedback and "[c3]" in review.feedback
