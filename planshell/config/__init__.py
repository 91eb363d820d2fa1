"""Every setting as a pydantic model, merged from files, environment and flags.

Order (later wins): defaults < user file < project file < ``PLANSHELL_*``
environment < command-line flags. pydantic-settings reads the environment
(prefix, ``__`` nesting, JSON values) and merges the layers; each file is a
settings source of its parsed table. A broken file or a bad value raises
``ConfigError`` with one sentence naming the file, the key and the problem.

A cloned repository's ``.planshell/config.toml`` is untrusted: only the keys in
``HARMLESS_PROJECT_KEYS`` apply from it until the user trusts the file
(``planshell trust``, see ``planshell.config.trust``). Every other key, including any
key added later, is security-relevant by default.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
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
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from planshell.provider_names import PROVIDER_CHOICES

ENV_PREFIX = "PLANSHELL_"
ENV_NESTED_DELIMITER = "__"


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
    result_max_chars: int = Field(
        40_000, ge=1000, description="Characters of any one tool result sent to the model."
    )


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
    env_allow: list[str] = Field(
        default_factory=list,
        description=(
            "Environment variable names or globs bash keeps although the secret rules would "
            "drop them (env_deny still wins). Not settable by an untrusted project."
        ),
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
    sandbox: Literal["workspace-write", "off"] = Field(
        "workspace-write",
        description=(
            "Outside plan mode, run bash in a bubblewrap sandbox: project writable, rest "
            "read-only (off, with a notice, when bubblewrap is missing)."
        ),
    )
    network: bool = Field(False, description="Let sandboxed bash outside plan mode use the network.")


class UISettings(_Section):
    theme: Name = Field("planshell-dark", description="Theme name (see themes/).")


class AgentSettings(_Section):
    max_steps: int = Field(100, gt=0, description="Model calls per request before stopping.")
    parallel_tasks: int = Field(
        3, ge=1, le=16, description="Sub-agents (task calls in one reply) run at the same time."
    )


# Profiles planshell defines itself (planshell/plan/subagents.py); config adds others.
BUILTIN_PROFILES = frozenset({"explore", "general"})


class AgentProfile(_Section):
    """A sub-agent profile (``[agents.NAME]``) the ``task`` tool can start.

    Security-relevant (not settable by an untrusted project): a profile decides
    which tools a sub-agent gets. In plan mode every profile is read-only anyway.
    """

    description: PrintableText = Field("", description="What it is for (shown to the model).")
    system_prompt: str = Field("", description="Its instructions (replaces the default identity).")
    tools: list[str] | None = Field(
        None, description="Tool names it gets (default: all built-in tools)."
    )
    read_only: bool = Field(
        True,
        description="Plan-mode rules (read-only tools, guarded and sandboxed bash) in every mode.",
    )


def _profiles(value: dict[str, AgentProfile]) -> dict[str, AgentProfile]:
    for name in value:
        _name(name)
        if name in BUILTIN_PROFILES:
            raise ValueError(f"{name!r} is a built-in profile; give yours another name")
    return value


class CompactionSettings(_Section):
    auto: bool = Field(True, description="Compact automatically when the context is nearly full.")
    threshold: float = Field(
        0.85, ge=0.2, le=1.0, description="Fraction of the context window that triggers it."
    )
    keep_fraction: float = Field(
        0.3, ge=0.05, le=0.8, description="Fraction of the window kept verbatim (recent turns)."
    )


class ModelPrice(_Section):
    """US dollars per million tokens."""

    input: float = Field(ge=0, description="Per million input (prompt) tokens.")
    output: float = Field(ge=0, description="Per million output tokens.")


# Body fields planshell itself builds: extra_body may not replace them.
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "system", "tools", "stream"})


def _extra_body(value: dict[str, Any]) -> dict[str, Any]:
    taken = sorted(RESERVED_BODY_FIELDS & set(value))
    if taken:
        raise ValueError(f"may not set {', '.join(taken)} (planshell builds those fields)")
    return value


class RequestSettings(_Section):
    """Extra request fields for the provider in use (see docs/providers.md presets).

    Security-relevant (not settable by an untrusted project): they change what
    is sent to the server and what it does with it (e.g. ``store``).
    """

    tool_choice: str | dict[str, Any] | None = Field(
        None,
        description='Sent with tools: "auto", "required", "none" or an object. '
        "llama-cpp-python ignores tools without it.",
    )
    extra_body: Annotated[dict[str, Any], AfterValidator(_extra_body)] = Field(
        default_factory=dict,
        description="Extra top-level JSON body fields, e.g. {cache_prompt = true}.",
    )
    stream_options: dict[str, Any] = Field(
        default_factory=lambda: {"include_usage": True},
        description="OpenAI-compatible stream_options; an empty table {} leaves the field out.",
    )



def _provider_name(text: str) -> str:
    """One of ``PROVIDER_CHOICES`` (the registry in ``llm/factory.py`` has one entry per name)."""
    if text not in PROVIDER_CHOICES:
        raise ValueError(f"must be one of {', '.join(PROVIDER_CHOICES)}")
    return text


ProviderName = Annotated[str, AfterValidator(_provider_name)]


class Settings(BaseSettings):
    """Every setting. ``Settings(...)`` in code is its arguments over the defaults;
    ``load_settings`` adds the files and the environment as settings sources."""

    model_config = SettingsConfigDict(
        extra="forbid",
        validate_assignment=True,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
    )

    provider: ProviderName = Field("auto", description="auto picks from API keys, else demo.")
    model: str | None = Field(None, description="Model name; each provider has a default.")
    base_url: str | None = Field(None, description="API base URL (OpenAI-compatible: …/v1).")
    api_key: str | None = Field(None, description="API key; prefer the provider's env var.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    max_tokens: int | None = Field(None, gt=0, description="Reply token cap.")
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to connect.")
    idle_timeout: float = Field(120.0, gt=0, description="Seconds allowed between stream chunks.")
    max_attempts: int = Field(4, ge=1, le=20, description="Tries per request (retries + 1).")
    request: RequestSettings = Field(default_factory=RequestSettings)
    context_window: int | None = Field(
        None, gt=0, description="The model's context window in tokens; else asked of the server."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="Per-model prices (USD per million tokens) for the cost."
    )
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    plan: PlanSettings = Field(default_factory=PlanSettings)
    ui: UISettings = Field(default_factory=UISettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    agents: Annotated[dict[str, AgentProfile], AfterValidator(_profiles)] = Field(
        default_factory=dict, description="Sub-agent profiles for the task tool, by name."
    )

    # Set by load_settings when an untrusted project file's security keys were ignored.
    _untrusted: UntrustedProject | None = PrivateAttr(None)

    @property
    def untrusted_project(self) -> UntrustedProject | None:
        """The project file whose security-relevant keys were ignored, if any."""
        return self._untrusted

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The layers of the ``load_settings`` call in progress (highest first), else none.

        Outside ``load_settings`` a ``Settings()`` never reads the process
        environment, a ``.env`` file or a secrets directory: code and tests
        that build one get exactly the defaults and their arguments.
        """
        return (init_settings, *_LOADING.get())


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


