"""The offline demo model drives the real tools on a real project."""

from __future__ import annotations

from planshell.agent import events as ev
from planshell.config import Settings
from planshell.llm.demo import DemoProvider, keywords
from planshell.plan.controller import Mode
from planshell.plan.decider import Decision, Review
from planshell.plan.document import parse_plan
from planshell.runtime import build_runtime
from tests.engine_helpers import Recorder, ScriptedDecider


def test_keywords_skip_filler():
    assert keywords("What is in this repo? Where is rate limiting handled?") == [
        "rate",
        "limiting",
        "handled",
    ]


async def test_grounded_answer(project):
    runtime = build_runtime(
        Settings(), project, ScriptedDecider(), provider=DemoProvider(chunk_delay=0)
    )
    rec = Recorder()
    runtime.agent.subscribe(rec)
    await runtime.agent.submit("where is the request handled?")
    tools = [e.name for e in rec.of(ev.ToolStarted)]
    assert tools[:3] == ["ls", "grep", "read"]
    answer = runtime.agent.messages[-1].content
    assert "Offline demo model" in answer
    assert "Widget Service" in answer  # from the README it read
    assert "src/app/server.py" in answer  # from grep
    assert "`Makefile`" in answer  # from ls


async def test_full_plan_approve_execute_complete_loop(project):
    decider = ScriptedDecider([lambda r: Review(Decision.APPROVE, reviewed_text=r.text)])
    runtime = build_runtime(Settings(), project, decider, provider=DemoProvider(chunk_delay=0))
    rec = Recorder()
    runtime.agent.subscribe(rec)
    runtime.plan.enter_plan()
    await runtime.agent.submit("add rate limiting to the request handler")
    request = decider.requests[0]
    doc = parse_plan(request.text)
    assert doc.title == "add rate limiting to the request handler"
    assert "src/app/server.py" in request.text and "README.md" in request.text
    assert "make test" in request.text  # the project's real test command
    assert doc.total_steps == 4
    final = parse_plan(request.path.read_text())
    assert final.done_count == final.total_steps == 4
    assert runtime.plan.mode is Mode.OFF
    assert [e.mode for e in rec.of(ev.ModeChanged)] == ["plan", "execute", "off"]
    assert "Plan complete" in runtime.agent.messages[-1].content
    assert not rec.of(ev.ErrorEvent)


async def test_refine_then_keep(project):
    decider = ScriptedDecider(
        [Review(Decision.REFINE, "mention the risks of caching"), Review(Decision.KEEP)]
    )
    runtime = build_runtime(Settings(), project, decider, provider=DemoProvider(chunk_delay=0))
    runtime.plan.enter_plan()
    await runtime.agent.submit("cache the widgets")
    assert len(decider.requests) == 2
    assert "mention the risks of caching" in decider.requests[1].text
    assert decider.requests[0].path == decider.requests[1].path
    assert runtime.plan.mode is Mode.PLAN


async def test_summary_skips_code_fences_and_hidden_entries(project):
    (project / "README.md").write_text(
        "# Tool\n\n```sh\nmake run\n```\n\nDoes useful things quickly.\n"
    )
    (project / ".hidden").mkdir()
    runtime = build_runtime(
        Settings(), project, ScriptedDecider(), provider=DemoProvider(chunk_delay=0)
    )
    await runtime.agent.submit("what is in this repo?")
    answer = runtime.agent.messages[-1].content
    assert "**Tool**: Does useful things quickly." in answer
    assert "make run" not in answer and ".hidden" not in answer


async def test_earlier_plans_are_not_quoted_as_code(project):
    plans = project / ".planshell" / "plans"
    plans.mkdir(parents=True)
    (plans / "old.md").write_text("# Plan: rate limiting\n")
    runtime = build_runtime(
        Settings(), project, ScriptedDecider(), provider=DemoProvider(chunk_delay=0)
    )
    await runtime.agent.submit("where is rate limiting?")
    answer = runtime.agent.messages[-1].content
    assert "src/app/server.py" in answer and ".planshell/" not in answer


async def test_plan_context_skips_hidden_entries(project):
    (project / ".git").mkdir()
    decider = ScriptedDecider([Review(Decision.KEEP)])
    runtime = build_runtime(Settings(), project, decider, provider=DemoProvider(chunk_delay=0))
    runtime.plan.enter_plan()
    await runtime.agent.submit("add caching")
    plan = decider.requests[0].text
    assert "`src/`" in plan and ".git" not in plan


def _calc_project(root):  # type: ignore[no-untyped-def]
    """The newcomer's project of issue 26: the README says how to test, the code is in calc/."""
    (root / "calc").mkdir(parents=True)
    (root / "README.md").write_text(
        "# Calc\n\nA small calculator library with add and divide.\n\n"
        "Run the tests with `python -m pytest`.\n"
    )
    (root / "calc" / "__init__.py").write_text("")
    (root / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_ops.py").write_text("def test_add():\n    assert True\n")
    return root


async def test_a_plan_names_the_readme_test_command_and_source_files(tmp_path):
    root = _calc_project(tmp_path / "calc-project")
    decider = ScriptedDecider([Review(Decision.KEEP)])
    runtime = build_runtime(Settings(), root, decider, provider=DemoProvider(chunk_delay=0))
    runtime.plan.enter_plan()
    await runtime.agent.submit("add a calculator multiply operation")
    text = decider.requests[0].text
    verification = text.split("## Verification", 1)[1]
    assert "python -m pytest" in verification and "git status" not in text
    context = text.split("## Context", 1)[1].split("## Approach", 1)[0]
    code_line = next(ln for ln in context.splitlines() if "`calc/ops.py`" in ln)
    assert "README.md" not in code_line
    assert "`calc/ops.py`" in text.split("## Steps", 1)[1]
    runtime.close()


async def test_a_plan_without_evidence_invents_no_test_command(tmp_path):
    root = tmp_path / "bare"
    root.mkdir()
    (root / "notes.txt").write_text("nothing here\n")
    decider = ScriptedDecider([Review(Decision.KEEP)])
    runtime = build_runtime(Settings(), root, decider, provider=DemoProvider(chunk_delay=0))
    runtime.plan.enter_plan()
    await runtime.agent.submit("tidy the notes")
    verification = decider.requests[0].text.split("## Verification", 1)[1]
    assert "```" not in verification and "No test command was found" in verification
    runtime.close()


async def test_a_revision_names_each_comment(project):
    """Issue 26, item 20: the revision keeps the comment text, not the message's first line."""
    from planshell.plan.review_comments import ReviewComment, comments_message

    comments = [
        ReviewComment("c1", "Steps", "- [ ] add the cache", "Which tests cover the cache?"),
        ReviewComment("c2", "Risks", "- stale data", "Say how entries expire.\nAnd when."),
    ]
    decider = ScriptedDecider(
        [
            Review(Decision.REFINE, comments_message(comments, "keep it small")),
            Review(Decision.KEEP),
        ]
    )
    runtime = build_runtime(Settings(), project, decider, provider=DemoProvider(chunk_delay=0))
    runtime.plan.enter_plan()
    await runtime.agent.submit("cache the widgets")
    revised = decider.requests[1].text
    addressed = revised.split("## Feedback addressed", 1)[1].split("##", 1)[0]
    assert '- Which tests cover the cache? (section "Steps")' in addressed
    assert '- Say how entries expire. / And when. (section "Risks")' in addressed
    assert "- keep it small" in addressed
    assert "comment(s)" not in addressed
