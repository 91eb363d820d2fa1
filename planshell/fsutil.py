"""Small filesystem helpers: atomic writes, and the one safe reader for files planshell opens itself.

Headless and dependency-free so it can be used (and tested) anywhere.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = [
    "BINARY_SNIFF_BYTES",
    "ReadRefused",
    "atomic_write_bytes",
    "atomic_write_text",
    "is_binary",
    "read_project_file",
    "read_user_file",
]

BINARY_SNIFF_BYTES = 8192
# The largest config file read (user or project). Here, not in planshell.config: the
# TUI's first frame peeks at the theme without importing pydantic (ui/themes.py).
CONFIG_MAX_BYTES = 1024 * 1024


def _current_umask() -> int:
    """Read the process umask once (setting it is the only portable way to read it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read at import, in the main thread: os.umask() is process-wide, so probing it
# later from a worker thread could briefly change the mode of other threads' files.
_UMASK = _current_umask()


def _target_mode(path: Path) -> int:
    """Mode for the new file: keep the old file's permissions, else honour the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_UMASK


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself. Best effort: not every OS/filesystem allows it."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` so readers see the old file or the new, never half.

    Newlines are written exactly as given (no platform translation); see
    ``atomic_write_bytes``.
    """
    codecs.lookup(encoding)  # fail on a bad encoding before creating anything
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with exactly ``data``, so readers see the old file or the new, never half.

    The data goes to a dot-prefixed temp file in the same directory (so the
    rename cannot cross filesystems), is fsynced, then ``os.replace``-d onto the
    target. On any failure the temp file is removed and the old file is untouched.
    ``mode``: the new file's permissions (default: the old file's, else the umask's);
    a restore passes the mode it recorded, since the file it replaces may be a stranger's.
    """
    path = Path(path)
    directory = path.parent
    mode = _target_mode(path) if mode is None else mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(directory)


def is_binary(data: bytes) -> bool:
    """Guess whether ``data`` is binary from its first 8 KiB.

    Binary means a NUL byte, or bytes that are not UTF-8. A multibyte character
    cut off at the end of the sample is fine: callers often pass just a prefix.
    """
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return False


# Kernel file systems: their "files" are process state (``/proc/self/environ``),
# devices (``/dev/zero``) or knobs. Nothing planshell reads by itself lives there.
PSEUDO_ROOTS: tuple[str, ...] = ("/proc", "/sys", "/dev")

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class ReadRefused(Exception):
    """A file planshell will not read; ``str()`` is one sentence fit for a notice.

    ``reason``: ``not-regular`` (FIFO, device, socket, directory), ``too-large``,
    ``outside`` (resolves out of the project) or ``pseudo`` (under /proc, /sys, /dev).
    """

    def __init__(self, reason: str, message: str, size: int = 0) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.size = size


def _in_pseudo_fs(real: str) -> bool:
    return any(real == top or real.startswith(top + "/") for top in PSEUDO_ROOTS)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _printable(text: str) -> str:
    """A repository-chosen name as one harmless line (no escapes reach the terminal)."""
    return text if text.isprintable() else repr(text)


def _how_it_leads(lexical: str, real: str) -> str:
    """ "is a symlink to X" (the link's own text), or how a symlinked folder leads to X."""
    try:
        return f"is a symlink to {_printable(os.readlink(lexical))}"
    except OSError:
        return f"leads through a symlinked folder to {_printable(real)}"


def _read_fd(fd: int, shown: str, cap: int, truncate: bool) -> bytes:
    """Check the open ``fd`` is a regular file and read at most ``cap + 1`` bytes of it."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise ReadRefused("not-regular", f"{shown} is {kind}, not a regular file; not read")
    if info.st_size > cap and not truncate:
        raise ReadRefused(
            "too-large",
            f"{shown} is {info.st_size} bytes, over the {cap}-byte cap; not read",
            info.st_size,
        )
    chunks: list[bytes] = []
    left = cap + 1  # one byte more than allowed says "there is more"
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > cap and not truncate:
        raise ReadRefused("too-large", f"{shown} is over the {cap}-byte cap; not read", len(data))
    return data


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW


def read_project_file(root: Path, path: Path, cap: int, *, truncate: bool = False) -> bytes:
    """Read ``path``, a file a repository controls, only if it is safe to.

    For every file planshell opens *by itself* inside a project (AGENTS.md,
    plans, ``.planshell/config.toml``, ignore files): the repository chose
    what is there, so the file must be a regular file (no FIFO to hang on, no
    ``/dev/zero`` to fill memory) whose real path is inside ``root`` (a
    symlink to ``/proc/self/environ`` would put the environment into the
    prompt). The real path is then opened one component at a time from
    ``root`` with ``O_NOFOLLOW``, so a symlink swapped in after the check
    cannot lead out either; the checks are on the open descriptor.

    Reads at most ``cap`` bytes: more is ``ReadRefused`` ("too-large"), or
    with ``truncate`` the first ``cap + 1`` bytes (one more than ``cap`` says
    it was cut). ``FileNotFoundError`` and other ``OSError`` pass through.
    """
    root_real = os.path.realpath(root)
    given = Path(path)
    if given.is_absolute():
        rel = None
        for base in (Path(root), Path(root_real)):
            if given.is_relative_to(base):
                rel = given.relative_to(base)
                break
    else:
        rel = given
    shown = str(rel) if rel is not None else str(given)
    lexical = os.path.normpath(os.path.join(root_real, rel)) if rel is not None else str(given)
    if rel is None or not _within(lexical, root_real):
        raise ReadRefused("outside", f"{shown} is outside the project; not read")
    real = os.path.realpath(lexical)
    if real != lexical:
        how = _how_it_leads(lexical, real)
        if _in_pseudo_fs(real):
            raise ReadRefused("pseudo", f"{shown} {how}; not read")
        if not _within(real, root_real):
            raise ReadRefused("outside", f"{shown} {how}, outside the project; not read")
    if real == root_real:
        raise ReadRefused("not-regular", f"{shown} is a directory, not a regular file; not read")
    parts = Path(real).relative_to(root_real).parts
    fd = os.open(root_real, _DIR_FLAGS & ~_NOFOLLOW)
    try:
        for part in parts[:-1]:
            next_fd = _open_at(part, _DIR_FLAGS, fd, shown)
            os.close(fd)
            fd = next_fd
        file_fd = _open_at(parts[-1], _READ_FLAGS | _NOFOLLOW, fd, shown)
    finally:
        os.close(fd)
    try:
        return _read_fd(file_fd, shown, cap, truncate)
    finally:
        os.close(file_fd)


def _open_at(name: str, flags: int, dir_fd: int, shown: str) -> int:
    """Open one component below ``dir_fd``; a symlink there now means it was swapped in."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        _refuse_socket(exc, shown)
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        try:
            swapped = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            swapped = False
        if swapped:
            raise ReadRefused("outside", f"{shown} was swapped for a symlink; not read") from None
        raise


def _refuse_socket(exc: OSError, shown: str) -> None:
    """Opening a Unix socket fails with ENXIO: that is a refusal, not an I/O error."""
    if exc.errno == errno.ENXIO:
        raise ReadRefused(
            "not-regular", f"{shown} is a socket, not a regular file; not read"
        ) from None


def read_user_file(path: Path, cap: int, *, truncate: bool = False) -> bytes:
    """Read ``path``, a file of the user's own (outside any project), safely.

    For the user's config, the trust records, the global git excludes file, a
    worktree's git directory: symlinks are followed (dotfiles are often
    links), but the file must be regular and not under /proc, /sys or /dev,
    is opened non-blocking (a FIFO cannot hang start-up) and read with the
    same cap as :func:`read_project_file`.
    """
    real = os.path.realpath(path)
    if _in_pseudo_fs(real):
        how = (
            _how_it_leads(str(path), real) if real != os.path.normpath(path) else "is a kernel file"
        )
        raise ReadRefused("pseudo", f"{path} {how}; not read")
    try:
        fd = os.open(real, _READ_FLAGS | _NOFOLLOW)
    except OSError as exc:
        _refuse_socket(exc, str(path))
        raise
    try:
        return _read_fd(fd, str(path), cap, truncate)
    finally:
        os.close(fd)


def sorted_entries(directory: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """A directory's entries sorted by name; [] when it cannot be listed (walks skip it)."""
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []
