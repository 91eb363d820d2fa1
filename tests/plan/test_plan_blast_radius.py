"""The blast radius (planshell/plan/blast_radius.py): scope sizes, commands per mode, estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.plan.blast_radius import (
    BASE_CONTEXT_TOKENS,
    PastRun,
    blast_radius,
    estimate,
    past_run,
)
from planshell.plan.evidence import RunRecord
from planshell.plan.store import PlanStore
from tests.engine_helpers import make_runtime
from tests.plan.blast_helpers import read_only_or_ask, scoped_repo

PLAN = """# Plan: Cache the widget list

## Context
`src/app/server.py` serves widgets; see `docs/`.

## Steps
- [ ] In `src/app/server.py`, wrap `list_widgets` in an LRU cache
- [ ] Create `src/app/cache.py` with the settings

## Verification
```sh
git status
make test
```
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return scoped_repo(tmp_path)


def test_the_card_lists_scope_files_with_sizes_and_new_ones(repo: Path) -> None:
    blast = blast_radius(PLAN, repo, check=read_only_or_ask)
    files = {f.entry: (f.status, f.size) for f in blast.files}
    assert files == {
        "src/app/server.py": ("file", 700),
        "src/app/cache.py": ("new", None),
        "docs/": ("directory", None),
    }
    assert blast.more_files == 0


def test_commands_that_ask_depend_on_the_mode(repo: Path) -> None:
    blast = blast_radius(PLAN, repo, check=read_only_or_ask)
    assert [c.command for c in blast.commands] == ["git status", "make test"]
    assert [c.command for c in blast.asking("ask")] == ["make test"]
    assert [c.command for c in blast.asking("accept-edits")] == ["make test"]
    assert blast.asking("auto") == []


def test_a_symlink_out_of_the_project_is_not_sized(repo: Path) -> None:
    (repo / "src" / "app" / "server.py").unlink()
    (repo / "src" / "app" / "server.py").symlink_to("/etc/passwd")
    blast = blast_radius(PLAN, repo, check=read_only_or_ask)
    [line] = [f for f in blast.files if f.entry == "src/app/server.py"]
    assert (line.status, line.size) == ("outside", None)
    # ... and its size does not feed the estimate either.
    assert (
        blast.estimate
        == blast_radius(
            PLAN.replace("`src/app/server.py`", "`src/app/other.py`"),
            repo,
            check=read_only_or_ask,
        ).estimate
    )


def test_the_estimate_grows_with_files_steps_and_context() -> None:
    small = estimate(PLAN, 0, 1)
    assert small.tokens_low < small.tokens_high
    assert small.tokens_high == 4 * small.tokens_low or small.tokens_high - 4 * small.tokens_low < 4
    assert estimate(PLAN, 350_000, 1).tokens_low > small.tokens_low
    more_steps = PLAN.replace("## Verification", "- [ ] Another step\n\n## Verification")
    assert estimate(more_steps, 0, 1).calls == small.calls + 3
    assert (
        estimate(PLAN, 0, 1, context_tokens=BASE_CONTEXT_TOKENS * 4).tokens_low > small.tokens_low
    )
    assert small.cost_low is None  # no price configured: no cost


def test_the_cost_uses_the_price_and_the_range_holds_the_last_run() -> None:
    def price(tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * 3 + tokens_out * 15) / 1e6

    guess = estimate(PLAN, 0, 1, price=price)
    assert guess.cost_low is not None and guess.cost_high is not None
    assert guess.cost_low < guess.cost_high
    huge = PastRun(tokens=guess.tokens_high * 10, cost=guess.cost_high * 10)
    widened = estimate(PLAN, 0, 1, price=price, history=huge)
    assert widened.tokens_high == huge.tokens and widened.cost_high == huge.cost
    assert widened.tokens_low == guess.tokens_low


def test_the_last_run_comes_from_the_run_record(repo: Path) -> None:
    store = PlanStore(repo)
    plan = store.write(store.new_path("cache"), PLAN)
    assert past_run(store, plan) is None  # no record yet
    record = RunRecord.seed(str(plan), PLAN)
    store.write_run(plan, record.to_json())
    assert past_run(store, plan) is None  # a record without usage
    record.tokens, record.cost = 52_000, 0.25
    store.write_run(plan, record.to_json())
    assert past_run(store, plan) == PastRun(52_000, 0.25)


def test_a_hostile_run_record_gives_no_history(repo: Path) -> None:
    store = PlanStore(repo)
    plan = store.write(store.new_path("cache"), PLAN)
    record = RunRecord.seed(str(plan), PLAN)
    store.write_run(plan, record.to_json().replace('"version": 1,', '"version": 1, "cost": -5,'))
    assert past_run(store, plan) is None
    store.run_path(plan).unlink()
    store.run_path(plan).symlink_to("/etc/passwd")
    assert past_run(store, plan) is None


def test_the_permission_engine_says_what_asks_in_each_mode(project: Path) -> None:
    runtime, *_ = make_runtime(project)
    permissions = runtime.permissions
    assert permissions is not None
    before = permissions.mode
    assert permissions.command_verdict("git status", "ask")[0] == "allow"
    assert permissions.command_verdict("make test", "ask")[0] == "ask"
    assert permissions.command_verdict("make test", "accept-edits")[0] == "ask"
    assert permissions.command_verdict("make test", "auto")[0] == "allow"
    assert permissions.mode is before  # pure: the mode in force is unchanged


def test_deny_rules_deny_in_every_mode(project: Path) -> None:
    settings = Settings.model_validate({"permissions": {"deny": ["bash(make *)"]}})
    runtime, *_ = make_runtime(project, settings=settings)
    assert runtime.permissions is not None
    assert runtime.permissions.command_verdict("make test", "auto")[0] == "deny"


async def test_the_review_request_carries_lint_and_blast(project: Path) -> None:
    from planshell.plan.decider import Decision, Review
    from tests.engine_helpers import write_and_review

    runtime, _provider, decider, _rec = make_runtime(
        project, write_and_review(content=PLAN), [Review(Decision.KEEP)]
    )
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan caching")
    request = decider.requests[0]
    assert request.blast is not None
    assert [c.command for c in request.blast.asking("ask")] == ["make test"]
    assert request.blast.asking("auto") == []
    assert {f.entry for f in request.blast.files} >= {"src/app/server.py", "src/app/cache.py"}
    assert request.relint is not None
    assert [f.code for f in request.relint("# Plan: x\n")] == ["no-verification"]


async def test_a_completed_run_records_its_tokens_and_cost(project: Path) -> None:
    from planshell.llm.scripted import Reply
    from planshell.llm.types import Usage
    from planshell.plan.decider import Decision, Review
    from tests.engine_helpers import write_and_review

    runtime, _provider, decider, _rec = make_runtime(
        project,
        [
            *write_and_review(content=PLAN),
            Reply(calls=[("plan_complete", {})], usage=Usage(1_000, 200)),
            Reply(text="finished", usage=Usage(1_300, 50)),
        ],
        [lambda req: Review(Decision.APPROVE, reviewed_text=req.text)],
    )
    runtime.agent.price = lambda usage: (usage.input_tokens + usage.output_tokens) / 1e4
    runtime.plan.enter_plan()
    await runtime.agent.submit("plan caching")
    path = decider.requests[0].path
    # Only the replies after the approval count: the plan_complete call's reply.
    assert past_run(runtime.store, path) == PastRun(1_200, pytest.approx(0.12))
