"""A model per phase (issue 29): the planning model in PLAN, the session's after approval.

Two real loopback servers stand in for two providers; they record every request's
headers, so a key sent to the wrong URL would be seen.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from planshell.config import Settings, load_settings
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.phase_models import plan_phase_settings
from planshell.plan.store import PlanStore
from planshell.runtime import build_runtime
from tests.engine_helpers import RATE_LIMIT_PLAN, ScriptedDecider, finishes
from tests.sse_server import (
    Response,
    SSEServer,
    openai_text_response,
    openai_tool_call_response,
    sse_event,
)

PLAN_KEY = "sk-ant-PLANNING-key-0001"
EXEC_KEY = "sk-openai-EXECUTION-key-0002"
TITLE = "Add rate limiting"
FIXED = datetime(2026, 1, 2, 3, 4)


def anthropic_tool_use(name: str, args: dict[str, Any]) -> Response:
    """An Anthropic streamed reply that calls ``name`` with ``args``."""
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}
    block = {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
    return Response.sse(
        [
            sse_event(start, "message_start"),
            sse_event(
                {"type": "content_block_start", "index": 0, "content_block": block},
                "content_block_start",
            ),
            sse_event(
                {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
            ),
            sse_event({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 9},
                },
                "message_delta",
            ),
            sse_event({"type": "message_stop"}, "message_stop"),
        ]
    )


def approve(request: Any) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


class HandoffDecider(ScriptedDecider):
    """Approves, and records what the handoff question was asked with (the window in force)."""

    def __init__(self, runtime_window: list[int | None]) -> None:
        super().__init__([approve])
        self.asked: list[dict[str, int]] = []
        self.windows = runtime_window
        self.agent: Any = None

    async def choose_handoff(self, tokens: dict[str, int], default: str) -> str:
        self.asked.append(tokens)
        self.windows.append(self.agent.meter.window)
        return "keep"


def _plan_path(project: Path, monkeypatch: pytest.MonkeyPatch, runtime: Any) -> str:
    """The path write_plan will choose (the store's clock fixed), as the model names it."""
    monkeypatch.setattr(
        runtime.store, "new_path", partial(PlanStore.new_path, runtime.store, now=FIXED)
    )
    return str(runtime.store.new_path(TITLE).relative_to(project))


def _headers(server: SSEServer) -> list[str]:
    return [json.dumps(r.headers).lower() for r in server.requests]


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLAN_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", EXEC_KEY)


@pytest.mark.usefixtures("keys")
async def test_plan_with_one_provider_execute_with_another_keys_never_cross(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with SSEServer() as planner, SSEServer() as executor:
        settings = Settings(
            provider="openai",
            model="exec-model",
            base_url=f"{executor.url}/v1",
            context_window=100_000,
            max_attempts=1,
            plan={
                "provider": "anthropic",
                "model": "plan-model",
                "base_url": planner.url,
                "context_window": 200_000,
            },
        )
        decider = ScriptedDecider([approve])
        runtime = build_runtime(settings, project, decider, persist=False)
        path = _plan_path(project, monkeypatch, runtime)
        planner.add(
            anthropic_tool_use("write_plan", {"title": TITLE, "content": RATE_LIMIT_PLAN}),
            anthropic_tool_use("exit_plan_mode", {"plan_path": path}),
        )
        executor.add(openai_text_response("Executing the plan."))
        assert runtime.plan.mode is Mode.OFF and runtime.agent.provider is runtime.provider
        runtime.plan.enter_plan()
        assert runtime.model_label() == "plan: anthropic · plan-model"
        await finishes(runtime.agent.submit("plan rate limiting"), "the turn")
        assert runtime.plan.mode is Mode.EXECUTE
        assert runtime.model_label() == "openai · exec-model"

        # Before approval: the planning server, with the planning key, the planning model.
        assert [r.path for r in planner.requests] == ["/v1/messages", "/v1/messages"]
        for request in planner.requests:
            assert request.headers["x-api-key"] == PLAN_KEY
            assert request.json["model"] == "plan-model"
        # After it: the execution server, with its own key and model.
        assert [r.path for r in executor.requests] == ["/v1/chat/completions"]
        assert executor.requests[0].headers["authorization"] == f"Bearer {EXEC_KEY}"
        assert executor.requests[0].json["model"] == "exec-model"
        # Never crossed: no header of one server carries the other's key.
        assert not any(EXEC_KEY.lower() in h for h in _headers(planner))
        assert not any(PLAN_KEY.lower() in h for h in _headers(executor))
        # The conversation carried over: the executor saw the approved plan's turn.
        assert "exit_plan_mode" in json.dumps(executor.requests[0].json)


@pytest.mark.usefixtures("keys")
async def test_the_handoff_is_judged_against_the_execution_models_window(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning window 1M (keeping everything would look tiny), execution window 2,000: the
    handoff question is asked, with the execution window in force."""
    async with SSEServer() as planner, SSEServer() as executor:
        settings = Settings(
            provider="openai",
            model="small-exec",
            base_url=f"{executor.url}/v1",
            context_window=2_000,
            max_attempts=1,
            compaction={"auto": False},
            plan={
                "model": "big-plan",
                "base_url": f"{planner.url}/v1",
                "context_window": 1_000_000,
            },
        )
        windows: list[int | None] = []
        decider = HandoffDecider(windows)
        runtime = build_runtime(settings, project, decider, persist=False)
        decider.agent = runtime.agent
        path = _plan_path(project, monkeypatch, runtime)
        planner.add(
            openai_tool_call_response("write_plan", {"title": TITLE, "content": RATE_LIMIT_PLAN}),
            openai_tool_call_response("exit_plan_mode", {"plan_path": path}),
        )
        executor.add(openai_text_response("ok"))
        runtime.plan.enter_plan()
        assert runtime.agent.meter.window in (None, 1_000_000)
        await finishes(runtime.agent.submit("plan rate limiting " + "x " * 300), "the turn")
        assert runtime.plan.mode is Mode.EXECUTE
        assert windows == [2_000]
        assert decider.asked and decider.asked[0]["keep"] < 1_000_000 * 0.25
        assert len(executor.requests) == 1 and len(planner.requests) == 2
        # Same provider, another URL: the session's configured key is never sent there either.
        assert all(r.headers["authorization"] == f"Bearer {EXEC_KEY}" for r in planner.requests)


def test_a_plan_provider_never_inherits_the_sessions_secrets() -> None:
    settings = Settings(
        provider="openai",
        base_url="https://exec.example/v1",
        api_key="sk-configured-session-key",
        headers={"Authorization": "Bearer sk-header-key"},
        request={"extra_body": {"store": True}},
        plan={"provider": "anthropic", "model": "m"},
    )
    planning = plan_phase_settings(settings, {})
    assert planning is not None
    assert planning.provider == "anthropic" and planning.base_url is None
    assert planning.api_key is None and planning.headers == {}
    assert planning.request.extra_body == {}
    # Same provider at another URL: the configured key and headers stay behind too.
    other_url = settings.model_copy(
        update={
            "plan": settings.plan.model_copy(update={"provider": None, "base_url": "http://x/v1"})
        }
    )
    planning = plan_phase_settings(other_url, {})
    assert planning is not None and planning.api_key is None and planning.headers == {}
    # Only the model changed: the session's own server and key plan too.
    only_model = settings.model_copy(
        update={"plan": settings.plan.model_copy(update={"provider": None})}
    )
    planning = plan_phase_settings(only_model, {})
    assert planning is not None and planning.api_key == "sk-configured-session-key"
    assert planning.model == "m" and planning.base_url == "https://exec.example/v1"
    assert plan_phase_settings(Settings(), {}) is None  # no planning model: one model for both


def test_leaving_plan_any_other_way_returns_to_the_session_model(project: Path) -> None:
    settings = Settings(provider="openai", model="exec", plan={"model": "planner"})
    runtime = build_runtime(settings, project, ScriptedDecider(), persist=False)
    session = runtime.agent.provider
    runtime.plan.enter_plan()
    assert getattr(runtime.agent.provider, "model", "") == "planner"
    runtime.plan.leave(why="test")
    assert runtime.agent.provider is session and runtime.model_label() == "openai · exec"


def test_an_untrusted_project_cannot_choose_the_planning_model(
    project: Path, tmp_path: Path
) -> None:
    config = project / ".planshell" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[plan]\nprovider = "openai"\nmodel = "evil"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    settings = load_settings(project, user_file=tmp_path / "none.toml")
    assert settings.plan.model is None and settings.plan.base_url is None
    assert settings.untrusted_project is not None
    assert {"plan.provider", "plan.model", "plan.base_url"} <= set(
        settings.untrusted_project.key_names
    )
    assert "Ignoring security settings" in settings.untrusted_project.warning()
    assert plan_phase_settings(settings, {}) is None


async def test_the_blast_card_prices_execution_with_the_execution_model(project: Path) -> None:
    """While the (free) planning model answers, the card's cost is the execution model's."""
    prices = {"exec": {"input": 10, "output": 30}, "planner": {"input": 0, "output": 0}}
    settings = Settings(provider="openai", model="exec", plan={"model": "planner"}, prices=prices)
    decider = ScriptedDecider([Review(Decision.KEEP)])
    runtime = build_runtime(settings, project, decider, persist=False)
    runtime.plan.enter_plan()
    assert getattr(runtime.agent.provider, "model", "") == "planner"
    store = PlanStore(project)
    store.ensure_dir()
    path = store.write(store.plans_dir / "limits.md", RATE_LIMIT_PLAN)
    await finishes(runtime.plan.review(str(path)), "the review")
    blast = decider.requests[0].blast
    assert blast is not None and blast.estimate.cost_low is not None
    assert blast.estimate.cost_low > 0  # the planner's price would make it 0.0
    # The request names the model that will run the plan (the approve dialog's line).
    assert decider.requests[0].runner == "Runs with openai · exec (planned with openai · planner)."
    runtime.close()


async def test_one_model_for_both_phases_names_no_runner(project: Path) -> None:
    decider = ScriptedDecider([Review(Decision.KEEP)])
    runtime = build_runtime(
        Settings(provider="openai", model="exec"), project, decider, persist=False
    )
    runtime.plan.enter_plan()
    store = PlanStore(project)
    store.ensure_dir()
    path = store.write(store.plans_dir / "limits.md", RATE_LIMIT_PLAN)
    await finishes(runtime.plan.review(str(path)), "the review")
    assert decider.requests[0].runner == ""
    runtime.close()
