"""Small filesystem helpers shared by the ``write`` tool and the plan store.

Headless and dependency-free so it can be used (and tested) anywhere.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["BINARY_SNIFF_BYTES", "atomic_write_bytes", "atomic_write_text", "is_binary"]

BINARY_SNIFF_BYTES = 8192


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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with exactly ``data``, so readers see the old file or the new, never half.

    The data goes to a dot-prefixed temp file in the same directory (so the
    rename cannot cross filesystems), is fsynced, then ``os.replace``-d onto the
    target. On any failure the temp file is removed and the old file is untouched.
    """
    path = Path(path)
    directory = path.parent
    mode = _target_mode(path)
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


class ReadRefused(Exception):
    """A file that must not be read whole: not a regular file, or over the cap."""

    def __init__(self, reason: str, size: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason  # "not-regular" or "too-large"
        self.size = size


def read_capped(path: Path, cap: int, *, follow_symlinks: bool = True) -> bytes:
    """Read a regular file of at most ``cap`` bytes, safely.

    Opened non-blocking so a FIFO cannot hang the caller, checked with
    ``fstat`` on the open descriptor (no swap between check and read), and
    read with a bound even if the file grows meanwhile. ``OSError`` from the
    open passes through; the caller words it.
    """
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused("not-regular")
        if info.st_size > cap:
            raise ReadRefused("too-large", info.st_size)
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise ReadRefused("too-large", len(data))
    return data


def sorted_entries(directory: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """A directory's entries sorted by name; [] when it cannot be listed (walks skip it)."""
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []
