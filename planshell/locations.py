"""Where planshell keeps its files and where a project starts: standard library and platformdirs.

Light on purpose: ``--continue`` asks it before the first frame (``agent/session_peek.py``),
before pydantic and the engine are imported; config, the plan store and the session log
use the same functions, so all of them find the same folders.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["data_dir", "find_project_root", "project_key", "user_data_dir"]


def user_data_dir() -> Path:
    from platformdirs import user_data_dir as _data

    return Path(_data("planshell"))


def data_dir() -> Path:
    """Sessions, logs and history: ``PLANSHELL_DATA_DIR`` or the platform's user data dir."""
    override = os.environ.get("PLANSHELL_DATA_DIR")
    return Path(override) if override else user_data_dir()


def find_project_root(start: Path) -> Path:
    """The enclosing git work tree (a ``.git`` dir, or file for worktrees), else ``start``."""
    start = Path(start).resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def project_key(root: Path) -> str:
    """A readable, collision-safe folder name for a project root."""
    resolved = str(root.resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:10]
    name = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in Path(resolved).name)
    return f"{name or 'root'}-{digest}"
