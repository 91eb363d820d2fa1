"""The headless agent: loop, events, session log, system prompt (no Textual)."""
