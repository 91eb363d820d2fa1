"""Context windows from real HTTP servers on 127.0.0.1, in each server's own shape."""

from __future__ import annotations

import pytest

from planshell.config import Settings
from planshell.llm import models
from planshell.llm.factory import DEFAULT_URLS, make_provider
from tests.sse_server import Response, SSEServer, closed_port

NOT_FOUND = Response.json(404, {"error": "not found"})


@pytest.fixture(autouse=True)
def _fresh_cache():
    models.clear_cache()
    yield
    models.clear_cache()


def provider_for(server: SSEServer, model: str = "m", **extra):
    settings = Settings(
        provider="openai", base_url=f"{server.url}/v1", model=model, api_key="sk-local", **extra
    )
    return make_provider(settings, {})


async def test_vllm_model_list_max_model_len(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(
            200,
            {
                "object": "list",
                "data": [
                    {"id": "other", "max_model_len": 99},
                    {"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768},
                ],
            },
        )
    )
    provider = provider_for(sse_server, "Qwen/Qwen2.5-7B")
    assert await models.find_window(provider, default_urls=DEFAULT_URLS) == 32768
    request = sse_server.requests[0]
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["authorization"] == "Bearer sk-local"
    # Cached for the session: no second request.
    assert await models.find_window(provider, default_urls=DEFAULT_URLS) == 32768
    assert len(sse_server.requests) == 1


async def test_llama_cpp_props(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(
            200, {"object": "list", "data": [{"id": "smollm2.gguf", "meta": {"n_ctx_train": 8192}}]}
        ),
        Response.json(200, {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}),
    )
    assert await models.find_window(provider_for(sse_server, "smollm2.gguf")) == 4096
    assert [r.path for r in sse_server.requests] == ["/v1/models", "/props"]


async def test_lm_studio_api_v0(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(200, {"data": [{"id": "a"}, {"id": "b"}]}),
        NOT_FOUND,
        Response.json(
            200, {"id": "qwen", "max_context_length": 32768, "loaded_context_length": 8192}
        ),
    )
    assert await models.find_window(provider_for(sse_server, "qwen")) == 8192
    assert sse_server.requests[2].path == "/api/v0/models/qwen"


async def test_ollama_api_show(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(200, {"object": "list", "data": [{"id": "llama3.2"}, {"id": "x"}]}),
        NOT_FOUND,
        NOT_FOUND,
        Response.json(200, {"version": "0.6.2"}),
        Response.json(
            200,
            {
                "parameters": 'stop "<|eot|>"\nnum_ctx 16384',
                "model_info": {"llama.context_length": 131072},
            },
        ),
    )
    assert await models.find_window(provider_for(sse_server, "llama3.2")) == 16384
    show = sse_server.requests[4]
    assert (show.method, show.path, show.json) == ("POST", "/api/show", {"model": "llama3.2"})


async def test_openrouter_context_length(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(
            200,
            {
                "data": [
                    {
                        "id": "openai/gpt-4o",
                        "context_length": 128000,
                        "top_provider": {"context_length": 128000},
                    },
                    {
                        "id": "meta-llama/llama-3-8b-instruct",
                        "top_provider": {"context_length": 8192},
                    },
                ]
            },
        )
    )
    window = await models.find_window(provider_for(sse_server, "meta-llama/llama-3-8b-instruct"))
    assert window == 8192


async def test_a_server_that_says_nothing_falls_back_to_the_table(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(200, {"data": [{"id": "gpt-4o"}, {"id": "y"}]}),
        NOT_FOUND,
        NOT_FOUND,
        Response(status=500, chunks=[b"<html>oops</html>"]),
    )
    # Not Ollama (no version): nothing is POSTed to an unknown server.
    assert await models.find_window(provider_for(sse_server, "gpt-4o")) == 128_000
    assert [r.method for r in sse_server.requests] == ["GET"] * 4


async def test_nothing_listening_is_unknown_not_an_error() -> None:
    settings = Settings(
        provider="openai", base_url=f"http://127.0.0.1:{closed_port()}/v1", model="local"
    )
    assert await models.find_window(make_provider(settings, {})) is None


async def test_configured_window_wins_and_asks_no_server(sse_server: SSEServer) -> None:
    assert await models.find_window(provider_for(sse_server), 2048) == 2048
    assert not sse_server.requests


def test_table_and_hosted_defaults_are_not_probed() -> None:
    assert models.table_window("claude-sonnet-4-5") == 200_000
    assert models.table_window("gpt-4.1-mini") == 1_047_576
    assert models.table_window("openai/gpt-4o-mini") == 128_000
    assert models.table_window("my-finetune") is None


async def test_list_models_keeps_only_plain_ids(sse_server: SSEServer) -> None:
    sse_server.add(
        Response.json(
            200,
            {
                "data": [
                    {"id": "b-model"},
                    {"id": "a/model:free"},
                    {"id": "evil\x1b[31mred"},
                    {"id": "with space"},
                    {"id": 7},
                    "junk",
                ]
            },
        )
    )
    names = await models.list_models(f"{sse_server.url}/v1", {})
    assert names == ["a/model:free", "b-model"]


async def test_a_huge_answer_is_not_read_whole(sse_server: SSEServer) -> None:
    sse_server.add(
        Response(
            status=200,
            headers={"content-type": "application/json"},
            chunks=[b"[" + b"0," * (models.MAX_BODY // 2 + 10) + b"0]"],
        )
    )
    assert await models.list_models(f"{sse_server.url}/v1", {}) == []


def test_a_hostile_repo_cannot_set_window_prices_or_compaction_untrusted(tmp_path) -> None:
    """A tiny window would force constant compaction (cost), a fake price a false cost."""
    from planshell.config import load_settings

    (tmp_path / ".planshell").mkdir()
    (tmp_path / ".planshell" / "config.toml").write_text(
        'context_window = 16\n[prices."m"]\ninput = 0.0\noutput = 0.0\n'
        "[compaction]\nthreshold = 0.2\nkeep_fraction = 0.05\n"
    )
    settings = load_settings(
        tmp_path, environ={}, user_file=tmp_path / "none.toml", trust_file=tmp_path / "trust.json"
    )
    assert settings.context_window is None and settings.prices == {}
    assert settings.compaction.threshold == 0.85
    assert settings.untrusted_project is not None
    assert {"context_window", "prices.m.input", "compaction.threshold"} <= set(
        settings.untrusted_project.key_names
    )


# --- no --model: use what the server serves (issue 26 item 16) -------------------------


def _served(server: SSEServer) -> None:
    server.routes["/v1/models"] = Response.json(
        200,
        {
            "object": "list",
            "data": [
                {"id": "qwen2.5-coder:7b", "object": "model", "max_model_len": 32768},
                {"id": "llama3.2", "object": "model"},
            ],
        },
    )


async def test_no_model_chosen_takes_the_servers_first_and_its_window(
    sse_server: SSEServer, project
) -> None:
    from planshell.runtime import build_runtime
    from tests.engine_helpers import ScriptedDecider

    _served(sse_server)
    settings = Settings(provider="openai", base_url=f"{sse_server.url}/v1")
    runtime = build_runtime(settings, project, ScriptedDecider(), persist=False)
    assert runtime.agent.provider.model == "gpt-4.1-mini"  # the hosted default, before
    choice = await runtime.adopt_served_model()
    assert choice is not None and (choice.model, choice.count) == ("qwen2.5-coder:7b", 2)
    assert runtime.agent.provider.model == "qwen2.5-coder:7b"
    assert "qwen2.5-coder:7b" in runtime.agent.provider.label
    assert runtime.agent.window_source is not None
    assert await runtime.agent.window_source() == 32768  # the server's, not 1047k
    assert runtime.served_models == ["llama3.2", "qwen2.5-coder:7b"]
    assert await runtime.adopt_served_model() is None  # chosen now: never again
    runtime.close()


async def test_a_chosen_model_or_a_silent_server_is_left_alone(
    sse_server: SSEServer, project
) -> None:
    from planshell.runtime import build_runtime
    from tests.engine_helpers import ScriptedDecider

    _served(sse_server)
    chosen = Settings(provider="openai", base_url=f"{sse_server.url}/v1", model="llama3.2")
    runtime = build_runtime(chosen, project, ScriptedDecider(), persist=False)
    assert await runtime.adopt_served_model() is None
    assert runtime.agent.provider.model == "llama3.2" and sse_server.requests == []
    runtime.close()
    sse_server.routes.clear()
    sse_server.add(NOT_FOUND)
    silent = Settings(provider="openai", base_url=f"{sse_server.url}/v1")
    runtime = build_runtime(silent, project, ScriptedDecider(), persist=False)
    assert await runtime.adopt_served_model() is None
    assert runtime.agent.provider.model == "gpt-4.1-mini"
    runtime.close()


async def test_headless_uses_the_served_model_and_says_so(
    sse_server: SSEServer, project, cli
) -> None:
    from tests.sse_server import openai_text_response

    _served(sse_server)
    sse_server.add(openai_text_response("Hello from qwen."))
    result = await cli.run(["-p", "hi", "--base-url", f"{sse_server.url}/v1", "-v"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello from qwen."
    chat = next(r for r in sse_server.requests if r.path == "/v1/chat/completions")
    assert chat.json["model"] == "qwen2.5-coder:7b"
    assert (
        "note: no model was chosen: using 'qwen2.5-coder:7b', the first of 2 it lists from "
        f"{sse_server.url}/v1 (--model NAME to choose)" in result.stderr
    )
    assert "provider: openai · qwen2.5-coder:7b" in result.stderr
