"""Every setting as a pydantic model, merged from files, environment and flags.

Order (later wins): defaults < user file < project file < ``PLANSHELL_*``
environment < command-line flags. A broken file or a bad value raises
``ConfigError`` with one sentence naming the file, the key and the problem.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV_PREFIX = "PLANSHELL_"


class ConfigError(Exception):
    """A configuration problem, with a message fit to show as-is."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ToolsSettings(_Section):
    allow_outside_root: bool = Field(False, description="Let tools read/write outside the project root.")
    read_max_bytes: int = Field(256 * 1024, gt=0, description="Largest file `read` returns whole.")
    bash_timeout: float = Field(120.0, gt=0, le=3600, description="Default `bash` timeout in seconds.")
    bash_max_output: int = Field(30_000, gt=0, description="Characters of `bash` output kept.")


class PlanBashSettings(_Section):
    safe_patterns: list[str] | None = Field(
        None, description="Regexes of extra read-only commands; replaces the built-in list."
    )
    destructive_patterns: list[str] | None = Field(
        None, description="Regexes that always block; replaces the built-in list."
    )


NotifyType = Literal["information", "warning", "error"]


class PlanLabel(_Section):
    notify: str
    widget: str
    widget_with_title: str
    notify_type: NotifyType = "information"
    widget_color: str = "$primary"


def _default_labels() -> dict[str, PlanLabel]:
    return {
        "plan": PlanLabel(
            notify="Plan mode on: read-only until you approve a plan.",
            widget="PLAN",
            widget_with_title="PLAN · {title}",
            widget_color="$plan-chip",
        ),
        "execute": PlanLabel(
            notify="Plan approved: executing {title}.",
            widget="EXECUTE",
            widget_with_title="EXECUTE · {title}",
            widget_color="$execute-chip",
        ),
        "off": PlanLabel(
            notify="Plan mode off: all tools available.",
            widget="OFF",
            widget_with_title="OFF",
            widget_color="$off-chip",
        ),
    }


class PlanLabels(_Section):
    """Mode chip and toast texts; ``{title}`` is replaced by the plan title."""

    plan: PlanLabel = Field(default_factory=lambda: _default_labels()["plan"])
    execute: PlanLabel = Field(default_factory=lambda: _default_labels()["execute"])
    off: PlanLabel = Field(default_factory=lambda: _default_labels()["off"])

    @model_validator(mode="before")
    @classmethod
    def _over_defaults(cls, data: Any) -> Any:
        """A user sets one field of a label; the others keep their defaults."""
        if not isinstance(data, dict):
            return data
        defaults = _default_labels()
        merged = dict(data)
        for name, value in data.items():
            if name in defaults and isinstance(value, dict):
                merged[name] = {**defaults[name].model_dump(), **value}
        return merged


class PlanUISettings(_Section):
    hide_notify: bool = Field(False, description="Do not toast mode changes.")
    hide_widget: bool = Field(False, description="Hide the mode chip in the status bar.")


class PlanShortcuts(_Section):
    toggle_mode: str = Field(
        "ctrl+shift+l,ctrl+shift+L,ctrl+L,f2",
        description="Keys that toggle plan mode (comma-separated Textual key names).",
    )


class PlanSettings(_Section):
    allowed_tools: list[str] | None = Field(
        None, description="Tools offered in plan mode; replaces the default read-only set."
    )
    cleanup_on_complete: bool = Field(False, description="Delete the plan file at plan_complete.")
    sandbox: Literal["auto", "required", "off"] = Field(
        "auto", description="Run plan-mode bash in a bubblewrap read-only sandbox."
    )
    env_deny: list[str] = Field(
        default_factory=list,
        description="Extra environment variable names or globs hidden from plan-mode bash.",
    )
    bash: PlanBashSettings = Field(default_factory=PlanBashSettings)
    labels: PlanLabels = Field(default_factory=PlanLabels)
    ui: PlanUISettings = Field(default_factory=PlanUISettings)
    shortcuts: PlanShortcuts = Field(default_factory=PlanShortcuts)


class UISettings(_Section):
    theme: str = Field("planshell-dark", description="Theme name (see themes/).")


class AgentSettings(_Section):
    max_steps: int = Field(100, gt=0, description="Model calls per request before stopping.")


ProviderName = Literal["auto", "demo", "openai", "anthropic"]


