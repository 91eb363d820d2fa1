"""ui.start_mode: a new session may start in PLAN; no value can start anything wider."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.agent.session import SessionLog
from planshell.config import ConfigError, Settings, load_settings
from planshell.llm.types import Message
from planshell.plan.controller import Mode
from tests.engine_helpers import make_runtime

pytestmark = pytest.mark.usefixtures("isolated_env")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _project_file(root: Path, text: str) -> Path:
    return _write(root / ".planshell" / "config.toml", text)


def test_default_is_off_and_a_new_session_starts_off(project: Path) -> None:
    settings = load_settings(project, user_file=project / "none.toml")
    assert settings.ui.start_mode == "off"
    runtime, *_ = make_runtime(project, settings=settings, persist=False)
    assert runtime.plan.mode is Mode.OFF and not runtime.started_in_plan


def test_user_config_starts_a_new_session_in_plan(project: Path, tmp_path: Path) -> None:
    user = _write(tmp_path / "user.toml", '[ui]\nstart_mode = "plan"\n')
    settings = load_settings(project, user_file=user)
    runtime, *_ = make_runtime(project, settings=settings, persist=False)
    assert runtime.plan.mode is Mode.PLAN and runtime.started_in_plan


def test_an_untrusted_project_may_set_it_without_trust(project: Path, tmp_path: Path) -> None:
    _project_file(project, '[ui]\nstart_mode = "plan"\n')
    settings = load_settings(project, user_file=tmp_path / "none.toml")
    assert settings.untrusted_project is None  # harmless: nothing to trust, no warning
    assert settings.ui.start_mode == "plan"
    runtime, *_ = make_runtime(project, settings=settings, persist=False)
    assert runtime.plan.mode is Mode.PLAN


def test_a_project_can_narrow_but_not_widen_the_users_choice(project: Path, tmp_path: Path) -> None:
    """A project's "plan" wins over the user's "off" (it only narrows what can happen)."""
    user = _write(tmp_path / "user.toml", '[ui]\nstart_mode = "off"\n')
    _project_file(project, '[ui]\nstart_mode = "plan"\n')
    assert load_settings(project, user_file=user).ui.start_mode == "plan"


@pytest.mark.parametrize(
    "value", ["execute", "auto", "EXECUTE", "Plan", "accept-edits", "", "plan ", "true"]
)
def test_a_wider_value_from_a_project_is_ignored_with_a_warning(
    project: Path, tmp_path: Path, value: str
) -> None:
    _project_file(project, f'[ui]\nstart_mode = "{value}"\n')
    settings = load_settings(project, user_file=tmp_path / "none.toml")
    assert settings.ui.start_mode == "off"
    assert "ui.start_mode" in settings.project_config_error
    runtime, *_ = make_runtime(project, settings=settings, persist=False)
    assert runtime.plan.mode is Mode.OFF
    assert runtime.permissions is not None and runtime.permissions.mode.value == "ask"


@pytest.mark.parametrize("value", ['"execute"', '"auto"', "true", "1"])
def test_a_wider_value_from_the_user_is_a_config_error(
    project: Path, tmp_path: Path, value: str
) -> None:
    user = _write(tmp_path / "user.toml", f"[ui]\nstart_mode = {value}\n")
    with pytest.raises(ConfigError, match=r"ui\.start_mode"):
        load_settings(project, user_file=user)


def test_the_environment_is_checked_too(project: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="start_mode"):
        load_settings(
            project,
            user_file=tmp_path / "none.toml",
            environ={"PLANSHELL_UI__START_MODE": "execute"},
        )
    settings = load_settings(
        project, user_file=tmp_path / "none.toml", environ={"PLANSHELL_UI__START_MODE": "plan"}
    )
    assert settings.ui.start_mode == "plan"


@pytest.mark.parametrize("saved", ["off", "plan"])
def test_continue_keeps_the_resumed_mode_whatever_start_mode_says(
    project: Path, saved: str
) -> None:
    log = SessionLog.create(project)
    log.append_message(Message("user", "earlier"))
    log.append({"type": "mode", "mode": saved, "plan_path": None, "saved_tools": None})
    log.close()
    resume = SessionLog.load(log.path)
    settings = Settings(ui={"start_mode": "plan"})
    runtime, *_ = make_runtime(project, settings=settings, resume=resume, persist=False)
    assert runtime.plan.mode.value == saved
    assert not runtime.started_in_plan
