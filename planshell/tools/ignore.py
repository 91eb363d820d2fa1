"""Which files a project search leaves out: git's ignore rules, read the way ripgrep reads them.

``grep`` has two engines (ripgrep, and a Python fallback) that must return the
same lines, and ``find`` shares the fallback's walker. So this module follows
ripgrep's ``ignore`` crate rather than git itself, with ``pathspec``'s
``GitIgnoreSpec`` for the gitignore pattern semantics:

* every directory may hold ``.rgignore``, ``.ignore`` and ``.gitignore``; a
  directory with a ``.git`` entry also contributes its ``info/exclude``;
* ``.gitignore``, ``info/exclude`` and the global excludes file count only
  inside a git work tree (some directory on the way up has ``.git``), and only
  up to the nearest such directory; ``.ignore``/``.rgignore`` count everywhere;
* ignore files of the directories *above* the searched folder count too (a
  search of ``src/`` still honours the root ``.gitignore``);
* precedence by kind, each kind's deepest match first: ``.rgignore``, then
  ``.ignore``, ``.gitignore``, ``info/exclude``, the global excludes file;
* the global excludes file is ``core.excludesFile`` from ``~/.gitconfig`` or
  ``$XDG_CONFIG_HOME/git/config`` (default ``$XDG_CONFIG_HOME/git/ignore``).
  Those files are *parsed*, never handed to ``git``: nothing a repository
  configures can run a program through a search.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

#: Per-directory ignore files, in order of precedence (``info/exclude`` follows).
IGNORE_FILES: tuple[str, ...] = (".rgignore", ".ignore", ".gitignore")
_GIT_KINDS = 2  # specs from this index on (.gitignore, info/exclude) need a git work tree

# ripgrep's own (lazy) reading of core.excludesFile, kept identical so both engines agree.
_EXCLUDES_RE = re.compile(rb'^\s*excludesfile\s*=\s*"?\s*(\S+?)\s*"?\s*$', re.IGNORECASE | re.M)


def _home() -> Path | None:
    home = os.environ.get("HOME")
    if home:
        return Path(home)
    try:
        return Path.home()
    except (KeyError, RuntimeError):
        return None


def _xdg_config() -> Path | None:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg)
    home = _home()
    return home / ".config" if home else None


# Larger ignore files are skipped (ripgrep would read them; no real one is this big).
IGNORE_MAX_BYTES = 4 * 1024 * 1024


def _read_bytes(path: Path, root: Path | None = None) -> bytes | None:
    """An ignore file's bytes through the safe reader; None when missing or refused.

    Inside ``root`` (the project) the repository chose the file: it must be a
    regular file whose real path stays in the project. Elsewhere (folders
    above the project, the user's global excludes, a worktree's git
    directory) it must still be a regular file outside /proc, /sys and /dev.
    """
    from planshell.fsutil import ReadRefused, read_project_file, read_user_file

    try:
        if root is not None and path.is_relative_to(root):
            return read_project_file(root, path, IGNORE_MAX_BYTES)
        return read_user_file(path, IGNORE_MAX_BYTES)
    except (OSError, ReadRefused):
        return None


def _excludes_from_config(path: Path | None) -> Path | None:
    data = _read_bytes(path) if path else None
    match = _EXCLUDES_RE.search(data) if data else None
    if match is None:
        return None
    try:
        value = match.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None
    home = _home()
    return Path(value.replace("~", str(home)) if home else value)


def global_excludes_path() -> Path | None:
    """The user's global git excludes file, found without running git."""
    home, xdg = _home(), _xdg_config()
    return (
        _excludes_from_config(home / ".gitconfig" if home else None)
        or _excludes_from_config(xdg / "git" / "config" if xdg else None)
        or (xdg / "git" / "ignore" if xdg else None)
    )


def load_spec(path: Path, root: Path | None = None) -> GitIgnoreSpec | None:
    """The patterns of one ignore file; None when it is missing, refused or has none.

    ``root``: the project, whose files the safe reader keeps inside it. A line
    pathspec cannot compile is dropped (ripgrep drops it too) rather than
    losing the whole file.
    """
    data = _read_bytes(path, root)
    if data is None:
        return None
    lines = data.decode("utf-8", "replace").splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None  # comments only, like a new repository's .git/info/exclude
    from pathspec import GitIgnoreSpec  # ~10 ms to import: only once there are patterns

    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:
        kept = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception:
                continue
            kept.append(line)
        spec = GitIgnoreSpec.from_lines(kept)
    return spec if len(spec) else None


