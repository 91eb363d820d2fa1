"""Project trust: which repositories' config files may change security settings.

Like ``direnv allow`` and ``mise trust``: the user trusts one project config
file *as it is now*. The record lives in the user's own config folder (never
in the repository), keyed by the path planshell looks the file up at, with
the SHA-256 of the exact bytes that were parsed and the file's real path. A
changed file, or a symlink that now points elsewhere, needs trust again.

Plan mode cannot write the record: it lives outside the project, and the
plan-mode gate, bash guard and read-only sandbox stop every write outside
``.planshell/plans/``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planshell.config.errors import ConfigError
from planshell.config.files import CONFIG_MAX_BYTES, ConfigFile, user_config_path

TRUST_FILE_NAME = "trusted-projects.json"

__all__ = ["TrustEntry", "TrustStore", "is_trusted", "trust_file_path"]


class TrustEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    sha256: str
    target: str
    trusted_at: str = ""


class TrustStore(BaseModel):
    """The file's content: ``{"version": 1, "projects": {path: entry}}``."""

    model_config = ConfigDict(extra="ignore")

    version: int = 1
    projects: dict[str, TrustEntry] = Field(default_factory=dict)


def trust_file_path() -> Path:
    """``trusted-projects.json`` next to the user config file."""
    return user_config_path().parent / TRUST_FILE_NAME


def load_store(path: Path | None = None) -> TrustStore:
    """The trust records; a missing file is empty, a broken one a ``ConfigError``."""
    from planshell.fsutil import ReadRefused, read_user_file

    path = path or trust_file_path()
    try:
        raw = read_user_file(path, CONFIG_MAX_BYTES)
    except FileNotFoundError:
        return TrustStore()
    except ReadRefused as exc:
        raise ConfigError(f"cannot read {path}: {exc}.") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}.") from None
    try:
        return TrustStore.model_validate_json(raw)
    except ValidationError:
        raise ConfigError(
            f"{path} is not a valid trust file; fix or delete it (every project is then untrusted)."
        ) from None


def save_store(store: TrustStore, path: Path | None = None) -> Path:
    from planshell.fsutil import atomic_write_text

    path = path or trust_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(store.model_dump(), indent=2, sort_keys=True) + "\n")
    return path


def is_trusted(file: ConfigFile, trust_file: Path | None = None) -> bool:
    """Whether the user trusted ``file`` with exactly this content and target.

    An unreadable or broken trust file trusts nothing (the safe answer); the
    ``planshell trust`` commands report it.
    """
    if file.digest is None:
        return False
    try:
        entry = load_store(trust_file).projects.get(str(file.path))
    except ConfigError:
        return False
    return entry is not None and entry.sha256 == file.digest and entry.target == file.target


def trust(file: ConfigFile, trust_file: Path | None = None) -> Path:
    """Record trust in ``file`` as read (the digest of the bytes the user was shown)."""
    if file.digest is None or file.target is None:
        raise ConfigError(f"{file.path} does not exist; nothing to trust.")
    store = load_store(trust_file)
    store.projects[str(file.path)] = TrustEntry(
        sha256=file.digest,
        target=file.target,
        trusted_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return save_store(store, trust_file)


def revoke(path: Path, trust_file: Path | None = None) -> bool:
    """Forget trust in the project file at ``path``; False when it was not trusted."""
    store = load_store(trust_file)
    if store.projects.pop(str(path), None) is None:
        return False
    save_store(store, trust_file)
    return True
