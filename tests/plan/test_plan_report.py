"""The plan report: steps with their evidence, the Verification commands, the files against the scope."""

from __future__ import annotations

import json
from pathlib import Path

from planshell.agent import events as ev
from planshell.llm.scripted import Reply
from planshell.llm.types import Usage
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.evidence import Evidence, RunRecord
from planshell.plan.report import build_report, render_markdown, verification_commands
from planshell.plan.scope import plan_scope
from tests.engine_helpers import make_runtime, write_and_review

PLAN = """# Plan: Add a cache

## Steps

- [ ] Read `src/app/server.py`
- [ ] Add `src/app/cache.py`
- [ ] Update `docs/cache.md`

## Verification

```sh
# the tests
pytest -q tests/test_cache.py
ruff check src
```
"""


def record_of(text: str = PLAN) -> RunRecord:
    return RunRecord.seed("p.md", text)


def closed(record: RunRecord) -> RunRecord:
    """Every step done with work, every check run and passed."""
    record.steps[0].evidence.append(Evidence("command", "cat src/app/server.py", 0))
    record.steps[1].evidence.append(Evidence("edit", "src/app/cache.py"))
    record.steps[2].evidence += [
        Evidence("edit", "docs/cache.md"),
        Evidence("command", "cd . && pytest -q tests/test_cache.py", 0),
        Evidence("command", "ruff check src", 0),
    ]
    for step in record.steps:
        step.status = "done"
    return record


def test_verification_commands_are_the_fenced_lines_without_comments() -> None:
    assert verification_commands(PLAN) == ["pytest -q tests/test_cache.py", "ruff check src"]
    inline = PLAN.split("## Verification")[0] + "## Verification\n\n- run `make test`\n"
    assert verification_commands(inline) == ["make test"]


def test_all_closed_and_passed_is_complete() -> None:
    report = build_report(PLAN, closed(record_of()), plan_scope(PLAN))
    assert report.complete and report.gaps == []
    md = render_markdown(report)
    assert "**Complete**: 3/3 steps closed" in md
    assert "- ✓ `pytest -q tests/test_cache.py`: exit 0" in md
    assert report.changed_planned == ["src/app/cache.py", "docs/cache.md"]
    assert report.planned_untouched == ["src/app/server.py"]
    assert report.changed_unplanned == []


def test_open_step_and_unrun_or_failed_checks_are_gaps_listed_first() -> None:
    record = closed(record_of())
    record.steps[2].status = "open"
    record.steps[2].evidence = [Evidence("command", "ruff check src", 1)]
    report = build_report(PLAN, record, plan_scope(PLAN))
    assert not report.complete
    assert report.gaps == [
        "step 3 is still open",
        "verification `pytest -q tests/test_cache.py` was not run",
        "verification `ruff check src` exited 1",
    ]
    md = render_markdown(report)
    assert (
        md.index("**Finished with gaps**")
        < md.index("- step 3 is still open")
        < md.index("## Steps")
    )
    assert "- ✗ `pytest -q tests/test_cache.py`: not run" in md


def test_a_later_passing_run_of_a_check_counts() -> None:
    record = closed(record_of())
    record.steps[1].evidence.append(Evidence("command", "ruff check src", 1))
    assert build_report(PLAN, record, plan_scope(PLAN)).complete


def test_unverified_and_skipped_steps_are_shown() -> None:
    record = closed(record_of())
    record.steps[0].evidence = []
    record.tick(2, "skipped", "the cache already exists")
    report = build_report(PLAN, record, plan_scope(PLAN))
    assert report.complete  # closed is closed: the ⚠ says how
    md = render_markdown(report)
    assert "1. ⚠ Read `src/app/server.py`" in md
    assert "ticked without evidence" in md
    assert "2. ↷ Add `src/app/cache.py`" in md
    assert "   - skipped: the cache already exists" in md


def test_unplanned_files_and_the_run_line() -> None:
    record = closed(record_of())
    record.steps[1].evidence.append(Evidence("edit", "/proj/setup.cfg"))
    record.steps[1].evidence.append(Evidence("edit", ".planshell/plans/p.md"))
    report = build_report(PLAN, record, plan_scope(PLAN), seconds=75, cost=0.0123)
    assert report.changed_unplanned == ["/proj/setup.cfg"]
    md = render_markdown(report)
    assert "**Changed, not planned** (1)" in md
    assert "time 1 min 15 s, cost $0.0123" in md
    assert ".planshell/" not in md.split("## Files")[1]  # the plan's own files are not work


