"""Deny rules match what bash will run, not the words as typed (issue 21, item 4).

Each spelling below deletes the file ``x`` when bash runs it. With
``deny = ["bash(rm *)"]`` in auto mode, the real bash tool behind the real gate
must leave ``x`` in place: the line is denied by the rule, or (when what it
runs cannot be known beforehand) asked about, which headless means denied.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.llm.scripted import Reply, ScriptedProvider
from planshell.permissions import parse_rule
from planshell.permissions.args import Hole
from planshell.permissions.resolve import resolve
from planshell.plan.decider import HeadlessDecider
from planshell.runtime import Runtime, build_runtime
from tests.cli_helpers import run_planshell
from tests.engine_helpers import HANG_GUARD, ScriptedDecider
from tests.sse_server import (
    SSEServer,
    openai_text_response,
    openai_tool_call_response,
)

DENY_RM = ["bash(rm *)"]

# Every one of these removes ./x when bash runs it (unless the program is missing:
# sudo, doas). The marker says what the gate must answer: "deny" when the rule
# matches what bash runs, "ask" when the command cannot be known before it runs.
SPELLINGS: list[tuple[str, str]] = [
    ("rm -f x", "deny"),
    ("{rm,-f,x}", "deny"),
    ("r{m,} -f x", "deny"),
    ("{r,}m -f x", "deny"),
    ("command rm -f x", "deny"),
    ("command -p rm -f x", "deny"),
    ("\\rm -f x", "deny"),
    ("r\\m -f x", "deny"),
    ("/bin/rm -f x", "deny"),
    ("/usr/bin/rm -f x", "deny"),
    ("/usr/bin/../bin/rm -f x", "deny"),
    ('"rm" -f x', "deny"),
    ("'r'm -f x", "deny"),
    ('"r""m" -f x', "deny"),
    ("env rm -f x", "deny"),
    ("env -i rm -f x", "deny"),
    ("env -u HOME A=1 rm -f x", "deny"),
    ("/usr/bin/env -- rm -f x", "deny"),
    ("env -S 'rm -f x'", "deny"),
    ("env - rm -f x", "deny"),
    ("su - root -c 'rm -f x'", "deny"),
    ("nice -n 5 rm -f x", "deny"),
    ("nice -5 rm -f x", "deny"),
    ("nohup rm -f x", "deny"),
    ("timeout 5 rm -f x", "deny"),
    ("timeout -s KILL -k 1 5s rm -f x", "deny"),
    ("xargs rm <<< x", "deny"),
    ("echo x | xargs rm -f", "deny"),
    ("echo x | xargs -I{} rm -f {}", "deny"),
    ("echo x | xargs -i{} --replace rm -f {}", "deny"),
    ("find . -name x -exec rm {} \\;", "deny"),
    ("find . -name x -execdir /bin/rm -f {} +", "deny"),
    ("find . -name x -ok rm {} \\; < /dev/null", "deny"),
    ("sudo rm -f x", "deny"),
    ("sudo -n -u root -- rm -f x", "deny"),
    ("doas rm -f x", "deny"),
    ("exec rm -f x", "deny"),
    ("builtin command rm -f x", "deny"),
    ("bash -c 'rm -f x'", "deny"),
    ('sh -c "rm x"', "deny"),
    ("bash -lc 'true; {rm,-f,x}'", "deny"),
    ("bash -c \"bash -c 'rm -f x'\"", "deny"),
    ("eval rm -f x", "deny"),
    ("eval 'r''m -f x'", "deny"),
    ("time rm -f x", "deny"),
    ("stdbuf -o0 rm -f x", "deny"),
    ("setsid -w rm -f x", "deny"),
    ("busybox rm -f x", "deny"),
    ("ionice -c 3 rm -f x", "deny"),
    ("flock /tmp/lock rm -f x", "deny"),
    ("flock /tmp/lock -c 'rm -f x'", "deny"),
    ("flock -n /tmp/lock rm -f x", "deny"),
    ("script -qc 'rm -f x' /dev/null", "deny"),
    ("strace -f rm -f x", "ask"),
    ("parallel rm ::: x", "ask"),
    ("zsh -c '=rm -f x'", "ask"),
    ("true && rm -f x", "deny"),
    ("(rm -f x)", "deny"),
    ("{ rm -f x; }", "deny"),
    ("if true; then rm -f x; fi", "deny"),
    ("for f in 1; do rm -f x; done", "deny"),
    ("f() { rm -f x; }; f", "deny"),
    ("echo $(rm -f x)", "deny"),
    ("echo ok > $(rm -f x; echo /dev/null)", "deny"),
    ("y=$(rm -f x) true", "deny"),
    ("trap 'rm -f x' EXIT", "deny"),
    ("hash -p /bin/rm ls; ls -f x", "deny"),
    ("shopt -s expand_aliases\nalias ls=rm\nls -f x", "deny"),
    ("a[0]=1 rm -f x", "deny"),
    ("mapfile -C 'rm -f x' -c 1 <<< y", "deny"),
    ("compgen -C 'rm -f x' -- y", "deny"),
    ("shopt -s expand_aliases\nBASH_ALIASES[r]=rm\nr -f x", "ask"),
    ("BASH_CMDS[ls]=/bin/rm; ls -f x", "ask"),
    ("PS4='$(rm -f x)'; set -x; true", "ask"),
    ("env 'BASH_FUNC_ls%%=() { rm -f x; }' bash -c ls", "ask"),
    ("declare -i n; n='a[$(rm -f x)]'", "ask"),
    ("let 'a[$(rm -f x)]'", "ask"),
    ("$(echo rm) -f x", "ask"),
    ("`echo rm` -f x", "ask"),
    ("x=rm; $x -f x", "ask"),
    ('c=rm; "$c" -f x', "ask"),
    ("/bin/r? -f x", "ask"),
    ("/bin/r[m] -f x", "ask"),
    ("for c in rm; do $c -f x; done", "ask"),
    ('bash -c "$(echo rm) -f x"', "ask"),
    ("bash -c '$0 -f x' rm", "ask"),
    ("echo 'rm -f x' | bash", "ask"),
    ("bash <(echo rm -f x)", "ask"),
    ("source /dev/stdin <<< 'rm -f x'", "ask"),
    (". <(echo rm -f x)", "ask"),
    ("sh -s < /dev/null; echo rm -f x | sh", "ask"),
    ("c=rm; eval $c -f x", "ask"),
    ("env $(echo rm) -f x", "ask"),
    ("nice --frobnicate rm -f x", "ask"),
    ("cat <<EOF\n$(rm -f x)\nEOF", "ask"),
    ("echo ${y:-$(rm -f x)}", "ask"),
    ("true && time rm -f x", "ask"),  # bashlex cannot parse `time` here: unknown, so asked
]


def _runtime(project: Path, replies: list[Reply], decider: object, **perms: object) -> Runtime:
    settings = Settings()
    settings.permissions.mode = perms.get("mode", "auto")  # type: ignore[assignment]
    settings.permissions.deny = list(perms.get("deny", DENY_RM))  # type: ignore[call-overload]
    settings.permissions.allow = list(perms.get("allow", []))  # type: ignore[call-overload]
    return build_runtime(
        settings,
        project,
        decider,  # type: ignore[arg-type]
        provider=ScriptedProvider(replies),
        persist=False,
    )


def _evaluate(runtime: Runtime, command: str) -> tuple[str, str]:
    assert runtime.permissions is not None
    tool = runtime.registry.get("bash")
    assert tool is not None
    verdict = runtime.permissions.evaluate(tool, tool.Args.model_validate({"command": command}))
    return verdict.action, verdict.why


def test_there_are_enough_spellings() -> None:
    assert len(SPELLINGS) >= 30
    assert len({c for c, _ in SPELLINGS}) == len(SPELLINGS)


@pytest.mark.parametrize(("command", "expected"), SPELLINGS, ids=[c for c, _ in SPELLINGS])
async def test_auto_mode_never_runs_a_denied_rm(project: Path, command: str, expected: str) -> None:
    """Through the agent, the gate and the real bash tool; headless, so asking denies."""
    target = project / "x"
    target.write_text("keep me\n")
    runtime = _runtime(
        project, [Reply(calls=[("bash", {"command": command})]), Reply("done")], HeadlessDecider()
    )
    await runtime.agent.submit("delete x")
    result = [m for m in runtime.agent.messages if m.role == "tool"][-1].content
    assert target.read_text() == "keep me\n", result
    if expected == "deny":
        assert result.startswith("Denied by the rule bash(rm *) (permissions.deny)"), result
    else:
        assert result.startswith("Not run: bash "), result
        assert "needs the user's approval" in result


@pytest.mark.parametrize(("command", "expected"), SPELLINGS, ids=[c for c, _ in SPELLINGS])
def test_each_spelling_gets_its_verdict_in_every_mode(
    project: Path, command: str, expected: str
) -> None:
    for mode in ("auto", "accept-edits", "ask"):
        runtime = _runtime(project, [], ScriptedDecider(), mode=mode, allow=["bash"])
        assert _evaluate(runtime, command)[0] == expected, mode


def test_the_ask_says_why(project: Path) -> None:
    runtime = _runtime(project, [], ScriptedDecider())
    action, why = _evaluate(runtime, "$(echo rm) -f x")
    assert action == "ask" and "only known when it runs" in why
    action, why = _evaluate(runtime, "git $(echo push) origin")
    assert (action, why) == ("allow", "auto mode")  # no deny rule names git
    runtime = _runtime(project, [], ScriptedDecider(), deny=["bash(git push *)"])
    action, why = _evaluate(runtime, "git $(echo push) origin")
    assert action == "ask" and "bash(git push *)" in why
    assert _evaluate(runtime, "git pu''sh origin")[0] == "deny"
    assert _evaluate(runtime, "git status $(echo x)")[0] == "allow"  # push cannot appear there


def test_without_deny_rules_auto_runs_what_it_cannot_resolve(project: Path) -> None:
    """Nothing to protect: auto means nothing asks (docs/permissions.md)."""
    runtime = _runtime(project, [], ScriptedDecider(), deny=[])
    assert _evaluate(runtime, "x=touch; $x made")[0] == "allow"


def test_commands_that_do_not_run_rm_are_not_denied(project: Path) -> None:
    runtime = _runtime(project, [], ScriptedDecider())
    for command in (
        "echo rm -f x",
        "command -v rm",
        "grep -r 'rm -f' .",
        "cat <<EOF\nrm -f $HOME\nEOF",
        "printf '%s\\n' {a,b}",
        "bash script.sh",
        "find . -name '*.py' -print",
        "xargs -0 echo < /dev/null",
        "unlink y",
    ):
        assert _evaluate(runtime, command)[0] == "allow", command


# --- allow rules: what runs must be covered, * does not cross / or .. ------------------------


@pytest.mark.parametrize(
    ("rule", "command", "covered"),
    [
        ("bash(./scripts/*.sh)", "./scripts/build.sh", True),
        ("bash(./scripts/*.sh)", "./scripts/../../x.sh", False),
        ("bash(./scripts/*.sh)", "./scripts/sub/x.sh", False),
        ("bash(./scripts/**/*.sh)", "./scripts/sub/x.sh", True),
        ("bash(./scripts/**/*.sh)", "./scripts/../x.sh", False),
        ("bash(touch src/*)", "touch src/a.py", True),
        ("bash(touch src/*)", "touch src/../../etc/passwd", False),
        ("bash(touch src/*)", "touch src/..", False),
        ("bash(touch *)", "touch ../elsewhere", True),  # the final lone * is any words
        ("bash(touch *)", "timeout 5 touch a", True),  # a wrapper needs no rule of its own
        ("bash(touch *)", "env A=1 touch a", False),  # ... unless it changes the environment
        ("bash(touch *)", "echo a | xargs touch", True),
        ("bash(touch *)", "{touch,a}", True),
        ("bash(touch *)", "bash -c 'touch a'", True),
        ("bash(touch *)", "bash -c 'touch a; mkdir b'", False),
        ("bash(find *)", "find . -exec mkdir {} \\;", False),  # find runs mkdir, not covered
        ("bash(sudo *)", "sudo touch a", False),  # sudo runs touch: both must be allowed
        ("bash(touch *)", "sudo touch a", False),
        ("bash(touch *)", "/tmp/touch a", False),  # allow never compares basenames
    ],
)
def test_allow_rules_cover_what_runs(project: Path, rule: str, command: str, covered: bool) -> None:
    runtime = _runtime(project, [], ScriptedDecider(), mode="ask", deny=[], allow=[rule])
    assert _evaluate(runtime, command)[0] == ("allow" if covered else "ask")


def test_allow_star_stays_inside_path_components() -> None:
    rule = parse_rule("bash(cat src/*)")
    assert rule.match_words(("cat", "src/a.py"), deny=False) == "yes"
    assert rule.match_words(("cat", "src/../../etc/passwd"), deny=False) == "no"
    assert rule.match_words(("cat", "src/a/b.py"), deny=False) == "no"
    assert rule.match_words(("cat", Hole.ONE), deny=False) == "no"
    deny = parse_rule("bash(cat src/*)")
    assert deny.match_words(("cat", "src/../../etc/passwd"), deny=True) == "yes"  # deny stays broad
    assert deny.match_words(("/bin/cat", Hole.MANY), deny=True) == "maybe"


async def test_session_rule_offered_for_the_command_that_runs(project: Path) -> None:
    decider = ScriptedDecider()
    runtime = _runtime(
        project,
        [Reply(calls=[("bash", {"command": "nice -n 5 touch made"})]), Reply("ok")],
        decider,
        mode="ask",
        deny=[],
    )
    await runtime.agent.submit("go")
    assert decider.approval_requests[0].session_rules == ("bash(touch *)",)
    assert (project / "made").exists()


def test_resolution_expands_braces_like_bash() -> None:
    words = (
        resolve("echo a{b,c{d,e}}f {1..3} {01..03} {a..c} '{x,y}' \\{p,q} {z}").commands[0].words
    )
    assert words == (
        "echo",
        "abf",
        "acdf",
        "acef",
        "1",
        "2",
        "3",
        "01",
        "02",
        "03",
        "a",
        "b",
        "c",
        "{x,y}",
        "{p,q}",
        "{z}",
    )


# --- headless, a real subprocess ------------------------------------------------------


@pytest.mark.parametrize("command", ["{rm,-f,x}", "r{m,} -f x", "$(echo rm) -f x"])
async def test_headless_auto_denies_with_a_reason(
    sse_server: SSEServer, project: Path, command: str
) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "planshell" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[permissions]\ndeny = ["bash(rm *)"]\n')
    (project / "x").write_text("keep me\n")
    sse_server.add(
        openai_tool_call_response("bash", {"command": command}), openai_text_response("ok")
    )
    args = [
        "-p",
        "delete x",
        "--provider",
        "openai",
        "--base-url",
        f"{sse_server.url}/v1",
        "--model",
        "m",
        "--permission-mode",
        "auto",
    ]
    code, _out, err = await run_planshell(args, project, {"PLANSHELL_CONTEXT_WINDOW": "100000"})
    assert code == 0, err
    assert (project / "x").read_text() == "keep me\n"
    messages = sse_server.requests[1].json["messages"]
    result = next(m["content"] for m in messages if m["role"] == "tool")
    if command.startswith("$"):
        assert "needs the user's approval" in result and "only known when it runs" in result
        assert "Denied (needs approval)" in err
    else:
        assert result.startswith("Denied by the rule bash(rm *)"), result


def test_huge_lines_get_a_verdict(project: Path) -> None:
    """Thousands of words or path components neither crash the gate nor slip through."""
    runtime = _runtime(project, [], ScriptedDecider(), deny=["bash(git push *)", "bash(rm *)"])
    assert _evaluate(runtime, "git " + "$x " * 4000 + "push")[0] == "ask"
    assert _evaluate(runtime, "rm " + "a/" * 4000 + "x")[0] == "deny"
    assert _evaluate(runtime, "echo " + "{a,b}" * 40)[0] == "ask"  # 2**40 words: not expanded
    rule = parse_rule("bash(cat src/**/x)")
    assert rule.match_words(("cat", "src/" + "a/" * 4000 + "x"), deny=False) == "yes"
    assert rule.match_words(("cat", "src/" + "a/" * 4000 + "../x"), deny=False) == "no"


def test_what_bash_runs_is_what_the_rules_see(project: Path, tmp_path: Path) -> None:
    """Differential: wrappers and quotings composed at random, run by the real bash with a
    fake ``rm`` first on PATH. Whenever bash ran it, the gate under a deny rule for rm
    must refuse the line (or ask, when what it runs cannot be known)."""
    import random
    import shlex
    import subprocess

    fake = tmp_path / "bin" / "rm"
    fake.parent.mkdir()
    ran = tmp_path / "ran"
    fake.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(ran))}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    names = ["rm", "'r'm", "\\rm", "r\\m", '"rm"', "r{m,}", "{r,}m", "r''m"]
    wrappers = [
        "",
        "command ",
        "builtin command ",
        "exec ",
        "env ",
        "env -u HOME A=1 ",
        "nice ",
        "nice -n 3 ",
        "nohup ",
        "timeout 5 ",
        "stdbuf -o0 ",
        "setsid -w ",
        "time -p ",
    ]
    contexts = [
        "{}",
        "true && {}",
        "({})",
        "{{ {}; }}",
        "bash -c {q}",
        "sh -c {q}",
        "eval {q}",
        "echo a | xargs {}",
        "if true; then {}; fi",
        "f() {{ {}; }}; f",
        "echo $({})",
        "for i in 1; do {}; done",
        "trap {q} EXIT",
        "true | {}",
        "y=$({}) true",
    ]
    runtime = _runtime(project, [], ScriptedDecider())
    rng = random.Random(21)
    runs = 0
    for _ in range(120):
        command = rng.choice(wrappers) + rng.choice(wrappers) + rng.choice(names) + " -f x"
        for _ in range(rng.randint(1, 2)):
            command = rng.choice(contexts).format(command, q=shlex.quote(command))
        ran.unlink(missing_ok=True)
        subprocess.run(
            ["bash", "-c", command],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=HANG_GUARD,
        )
        if not ran.exists():
            continue
        runs += 1
        assert _evaluate(runtime, command)[0] in ("deny", "ask"), command
    assert runs > 60  # the generator really reaches rm
