"""`planshell -p` as a subprocess against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from tests.cli_helpers import run_planshell
from tests.sse_server import (
    Response,
    SSEServer,
    openai_chunk,
)


async def test_print_mode_streams_from_openai_compatible_server(sse_server: SSEServer, project):
    sse_server.add(
        Response.sse(
            [
                openai_chunk({"role": "assistant", "content": "Hel"}),
                openai_chunk({"content": "lo from the "}),
                openai_chunk({"content": "local server."}),
                openai_chunk({}, "stop"),
                b"data: [DONE]\n\n",
            ]
        )
    )
    code, out, err = await run_planshell(
        [
            "-p",
            "hi",
            "--provider",
            "openai",
            "--base-url",
            f"{sse_server.url}/v1",
            "--model",
            "m",
            "-v",
        ],
        project,
    )
    assert code == 0, err
    assert out.strip() == "Hello from the local server."
    assert "provider: openai · m" in err
    body = sse_server.requests[0].json
    assert body["model"] == "m" and body["messages"][-1] == {"role": "user", "content": "hi"}
    assert any(t["function"]["name"] == "read" for t in body["tools"])


async def test_print_mode_reports_http_errors(sse_server: SSEServer, project):
    sse_server.add(Response.json(401, {"error": {"message": "bad key"}}))
    code, _out, err = await run_planshell(
        ["-p", "hi", "--provider", "openai", "--base-url", f"{sse_server.url}/v1", "--model", "m"],
        project,
    )
    assert code == 1
    assert "error:" in err and "OPENAI_API_KEY" in err and "bad key" in err
    assert "Traceback" not in err


def test_a_bad_base_url_gets_advice_that_fits_not_retry(cli, project):
    result = cli(["-p", "hi", "--base-url", "not a url", "--model", "m"], project)
    assert result.returncode == 1
    assert "must be an http(s) URL like http://127.0.0.1:11434/v1" in result.stderr
    assert "retry" not in result.stderr.lower()


async def test_a_rejected_key_is_not_told_to_retry(cli, sse_server: SSEServer, project):
    sse_server.add(Response.json(401, {"error": {"message": "bad key"}}))
    result = await cli.run(
        ["-p", "hi", "--provider", "openai", "--base-url", f"{sse_server.url}/v1", "--model", "m"],
        project,
    )
    assert result.returncode == 1 and "OPENAI_API_KEY" in result.stderr
    assert "retry" not in result.stderr.lower()


async def test_plan_print_mode_plans_with_the_plan_model(sse_server: SSEServer, project):
    """`--plan -p` asks the planning model; `--model` stays the session's (executing) one."""
    sse_server.add(
        Response.sse(
            [
                openai_chunk({"role": "assistant", "content": "A plan needs more facts."}),
                openai_chunk({}, "stop"),
                b"data: [DONE]\n\n",
            ]
        )
    )
    args = ["-p", "what would you do?", "--plan", "--provider", "openai"]
    args += ["--base-url", f"{sse_server.url}/v1", "--model", "exec-m", "--plan-model", "plan-m"]
    code, _out, err = await run_planshell([*args, "-v"], project)
    assert code == 4, err  # planned, but no plan written: nothing awaits approval
    assert [r.json["model"] for r in sse_server.requests if r.method == "POST"] == ["plan-m"]
    assert "provider: openai · exec-m" in err
    assert "models: planning: openai · plan-m · executing: openai · exec-m" in err
