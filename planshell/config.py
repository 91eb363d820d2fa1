"""Every setting as a pydantic model, merged from files, environment and flags.

Order (later wins): defaults < user file < project file < ``PLANSHELL_*``
environment < command-line flags. A broken file or a bad value raises
``ConfigError`` with one sentence naming the file, the key and the problem.

A cloned repository's ``.planshell/config.toml`` is untrusted: only the keys in
``HARMLESS_PROJECT_KEYS`` apply from it until the user trusts the file
(``planshell trust``, see ``planshell.trust``). Every other key, including any
key added later, is security-relevant by default.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

ENV_PREFIX = "PLANSHELL_"


class ConfigError(Exception):
    """A configuration problem, with a message fit to show as-is."""


def _printable(text: str) -> str:
    """Shown on screen: one line with no control characters, escapes or bidi overrides."""
    from planshell.sanitize import strip_terminal_controls

    if "\n" in text or "\t" in text or strip_terminal_controls(text) != text:
        raise ValueError("must be one line of printable text (no control characters)")
    return text


_NAME_RE = re.compile(r"^[\w.+-]{1,64}$")


def _name(text: str) -> str:
    """A theme name: letters, digits, ``_ . + -`` (no markup, spaces or escapes)."""
    if not _NAME_RE.match(text):
        raise ValueError("must be a name of letters, digits, '_', '.', '+' or '-'")
    return text


PrintableText = Annotated[str, AfterValidator(_printable)]
Name = Annotated[str, AfterValidator(_name)]


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
    notify: PrintableText
    widget: PrintableText
    widget_with_title: PrintableText
    notify_type: NotifyType = "information"
    widget_color: PrintableText = "$primary"


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
    approve_mode: Literal["accept-edits", "ask"] = Field(
        "accept-edits",
        description="Permission mode an approved plan runs in by default (the review's Enter).",
    )
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


_RULE_RE = re.compile(r"^[a-z_]+(?:\([^\x00-\x1f\x7f]+\))?$")


def _rule(text: str) -> str:
    """A permission rule, e.g. ``bash(pytest *)``, ``edit(src/**)`` (checked fully later)."""
    if not _RULE_RE.match(text.strip()):
        raise ValueError("must look like tool(pattern), e.g. 'bash(pytest *)' or 'edit(src/**)'")
    return text.strip()


Rule = Annotated[str, AfterValidator(_rule)]
PermissionMode = Literal["ask", "accept-edits", "auto"]


class PermissionsSettings(_Section):
    """Approvals outside plan mode (docs/permissions.md). Security-relevant: trust needed."""

    mode: PermissionMode = Field(
        "ask", description="ask, accept-edits (file changes unasked) or auto (nothing asks)."
    )
    allow: list[Rule] = Field(
        default_factory=list, description="Calls that run unasked, e.g. 'bash(pytest *)'."
    )
    deny: list[Rule] = Field(
        default_factory=list, description="Calls that are always refused; deny wins over allow."
    )


class UISettings(_Section):
    theme: Name = Field("planshell-dark", description="Theme name (see themes/).")


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
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)

    # Set by load_settings when an untrusted project file's security keys were ignored.
    _untrusted: UntrustedProject | None = PrivateAttr(None)

    @property
    def untrusted_project(self) -> UntrustedProject | None:
        """The project file whose security-relevant keys were ignored, if any."""
        return self._untrusted


# --- project trust: which project keys apply without it ----------------------------

# The ONE place that decides what an untrusted repository may set. An allowlist
# of leaf keys (tuples, so a quoted TOML key "ui.theme" is not ("ui", "theme")):
# any key not listed here, including every key added to Settings later, is
# security-relevant and needs `planshell trust`. A project may choose how
# planshell looks (a theme the user installed); it may not change what runs,
# where data goes, which keys change the mode, nor how the mode is shown
# (labels and the chip could make OFF look like PLAN).
HARMLESS_PROJECT_KEYS: frozenset[tuple[str, ...]] = frozenset({("ui", "theme")})


def is_security_relevant(path: tuple[str, ...]) -> bool:
    """True unless ``path`` is an allowlisted harmless leaf key (exact, case-sensitive)."""
    return tuple(path) not in HARMLESS_PROJECT_KEYS


def settings_keys(model: type[BaseModel] = Settings, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every leaf key of the settings model, e.g. ``("plan", "bash", "safe_patterns")``."""
    keys: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys += settings_keys(kind, (*prefix, name))
        else:
            keys.append((*prefix, name))
    return keys


def split_project_data(
    data: dict[str, Any], prefix: tuple[str, ...] = ()
) -> tuple[dict[str, Any], list[tuple[str, ...]]]:
    """(the harmless part of a parsed project file, the security-relevant leaf keys it sets).

    Works on the parsed TOML tree, so dotted keys and inline tables are the
    same nested tables. Tables are walked down to their leaves (an empty table
    sets nothing); a harmless key keeps its whole value, for the model to check.
    """
    harmless: dict[str, Any] = {}
    relevant: list[tuple[str, ...]] = []
    for key, value in data.items():
        path = (*prefix, key)
        if not is_security_relevant(path):
            harmless[key] = value
        elif isinstance(value, dict):
            inner, inner_relevant = split_project_data(value, path)
            if inner:
                harmless[key] = inner
            relevant += inner_relevant
        else:
            relevant.append(path)
    return harmless, relevant


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def format_key(path: tuple[str, ...]) -> str:
    """``plan.sandbox``; odd segments quoted and escaped (they come from the repository)."""
    return ".".join(p if _PLAIN_KEY.match(p) else json.dumps(p) for p in path)


_VALUE_MAX = 120


def describe_keys(data: dict[str, Any], keys: list[tuple[str, ...]]) -> list[str]:
    """``key = value`` lines for ``keys`` of ``data``: JSON-escaped (ASCII) and shortened."""
    lines = []
    for key in keys:
        value: Any = data
        for part in key:
            value = value[part]
        text = json.dumps(value, ensure_ascii=True, default=str)
        if len(text) > _VALUE_MAX:
            text = text[: _VALUE_MAX - 1] + "…"
        lines.append(f"{format_key(key)} = {text}")
    return lines


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
    """Where the project file is looked up; the root is resolved, the last two parts are not.

    Not following ``.planshell`` or ``config.toml`` keeps the trust key this
    project's own: a symlink to another project's trusted file is a new key.
    """
    return Path(root).resolve() / ".planshell" / "config.toml"


# --- loading ---------------------------------------------------------------


@dataclass
class _Layer:
    source: str
    data: dict[str, Any] = field(default_factory=dict)


CONFIG_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ConfigFile:
    """A config file as read once: the exact bytes parsed, and their SHA-256."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None  # None when the file does not exist
    target: str | None = None  # the real path when it exists (symlinks followed)


@dataclass(frozen=True)
class UntrustedProject:
    """A project file whose security-relevant keys were ignored (what to show, what to trust)."""

    file: ConfigFile
    keys: list[tuple[str, ...]]

    @property
    def key_names(self) -> list[str]:
        return [format_key(k) for k in self.keys]

    def describe(self) -> list[str]:
        """``key = value`` per ignored key, safe to print."""
        return describe_keys(self.file.data, self.keys)

    def warning(self) -> str:
        from planshell.sanitize import strip_terminal_controls

        where = strip_terminal_controls(str(self.file.path))
        return (
            f"Ignoring security settings from untrusted {where}: {', '.join(self.key_names)}. "
            "Run `planshell trust` to apply them."
        )


def read_config_file(path: Path) -> ConfigFile:
    """Read and parse ``path`` once; a missing file is empty, anything odd a ``ConfigError``.

    The digest is of the very bytes that were parsed, so trust given to a
    digest covers exactly what is applied (no gap between hashing and reading).
    The read is bounded and refuses FIFOs and devices, so a repository cannot
    hang or flood start-up with a symlink to ``/dev/zero``.
    """
    import hashlib

    from planshell.fsutil import ReadRefused, read_capped

    try:
        raw = read_capped(path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        return ConfigFile(path)
    except ReadRefused as exc:
        problem = "not a regular file" if exc.reason == "not-regular" else "larger than 1 MiB"
        raise ConfigError(f"config error in {path}: the file is {problem}.") from None
    except OSError as exc:
        raise ConfigError(f"config error in {path}: cannot read the file ({exc.strerror}).") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config error in {path}: the file is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config error in {path}: invalid TOML: {exc}.") from None
    return ConfigFile(path, data, hashlib.sha256(raw).hexdigest(), os.path.realpath(path))


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
    trust_file: Path | None = None,
) -> Settings:
    """Merge every layer into validated ``Settings`` or raise ``ConfigError``.

    Security-relevant keys of an untrusted project file are left out; the
    result's ``untrusted_project`` then says which (for the one warning).
    """
    from planshell.trust import is_trusted

    environ = dict(os.environ if environ is None else environ)
    user = read_config_file(user_file if user_file is not None else user_config_path())
    project = read_config_file(project_config_path(root))
    project_data, relevant = split_project_data(project.data)
    untrusted: UntrustedProject | None = None
    if relevant:
        if is_trusted(project, trust_file):
            project_data = project.data
        else:
            untrusted = UntrustedProject(project, relevant)
    layers = [
        _Layer(str(user.path), user.data),
        _Layer(str(project.path), project_data),
        _env_layer(environ),
        _Layer("command-line flags", {k: v for k, v in (cli or {}).items() if v is not None}),
    ]
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _deep_merge(merged, layer.data)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        raise _explain(exc, layers) from None
    settings._untrusted = untrusted
    return settings


_SECTION_RE = re.compile(r"^\s*\[([^\]]+)\]\s*$")


def remember_user_setting(section: str, key: str, value: str, path: Path | None = None) -> Path:
    """Set ``[section] key = "value"`` in the user file, keeping comments and order.

    Used for small preferences (the theme) so that a hand-edited file is not
    rewritten from scratch.
    """
    return set_toml_value(path or user_config_path(), section, key, value)


def toml_with_value(text: str, section: str, key: str, value: str | list[str]) -> str:
    """``text`` with ``[section] key = value`` set (a one-line JSON string or list of strings).

    A JSON string with ``ensure_ascii`` is also a TOML basic string. An existing
    value spanning several lines (a multi-line array) is replaced whole.
    """
    line = f"{key} = {json.dumps(value, ensure_ascii=True)}"
    lines = text.splitlines()
    current: str | None = None
    section_end: int | None = None
    for i, row in enumerate(lines):
        match = _SECTION_RE.match(row)
        if match:
            current = match.group(1).strip()
            if current == section:
                section_end = i + 1
            continue
        if current == section:
            if re.match(rf"^\s*{re.escape(key)}\s*=", row):
                end = i + 1
                depth = row.count("[") - row.count("]")
                while depth > 0 and end < len(lines):
                    depth += lines[end].count("[") - lines[end].count("]")
                    end += 1
                lines[i:end] = [line]
                break
            if row.strip():
                section_end = i + 1
    else:
        if section_end is None:
            lines += (["", f"[{section}]"] if lines else [f"[{section}]"]) + [line]
        else:
            lines.insert(section_end, line)
    return "\n".join(lines) + "\n"


def set_toml_value(path: Path, section: str, key: str, value: str | list[str]) -> Path:
    """Set ``[section] key = value`` in the file at ``path``, keeping comments and order."""
    from planshell.fsutil import atomic_write_text

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, toml_with_value(text, section, key, value))
    return path