class Settings(_Section):
    provider: ProviderName = Field("auto", description="auto picks from API keys, else demo.")
    model: str | None = Field(None, description="Model name; each provider has a default.")
    base_url: str | None = Field(None, description="API base URL (OpenAI-compatible: …/v1).")
    api_key: str | None = Field(None, description="API key; prefer the provider's env var.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    max_tokens: int | None = Field(None, gt=0, description="Reply token cap.")
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to connect.")
    idle_timeout: float = Field(120.0, gt=0, description="Seconds allowed between stream chunks.")
    max_attempts: int = Field(4, ge=1, le=20, description="Tries per request (retries + 1).")
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    plan: PlanSettings = Field(default_factory=PlanSettings)
    ui: UISettings = Field(default_factory=UISettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)


# --- locations -------------------------------------------------------------


def user_config_path() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("planshell")) / "config.toml"


def user_data_dir() -> Path:
    from platformdirs import user_data_dir as _data

    return Path(_data("planshell"))


def data_dir() -> Path:
    """Sessions, logs and history: ``PLANSHELL_DATA_DIR`` or the platform's user data dir."""
    override = os.environ.get("PLANSHELL_DATA_DIR")
    return Path(override) if override else user_data_dir()


def project_config_path(root: Path) -> Path:
    return root / ".planshell" / "config.toml"


# --- loading ---------------------------------------------------------------


@dataclass
class _Layer:
    source: str
    data: dict[str, Any] = field(default_factory=dict)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"config error in {path}: cannot read the file ({exc.strerror}).") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config error in {path}: the file is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config error in {path}: invalid TOML: {exc}.") from None


def _env_layer(environ: dict[str, str]) -> _Layer:
    """``PLANSHELL_PLAN__SANDBOX=off`` sets ``plan.sandbox``; JSON values allowed."""
    layer = _Layer("environment")
    for name, value in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name in _ENV_NOT_SETTINGS:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if not path:
            continue
        _set_path(layer.data, path, _parse_env_value(value))
    return layer


# Variables read elsewhere that are not settings.
_ENV_NOT_SETTINGS = {"PLANSHELL_BASH_CORPUS", "PLANSHELL_DATA_DIR", "PLANSHELL_LOG_LEVEL"}


def _parse_env_value(value: str) -> Any:
    stripped = value.strip()
    if stripped[:1] in "[{":
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return value
    return value


def _set_path(data: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        data = data.setdefault(key, {})
        if not isinstance(data, dict):
            return
    data[path[-1]] = value


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _has_path(data: dict[str, Any], path: tuple[Any, ...]) -> bool:
    node: Any = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _explain(exc: ValidationError, layers: list[_Layer]) -> ConfigError:
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if isinstance(p, str))
    key = ".".join(loc) or "(top level)"
    source = "the settings"
    for layer in reversed(layers):
        if _has_path(layer.data, loc):
            source = layer.source
            break
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key (see docs/configuration.md for the valid keys)"
    elif "input" in err and not isinstance(err["input"], dict):
        msg = f"{msg} (got {err['input']!r})"
    more = f" (and {len(exc.errors()) - 1} more problems)" if len(exc.errors()) > 1 else ""
    return ConfigError(f"config error in {source}: {key}: {msg}{more}.")


def load_settings(
    root: Path,
    *,
    cli: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    user_file: Path | None = None,
) -> Settings:
    """Merge every layer into validated ``Settings`` or raise ``ConfigError``."""
    environ = dict(os.environ if environ is None else environ)
    user_path = user_file if user_file is not None else user_config_path()
    project_path = project_config_path(root)
    layers = [
        _Layer(str(user_path), _read_toml(user_path)),
        _Layer(str(project_path), _read_toml(project_path)),
        _env_layer(environ),
        _Layer("command-line flags", {k: v for k, v in (cli or {}).items() if v is not None}),
    ]
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _deep_merge(merged, layer.data)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise _explain(exc, layers) from None


_SECTION_RE = re.compile(r"^\s*\[([^\]]+)\]\s*$")


def remember_user_setting(section: str, key: str, value: str, path: Path | None = None) -> Path:
    """Set ``[section] key = "value"`` in the user file, keeping comments and order.

    Used for small preferences (the theme) so that a hand-edited file is not
    rewritten from scratch.
    """
    from planshell.fsutil import atomic_write_text

    path = path or user_config_path()
    line = f"{key} = {json.dumps(value)}"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    current: str | None = None
    section_end: int | None = None
    for i, text in enumerate(lines):
        match = _SECTION_RE.match(text)
        if match:
            current = match.group(1).strip()
            if current == section:
                section_end = i + 1
            continue
        if current == section:
            if re.match(rf"^\s*{re.escape(key)}\s*=", text):
                lines[i] = line
                break
            if text.strip():
                section_end = i + 1
    else:
        if section_end is None:
            lines += (["", f"[{section}]"] if lines else [f"[{section}]"]) + [line]
        else:
            lines.insert(section_end, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
