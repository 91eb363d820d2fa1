"""Shared fixtures: every test runs with its own data dir, config dir and no API keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep tests away from the real user's config, sessions and keys."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("PLANSHELL_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "share"))
    monkeypatch.setenv("TZ", "UTC")
    for name in list(os.environ):
        if name.startswith("PLANSHELL_") and name not in ("PLANSHELL_DATA_DIR", "PLANSHELL_BASH_CORPUS"):
            monkeypatch.delenv(name)
    for name in _KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small realistic project to point tools and the demo model at."""
    root = tmp_path / "proj"
    (root / "src" / "app").mkdir(parents=True)
    (root / "README.md").write_text(
        "# Widget Service\n\nA tiny service that serves widgets over HTTP.\n\n## Usage\n\nRun it.\n"
    )
    (root / "Makefile").write_text("test:\n\tpytest -q\n")
    (root / "pyproject.toml").write_text('[project]\nname = "widgets"\n')
    (root / "src" / "app" / "server.py").write_text(
        "def handle_request(path):\n    # TODO: rate limiting\n    return 'widget'\n"
    )
    (root / "src" / "app" / "__init__.py").write_text("")
    return root
