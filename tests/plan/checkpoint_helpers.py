"""What the checkpoint and undo tests share: a hardened ``git`` and a whole-tree fingerprint."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def state(root: Path) -> dict[str, str]:
    """sha256 (files), target (links) and mode of everything under root but ``.git``."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = f"dir {path.stat().st_mode & 0o7777:o}"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = f"{digest} {path.stat().st_mode & 0o7777:o}"
    return out


def outside_plans(root: Path) -> dict[str, str]:
    """The project's state but planshell's own folder (plans and run records: not the plan's
    work, and never recorded or undone by a checkpoint)."""
    return {k: v for k, v in state(root).items() if not k.startswith(".planshell")}
