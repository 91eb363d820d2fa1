"""Protected paths: the one rule for what planshell never writes without a person's yes.

A write there can make *the user's* programs run code later, outside any
sandbox (``core.fsmonitor`` in a ``.git/config`` runs on the next ``git
status``), or can loosen planshell's own settings. The file tools (through the
permission engine), the workspace sandbox (read-only binds) and the project
watch (``gitwatch.py``) all ask this module, so they cannot disagree:

* every ``.git`` entry (folder or ``gitdir:`` pointer file) at any depth, and
  everything inside one;
* any git directory whatever its name (a pointer's target, a worktree's git
  dir, ``.git/modules/x``, a bare repository), recognised as git does: ``HEAD``
  plus ``objects`` and ``refs``, or ``HEAD`` plus ``commondir``;
* ``.gitmodules`` (it says what ``git submodule update`` clones, and where);
* ``.planshell/`` except ``.planshell/plans/`` (the project's planshell settings);
* the user's own planshell config and data folders (settings, trust records,
  sessions), which matter when the project is ``$HOME`` or writes outside the
  project are allowed.

Paths are judged after resolving ``..`` and symlinks *and* as written, with
casefolded names: on a case-insensitive file system ``.GIT/config`` is
``.git/config``.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from planshell.fsutil import ReadRefused, read_user_file

GIT = ".git"
GITMODULES = ".gitmodules"
PLANSHELL = ".planshell"
PLANS = "plans"
MARKS = frozenset({GIT, GITMODULES, PLANSHELL})  # casefolded names the project walk notes

GIT_CONFIG_WARNING = (
    "{what} can make git run commands (core.fsmonitor, core.hooksPath, aliases, pagers, "
    "filters) the next time you run git in this project, outside any sandbox."
)
GIT_HOOK_WARNING = (
    "{what} is a git hook: git runs it as a program on commit, checkout, merge or push."
)
GIT_DIR_WARNING = (
    "{what} is inside a git directory: git reads it as repository state or configuration, "
    "and a change there can make git run commands or lose history."
)
GIT_ENTRY_WARNING = (
    "{what} is a .git entry: it makes git use a repository (and that repository's config, "
    "which can run commands) whenever you run git in this folder."
)
GITMODULES_WARNING = (
    "{what} tells `git submodule update` which repositories to clone and where to put them."
)
PLANSHELL_WARNING = (
    "{what} holds this project's planshell settings (permissions, sandbox, tools); only "
    ".planshell/plans/ is the agent's to write."
)
USER_WARNING = (
    "{what} is planshell's own configuration or data (your settings, trusted projects, "
    "sessions); the agent never changes it unasked."
)


@dataclass(frozen=True)
class Protection:
    """Why a path is protected: ``warning`` says what a write there can do."""

    kind: str  # "git-config", "git-hook", "git-dir", "git-entry", "gitmodules", "planshell", "user"
    warning: str


def _fold(name: str) -> str:
    return name.casefold()


def user_dirs() -> list[Path]:
    """The user's planshell config folder (trust records live there too) and data folder."""
    from planshell.config import data_dir, user_config_path

    return [user_config_path().parent, data_dir()]


def is_git_dir(path: Path) -> bool:
    """Whether git would take ``path`` for a git directory (``HEAD`` + objects/refs or commondir)."""
    try:
        if not (path / "HEAD").is_file():
            return False
        if (path / "commondir").is_file():
            return True
        return (path / "objects").is_dir() and (path / "refs").is_dir()
    except OSError:
        return False


def _within(path: Path, folder: Path) -> bool:
    text, base = _fold(str(path)), _fold(str(folder)).rstrip("/")
    return text == base or text.startswith(base + "/")


def _by_name(parts: tuple[str, ...], shown: str) -> Protection | None:
    """The name rule over path components (relative to the project when inside it)."""
    folded = [_fold(p) for p in parts]
    for i, name in enumerate(folded):
        if name == GIT:
            rest = folded[i + 1 :]
            if not rest:
                return Protection("git-entry", GIT_ENTRY_WARNING.format(what=f"`{shown}`"))
            return _inside_git_dir(rest, shown)
        if name == PLANSHELL and (len(folded) == i + 1 or folded[i + 1] != PLANS):
            return Protection("planshell", PLANSHELL_WARNING.format(what=f"`{shown}`"))
    if folded and folded[-1] == GITMODULES:
        return Protection("gitmodules", GITMODULES_WARNING.format(what=f"`{shown}`"))
    return None


def _inside_git_dir(rest: list[str], shown: str) -> Protection:
    what = f"`{shown}`"
    if rest[0] in ("config", "config.worktree") or rest[-1] in ("config", "config.worktree"):
        return Protection("git-config", GIT_CONFIG_WARNING.format(what=what))
    if "hooks" in rest:
        return Protection("git-hook", GIT_HOOK_WARNING.format(what=what))
    return Protection("git-dir", GIT_DIR_WARNING.format(what=what))