def _git_common_dir(directory: Path, root: Path | None = None) -> Path | None:
    """Where ``info/exclude`` lives for the work tree at ``directory``.

    ``.git`` is a directory, or (worktrees) a file ``gitdir: <path>`` whose
    ``commondir`` names the shared git directory. Like ripgrep, a ``.git``
    file without ``commondir`` (a submodule) has no exclude file.
    """
    dot_git = directory / ".git"
    if dot_git.is_dir():
        return dot_git
    data = _read_bytes(dot_git, root)
    if data is None:
        return None
    first = data.decode("utf-8", "replace").splitlines()[:1]
    if not first or not first[0].startswith("gitdir: "):
        return None
    git_dir = directory / first[0].removeprefix("gitdir: ")
    common = _read_bytes(git_dir / "commondir", root)
    if common is None:
        return None
    lines = common.decode("utf-8", "replace").splitlines()
    return git_dir / lines[0] if lines else None


@dataclass(frozen=True)
class DirRules:
    """The ignore files of one directory."""

    directory: Path
    has_git: bool
    specs: tuple[GitIgnoreSpec | None, ...]  # IGNORE_FILES, then info/exclude


#: The rules of a directory and of every directory above it, deepest first.
Chain = tuple[DirRules, ...]


class IgnoreRules:
    """Answers "is this entry ignored?" for one search rooted at ``root``.

    The global excludes file is read when the search starts (so a changed
    environment counts) and matched relative to ``root``, where ripgrep runs.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        path = global_excludes_path()
        self.global_spec = load_spec(path) if path else None
        self._cache: dict[Path, DirRules] = {}

    def rules(self, directory: Path) -> DirRules:
        cached = self._cache.get(directory)
        if cached is not None:
            return cached
        has_git = (directory / ".git").exists()
        specs = [load_spec(directory / name, self.root) for name in IGNORE_FILES]
        common = _git_common_dir(directory, self.root) if has_git else None
        specs.append(load_spec(common / "info" / "exclude", self.root) if common else None)
        rules = DirRules(directory, has_git, tuple(specs))
        self._cache[directory] = rules
        return rules

    def chain(self, directory: Path) -> Chain:
        """``directory`` and all its ancestors up to ``/``."""
        return tuple(self.rules(d) for d in (directory, *directory.parents))

    def descend(self, chain: Chain, directory: Path) -> Chain:
        return (self.rules(directory), *chain)

    def ignored(self, chain: Chain, path: Path, is_dir: bool) -> bool:
        """Whether ``path`` (an entry of ``chain[0].directory``) is ignored."""
        any_git = any(rules.has_git for rules in chain)
        verdicts: list[bool | None] = [None] * (len(IGNORE_FILES) + 1)
        suffix = "/" if is_dir else ""
        saw_git = False
        for rules in chain:
            rel: str | None = None
            for kind, spec in enumerate(rules.specs):
                if spec is None or verdicts[kind] is not None:
                    continue
                if kind >= _GIT_KINDS and (not any_git or saw_git):
                    continue
                rel = rel or path.relative_to(rules.directory).as_posix() + suffix
                verdicts[kind] = spec.check_file(rel).include
            saw_git = saw_git or rules.has_git
        if any_git and self.global_spec is not None and path.is_relative_to(self.root):
            rel = path.relative_to(self.root).as_posix() + suffix
            verdicts.append(self.global_spec.check_file(rel).include)
        return next((v for v in verdicts if v is not None), False)

    def within_ignored(self, path: Path) -> bool:
        """Whether ``path`` or a folder above it, below its repository's top, is ignored.

        A search named an ignored folder explicitly: it then searches all of
        it (ripgrep never filters the folder it was given, and pathspec would
        otherwise match everything below an ignored folder). A repository's
        top is where the question stops: a project with its own ``.git``
        inside, say, a home-directory repository ignoring ``*`` is not
        ignored, as git and ripgrep agree.
        """
        for folder in (path, *path.parents):
            if folder.parent == folder or self.rules(folder).has_git:
                return False
            if self.ignored(self.chain(folder.parent), folder, True):
                return True
        return False
