"""Shared by the blast-radius engine tests and the lint/blast Pilot tests."""

from __future__ import annotations

from pathlib import Path


def read_only_or_ask(command: str, mode: str) -> tuple[str, str]:
    """A stand-in for the permission engine: only `git status` is read-only; auto runs the rest."""
    if command == "git status" or mode == "auto":
        return "allow", "fine"
    return "ask", "not read-only"


def scoped_repo(tmp_path: Path) -> Path:
    """A project holding the one file the sample plans name (700 bytes: its size is shown)."""
    root = tmp_path / "repo"
    (root / "src" / "app").mkdir(parents=True)
    (root / "src" / "app" / "server.py").write_text("x" * 700)
    return root
