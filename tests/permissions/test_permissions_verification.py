"""The approved plan's Verification commands run once without a second question (issue 24.4).

Real runtime, real gates, real bash; only the model and the person are scripted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planshell.agent import events as ev
from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.plan.controller import Mode
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, Decision, Review
from planshell.runtime import Runtime, build_runtime
from tests.engine_helpers import Recorder, ScriptedDecider, write_and_review
from tests.sse_server import SSEServer, openai_text_response, openai_tool_call_response

CHECK = "sh check.sh"
PLAN = f"""# Plan: Checked change

## Steps

- [ ] Change `src/app/server.py`, then run `sh steps.sh`

## Verification

```sh
{CHECK}
```
"""
DENY = ApprovalDecision(ApprovalChoice.DENY, "ask me first")


def approve(request) -> Review:
    return Review(Decision.APPROVE, reviewed_text=request.text)


def bash(command: str, **extra: object) -> tuple[str, dict]:
    return ("bash", {"command": command, **extra})


@pytest.fixture
def checked(project: Path) -> Path:
    """The project with a check script that counts its runs in ran.log."""
    (project / "check.sh").write_text("echo run >> ran.log\necho 'checks ok'\nexit 0\n")
    (project / "steps.sh").write_text("echo run >> steps.log\n")
    return project


def _runtime(
    project: Path,
    replies: list,
    mode: str = "ask",
    deny: list[str] | None = None,
    sandbox: str = "workspace-write",
) -> tuple[Runtime, ScriptedDecider, Recorder]:
    decider = ScriptedDecider([approve])
    provider = ScriptedProvider([*write_and_review("Checked change", PLAN), *replies])
    permissions = {"mode": mode, "deny": deny or [], "sandbox": sandbox}
    settings = Settings.model_validate({"plan": {"sandbox": "off"}, "permissions": permissions})
    runtime = build_runtime(settings, project, decider, provider=provider)
    recorder = Recorder()
    runtime.agent.subscribe(recorder)
    runtime.plan.enter_plan()
    return runtime, decider, recorder


def _runs(project: Path, name: str = "ran.log") -> int:
    path = project / name
    return len(path.read_text().splitlines()) if path.exists() else 0


def _permissions(runtime: Runtime) -> list[dict]:
    assert runtime.agent.session is not None
    lines = runtime.agent.session.path.read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == "permission"]


@pytest.mark.parametrize("mode", ["ask", "accept-edits"])
async def test_the_verification_command_runs_once_unasked_and_then_asks(
    checked: Path, mode: str
) -> None:
    runtime, decider, recorder = _runtime(
        checked,
        [Reply(calls=[bash("sh   check.sh")]), Reply(calls=[bash(CHECK)]), Reply("done")],
        mode,
    )
    decider.approvals = [DENY]
    await runtime.agent.submit("make the change")
    assert runtime.plan.mode is Mode.EXECUTE
    assert _runs(checked) == 1  # the first ran unasked; the second asked and was denied
    [asked] = decider.approval_requests
    assert asked.command == CHECK
    bash_log = [e for e in _permissions(runtime) if e["tool"] == "bash"]
    assert [(e["decision"], e["by"]) for e in bash_log] == [
        ("allow", "plan-verification"),
        ("deny", "user"),
    ]
    assert any("Verification command" in n.message for n in recorder.of(ev.Notice))
    # The run record keeps the grant, so the next identical run asks after --continue too.
    assert runtime.plan.run_log.record is not None
    assert [g.command for g in runtime.plan.run_log.record.granted] == [CHECK]


async def test_a_tick_keeps_the_revision_so_the_command_still_asks(checked: Path) -> None:
    tick = ("set_plan_steps", {"updates": [{"step": 1, "status": "done"}]})
    runtime, decider, _ = _runtime(
        checked,
        [Reply(calls=[bash(CHECK)]), Reply(calls=[tick]), Reply(calls=[bash(CHECK)]), Reply("ok")],
    )
    decider.approvals = [DENY]
    await runtime.agent.submit("make the change")
    assert _runs(checked) == 1 and len(decider.approval_requests) == 1


@pytest.mark.parametrize(
    "call",
    [
        bash(f"{CHECK}; touch pwned"),
        bash(f"{CHECK} && touch pwned"),
        bash(f"{CHECK}\ntouch pwned"),
        bash(f"{CHECK} extra"),
        bash("sh steps.sh"),  # named in Steps, not in Verification
    ],
    ids=["semicolon", "and", "newline", "extra-word", "steps"],
)
async def test_anything_but_the_exact_command_asks(checked: Path, call) -> None:
    runtime, decider, _ = _runtime(checked, [Reply(calls=[call]), Reply("ok")])
    decider.approvals = [DENY]
    await runtime.agent.submit("make the change")
    assert len(decider.approval_requests) == 1
    assert not (checked / "pwned").exists()
    assert _runs(checked) == 0 and _runs(checked, "steps.log") == 0


@pytest.mark.parametrize("sandbox", ["workspace-write", "off"])
async def test_asking_to_leave_the_sandbox_still_asks(checked: Path, sandbox: str) -> None:
    runtime, decider, _ = _runtime(
        checked, [Reply(calls=[bash(CHECK, sandbox=False)]), Reply("ok")], sandbox=sandbox
    )
    decider.approvals = [DENY]
    await runtime.agent.submit("make the change")
    assert len(decider.approval_requests) == 1 and _runs(checked) == 0


async def test_a_deny_rule_still_wins(checked: Path) -> None:
    runtime, decider, _ = _runtime(
        checked, [Reply(calls=[bash(CHECK)]), Reply("ok")], deny=["bash(sh *)"]
    )
    await runtime.agent.submit("make the change")
    assert _runs(checked) == 0 and decider.approval_requests == []
    [entry] = [e for e in _permissions(runtime) if e["tool"] == "bash"]
    assert (entry["decision"], entry["by"]) == ("deny", "deny-rule")


async def test_only_the_approved_text_counts_never_the_file(checked: Path) -> None:
    runtime, _decider, _ = _runtime(checked, [Reply("approved, waiting")])
    await runtime.agent.submit("make the change")
    assert runtime.plan.mode is Mode.EXECUTE and runtime.plan.plan_path is not None
    # A hostile hand (or a sandboxed bash) adds a command to the plan file's Verification.
    path = runtime.plan.plan_path
    path.write_text(path.read_text().replace(CHECK, f"{CHECK}\ntouch pwned"))
    permissions, tool = runtime.permissions, runtime.registry.get("bash")
    assert permissions is not None and tool is not None

    def verdict(command: str) -> str:
        return permissions.evaluate(tool, tool.Args.model_validate({"command": command})).by

    assert verdict("touch pwned") == "ask"
    assert verdict(CHECK) == "plan-verification"  # the approved one still is


async def test_no_plan_no_grant(checked: Path) -> None:
    runtime, decider, _ = _runtime(checked, [])
    runtime.plan.leave()
    runtime.agent.set_provider(ScriptedProvider([Reply(calls=[bash(CHECK)]), Reply("ok")]))
    decider.approvals = [DENY]
    await runtime.agent.submit("run the check")
    assert _runs(checked) == 0 and len(decider.approval_requests) == 1


async def test_output_and_exit_code_land_in_the_run_record_and_report(checked: Path) -> None:
    (checked / "check.sh").write_text("echo run >> ran.log\necho 'FAILED test_limits'\nexit 3\n")
    runtime, _decider, recorder = _runtime(
        checked,
        [Reply(calls=[bash(CHECK)]), Reply(calls=[("plan_complete", {})]), Reply("done")],
    )
    await runtime.agent.submit("make the change")
    assert runtime.plan.mode is Mode.OFF and _runs(checked) == 1
    [run] = list(runtime.store.plans_dir.glob("*.run.json"))
    saved = json.loads(run.read_text())
    [item] = saved["steps"][0]["evidence"]
    assert (item["kind"], item["detail"], item["exit_code"]) == ("command", CHECK, 3)
    assert "FAILED test_limits" in item["output"]
    [report] = recorder.of(ev.PlanReported)
    assert f"`{CHECK}`: exit 3" in report.markdown
    assert "FAILED test_limits" in report.markdown and "Finished with gaps" in report.markdown


# --- headless, resumed: the run record decides, not memory ----------------------------------

WINDOW = {"PLANSHELL_CONTEXT_WINDOW": "100000"}


def _headless_args(server: SSEServer) -> list[str]:
    return [
        "--continue",
        "-p",
        "go on",
        "--provider",
        "openai",
        "--base-url",
        f"{server.url}/v1",
        "--model",
        "m",
    ]


def _tool_results(server: SSEServer) -> list[str]:
    messages = server.requests[-1].json["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize("ran_before", [False, True], ids=["first-run", "ran-before-continue"])
async def test_headless_continue_runs_it_once_and_then_denies(
    checked: Path, sse_server: SSEServer, cli, ran_before: bool
) -> None:
    before = [Reply(calls=[bash(CHECK)])] if ran_before else []
    first, _decider, _ = _runtime(checked, [*before, Reply("pausing here")])
    await first.agent.submit("make the change")
    assert first.plan.mode is Mode.EXECUTE and _runs(checked) == int(ran_before)
    first.close()

    sse_server.add(
        openai_tool_call_response("bash", {"command": CHECK}),
        openai_tool_call_response("bash", {"command": CHECK}),
        openai_text_response("ok"),
    )
    code, _out, err = await cli.run(_headless_args(sse_server), checked, WINDOW)
    assert code == 0, err
    assert _runs(checked) == 1  # exactly one run in all: the resumed session asks for more
    results = _tool_results(sse_server)[-2:]  # this run's (the history holds the first's)
    if ran_before:
        assert all("needs the user's approval" in r for r in results)
    else:
        assert "checks ok" in results[0] and "needs the user's approval" in results[1]
    assert "Denied (needs approval): bash sh check.sh" in err
