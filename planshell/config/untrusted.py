"""What an untrusted project file may set: the one allowlist of harmless keys.

A cloned repository's ``.planshell/config.toml`` is untrusted: only the keys in
``HARMLESS_PROJECT_KEYS`` apply from it until the user trusts the file
(``planshell trust``, see ``planshell.config.trust``). Every other key,
including any key added later, is security-relevant by default.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from planshell.config.files import ConfigFile
from planshell.config.schema import Settings

# The ONE place that decides what an untrusted repository may set. An allowlist
# of leaf keys (tuples, so a quoted TOML key "ui.theme" is not ("ui", "theme")):
# any key not listed here, including every key added to Settings later, is
# security-relevant and needs `planshell trust`. A project may choose how
# planshell looks (a theme the user installed); it may not change what runs,
# where data goes, which keys change the mode, nor how the mode is shown
# (labels and the chip could make OFF look like PLAN). ui.start_mode may only
# be "plan" or "off" (the schema rejects anything else): starting in PLAN only
# narrows what can happen, and "off" is the default a project cannot go below.
HARMLESS_PROJECT_KEYS: frozenset[tuple[str, ...]] = frozenset(
    {("ui", "theme"), ("ui", "start_mode")}
)


# Keys only the user's own config (file, environment, flags) may set: a project
# file never applies them, trusted or not. Offering "auto" when a plan is
# approved must be the person's choice, not a repository's; so is the plan
# critic, which sends the plan and the files it cites to an endpoint (a
# repository choosing it would choose where the project's files go). So is
# fetch.allow_domains: a listed domain is fetched in plan mode without asking,
# so a repository listing its own server would open a channel for secrets.
# A ``*`` segment stands for any one key: ``mcp.servers.*.plan`` lets a server's
# read-only tools run in plan mode, which only the person may decide (a repository
# would vouch for its own server).
USER_ONLY_KEYS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("plan", "approve_auto"),
        ("plan", "critic"),
        ("fetch", "allow_domains"),
        ("mcp", "servers", "*", "plan"),
    }
)


def _user_only(path: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``USER_ONLY_KEYS`` (``*`` matches one segment)."""
    return any(
        len(key) == len(path) and all(k in ("*", p) for k, p in zip(key, path, strict=True))
        for key in USER_ONLY_KEYS
    )


def user_only_keys_in(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The ``USER_ONLY_KEYS`` a parsed project table sets (for the warning that ignores them)."""
    found: list[tuple[str, ...]] = []
    for key, value in data.items():
        path = (*prefix, key)
        if _user_only(path):
            found.append(path)
        elif isinstance(value, dict):
            found += user_only_keys_in(value, path)
    return found


def user_only_warning(where: str, keys: list[tuple[str, ...]]) -> str:
    """One sentence: these project keys were ignored, and trusting the file will not change it."""
    from planshell.sanitize import strip_terminal_controls

    names = ", ".join(format_key(k) for k in keys)
    return (
        f"Ignoring {names} from the project config {strip_terminal_controls(where)}: "
        "only your own config can set it (trusting the project does not)."
    )


def without_user_only(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    """A parsed project table without ``USER_ONLY_KEYS`` (a new table; ``data`` is unchanged)."""
    kept: dict[str, Any] = {}
    for key, value in data.items():
        path = (*prefix, key)
        if _user_only(path):
            continue
        kept[key] = without_user_only(value, path) if isinstance(value, dict) else value
    return kept


def is_security_relevant(path: tuple[str, ...]) -> bool:
    """True unless ``path`` is an allowlisted harmless leaf key (exact, case-sensitive)."""
    return tuple(path) not in HARMLESS_PROJECT_KEYS


def settings_keys(
    model: type[BaseModel] = Settings, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
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