def test_backticks_in_model_text_stay_inside_code() -> None:
    record = closed(record_of())
    record.steps[0].evidence.append(Evidence("command", "echo `id`", 0))
    md = render_markdown(build_report(PLAN, record, plan_scope(PLAN)))
    assert "ran `` echo `id` `` → exit 0" in md


async def test_completing_a_plan_writes_the_report_into_the_run_record(project: Path) -> None:
    replies = [
        *write_and_review(),
        Reply(calls=[("write", {"path": "src/app/limiter.py", "content": "BUCKET = 10\n"})]),
        Reply(
            calls=[
                (
                    "set_plan_steps",
                    {"updates": [{"step": n, "status": "done"} for n in (1, 2, 3)]},
                )
            ]
        ),
        Reply(calls=[("plan_complete", {})]),
        Reply(text="done"),
    ]
    runtime, _p, _d, recorder = make_runtime(
        project, replies, [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    assert runtime.plan.mode is Mode.OFF
    [event] = recorder.of(ev.PlanReported)
    assert not event.complete  # `make test` never ran
    assert "verification `make test` was not run" in event.markdown
    [run] = (project / ".planshell" / "plans").glob("*.run.json")
    saved = json.loads(run.read_text())["report"]
    assert saved == event.markdown
    assert "src/app/limiter.py" in saved  # changed, by the checkpoint
    assert RunRecord.from_json(run.read_text()).report == saved  # type: ignore[union-attr]


async def test_the_report_counts_the_tokens_of_the_replies_during_execution(
    project: Path,
) -> None:
    """Planning's replies (before approval) and the answer after the report are not counted."""
    planning = [*write_and_review()]

    def used(n: int) -> Usage:
        return Usage(input_tokens=n * 100, output_tokens=n)

    first = planning[0]
    assert isinstance(first, Reply)
    first.usage = used(7)  # planning: not counted
    replies = [
        *planning,
        Reply(
            calls=[("write", {"path": "src/app/limiter.py", "content": "BUCKET = 10\n"})],
            usage=used(1),
        ),
        Reply(calls=[("plan_complete", {})], usage=used(2)),
        Reply(text="done", usage=used(50)),  # after the report
    ]
    runtime, _p, _d, recorder = make_runtime(
        project, replies, [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    [event] = recorder.of(ev.PlanReported)
    run_line = event.markdown.split("## Run")[1]
    assert "303 tokens" in run_line  # 101 + 202
    assert runtime.agent.tokens_used == 700 + 7 + 101 + 202 + 5000 + 50


async def test_no_usage_reported_means_no_token_count(project: Path) -> None:
    replies = [*write_and_review(), Reply(calls=[("plan_complete", {})]), Reply(text="done")]
    runtime, _p, _d, recorder = make_runtime(
        project, replies, [lambda r: Review(Decision.APPROVE, reviewed_text=r.text)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan rate limiting")
    [event] = recorder.of(ev.PlanReported)
    assert "tokens" not in event.markdown


# --- planshell report ------------------------------------------------------------------

HOSTILE = "Add \x1b]8;;http://evil\x07cache\x1b[2J"


def saved_plan(project: Path, name: str, report: str | None) -> Path:
    """A plan file and its run record, with ``report`` kept in it when given."""
    plans = project / ".planshell" / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    plan = plans / f"{name}.md"
    plan.write_text(PLAN)
    record = record_of()
    if report is not None:
        record.report = report
    (plans / f"{name}.run.json").write_text(record.to_json())
    return plan


def test_cli_report_prints_the_newest_report_sanitised(cli, project: Path) -> None:
    record = closed(record_of())
    record.steps[0].text = HOSTILE
    record.steps[1].evidence.append(Evidence("edit", "src/\x1b[31mred.py"))
    md = render_markdown(build_report(PLAN, record, plan_scope(PLAN)))
    saved_plan(project, "2026-01-01-0000-a-cache", md)
    saved_plan(project, "2026-01-02-0000-later", None)  # newer, never completed
    run = cli(["report"], project)
    assert run.returncode == 0, run.stderr
    assert "# Plan report: Add a cache" in run.stdout
    assert "Add cache" in run.stdout and "src/red.py" in run.stdout
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout
    named = cli(["report", "a-cache"], project)
    assert named.returncode == 0 and named.stdout == run.stdout


def test_cli_report_says_when_there_is_none(cli, project: Path) -> None:
    assert "no plan has a report yet" in cli(["report"], project).stderr
    saved_plan(project, "2026-01-02-0000-later", None)
    run = cli(["report", "later"], project)
    assert run.returncode == 1
    assert "2026-01-02-0000-later.md has no report" in run.stderr
    assert "no plan named nope" in cli(["report", "nope"], project).stderr
