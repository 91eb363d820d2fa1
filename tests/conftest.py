"""Shared fixtures: every test runs with its own data dir, config dir and no API keys."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.sse_server import SSEServer

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
        if name.startswith("PLANSHELL_") and name not in (
            "PLANSHELL_DATA_DIR",
            "PLANSHELL_BASH_CORPUS",
        ):
            monkeypatch.delenv(name)
    for name in _KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    return home


# Hypothesis on a busy 2-core CI box. Its defaults are two wall-clock checks
# (a 200 ms per-example ``deadline`` and the ``too_slow`` health check on data
# generation) that fail a correct test when the machine is loaded, and a random
# seed plus an example database that make one run differ from the next.
# The "ci" profile (the default) turns the clock checks off and derandomizes:
# every run tries the same examples (seeded from each test's own source), so a
# red run is reproducible and a green one stays green until the code changes.
# Derandomized runs have no use for the example database, so none is kept (a
# run cannot replay another run's failures). The price is less exploration:
# HYPOTHESIS_PROFILE=explore searches with fresh random seeds and saves any
# failure it finds, for a person hunting bugs locally.
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    deadline=None,
    derandomize=False,
    max_examples=1000,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
async def sse_server() -> AsyncIterator[SSEServer]:
    """A started scripted server (tests/sse_server.py) on 127.0.0.1, closed after the test."""
    async with SSEServer() as server:
        yield server


@pytest.fixture(autouse=True)
def browser_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """planshell never starts a real browser in tests: the opener records the URL instead."""
    import planshell.ui.browser_review as browser_review

    opened: list[str] = []
    monkeypatch.setattr(browser_review, "OPENER", opened.append)
    return opened


@pytest.fixture(autouse=True)
def no_key_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision screens take keys at once, except in the key-grace tests.

    Most UI tests press a decision key right after a screen appears; the grace
    itself (planshell.ui.keygrace) is tested in tests/ui/test_ui_keygrace.py, which
    turns it back on with the ``key_grace`` fixture.
    """
    from planshell.ui.keygrace import KeyGrace

    monkeypatch.setattr(KeyGrace, "GRACE", 0.0)


# What the system prompt says about the machine, the same on every machine: the
# context estimate in the status bar counts it, and a snapshot must not change
# with the kernel, the date or the length of pytest's temporary path.
PINNED_ENVIRONMENT = (
    "## Environment\n"
    "- Project root (working directory): ~/projects/widgets\n"
    "- Platform: Linux 6.1.0\n"
    "- Date: 2026-01-01"
)


@pytest.fixture
def snap_compare(snap_compare, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """pytest-textual-snapshot's ``snap_compare``, with the machine pinned out of the prompt."""
    import planshell.agent.prompt as prompt

    monkeypatch.setattr(prompt, "environment", lambda root, today: PINNED_ENVIRONMENT)
    return snap_compare


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


@pytest.fixture(params=["python", "rg"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a grep test with each engine (rg ships in the ``ripgrep`` dependency)."""
    from planshell.tools import grep

    if request.param == "python":
        monkeypatch.setattr(grep, "find_rg", lambda: None)
    else:
        assert grep.find_rg() is not None, "the ripgrep package's rg is missing"
    return str(request.param)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """planshell's command line in this process (tests/cli_helpers.py)."""
    from tests.cli_helpers import InProcessCli

    return InProcessCli(monkeypatch, capsys)
