"""Where the config files are, and reading one: bounded, parsed once, with its digest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planshell.config.errors import ConfigError
from planshell.fsutil import CONFIG_MAX_BYTES


def user_config_path() -> Path:
    from platformdirs import user_config_dir

    return Path(user_config_dir("planshell")) / "config.toml"


def project_config_path(root: Path) -> Path:
    """Where the project file is looked up; the root is resolved, the last two parts are not.

    Not following ``.planshell`` or ``config.toml`` keeps the trust key this
    project's own: a symlink to another project's trusted file is a new key.
    """
    return Path(root).resolve() / ".planshell" / "config.toml"


@dataclass(frozen=True)
class ConfigFile:
    """A config file as read once: the exact bytes parsed, and their SHA-256."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None  # None when the file does not exist
    target: str | None = None  # the real path when it exists (symlinks followed)


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
        raise ConfigError(
            f"config error in {path}: cannot read the file ({exc.strerror})."
        ) from None
    import tomllib  # ~15 ms to import: only when there is a file to parse

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