def read_config_file(path: Path, project_root: Path | None = None) -> ConfigFile:
    """Read and parse ``path`` once; a missing file is empty, anything odd a ``ConfigError``.

    The digest is of the very bytes that were parsed, so trust given to a
    digest covers exactly what is applied (no gap between hashing and reading).
    A project's file (``project_root`` given) goes through the safe reader for
    repository files: a regular file inside the project, nothing else (a
    symlink to ``/proc/self/environ`` must not become parsed settings or an
    error message); the user's own file may be a symlink anywhere but
    ``/proc``, ``/sys`` and ``/dev``. Both reads are bounded and refuse FIFOs
    and devices, so a repository cannot hang or flood start-up.
    """
    import hashlib

    from planshell.fsutil import ReadRefused, read_project_file, read_user_file

    try:
        if project_root is not None:
            raw = read_project_file(project_root, path, CONFIG_MAX_BYTES)
        else:
            raw = read_user_file(path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        return ConfigFile(path)
    except ReadRefused as exc:
        raise ConfigError(f"config error in {path}: {_refusal(exc)}.") from None
    except OSError as exc:
        raise ConfigError(f"config error in {path}: cannot read the file ({exc.strerror}).") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config error in {path}: the file is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config error in {path}: invalid TOML: {exc}.") from None
    return ConfigFile(path, data, hashlib.sha256(raw).hexdigest(), os.path.realpath(path))


def _refusal(exc: Any) -> str:
    """Why a config file was not read, as the end of a ``config error in PATH:`` sentence."""
    if exc.reason == "not-regular":
        return "the file is not a regular file"
    if exc.reason == "too-large":
        return "the file is larger than 1 MiB"
    return f"not read: {exc.message.removesuffix('; not read')}"


class _TableSource(PydanticBaseSettingsSource):
    """A parsed TOML table (or the flags) as a settings source, its keys exactly as written.

    Not pydantic-settings' ``TomlConfigSettingsSource``: that reads the file
    itself (unbounded, so a FIFO would hang start-up, and with no digest for
    trust) and matches keys case-insensitively, so a trusted ``PROVIDER = ...``
    or ``[PLAN]`` would apply as ``provider`` or ``plan`` instead of being an
    unknown key. The project's table arrives here already trust-filtered.
    """

    def __init__(self, settings_cls: type[BaseSettings], label: str, data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self.label = label
        self.data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return self.data


class _EnvSource(EnvSettingsSource):
    """pydantic-settings' environment layer over a given mapping (tests pass ``environ``)."""

    label = "environment"

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = {k: v for k, v in environ.items() if k.upper() not in _ENV_NOT_SETTINGS}
        super().__init__(settings_cls)

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        """The library's JSON decoding, with a ``ConfigError`` naming the variable on failure."""
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except ValueError as exc:
            name = f"{ENV_PREFIX}{field_name.upper()}"
            raise ConfigError(
                f"config error in environment: {field_name}: {name} (or a {name}__* variable) "
                f"is not valid JSON ({exc})."
            ) from None

    def _load_env_vars(self) -> Mapping[str, str | None]:
        from pydantic_settings.sources.utils import parse_env_vars

        return parse_env_vars(
            self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str
        )


# Variables read elsewhere that are not settings.
_ENV_NOT_SETTINGS = {"PLANSHELL_BASH_CORPUS", "PLANSHELL_DATA_DIR", "PLANSHELL_LOG_LEVEL"}

# The sources of the load_settings call in progress (in this thread or task), highest first.
_LOADING: ContextVar[tuple[PydanticBaseSettingsSource, ...]] = ContextVar("_LOADING", default=())


@contextmanager
def _loading(sources: tuple[PydanticBaseSettingsSource, ...]) -> Iterator[None]:
    token = _LOADING.set(sources)
    try:
        yield
    finally:
        _LOADING.reset(token)


def _unknown_env_names(environ: Mapping[str, str]) -> list[str]:
    """``PLANSHELL_*`` variables that name no setting: a typo must not be silently ignored.

    pydantic-settings only looks up the names of fields; a misspelt nested key
    (``PLANSHELL_PLAN__SANDBOXX``) is already an unknown key of its table.
    """
    unknown = []
    for name in environ:
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in _ENV_NOT_SETTINGS:
            continue
        head = upper[len(ENV_PREFIX) :].split(ENV_NESTED_DELIMITER)[0].lower()
        if head and head not in Settings.model_fields:
            unknown.append(name)
    return sorted(unknown)


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
    msg = err["msg"].removeprefix("Value error, ")  # our validators' own sentence
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
    from planshell.config.trust import is_trusted

    environ = dict(os.environ if environ is None else environ)
    user = read_config_file(user_file if user_file is not None else user_config_path())
    project = read_config_file(project_config_path(root), project_root=root)
    # Trust is decided on the parsed table, before it becomes a source: an
    # untrusted file contributes only its allowlisted leaves.
    project_data, relevant = split_project_data(project.data)
    untrusted: UntrustedProject | None = None
    if relevant:
        if is_trusted(project, trust_file):
            project_data = project.data
        else:
            untrusted = UntrustedProject(project, relevant)
    unknown = _unknown_env_names(environ)
    if unknown:
        raise ConfigError(
            f"config error in environment: {unknown[0]}: unknown setting "
            "(see docs/configuration.md for the valid keys)."
        )
    flags = {k: v for k, v in (cli or {}).items() if v is not None}
    sources: tuple[_TableSource | _EnvSource, ...] = (  # highest first, as pydantic-settings wants
        _TableSource(Settings, "command-line flags", flags),
        _EnvSource(Settings, environ),
        _TableSource(Settings, str(project.path), project_data),
        _TableSource(Settings, str(user.path), user.data),
    )
    try:
        with _loading(sources):
            settings = Settings()
    except ValidationError as exc:
        raise _explain(exc, [_Layer(s.label, s()) for s in reversed(sources)]) from None
    except SettingsError as exc:  # only the environment source raises it
        raise ConfigError(f"config error in environment: {exc}.") from None
    settings._untrusted = untrusted
    return settings


def remember_user_setting(section: str, key: str, value: str, path: Path | None = None) -> Path:
    """Set ``[section] key = "value"`` in the user file, keeping its comments and layout.

    Used for small preferences (the theme) so that a hand-edited file is not
    rewritten from scratch: tomlkit edits the document in place (a dotted
    ``section`` such as ``plan.ui`` is a nested table; a dotted key or inline
    table already holding it is updated where it is). A file that is not valid
    TOML, or where ``section`` is not a table, is left alone (``ConfigError``).
    """
    from planshell.fsutil import ReadRefused, atomic_write_text, read_user_file

    path = path or user_config_path()
    try:
        raw = read_user_file(path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        raw = b""
    except ReadRefused:
        raise ConfigError(f"config error in {path}: not a regular file of at most 1 MiB.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config error in {path}: the file is not UTF-8 text; not changed.") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, toml_with_value(text, section, key, value, where=path))
    return path


def toml_with_value(
    text: str, section: str, key: str, value: str | list[str], *, where: Path | None = None
) -> str:
    """``text`` with ``[section] key = value`` set by tomlkit, comments and layout kept.

    A dotted ``section`` such as ``plan.ui`` is a nested table; a dotted key or
    inline table already holding it is updated where it is. Text that is not
    valid TOML, or where ``section`` is not a table, raises ``ConfigError``.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    name = where or "the config"
    try:
        document = tomlkit.parse(text)
        table: Any = document
        for part in section.split("."):
            if part not in table:
                table[part] = tomlkit.table()
            table = table[part]
            if not isinstance(table, dict):  # tomlkit tables are dicts; `ui = "x"` is not
                raise ConfigError(f"config error in {name}: {section} is not a table; not changed.")
        table[key] = value
    except TOMLKitError as exc:
        raise ConfigError(f"config error in {name}: invalid TOML: {exc}; not changed.") from None
    return tomlkit.dumps(document)
