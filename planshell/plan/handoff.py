"""The approval handoff choice, remembered per project in the user data dir (never the repo)."""

from __future__ import annotations

import json
from pathlib import Path

from planshell.agent.session import project_dir
from planshell.fsutil import ReadRefused, atomic_write_text, read_user_file
from planshell.plan.decider import HANDOFF_CHOICES

FILE = "handoff.json"
_MAX_BYTES = 4096  # {"choice": "compact"} and room to spare


def remembered_handoff(root: Path) -> str:
    """The last choice made in this project; "keep" when none (or the file is odd)."""
    try:
        data = json.loads(read_user_file(project_dir(root) / FILE, _MAX_BYTES))
    except (OSError, ValueError, ReadRefused):
        return "keep"
    choice = data.get("choice") if isinstance(data, dict) else None
    return choice if choice in HANDOFF_CHOICES else "keep"


def remember_handoff(root: Path, choice: str) -> None:
    if choice not in HANDOFF_CHOICES:
        return
    path = project_dir(root) / FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"choice": choice}) + "\n")
    except OSError:
        pass  # a preference that cannot be saved is asked again next time
