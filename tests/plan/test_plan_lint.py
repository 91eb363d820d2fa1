"""Plan lint (planshell/plan/lint.py): each check both ways, the write_plan result, a hostile repo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planshell.llm.scripted import Reply
from planshell.plan.document import MAX_STEPS
from planshell.plan.lint import chips, errors, lint_plan, probe_path, summary
from tests.engine_helpers import make_runtime

GOOD = """# Plan: Cache the widget list

## Context
`src/app/server.py` serves widgets; `README.md` documents it.

## Steps
- [ ] In `src/app/server.py`, wrap `list_widgets` in an LRU cache of 128 entries
- [ ] Create `src/app/cache.py` with the cache settings
- [ ] Add a test in `tests/test_cache.py` that lists twice and counts the loads

## Verification
```sh
pytest -q tests/test_cache.py
```
"""


def codes(text: str, root: Path | None = None) -> list[str]:
    return [finding.code for finding in lint_plan(text, root)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "server.py").write_text("def list_widgets():\n    return []\n")
    (root / "README.md").write_text("# Widgets\n")
    return root


def test_a_good_plan_has_no_findings(repo: Path) -> None:
    assert lint_plan(GOOD, repo) == ()
    assert summary(lint_plan(GOOD, repo)) == ""


# --- Verification


def test_a_plan_without_verification_is_an_error() -> None:
    text = GOOD.split("## Verification")[0]
    findings = lint_plan(text)
    assert [f.code for f in findings] == ["no-verification"]
    assert findings[0].severity == "error"
    assert chips(findings) == [("error", "no Verification")]


def test_a_verification_section_needs_a_runnable_command() -> None:
    prose_only = GOOD.split("## Verification")[0] + "## Verification\nRun the tests and look.\n"
    assert codes(prose_only) == ["no-command"]
    comments_only = GOOD.replace("pytest -q tests/test_cache.py", "# run the tests")
    assert codes(comments_only) == ["no-command"]
    inline = GOOD.split("## Verification")[0] + "## Verification\nRun `make test`.\n"
    assert codes(inline) == []


# --- placeholders


@pytest.mark.parametrize(
    "line",
    ["- [ ] TODO", "- [ ] Decide the cache size (TBD)", "- [ ] …", "- [ ] ...", "Files: ..."],
)
def test_placeholders_are_errors(line: str) -> None:
    text = GOOD.replace("## Verification", f"{line}\n\n## Verification")
    assert "placeholder" in codes(text)


@pytest.mark.parametrize(
    "line",
    [
        "The todo list shows the steps.",  # lowercase "todo" is a word, not a marker
        "Wait for the response... then retry.",  # an ellipsis in prose
        "`TODO` markers in the code are left alone.",  # inside code
        "```\nTODO: this is a code block\n...\n```",
    ],
)
def test_prose_and_code_are_not_placeholders(line: str) -> None:
    text = GOOD.replace("## Verification", f"{line}\n\n## Verification")
    assert "placeholder" not in codes(text)


def test_placeholders_are_counted_per_section() -> None:
    text = GOOD.replace("## Verification", "- [ ] TODO\n- [ ] TBD\n\n## Verification")
    [finding] = [f for f in lint_plan(text) if f.code == "placeholder"]
    assert finding.section == "Steps" and finding.message.startswith("2 placeholders")
    assert ("error", "2 placeholders") in chips(lint_plan(text))


# --- vague steps


@pytest.mark.parametrize("step", ["Improve performance", "Refactor code", "Clean up", "Fix bugs"])
def test_short_steps_with_a_vague_verb_are_warnings(step: str) -> None:
    text = GOOD.replace("## Verification", f"- [ ] {step}\n\n## Verification")
    findings = [f for f in lint_plan(text) if f.code == "vague-step"]
    assert len(findings) == 1 and findings[0].severity == "warning"
    assert step in findings[0].message


@pytest.mark.parametrize(
    "step",
    [
        "Improve `parse_plan` speed",  # names code
        "Fix the crash in server.py",  # names a file
        "Refactor src/app into modules",  # names a path
        "Fix issue 42",  # something to check against
        "Improve the error message shown when the cache is full and the user retries",  # long
        "Write the cache",  # not a vague verb
    ],
)
def test_concrete_steps_are_not_vague(step: str) -> None:
    text = GOOD.replace("## Verification", f"- [ ] {step}\n\n## Verification")
    assert "vague-step" not in codes(text)


def test_a_vague_headline_with_nested_detail_is_not_vague() -> None:
    text = GOOD.replace(
        "## Verification",
        "- [ ] Improve performance\n  - memoise the widget query for 60 s\n\n## Verification",
    )
    assert "vague-step" not in codes(text)
    middle = GOOD.replace(
        "- [ ] Create", "- [ ] Clean up\n  - remove the dead `old_cache` helper\n- [ ] Create"
    )
    assert "vague-step" not in codes(middle)


# --- open questions


def test_open_questions_are_counted() -> None:
    text = GOOD + "\n## Open questions\n- Which eviction policy?\n- How large?\n"
    [finding] = [f for f in lint_plan(text) if f.code == "open-questions"]
    assert finding.severity == "warning" and finding.message.startswith("2 open questions")
    assert ("warning", "2 open questions") in chips(lint_plan(text))


def test_none_is_not_an_open_question() -> None:
    assert "open-questions" not in codes(GOOD + "\n## Open questions\n- None\n")
    assert "open-questions" not in codes(GOOD + "\n## Open questions\n- n/a\n")


# --- the step cap


def test_steps_beyond_the_cap_are_an_error() -> None:
    many = "\n".join(f"- [ ] Edit `src/m{n}.py` to log {n}" for n in range(MAX_STEPS + 1))
    text = GOOD.replace("- [ ] Add a test", f"{many}\n- [ ] Add a test")
    assert "too-many-steps" in codes(text)
    assert "too-many-steps" not in codes(GOOD)


# --- cited paths


def test_a_missing_cited_path_is_an_error_unless_marked_new(repo: Path) -> None:
    text = GOOD.replace("`README.md` documents it", "`src/app/gone.py` documents it")
    [finding] = [f for f in lint_plan(text, repo) if f.code == "missing-path"]
    assert finding.severity == "error" and "src/app/gone.py" in finding.message
    assert finding.section == "Context"
    # "Create `src/app/cache.py`" and "Add a test in `tests/test_cache.py`" mark them as new.
    assert "missing-path" not in codes(GOOD, repo)
    # A heading with "new" marks every path under it.
    new_heading = GOOD + "\n## New files\n- `lib/extra.py`\n"
    assert "missing-path" not in codes(new_heading, repo)


def test_symbols_are_not_taken_for_files(repo: Path) -> None:
    text = GOOD.replace("wrap `list_widgets`", "wrap `self.store` and `list_widgets`")
    assert "missing-path" not in codes(text, repo)


def test_without_a_root_paths_are_not_checked() -> None:
    text = GOOD.replace("`README.md` documents it", "`src/app/gone.py` documents it")
    assert "missing-path" not in codes(text)


def test_a_cited_symlink_out_of_the_project_is_reported_and_not_sized(repo: Path) -> None:
    (repo / "src" / "passwd.txt").symlink_to("/etc/passwd")
    (repo / "linked").symlink_to("/etc")  # a folder link: `linked/passwd` leads out too
    text = GOOD.replace(
        "`README.md` documents it", "`src/passwd.txt` and `linked/passwd` document it"
    )
    found = [f for f in lint_plan(text, repo) if f.code == "outside-project"]
    assert {f.message.split("`")[1] for f in found} == {"src/passwd.txt", "linked/passwd"}
    assert all(f.severity == "error" for f in found)
    assert probe_path(repo, "src/passwd.txt").status == "outside"
    assert probe_path(repo, "src/passwd.txt").size is None
    assert probe_path(repo, "linked/passwd").size is None


def test_a_symlink_inside_the_project_is_a_file(repo: Path) -> None:
    (repo / "alias.py").symlink_to(repo / "src" / "app" / "server.py")
    found = probe_path(repo, "alias.py")
    assert found.status == "file"
    assert found.size == (repo / "src" / "app" / "server.py").stat().st_size


def test_a_fifo_is_not_opened(repo: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no fifos here")
    os.mkfifo(repo / "pipe.txt")
    assert probe_path(repo, "pipe.txt").status == "special"  # would hang if it were opened


def test_errors_come_first_and_summary_counts() -> None:
    text = GOOD.split("## Verification")[0].replace(
        "- [ ] Create", "- [ ] Improve performance\n- [ ] Create"
    )
    findings = lint_plan(text)
    assert [f.severity for f in findings] == ["error", "warning"]
    assert summary(findings) == "1 error · 1 warning"
    assert len(errors(findings)) == 1


# --- the model sees the findings


async def test_write_plan_returns_the_findings_to_the_model(project: Path) -> None:
    plan = GOOD.split("## Verification")[0]
    runtime, *_ = make_runtime(
        project,
        [
            Reply(calls=[("write_plan", {"title": "Cache", "content": plan})]),
            Reply(calls=[("write_plan", {"title": "Cache", "content": GOOD})]),
            Reply(text="done"),
        ],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan caching")
    results = [m.content for m in runtime.agent.messages if m.role == "tool"]
    assert results[0].startswith("Plan saved: ")
    assert "Plan lint: 1 error" in results[0]
    assert "error [no-verification]" in results[0]
    assert "Plan lint: no findings." in results[1]
    assert "exit_plan_mode" in results[1]


async def test_write_plan_lists_at_most_thirty_findings(project: Path) -> None:
    cited = "\n".join(f"- [ ] Read `src/gone{n}.py` and its callers closely" for n in range(45))
    plan = GOOD.replace("- [ ] Add a test", f"{cited}\n- [ ] Add a test")
    runtime, *_ = make_runtime(
        project,
        [Reply(calls=[("write_plan", {"title": "Cache", "content": plan})]), Reply(text="ok")],
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan caching")
    [result] = [m.content for m in runtime.agent.messages if m.role == "tool"]
    assert "Plan lint: 45 errors" in result
    assert result.count("error [missing-path]") == 30
    assert "- … and 15 more" in result