def protection(root: Path, path: Path, raw: str | None = None) -> Protection | None:
    """Why writing ``path`` (resolved; ``raw`` as the model wrote it) is protected, or None."""
    root = root.resolve()
    candidates = [path]
    if raw is not None:
        lexical = Path(os.path.normpath(root / Path(raw).expanduser()))
        if lexical != path:
            candidates.append(lexical)
    for candidate in candidates:
        found = _protection_of(root, candidate)
        if found is not None:
            return found
    return None


def _protection_of(root: Path, path: Path) -> Protection | None:
    inside = path == root or root in path.parents
    parts = path.relative_to(root).parts if inside else path.parts
    shown = path.relative_to(root).as_posix() if inside else str(path)
    found = _by_name(parts, shown)
    if found is not None:
        return found
    for folder in user_dirs():
        if _within(path, folder.resolve()) or _within(path, folder):
            return Protection("user", USER_WARNING.format(what=f"`{shown}`"))
    # A git directory under another name: the pointer target, a worktree's, a bare repository.
    for ancestor in (path, *path.parents):
        if is_git_dir(ancestor):
            rest = [_fold(p) for p in path.relative_to(ancestor).parts] or ["."]
            return _inside_git_dir(rest, shown)
    return None


# --- finding the .git entries of a project ---------------------------------------------

RACY_NS = 2_000_000_000  # a folder changed this recently is listed again (coarse mtimes)
MAX_DIRS = 400_000  # folders visited per scan; past this the scan says it is incomplete


@dataclass(frozen=True)
class _Listing:
    dev: int
    ino: int
    mtime_ns: int
    subdirs: tuple[str, ...]  # full paths of the child folders (not symlinks)
    marks: tuple[str, ...]  # names of entries whose casefolded name is in MARKS


@dataclass
class ProjectScan:
    """Every ``.git``, ``.gitmodules`` and ``.planshell`` entry in a project, found cheaply.

    A folder's listing only changes when its own mtime does, so after the first
    walk a scan is one ``lstat`` per folder: folders whose mtime (and inode) are
    unchanged reuse the cached listing, the rest are listed again. No folder is
    skipped (``node_modules/x/.git`` counts like any other), symlinks are not
    followed (git does not follow them to find nested repositories either), and
    a folder changed within ``RACY_NS`` of the scan is always listed again, so a
    change in the same clock tick as the previous scan is not missed.
    """

    root: Path
    cache: dict[str, _Listing] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def marks(self) -> tuple[list[Path], bool]:
        """The marked entries (absolute paths) and whether the scan covered everything."""
        with self.lock:
            return self._scan()

    def _scan(self) -> tuple[list[Path], bool]:
        found: list[Path] = []
        seen: dict[str, _Listing] = {}
        cache, lstat = self.cache, os.lstat
        settled = time.time_ns() - RACY_NS  # a folder changed after this is listed again
        stack = [str(self.root)]
        while stack:
            if len(seen) >= MAX_DIRS:
                self.cache = seen
                return found, False
            folder = stack.pop()
            try:
                st = lstat(folder)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                continue
            listing = cache.get(folder)
            if (
                listing is None
                or st.st_mtime_ns != listing.mtime_ns
                or st.st_ino != listing.ino
                or st.st_dev != listing.dev
                or st.st_mtime_ns > settled
            ):
                listing = _list(folder, st)
            seen[folder] = listing
            if listing.marks:
                found += [Path(folder, name) for name in listing.marks]
            stack += listing.subdirs
        self.cache = seen
        return found, True


def _list(folder: str, st: os.stat_result) -> _Listing:
    subdirs: list[str] = []
    marks: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                folded = _fold(entry.name)
                if folded in MARKS:
                    marks.append(entry.name)
                if folded == GIT:
                    continue  # a git directory is not searched for more (its modules are its own)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.path)
                except OSError:
                    continue
    except OSError:
        pass
    return _Listing(
        st.st_dev, st.st_ino, st.st_mtime_ns, tuple(sorted(subdirs)), tuple(sorted(marks))
    )


_scans: dict[str, ProjectScan] = {}
_scans_lock = threading.Lock()


def project_scan(root: Path) -> ProjectScan:
    """The shared scan of ``root`` (one cache per project per process)."""
    key = str(root.resolve())
    with _scans_lock:
        if key not in _scans:
            _scans[key] = ProjectScan(Path(key))
        return _scans[key]


