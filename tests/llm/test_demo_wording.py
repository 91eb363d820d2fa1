"""The demo model's wording: counted nouns and the README excerpt (issue 26.22)."""

from __future__ import annotations

from pathlib import Path

from planshell.config import Settings
from planshell.llm.demo import DemoProvider
from planshell.runtime import build_runtime
from tests.engine_helpers import ScriptedDecider

WORDS = " ".join(f"paragraphword{i:03d}" for i in range(60))  # ~1,000 characters, no short cut


async def test_the_readme_excerpt_ends_at_a_word_with_an_ellipsis(project: Path) -> None:
    (project / "README.md").write_text(f"# Widget Service\n\n{WORDS}\n")
    runtime = build_runtime(
        Settings(), project, ScriptedDecider(), provider=DemoProvider(chunk_delay=0)
    )
    await runtime.agent.submit("where is the request handled?")
    answer = runtime.agent.messages[-1].content
    line = next(ln for ln in answer.splitlines() if "Widget Service" in ln)
    excerpt = line.split("**Widget Service**: ", 1)[1]
    assert excerpt.endswith("…"), excerpt
    last_word = excerpt.removesuffix("…").split()[-1]
    assert last_word in WORDS.split(), last_word  # a whole word, not a cut one
    assert len(excerpt) <= 300


def test_one_ticked_step_is_one_step() -> None:
    from planshell.llm.demo import _after_complete, _Done

    done = [_Done("set_plan_steps", {}, "Updated 1 step: 1/1 done.", False)]
    assert "Plan complete: 1 step ticked," in _after_complete(done)
    assert "Plan complete: 2 steps ticked," in _after_complete(done * 2)
