from datetime import date

from planshell.agent.prompt import AGENTS_MAX_BYTES, base_prompt


def test_agents_md_is_included_and_capped(tmp_path):
    assert "Project instructions" not in base_prompt(tmp_path)
    (tmp_path / "AGENTS.md").write_text("Always run make lint.\n")
    prompt = base_prompt(tmp_path, today=date(2026, 1, 2))
    assert "Always run make lint." in prompt and "2026-01-02" in prompt and str(tmp_path) in prompt
    (tmp_path / "AGENTS.md").write_text("x" * (AGENTS_MAX_BYTES + 10))
    assert "AGENTS.md truncated" in base_prompt(tmp_path)
