"""``PLANSHELL_*`` environment variables as one settings table.

``PLANSHELL_TOOLS__BASH_TIMEOUT=7`` is ``{"tools": {"bash_timeout": "7"}}``:
names are case-insensitive, ``__`` nests, and a value whose setting is a
table or a list (``PLANSHELL_PLAN='{"sandbox": "off"}'``,
``PLANSHELL_PLAN__ENV_DENY='["CORP_*"]'``) is JSON. A whole table and its
nested names merge, the nested names winning. Plain values stay strings for
pydantic to convert, so a bad one is reported against the environment.

Written here rather than taken from pydantic-settings: that package (and the
cloud-secret sources it imports) cost ~90 ms of every start-up, for the few
lines this needs (issue 28).
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from planshell.config.errors import ConfigError

ENV_PREFIX = "PLANSHELL_"
ENV_NESTED_DELIMITER = "__"

# Variables read elsewhere that are not settings.
ENV_NOT_SETTINGS = frozenset({"PLANSHELL_BASH_CORPUS", "PLANSHELL_DATA_DIR", "PLANSHELL_LOG_LEVEL"})

_CONTAINERS = (dict, list, tuple, set, frozenset)


def settings_names(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``PLANSHELL_*`` variables that are settings, by name as given."""
    return {
        name: value
        for name, value in environ.items()
        if name.upper().startswith(ENV_PREFIX) and name.upper() not in ENV_NOT_SETTINGS
    }


def environment_table(model: type[BaseModel], environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings table the variables describe (names matched to ``model``'s fields).

    A name that matches no field is kept as written (lower-cased), so validation
    reports it as an unknown key of its table rather than it being ignored.
    """
    table: dict[str, Any] = {}
    # Whole tables first, then nested names over them (sorted: shorter paths first).
    for name in sorted(settings_names(environ), key=lambda n: n.count(ENV_NESTED_DELIMITER)):
        path = name[len(ENV_PREFIX) :].lower().split(ENV_NESTED_DELIMITER)
        if not all(path):  # PLANSHELL_ alone, PLANSHELL_PLAN__: a typo, not silence
            raise ConfigError(
                f"config error in environment: {name}: unknown setting "
                "(see docs/configuration.md for the valid keys)."
            )
        value: Any = environ[name]
        if _is_table_or_list(_annotation_at(model, path)):
            value = _json(name, path, value)
        for key in reversed(path):
            value = {key: value}
        table = deep_merge(table, value)
    return table


def _json(name: str, path: list[str], text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"config error in environment: {'.'.join(path)}: {name.upper()}"
            f"{' (or a ' + name.upper() + '__* variable)' if len(path) == 1 else ''} "
            f"is not valid JSON ({exc})."
        ) from None


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` on top; tables merge key by key, anything else is replaced."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = deep_merge(old, value)
        else:
            merged[key] = value
    return merged


def _annotation_at(model: type[BaseModel], path: list[str]) -> Any:
    """The type of the setting ``path`` names, or None when it names none."""
    annotation: Any = model
    for key in path:
        annotation = _child(annotation, key)
        if annotation is None:
            return None
    return annotation


def _child(annotation: Any, key: str) -> Any:
    for arm in _arms(annotation):
        if isinstance(arm, type) and issubclass(arm, BaseModel):
            field = arm.model_fields.get(key)
            if field is not None:
                return field.annotation
        elif get_origin(arm) is dict:
            return get_args(arm)[1] if get_args(arm) else Any
    return None


def _arms(annotation: Any) -> list[Any]:
    """The types a value may have: ``Annotated`` unwrapped, a union split, None left out."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        return [arm for item in get_args(annotation) for arm in _arms(item)]
    return [] if annotation is type(None) else [annotation]


def _is_table_or_list(annotation: Any) -> bool:
    if annotation is None:
        return False
    for arm in _arms(annotation):
        origin = get_origin(arm) or arm  # Literal[...] has no class origin: a plain value
        if isinstance(origin, type) and (
            issubclass(origin, BaseModel) or issubclass(origin, _CONTAINERS)
        ):
            return True
    return False