def pointer_target(pointer: Path) -> Path | None:
    """The git directory a ``.git`` file names (``gitdir: ...``), resolved; None if it names none."""
    try:
        data = read_user_file(pointer, 4096, truncate=True)
    except (OSError, ReadRefused):
        return None
    text = data.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    if not target.is_absolute():
        target = pointer.parent / target
    return target.resolve()


def readonly_binds(root: Path, limit: int = 256) -> list[Path]:
    """What the workspace sandbox binds read-only inside the writable project.

    Every ``.git`` (folders and pointer files, nested repositories included),
    each pointer's git directory when it is inside the project, every
    ``.gitmodules`` and every ``.planshell`` folder. Symlinks are left to the
    project watch (a bind would follow them). At most ``limit`` entries, the
    shallowest first; the watch covers the rest.
    """
    root = root.resolve()
    marks, _ = project_scan(root).marks()
    binds: list[Path] = []
    for path in sorted(marks, key=lambda p: (len(p.parts), str(p))):
        if path.is_symlink() or not path.exists():
            continue
        binds.append(path)
        if _fold(path.name) == GIT and path.is_file():
            target = pointer_target(path)
            if target is not None and root in target.parents and target.is_dir():
                binds.append(target)
    unique = list(dict.fromkeys(binds))
    return unique[:limit]


# --- commands that create repositories --------------------------------------------------

REPO_WARNING = (
    "This command creates a git repository (a new .git) inside the project. A .git that the "
    "agent made can carry a core.fsmonitor or hooks that run when you next use git in that "
    "folder; allow it only if you asked for this repository."
)
# Programs that run the rest of their words as a command (after their own options).
_WRAPPERS = frozenset({"env", "command", "exec", "nice", "nohup", "timeout", "stdbuf", "time",
                       "sudo", "doas", "xargs", "builtin", "ionice", "chrt", "setsid", "flock"})  # fmt: skip
_WRAPPER_ARG_OPTIONS = {  # options of a wrapper that take the next word
    "nice": {"-n", "--adjustment"}, "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "xargs": {"-I", "-L", "-n", "-P",
    "-s", "-d", "-E", "-a"}, "ionice": {"-c", "-n", "-p"}, "env": {"-u", "-C", "-S"},
    "stdbuf": {"-i", "-o", "-e"},
}  # fmt: skip
# git's own options before the subcommand that take the next word.
_GIT_ARG_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                              "--exec-path", "--super-prefix", "--config-env", "--attr-source"})  # fmt: skip
# (subcommand, its sub-subcommands that create or re-point a .git; empty: the subcommand itself)
_CREATING = {
    "init": (), "init-db": (), "clone": (),
    "submodule": ("add", "update", "absorbgitdirs"),
    "worktree": ("add", "move", "repair"),
}  # fmt: skip


def _command_words(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without leading assignments and wrapper programs (``env X=1 nice -n 5 git``)."""
    rest = list(words)
    while rest:
        first = rest[0]
        if (
            "=" in first
            and not first.startswith(("-", "/", "."))
            and first.split("=")[0].isidentifier()
        ):
            rest.pop(0)
            continue
        name = os.path.basename(first)
        if name not in _WRAPPERS:
            break
        rest.pop(0)
        takes = _WRAPPER_ARG_OPTIONS.get(name, set())
        while rest and (rest[0].startswith("-") or (name == "env" and "=" in rest[0])):
            option = rest.pop(0)
            if option == "--":
                break
            if option in takes and rest:
                rest.pop(0)
        if name == "timeout" and rest:
            rest.pop(0)  # the duration
        if name == "flock" and rest:
            rest.pop(0)  # the lock file
        if name in ("chrt",) and rest:
            rest.pop(0)  # the priority
    return tuple(rest)


def creates_repository(words: tuple[str, ...]) -> str | None:
    """``git init``/``clone``/``submodule add|update``/``worktree add`` as written, or None.

    The words are one parsed simple command; wrappers (``env``, ``nice``,
    ``timeout``, ``xargs``, ...) and git's global options (``-C dir``, ``-c k=v``)
    are looked through. A command hidden from the parser (``bash -c``, a
    script, an alias) is not recognised here: the project watch catches what
    it creates.
    """
    rest = _command_words(words)
    if not rest or os.path.basename(rest[0]) != "git":
        return None
    i = 1
    while i < len(rest) and rest[i].startswith("-"):
        option = rest[i]
        i += 2 if option in _GIT_ARG_OPTIONS else 1
    if i >= len(rest):
        return None
    sub = rest[i]
    if sub not in _CREATING:
        return None
    subs = _CREATING[sub]
    if not subs:
        return f"git {sub}"
    j = i + 1
    while j < len(rest) and rest[j].startswith("-"):
        j += 1  # submodule's --quiet, --cached and the like
    if j < len(rest) and rest[j] in subs:
        return f"git {sub} {rest[j]}"
    return None
