"""The layers merged into ``Settings``: files, environment and flags.

Order (later wins): defaults < user file < project file < ``PLANSHELL_*``
environment < command-line flags. Each layer is a table (a parsed file, the
environment read by ``planshell.config.environment``, the flags); the tables
merge key by key and pydantic validates the result. A broken file or a bad value raises
``ConfigError`` with one sentence naming the file, the key and the problem.
Security-relevant keys of an untrusted project file never become a layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planshell.config.environment import (
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    deep_merge,
    environment_table,
    settings_names,
)
from planshell.config.errors import ConfigError
from planshell.config.files import (
    ConfigFile,
    project_config_path,
    read_config_file,
    user_config_path,
)
from planshell.config.mcp import drop_project_opt_ins
from planshell.config.schema import Settings
from planshell.config.trust import is_trusted
from planshell.config.untrusted import (
    UntrustedProject,
    split_project_data,
    user_only_keys_in,
    user_only_warning,
    without_user_only,
)


@dataclass
class _Layer:
    """One layer's table, its keys exactly as written.

    A file's keys are never split on ``__`` nor case-folded as environment
    names are: a trusted ``PROVIDER = ...`` or ``[PLAN]`` is an unknown key,
    not ``provider`` or ``plan``. The project's table arrives already
    trust-filtered.
    """

    source: str
    data: dict[str, Any] = field(default_factory=dict)


def _unknown_env_names(environ: Mapping[str, str]) -> list[str]:
    """``PLANSHELL_*`` variables that name no setting: a typo must not be silently ignored.

    A misspelt nested key
    (``PLANSHELL_PLAN__SANDBOXX``) is already an unknown key of its table.
    """
    unknown = []
    for name in settings_names(environ):
        upper = name.upper()
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
    errors = exc.errors()
    source, problem = _problem(errors[0], layers)
    text = f"config error in {source}: {problem}"
    if len(errors) == 2:  # the only other problem: name it rather than count it
        other_source, other = _problem(errors[1], layers)
        text += (
            f"; also {other}" if other_source == source else f"; also in {other_source}: {other}"
        )
    elif len(errors) > 2:
        text += f" (and {len(errors) - 1} more problems)"
    error = ConfigError(f"{text}.")
    error.source = source
    return error


def _problem(err: Any, layers: list[_Layer]) -> tuple[str, str]:
    """(where, "key: what is wrong") for one validation error."""
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
    return source, f"{key}: {msg}"


def project_file_ignored(error: str) -> str:
    """The one sentence every front end (TUI, ``-p``, ``doctor``) gives for a broken project file.

    A repository's file must not lock anyone out of planshell: it is left out
    as a whole (never half-applied) and the rest of the settings still apply.
    """
    from planshell.sanitize import strip_terminal_controls

    error = strip_terminal_controls(error)  # the repository's own text may carry escapes
    return (
        f"{error.rstrip('.')}. planshell ignores that file until it is fixed "
        "(your own config, the environment and flags still apply)."
    )


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
    environ = dict(os.environ if environ is None else environ)
    user = read_config_file(user_file if user_file is not None else user_config_path())
    # A broken project file is left out with a warning; a broken user file stops start-up
    # (it may hold the user's deny rules or provider: going on without it would surprise).
    project_error: str | None = None
    try:
        project = read_config_file(project_config_path(root), project_root=root)
    except ConfigError as exc:
        project, project_error = ConfigFile(project_config_path(root)), str(exc)
    # Trust is decided on the parsed table, before it becomes a source: an
    # untrusted file contributes only its allowlisted leaves.
    # Keys no project may set (plan.critic, plan.approve_auto): warned about on their own,
    # not offered for trust (trusting the file would not apply them).
    user_only = user_only_keys_in(project.data)
    project_data, relevant = split_project_data(without_user_only(project.data))
    untrusted: UntrustedProject | None = None
    if relevant:
        if is_trusted(project, trust_file):
            project_data = project.data
        else:
            untrusted = UntrustedProject(project, relevant)
    project_data = without_user_only(project_data)  # e.g. plan.approve_auto: never a project's
    unknown = _unknown_env_names(environ)
    if unknown:
        raise ConfigError(
            f"config error in environment: {unknown[0]}: unknown setting "
            "(see docs/configuration.md for the valid keys)."
        )
    flags = {k: v for k, v in (cli or {}).items() if v is not None}
    try:
        settings = _validate(flags, environ, str(project.path), project_data, user)
    except ConfigError as exc:
        if getattr(exc, "source", None) != str(project.path):
            raise
        project_error, project_data, untrusted, user_only = str(exc), {}, None, []
        settings = _validate(flags, environ, str(project.path), project_data, user)
    settings._untrusted = untrusted
    drop_project_opt_ins(settings.mcp, project_data)
    if project_error is not None:
        settings._project_error = project_file_ignored(project_error)
    if user_only:
        settings._user_only_warning = user_only_warning(str(project.path), user_only)
    return settings


def _validate(
    flags: dict[str, Any],
    environ: dict[str, str],
    project_label: str,
    project_data: dict[str, Any],
    user: ConfigFile,
) -> Settings:
    """The layers merged and validated, or a ``ConfigError`` naming the layer at fault."""
    layers = [  # lowest first
        _Layer(str(user.path), user.data),
        _Layer(project_label, project_data),
        _Layer("environment", environment_table(Settings, environ)),
        _Layer("command-line flags", flags),
    ]
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, layer.data)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise _explain(exc, layers) from None
