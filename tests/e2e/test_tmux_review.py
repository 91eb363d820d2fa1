"""Issue 25's "done when" in a real terminal: reviewing a plan, not just reading it.

planshell runs in tmux against tests/sse_server.py (through tests/scripted_sse.py),
in a small git project. One walk-through, in order:

1. the model writes a plan longer than the screen with no Verification section and
   asks for review: the header shows the lint chip "no Verification" (`l` lists it);
2. `a` at once asks "Not viewed: … — approve anyway?"; `n` goes back, nothing approved;
3. `c` on the Steps section writes a `> [!REVIEW]` line into the plan file; `r`, Enter
   sends it, and the model's next request carries it;
4. the model revises (a `> [!RESOLVED]` reply under the comment, a Verification section
   added); between that write and its exit_plan_mode the test changes a cited file (the
   server holds the exit reply until the test releases it);
5. the review shows the comment addressed, the staleness chip "written at <head>; 1 cited
   file changed since" (`s` shows the file's diff) and `d` the word diff;
6. `u` until every section was seen, then `a` opens the approve dialog with the
   blast-radius card (scope files and sizes); Esc, Esc keeps planning, /quit exits 0.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.scripted_sse import ScriptedServer, SseReply
from tests.tmux_harness import TIMEOUT, TmuxError, TmuxPane, start_planshell

pytestmark = pytest.mark.tmux

SERVER = "src/app/server.py"
NEW = "src/app/limiter.py"
COMMENT = "Say which tests cover the limiter"
REPLY = "Verification now greps the handler for the limiter call"
CHECK = "grep -q limiter src/app/server.py"
GATE = "cited-file-changed"
CONTEXT = "\n".join(
    f"- Fact {n}: the handler answers request kind {n} unthrottled." for n in range(1, 25)
)
STEPS = f"""## Steps

- [ ] Create `{NEW}` with a token bucket per client
- [ ] Call the limiter first thing in `handle_request` in `{SERVER}`
- [ ] Document the limit in `README.md`
"""
RISKS = """## Risks

- One bucket per client grows without bound: expire idle buckets.
"""
PLAN = f"""# Plan: Rate limit the handler

## Goal

Limit how often one client can call the widget handler.

## Context

- `{SERVER}` holds `handle_request`, which answers every request.
{CONTEXT}

## Approach

A token bucket per client, checked at the top of the handler.

{STEPS}
{RISKS}"""
# What `c` on Steps writes: the comment after the section's last block, between blank lines
# (the blank line that was there stays after them).
COMMENTED = PLAN.replace(STEPS, f"{STEPS}\n> [!REVIEW] {COMMENT}\n\n")
REVISED = (
    PLAN.replace(STEPS, f"{STEPS}\n> [!REVIEW] {COMMENT}\n> [!RESOLVED] {REPLY}\n")
    + f"""
## Verification

```sh
{CHECK}
```
"""
)
PLAN_PATH = "rl.md"
REPLIES = [
    SseReply(
        "Writing the plan.",
        calls=[("write_plan", {"title": "Rate limit", "content": PLAN, "plan_path": PLAN_PATH})],
    ),
    SseReply(calls=[("exit_plan_mode", {"plan_path": PLAN_PATH})]),
    # The answer to the comments: the reply line and the Verification section.
    SseReply(
        "Revising.",
        calls=[("write_plan", {"title": "Rate limit", "content": REVISED, "plan_path": PLAN_PATH})],
    ),
    # Held until the test has changed the cited file (after the write, before the review).
    SseReply(calls=[("exit_plan_mode", {"plan_path": PLAN_PATH})], wait_for_file=GATE),
    SseReply("Still planning: tell me what to change."),
]
SEEN = re.compile(r"(\d+)/(\d+) seen")


def git(project: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    done = subprocess.run(command, cwd=project, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def wait_for(predicate: Callable[[], bool], what: str, show: Callable[[], str] = str) -> None:
    """Poll ``predicate`` (a file, the request log): a hang guard, never a speed budget.

    ``show`` says what there was instead, in the failure."""
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise TmuxError(f"timed out after {TIMEOUT}s waiting for {what}:\n{show()}")
        time.sleep(0.02)


def status_line(screen: str) -> str:
    """The status bar: the line above the footer."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-2] if len(lines) >= 2 else ""


def review_ready(pane: TmuxPane) -> str:
    """The review with its decision keys working (the footer shows `a approve`, not `·`)."""
    return pane.wait_until(lambda s: "Review plan" in s and "a approve" in s, what="the review")


def seen_counts(screen: str) -> tuple[int, int] | None:
    match = SEEN.search(screen)
    return (int(match.group(1)), int(match.group(2))) if match else None


def gauge(screen: str) -> str:
    """The gauge row (``▰▰▱  37%  ■■□ 2/3 seen  lines …  § Title``), "" when not shown."""
    return next((line for line in screen.splitlines() if " seen  lines " in line), "")


def section_at_top(pane: TmuxPane, title: str) -> str:
    """Jump with `g` and `n` until the gauge names ``title`` (one jump seen at a time)."""
    pane.keys("g")
    screen = pane.wait_until(lambda s: "§ Plan: Rate limit" in gauge(s), what="the top")
    for _ in range(8):
        if gauge(screen).endswith(f"§ {title}"):
            return screen
        before = gauge(screen)
        pane.keys("n")
        screen = pane.wait_until(lambda s, b=before: gauge(s) != b, what="the next section")
    raise TmuxError(f"never reached § {title}; screen:\n{screen}")


