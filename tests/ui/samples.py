"""Sample content shared by UI tests: checklist items and a chat answer."""

from __future__ import annotations

# The plan checklist: one item per status, the Verification item last.
ITEMS = [
    ("Read the callers of handle_request", "completed"),
    ("Add a token-bucket limiter", "in_progress"),
    ("Wire it into handle_request", "pending"),
    ("Write tests", "pending"),
    ("Verification: pytest -q", "pending"),
]

# The model's answer in the chat snapshots: bold, a list, inline code.
ANSWER = """**Widget Service** is a tiny HTTP service.

- `src/app/server.py` handles requests
- `make test` runs the tests"""
