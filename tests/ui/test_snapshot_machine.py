"""Snapshots do not depend on the machine they are taken on.

The same representative screens (the chat after a scripted turn, the review
screen, the plan picker) are rendered twice: under the test's normal
environment and under another machine's (time zone, locale, ``HOME``, a much
deeper project path, another kernel string). The two SVG screenshots must be
identical. The chat's status bar shows a context estimate that counts the
system prompt, and the prompt says where it runs: like ``snap_compare`` in
tests/conftest.py, the chat is rendered with ``PINNED_ENVIRONMENT``.
The last test shows that the check can fail: without the pin the chat renders
differently on the other machine.
"""

from __future__ import annotations

import locale
import platform
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot

from planshell.config import Settings
from planshell.llm.scripted import Reply
from tests.conftest import PINNED_ENVIRONMENT
from tests.ui.picker_helpers import PickerHost, settle_picker, three_plans
from tests.ui.review_helpers import RECEIPT, review_host, settle_review
from tests.ui.samples import ANSWER
from tests.ui_helpers import clear_toasts, ready_for_snapshot, send_and_settle, snapshot_app

Settle = Callable[[Pilot], Awaitable[None]]

OTHER_TZ = "Pacific/Kiritimati"  # UTC+14: another date than UTC for ten hours a day
OTHER_LOCALE = "C"  # the tests run in C.UTF-8 (or whatever the machine has): plain C differs
OTHER_KERNEL = "5.4.0-1234-a-much-longer-kernel-release-string-from-another-machine"


def pin_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pin ``snap_compare`` applies: the prompt's machine facts, the same everywhere."""
    import planshell.agent.prompt as prompt

    monkeypatch.setattr(prompt, "environment", lambda root, today: PINNED_ENVIRONMENT)


def deep_dir(base: Path) -> Path:
    """A directory about 500 characters below ``base`` (over 100 tokens of prompt)."""
    path = base.joinpath(*(f"a-rather-long-directory-name-{i:02d}" for i in range(16)))
    path.mkdir(parents=True)
    return path


@contextmanager
def other_machine(monkeypatch: pytest.MonkeyPatch, base: Path) -> Iterator[None]:
    """Time zone, locale, HOME and kernel of another machine; all restored on exit."""
    saved_locale = locale.setlocale(locale.LC_ALL)
    try:
        with monkeypatch.context() as patch:
            patch.setenv("TZ", OTHER_TZ)
            patch.setenv("LC_ALL", OTHER_LOCALE)
            patch.setenv("LANG", OTHER_LOCALE)
            patch.setenv("HOME", str(deep_dir(base / "home")))
            patch.setattr(platform, "release", lambda: OTHER_KERNEL)
            time.tzset()
            locale.setlocale(locale.LC_ALL, OTHER_LOCALE)
            yield
    finally:
        locale.setlocale(locale.LC_ALL, saved_locale)
        time.tzset()  # the monkeypatch context has put TZ back


async def screenshot(app: App, size: tuple[int, int], settle: Settle) -> str:
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        return app.export_screenshot()


async def chat(project: Path) -> str:
    """The chat after one scripted turn that reports no usage: the status bar shows the
    context *estimate*, which counts the system prompt (and so what it says about the machine).
    """
    replies = [
        Reply(text="Let me read the README.", calls=[("read", {"path": "README.md"})]),
        Reply(text=ANSWER),
    ]

    async def turn(pilot: Pilot) -> None:
        screen = await ready_for_snapshot(pilot)
        await send_and_settle(pilot, screen, "What is this project?")
        await clear_toasts(pilot)

    return await screenshot(snapshot_app(project, replies, Settings()), (80, 24), turn)


async def review(_: Path) -> str:
    app = review_host(changed_sections=frozenset({1}), previous_text="old", receipt=RECEIPT)
    return await screenshot(app, (80, 24), settle_review)


async def picker(root: Path) -> str:
    async def down(pilot: Pilot) -> None:
        await settle_picker(pilot, "down")

    return await screenshot(PickerHost(three_plans(root)), (100, 30), down)


def copy_project(project: Path, to: Path) -> Path:
    return Path(shutil.copytree(project, to / "proj"))


@pytest.mark.parametrize("render", [chat, review, picker], ids=lambda f: f.__name__)
async def test_screens_render_the_same_on_another_machine(
    render: Callable[[Path], Awaitable[str]],
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pin_environment(monkeypatch)
    here = await render(project)
    with other_machine(monkeypatch, tmp_path):
        there = await render(copy_project(project, deep_dir(tmp_path / "deep")))
    assert there == here


async def test_the_check_sees_an_unpinned_prompt(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the pin the kernel and the deeper path reach the status bar's context estimate."""
    here = await chat(project)
    with other_machine(monkeypatch, tmp_path):
        there = await chat(copy_project(project, deep_dir(tmp_path / "deep")))
    assert there != here
