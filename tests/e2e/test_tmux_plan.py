"""Plan mode end to end in a real terminal: `planshell --plan`, the demo model, review, execute.

The demo model explores the project read-only, writes a plan and calls
exit_plan_mode; the review screen opens, `n` jumps to the next section, `a`
asks how the plan runs and `2` chooses "Accept edits inside the plan's scope"; the steps tick in the checklist and plan_complete brings the mode
chip back to OFF. Then the toggle keys, as a real terminal sends them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tmux_harness import start_planshell

pytestmark = pytest.mark.tmux

PROGRESS = re.compile(r"Plan progress (\d+)/(\d+)")


def status_line(screen: str) -> str:
    """The status bar: the line above the footer."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-2] if len(lines) >= 2 else ""


def test_plan_review_approve_execute(project: Path, tmp_path: Path) -> None:
    with start_planshell(project, tmp_path / "home", "--plan") as pane:
        pane.wait_for("demo (offline)")
        screen = pane.wait_until(
            lambda s: status_line(s).lstrip().startswith("PLAN"), what="the PLAN chip"
        )
        assert "Plan mode" in screen.splitlines()[-1]  # the footer names the toggle
        pane.type("add rate limiting to the server")
        pane.keys("Enter")
        # The header and the footer are painted in separate frames: wait for both.
        pane.wait_until(
            lambda s: "Review plan" in s and "a approve" in s, what="the review screen's footer"
        )
        # The plan is longer than the view: the gauge names the section; n jumps on.
        pane.wait_for("§ Plan: add rate limiting")
        pane.keys("n")
        pane.wait_for("§ Goal")
        pane.read_whole_plan()  # approving a plan with unseen sections asks first
        pane.keys("a")
        # The approve dialog names the choices; Enter and the numbers work once it is ready.
        screen = pane.wait_for("Enter chooses · 1-2 choose by number")
        assert "Ask me before each edit" in screen
        assert "Accept edits inside the plan's scope" in screen
        assert "Auto" not in screen  # the user's config does not offer it
        pane.keys("2")
        seen: list[tuple[int, int]] = []
        modes: set[str] = set()

        def progress(screen: str) -> bool:
            if "Plan progress" in screen:
                modes.add("accept edits" if "accept edits" in status_line(screen) else "other")
            match = PROGRESS.search(screen)
            if match:
                state = (int(match.group(1)), int(match.group(2)))
                if not seen or seen[-1] != state:
                    seen.append(state)
            if "Plan report:" in screen and "working" not in screen:
                pane.keys("Enter")  # plan_complete opened the plan report: close it
            # The demo's last words (not the "Plan complete: permissions back to ask." toast).
            return "Plan complete: 4 steps ticked" in screen and status_line(
                screen
            ).lstrip().startswith("OFF")

        screen = pane.wait_until(progress, what="the plan to complete")
        # The checklist was shown and only ever moved forward; it is gone at OFF.
        assert seen, "the checklist never showed"
        assert [done for done, _ in seen] == sorted(done for done, _ in seen)
        assert seen[0][1] == 5  # four steps and the verification
        assert "Plan progress" not in screen
        assert "Plan complete: 4 steps ticked" in screen
        # The status bar showed the chosen mode while the plan ran...
        assert "accept edits" in modes, modes
        # ...and that mode ended with the plan (issue 21.7).
        assert "accept edits" not in status_line(screen) and " ask" in status_line(screen)
        assert (project / ".planshell" / "plans").is_dir()
        plan = next((project / ".planshell" / "plans").glob("*.md")).read_text()
        assert plan.count("- [x]") == 4

        # The toggle in a real terminal: kitty-protocol bytes for Ctrl+Shift+L (CSI 108;6u),
        # tmux's own encoding of C-S-l (extended keys), and F2.
        def chip(word: str) -> None:
            pane.wait_until(lambda s: status_line(s).lstrip().startswith(word), what=word)

        pane.hex("1b", "5b", "31", "30", "38", "3b", "36", "75")
        chip("PLAN")
        pane.keys("F2")
        chip("OFF")
        pane.keys("C-S-l")
        chip("PLAN")
        pane.keys("C-S-l")
        chip("OFF")
        pane.type("/quit")
        pane.keys("Enter")
        assert pane.wait_exit() == 0


def test_planshell_review_path_approves_a_headless_plan(project: Path, tmp_path: Path) -> None:
    """The hint `--plan -p` prints leads to a review that can approve (issue 26, item 8)."""
    import subprocess
    import sys

    from tests.tmux_harness import isolated_env

    home = tmp_path / "headless-home"
    home.mkdir()
    headless = subprocess.run(
        [sys.executable, "-m", "planshell", "--plan", "-p", "add rate limiting"],
        cwd=project,
        env=isolated_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert headless.returncode == 3, headless.stderr
    hint = re.search(r"planshell review (\S+)", headless.stderr)
    assert hint, headless.stderr
    with start_planshell(project, tmp_path / "home", "review", hint.group(1)) as pane:
        pane.wait_until(
            lambda s: "Review plan" in s and "a approve" in s, what="the full review's footer"
        )
        pane.keys("a")
        # Not every section was on screen: "approve anyway?" (its keys work once "(y)" shows).
        pane.wait_for("Approve anyway (y)")
        pane.keys("y")
        pane.wait_for("Enter chooses · 1-2 choose by number")
        pane.keys("2")

        def done(screen: str) -> bool:
            if "Plan report:" in screen and "working" not in screen:
                pane.keys("Enter")
            return "Plan complete: 4 steps ticked" in screen

        pane.wait_until(done, what="the approved plan to run to its end")
