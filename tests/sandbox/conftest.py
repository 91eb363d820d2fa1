"""Fixtures shared by the sandbox tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox_helpers import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit: README.md and b.dat."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "README.md").write_text("# Repo\n\nhello\n")
    (root / "b.dat").write_text("x\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root
