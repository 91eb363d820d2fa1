"""Writing a setting back to a TOML file, its comments and layout kept (tomlkit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planshell.config.errors import ConfigError
from planshell.config.files import CONFIG_MAX_BYTES, user_config_path


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
        raise ConfigError(
            f"config error in {path}: the file is not UTF-8 text; not changed."
        ) from None
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