def read_everything(pane: TmuxPane) -> str:
    """`u` until the gauge says every section was seen."""
    screen = pane.capture()
    for _ in range(12):
        counts = seen_counts(screen)
        assert counts is not None, screen
        if counts[0] == counts[1]:
            return screen
        pane.keys("u")
        screen = pane.wait_until(
            lambda s, c=counts: seen_counts(s) not in (None, c), what="another section seen"
        )
    raise TmuxError(f"sections still unseen; screen:\n{screen}")


def test_review_walk_through(project: Path, tmp_path: Path) -> None:
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "widgets")
    head = git(project, "rev-parse", "HEAD")
    with ScriptedServer(REPLIES, tmp_path / "model") as server:
        args = ("--plan", "--provider", "openai", "--base-url", server.base_url)
        env = {"PLANSHELL_CONTEXT_WINDOW": "200000"}
        with start_planshell(
            project, tmp_path / "home", *args, "--model", "scripted", size=(110, 40), env=env
        ) as pane:
            pane.wait_until(
                lambda s: status_line(s).lstrip().startswith("PLAN"), what="the PLAN chip"
            )
            pane.type("rate limit the handler")
            pane.keys("Enter")

            # 1. Lint, before a word is read: the missing Verification section is a chip.
            screen = review_ready(pane)
            assert "no Verification" in screen and "l lists them" in screen
            plan = next((project / ".planshell" / "plans").glob("*.md"))
            assert plan.read_text() == PLAN

            # 2. Coverage: the plan does not fit, so approving at once asks; n approves nothing.
            counts = seen_counts(screen)
            assert counts is not None and counts[0] < counts[1], screen
            pane.keys("a")
            screen = pane.wait_for("approve anyway?")
            assert "Not viewed:" in screen and "Risks" in screen
            pane.keys("n")
            pane.wait_gone("Not viewed:")
            pane.keys("l")
            screen = pane.wait_for("Plan lint: 1 error")
            assert "no Verification section" in screen
            pane.keys("Escape")
            pane.wait_gone("Plan lint: 1 error")

            # 3. A comment on the Steps section goes into the file; r sends it.
            section_at_top(pane, "Steps")
            review_ready(pane)
            pane.keys("c")
            screen = pane.wait_for("Enter save")
            assert "Comment on Steps" in screen  # the section at the top of the view
            pane.type(COMMENT)
            pane.keys("Enter")
            pane.wait_gone("Enter save")
            wait_for(lambda: plan.read_text() == COMMENTED, "the comment", plan.read_text)
            review_ready(pane)
            pane.keys("r")
            pane.wait_for("Sends 1 comment")
            pane.keys("Enter")

            # 4. The model revises; the test changes the cited file before it asks for review.
            wait_for(
                lambda: len(server.chat_requests()) == 4,
                "the revision's exit request",
                lambda: pane.capture(),
            )
            [*_, refine, _exit] = server.chat_requests()
            sent = json.dumps(refine["json"]["messages"])
            assert COMMENT in sent and "[!REVIEW]" in sent and "Steps" in sent
            assert plan.read_text() == REVISED
            served = project / SERVER
            served.write_text(served.read_text() + "# throttled upstream for now\n")
            server.release(GATE)

            # 5. The revision: comment addressed, staleness, the diff.
            screen = review_ready(pane)
            assert f"written at {head[:7]}; 1 cited file changed since" in screen
            assert "no Verification" not in screen  # the revision fixed what lint found
            assert "addressed" in screen and COMMENT in screen
            pane.keys("s")
            screen = pane.wait_for("+# throttled upstream for now")
            pane.keys("Escape")
            pane.wait_gone("+# throttled upstream for now")
            pane.keys("d")
            pane.wait_until(lambda s: "2 changes" in gauge(s), what="the diff's gauge")
            pane.type("]c")  # typed as a person types it: both keys at once
            screen = pane.wait_until(lambda s: "change 1/2" in gauge(s), what="the first change")
            # Changed sections are shown as their source: the reply under the comment...
            assert "> [!RESOLVED] Verification now greps" in screen, screen
            pane.type("]c")
            screen = pane.wait_until(lambda s: "change 2/2" in gauge(s), what="the second change")
            assert "## Verification" in screen and CHECK in screen, screen  # ...the new section
            pane.keys("d")
            pane.wait_gone("## Verification")

            # 6. Every section seen: a opens the approve dialog with the blast radius.
            read_everything(pane)
            review_ready(pane)
            pane.keys("a")
            screen = pane.wait_for("Enter chooses")
            assert "Blast radius" in screen and "Files (3):" in screen
            assert f"{SERVER}  {served.stat().st_size} B" in screen
            assert f"{NEW}  new" in screen
            readme = project / "README.md"
            assert f"README.md  {readme.stat().st_size} B" in screen
            pane.keys("Escape")
            pane.wait_gone("Blast radius")
            pane.keys("Escape")  # keep planning
            pane.wait_for("Still planning: tell me what to change.")
            pane.wait_until(lambda s: "working" not in s, what="the turn to end")
            pane.type("/quit")
            pane.keys("Enter")
            assert pane.wait_exit() == 0
        requests = server.chat_requests()
    assert len(requests) == len(REPLIES)  # nothing asked twice, nothing approved
