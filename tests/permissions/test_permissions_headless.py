"""`planshell -p` outside plan mode: a call that would ask is denied and reported in
`ask`, runs in `auto` and when `--allow` covers it (a real server; the `ask` test
spawns the real program, the others call the same ``main`` in-process)."""

from __future__ import annotations

from tests.cli_helpers import run_planshell
from tests.sse_server import (
    SSEServer,
    openai_text_response,
    openai_tool_call_response,
)


def _args(server: SSEServer, *extra: str) -> list[str]:
    return [
        "-p",
        "make a file",
        "--provider",
        "openai",
        "--base-url",
        f"{server.url}/v1",
        "--model",
        "m",
        *extra,
    ]


# A known window: the scripted server answers requests in order, so the context
# window lookup (GET /v1/models after the first reply) must not take a reply.
WINDOW = {"PLANSHELL_CONTEXT_WINDOW": "100000"}


def _tool_result(server: SSEServer) -> str:
    messages = server.requests[1].json["messages"]
    return next(m["content"] for m in messages if m["role"] == "tool")


async def test_headless_ask_denies_and_reports(sse_server: SSEServer, project) -> None:
    sse_server.add(
        openai_tool_call_response("bash", {"command": "touch made"}), openai_text_response("ok")
    )
    code, _out, err = await run_planshell(_args(sse_server), project, WINDOW)
    assert code == 0, err
    assert not (project / "made").exists()
    assert "Denied (needs approval): bash touch made" in err
    assert "needs the user's approval" in _tool_result(sse_server)


async def test_headless_auto_runs(sse_server: SSEServer, project, cli) -> None:
    sse_server.add(
        openai_tool_call_response("bash", {"command": "touch made"}), openai_text_response("ok")
    )
    code, _out, err = await cli.run(_args(sse_server, "--permission-mode", "auto"), project, WINDOW)
    assert code == 0, err
    assert (project / "made").exists()
    assert "exit code 0" in _tool_result(sse_server)


async def test_headless_allow_rule_covers_only_its_segments(
    sse_server: SSEServer, project, cli
) -> None:
    sse_server.add(
        openai_tool_call_response("bash", {"command": "touch a && rm -rf src"}),
        openai_text_response("ok"),
    )
    code, _out, err = await cli.run(_args(sse_server, "--allow", "bash(touch *)"), project, WINDOW)
    assert code == 0, err
    assert not (project / "a").exists() and (project / "src").exists()
    sse_server.requests.clear()
    sse_server.add(
        openai_tool_call_response("bash", {"command": "touch a"}), openai_text_response("ok")
    )
    code, _out, err = await cli.run(_args(sse_server, "--allow", "bash(touch *)"), project, WINDOW)
    assert code == 0, err
    assert (project / "a").exists()


def test_bad_allow_rule_is_a_clear_error(project, cli) -> None:
    code, _out, err = cli(["-p", "x", "--allow", "rm -rf"], project)
    assert code == 1 and "--allow" in err and "Traceback" not in err
