"""``planshell review PATH`` opens a project's plan for decisions (issue 26, item 8).

The headless ``--plan -p`` run ends with "Review and approve it with: planshell
review PATH"; that command must lead to a review that can approve. Before it
starts a session it runs the plan store's checks, so a hostile path (a symlink,
a huge or binary file) fails with a clear message and no session.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from planshell.cli import checked_plan_name, plan_project_of
from planshell.plan.store import MAX_PLAN_BYTES


@pytest.fixture
def plans(project: Path) -> Path:
    directory = project / ".planshell" / "plans"
    directory.mkdir(parents=True)
    (directory / "rate-limit.md").write_text("# Plan: rate limit\n\n## Steps\n\n1. Do it.\n")
    return directory


def test_a_plan_in_its_projects_plans_dir_opens_in_that_project(project, plans):
    assert plan_project_of(plans / "rate-limit.md") == project
    assert checked_plan_name(project, plans / "rate-limit.md") == "rate-limit.md"


def test_a_file_elsewhere_has_no_project(project, plans, tmp_path):
    assert plan_project_of(project / "README.md") is None
    assert plan_project_of(tmp_path / "plans" / "x.md") is None  # no .planshell above
    # Inside a git work tree whose root is elsewhere, the session's store is not this one.
    (tmp_path / ".git").mkdir()
    assert plan_project_of(plans / "rate-limit.md") is None


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda d: os.symlink("/etc/passwd", d / "evil.md"), "link"),
        (lambda d: (d / "evil.md").write_bytes(b"# x\n" + b"a" * (MAX_PLAN_BYTES + 10)), "KiB"),
        (lambda d: (d / "evil.md").write_bytes(b"\x00\x01\x02binary"), "binary"),
        (lambda d: None, "no plan named"),
    ],
)
def test_hostile_plan_files_fail_with_a_clear_message_and_no_session(
    project, plans, cli, make, words
):
    make(plans)
    run = cli(["review", ".planshell/plans/evil.md"], project)
    assert run.returncode == 1
    assert "evil.md" in run.stderr and words in run.stderr, run.stderr
    assert "\x1b[" not in run.stdout  # no TUI was started


def test_a_name_with_spaces_is_refused_with_advice(project, plans):
    (plans / "my plan.md").write_text("# Plan: x\n")
    with pytest.raises(ValueError, match="/plan list"):
        checked_plan_name(project, plans / "my plan.md")


async def test_the_headless_hint_works_from_another_directory(project, tmp_path):
    """``--plan -p … -C DIR`` from elsewhere: the printed command finds the plan from the cwd.

    The project's name is the repository's choice, so it has spaces and both quotes.
    """
    from tests.cli_helpers import run_planshell

    hostile = project.rename(tmp_path / 'it\'s a "proj" $(x)')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _out, err = await run_planshell(
        ["--plan", "-p", "add rate limiting", "-C", str(hostile)], elsewhere
    )
    assert code == 3, err
    hint = next(line for line in err.splitlines() if line.startswith("Review and approve it with:"))
    argv = shlex.split(hint.split(": ", 1)[1])
    assert argv[:2] == ["planshell", "review"] and len(argv) == 3, argv
    path = elsewhere / argv[2]  # as the shell in the cwd would hand it over
    assert path.is_file()
    assert plan_project_of(path) == hostile
    assert checked_plan_name(hostile, path).endswith(".md")


def test_a_hint_path_with_control_characters_is_one_printable_word(tmp_path):
    from planshell.headless import shell_word

    path = tmp_path / "e\x1b[31m\nx" / "plan.md"
    word = shell_word(path)
    assert word.isprintable() and "\x1b" not in word
    printed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True)
    assert printed.stdout == os.fsencode(str(path))
