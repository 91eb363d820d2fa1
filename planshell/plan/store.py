"""Where plans live on disk: ``<project>/.planshell/plans/*.md``, flat.

Plan mode lets the model write exactly one kind of file, so this module is the
fence around it: every path goes through ``PlanStore.resolve``, which refuses
anything that is not a plain ``.md`` file directly inside the plans directory
(no ``..``, no symlinks, no dotfiles, no subdirectories). A cloned repository
could ship a hostile ``.planshell`` symlink, so symlinked directories are
refused too. Error messages are shown to the user and the model, so they say
what was wrong and what to do instead.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from planshell.fsutil import (
    BINARY_SNIFF_BYTES,
    ReadRefused,
    atomic_write_text,
    is_binary,
    read_project_file,
)
from planshell.locations import find_project_root
from planshell.plan.document import parse_plan

__all__ = [
    "MAX_PLAN_BYTES",
    "MAX_RUN_BYTES",
    "RUN_SUFFIX",
    "PlanInfo",
    "PlanStore",
    "PlanStoreError",
    "find_project_root",
    "slugify",
]

MAX_PLAN_BYTES = 256 * 1024
MAX_RUN_BYTES = 1024 * 1024
RUN_SUFFIX = ".run.json"  # a plan's run record: ``foo.md`` -> ``foo.run.json``
CITED_SUFFIX = ".cited.json"  # what a plan's cited files were when written (plan/staleness.py)
MAX_CITED_BYTES = 256 * 1024
_CAP_TEXT = "256 KiB"
_SLUG_MAX = 48
_STAMP_FORMAT = "%Y-%m-%d-%H%M"
_STAMPED = re.compile(r"\d{4}-\d{2}-\d{2}-\d{4}-(.+)")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_NEW_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}\.md")


class PlanStoreError(Exception):
    """A refused or failed plan operation; the message is shown to the user."""


@dataclass(frozen=True)
class PlanInfo:
    """One entry of the plan list. ``problem`` explains why it cannot be opened."""

    path: Path
    name: str
    title: str
    modified: float
    done: int
    total: int
    problem: str | None


def slugify(text: str) -> str:
    """Lowercase ASCII ``[a-z0-9-]`` slug, at most 48 chars; "" if nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    if len(slug) <= _SLUG_MAX:
        return slug
    # Cut at a word boundary ("add-rate-limiting", not "add-rate-limi").
    head = slug[: _SLUG_MAX + 1]
    cut = head.rfind("-")
    return (head[:cut] if cut > 0 else slug[:_SLUG_MAX]).rstrip("-")


def _slug_part(stem: str) -> str | None:
    """The part after the ``YYYY-MM-DD-HHMM-`` prefix, if the name has one."""
    match = _STAMPED.fullmatch(stem)
    return match.group(1) if match else None


class PlanStore:
    """Read, write and list the project's plan files, refusing anything outside them."""

    MAX_PLAN_BYTES = MAX_PLAN_BYTES

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.plans_dir = self.root / ".planshell" / "plans"

    # ------------------------------------------------------------ directory

    def _check_dirs(self) -> None:
        """Refuse a ``.planshell`` or ``plans`` that is a symlink or not a directory."""
        for directory in (self.plans_dir.parent, self.plans_dir):
            try:
                info = directory.lstat()
            except FileNotFoundError:
                return
            except OSError as error:
                raise PlanStoreError(f"cannot inspect {directory}: {error.strerror}") from error
            if stat.S_ISLNK(info.st_mode):
                raise PlanStoreError(
                    f"{directory} is a symlink; plans must live in a real directory "
                    "inside the project. Remove the symlink and try again."
                )
            if not stat.S_ISDIR(info.st_mode):
                raise PlanStoreError(f"{directory} exists but is not a directory")

    def ensure_dir(self) -> None:
        """Create the plans directory with a ``.gitignore`` so plans stay out of commits."""
        self._check_dirs()
        try:
            self.plans_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PlanStoreError(
                f"cannot create {self.plans_dir}: {error.strerror or error}"
            ) from error
        self._check_dirs()
        gitignore = self.plans_dir / ".gitignore"
        if not os.path.lexists(gitignore):
            atomic_write_text(gitignore, "*\n")

    # ---------------------------------------------------------------- naming

    def new_path(self, name: str | None = None, now: datetime | None = None) -> Path:
        """A fresh ``YYYY-MM-DD-HHMM-<slug>.md`` path; ``-2``, ``-3``... avoid collisions.

        ``name`` (a title or a user-chosen name) becomes the slug; default "plan".
        Nothing is created.
        """
        stamp = (now or datetime.now()).strftime(_STAMP_FORMAT)
        base = name.strip() if name else ""
        if base.lower().endswith(".md"):
            base = base[:-3]
        slug = slugify(base) or "plan"
        candidate = self.plans_dir / f"{stamp}-{slug}.md"
        counter = 2
        while os.path.lexists(candidate):
            candidate = self.plans_dir / f"{stamp}-{slug}-{counter}.md"
            counter += 1
        return candidate

    def resolve(self, path: str | Path) -> Path:
        """Map a user/model-supplied path to a plan file path, or raise PlanStoreError.

        Accepts ``foo``, ``foo.md``, a path relative to the plans dir or to the
        project root, or an absolute path. The file need not exist yet.
        """
        raw = os.fspath(path)
        if not raw.strip():
            raise PlanStoreError("no plan path given")
        if "\x00" in raw:
            raise PlanStoreError("plan path contains a NUL byte")
        candidate = self._candidate(Path(raw))
        self._check_name(candidate.name, raw)
        self._check_dirs()
        self._check_not_link_or_dir(candidate)
        return candidate

    def check_new_name(self, path: Path) -> None:
        """A file about to be created from a model-supplied path must be a plain slug.

        Existing plans may have any printable name (a person may have made
        them); new ones named by the model are ``[A-Za-z0-9._-]`` only, so a
        path like ``{{ plan_name }}.md`` or one full of lookalikes never lands.
        """
        if not _NEW_NAME.fullmatch(path.name):
            raise PlanStoreError(
                f"{path.name!r} is not a plan file name: new plans are named with letters, digits, "
                "'.', '_' and '-' only (omit plan_path to name the plan after its title)"
            )

    def _candidate(self, given: Path) -> Path:
        """Anchor ``given`` and check it lands directly in the plans directory."""
        if given.is_absolute():
            anchored = given
        elif given.parts[:1] == (".planshell",):
            anchored = self.root / given
        else:
            anchored = self.plans_dir / given
        if len(given.parts) == 1 and not given.suffix and given.name not in ("", ".", ".."):
            anchored = anchored.with_name(anchored.name + ".md")
        normal = Path(os.path.normpath(anchored))
        if normal.parent == self.plans_dir:
            return normal
        # An absolute path may spell the project differently (a symlinked
        # checkout, /tmp vs /private/tmp): accept it if it is the same directory.
        if given.is_absolute() and os.path.realpath(normal.parent) == str(self.plans_dir):
            return self.plans_dir / normal.name
        if self.plans_dir in normal.parents:
            raise PlanStoreError(
                f"{given} is in a subdirectory; plans are flat files directly in "
                f"{self._shown_dir()}"
            )
        raise PlanStoreError(
            f"{given} is outside the plans directory; plans can only be written to "
            f"{self._shown_dir()}/<name>.md"
        )

    def _check_name(self, name: str, given: str) -> None:
        if not name.isprintable() or name != name.strip():
            # Control, escape, bidi, zero-width and line-break characters: a plan's
            # name is shown on the terminal and must be one plain line.
            raise PlanStoreError(
                "plan names must be one line of printable characters; use letters, digits and '-'"
            )
        if name.startswith("."):
            raise PlanStoreError(f"{given}: hidden (dot) files are not plans; use a visible name")
        if not name.endswith(".md"):
            raise PlanStoreError(f"{given}: plans must be markdown files ending in .md")

    def _check_not_link_or_dir(self, candidate: Path) -> None:
        try:
            info = candidate.lstat()
        except FileNotFoundError:
            return
        except OSError as error:
            raise PlanStoreError(f"cannot inspect {candidate.name}: {error.strerror}") from error
        if stat.S_ISLNK(info.st_mode):
            raise PlanStoreError(f"{candidate.name} is a symlink; plans must be regular files")
        if stat.S_ISDIR(info.st_mode):
            raise PlanStoreError(f"{candidate.name} is a directory, not a plan file")

    def _write_contained(self, target: Path, text: str) -> Path:
        """Atomically write ``target`` in the plans folder: never through a link or over a
        folder, and checked again afterwards in case a folder was swapped for a link."""
        self.ensure_dir()
        self._check_not_link_or_dir(target)
        try:
            atomic_write_text(target, text)
        except OSError as error:
            raise PlanStoreError(
                f"cannot write {target.name}: {error.strerror or error}"
            ) from error
        if Path(os.path.realpath(target)).parent != self.plans_dir:
            raise PlanStoreError(
                f"{target.name} did not end up inside {self._shown_dir()} "
                "(a directory was swapped for a link?); refusing to use it"
            )
        return target

    def _shown_dir(self) -> str:
        return str(self.plans_dir.relative_to(self.root))

    # ------------------------------------------------------------------- I/O

    def write(self, path: str | Path, text: str) -> Path:
        """Atomically write a plan after checking where it goes and how big it is."""
        target = self.resolve(path)
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as error:
            raise PlanStoreError("plan text is not valid Unicode (lone surrogate)") from error
        if size > MAX_PLAN_BYTES:
            raise PlanStoreError(
                f"plan is {size} bytes, over the {_CAP_TEXT} ({MAX_PLAN_BYTES} bytes) cap; "
                "shorten it or split it into several plans"
            )
        return self._write_contained(target, text)

    def read(self, path: str | Path) -> str:
        """Return a plan's text; refuse links, oversized, binary or non-UTF-8 files."""
        target = self.resolve(path)
        data = self._read_bytes(target)
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise PlanStoreError(f"{target.name} looks binary, not a markdown plan")
        if is_binary(data):
            raise PlanStoreError(f"{target.name} is not valid UTF-8 text; re-save it as UTF-8")
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise PlanStoreError(
                f"{target.name} is not valid UTF-8 (byte {error.start}); re-save it as UTF-8"
            ) from error

    def _read_bytes(self, target: Path) -> bytes:
        """Read at most the cap through the safe reader (``resolve`` refused links already):
        a symlink swapped in meanwhile, for the file or a folder above it, cannot lead out
        of the project, and a FIFO or device is refused on the open descriptor."""
        try:
            return read_project_file(self.root, target, MAX_PLAN_BYTES)
        except FileNotFoundError as error:
            raise PlanStoreError(f"no plan named {target.name}") from error
        except OSError as error:
            raise PlanStoreError(f"cannot open {target.name}: {error.strerror}") from error
        except ReadRefused as refused:
            if refused.reason == "not-regular":
                raise PlanStoreError(f"{target.name} is not a regular file") from None
            if refused.reason == "too-large":
                raise PlanStoreError(self._too_large(target.name, refused.size)) from None
            raise PlanStoreError(refused.message) from None

    @staticmethod
    def _too_large(name: str, size: int) -> str:
        return f"{name} is {size} bytes, over the {_CAP_TEXT} ({MAX_PLAN_BYTES} bytes) cap"

    def delete(self, path: str | Path) -> None:
        """Remove one plan file (and its run record, if it is a plain file)."""
        target = self.resolve(path)
        try:
            target.unlink()
        except FileNotFoundError as error:
            raise PlanStoreError(f"no plan named {target.name}") from error
        except OSError as error:
            raise PlanStoreError(f"cannot delete {target.name}: {error.strerror}") from error
        for sidecar in (self.run_path(target), self.cited_path(target)):
            try:
                if stat.S_ISREG(sidecar.lstat().st_mode):
                    sidecar.unlink()
            except OSError:
                pass  # no record, or one we may not touch: the plan is gone either way

    # ------------------------------------------------------------ run record

    def run_path(self, plan: str | Path) -> Path:
        """Where the run record of ``plan`` lives: beside it, ``<stem>.run.json``.

        The plan path is checked like any plan path; the record's name does not
        end in ``.md``, so nothing that writes plans (``write_plan``) can reach it.
        """
        target = self.resolve(plan)
        return target.with_name(target.stem + RUN_SUFFIX)

    def write_run(self, plan: str | Path, text: str) -> Path:
        """Atomically write ``plan``'s run record, with the same fences as a plan."""
        target = self.run_path(plan)
        data = text.encode("utf-8")
        if len(data) > MAX_RUN_BYTES:
            raise PlanStoreError(
                f"{target.name} would be {len(data)} bytes, over the {MAX_RUN_BYTES} byte cap"
            )
        return self._write_contained(target, text)

    def read_run(self, plan: str | Path) -> str | None:
        """``plan``'s run record as text; None if there is none. Refuses links, huge files."""
        target = self.run_path(plan)
        self._check_not_link_or_dir(target)
        try:
            data = read_project_file(self.root, target, MAX_RUN_BYTES)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise PlanStoreError(f"cannot open {target.name}: {error.strerror}") from error
        except ReadRefused as refused:
            raise PlanStoreError(f"{target.name}: {refused.message}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise PlanStoreError(f"{target.name} is not valid UTF-8") from error

    # ---------------------------------------------------- cited-files record

    def cited_path(self, plan: str | Path) -> Path:
        """Where ``plan``'s cited-files record lives: beside it, ``<stem>.cited.json``."""
        target = self.resolve(plan)
        return target.with_name(target.stem + CITED_SUFFIX)

    def write_cited(self, plan: str | Path, text: str) -> Path:
        """Atomically write ``plan``'s cited-files record, with the same fences as a plan."""
        target = self.cited_path(plan)
        if len(text.encode("utf-8")) > MAX_CITED_BYTES:
            raise PlanStoreError(f"{target.name} would be over the {MAX_CITED_BYTES} byte cap")
        return self._write_contained(target, text)

    def read_cited(self, plan: str | Path) -> str | None:
        """``plan``'s cited-files record as text; None if there is none or it is unusable."""
        target = self.cited_path(plan)
        try:
            self._check_not_link_or_dir(target)
            data = read_project_file(self.root, target, MAX_CITED_BYTES)
            return data.decode("utf-8")
        except (PlanStoreError, OSError, ReadRefused, UnicodeDecodeError):
            return None

    def exists(self, path: str | Path) -> bool:
        """Whether ``path`` names an existing, acceptable plan file."""
        try:
            return self.resolve(path).is_file()
        except PlanStoreError:
            return False

    # --------------------------------------------------------------- listing

    def _entries(self) -> list[tuple[Path, os.stat_result]]:
        """Visible ``*.md`` entries (lstat), newest first; [] if the dir is unusable."""
        try:
            self._check_dirs()
            with os.scandir(self.plans_dir) as scan:
                entries = [
                    (Path(entry.path), entry.stat(follow_symlinks=False))
                    for entry in scan
                    if entry.name.endswith(".md") and not entry.name.startswith(".")
                ]
        except (PlanStoreError, OSError):
            return []
        entries.sort(key=lambda pair: (pair[1].st_mtime, pair[0].name), reverse=True)
        return entries

    def list(self) -> list[PlanInfo]:
        """Every plan, newest first. Broken files are listed with ``problem`` set."""
        return [self._info(path, info) for path, info in self._entries()]

    def _info(self, path: Path, info: os.stat_result) -> PlanInfo:
        problem: str | None = None
        title, done, total = path.stem, 0, 0
        if stat.S_ISLNK(info.st_mode):
            problem = "is a symlink; plans must be regular files"
        elif stat.S_ISDIR(info.st_mode):
            problem = "is a directory, not a plan file"
        elif info.st_size > MAX_PLAN_BYTES:
            problem = f"too large ({info.st_size} bytes; the cap is {_CAP_TEXT})"
        else:
            try:
                doc = parse_plan(self.read(path))
            except PlanStoreError as error:
                problem = str(error)
            else:
                title, done, total = doc.title, doc.done_count, doc.total_steps
        return PlanInfo(
            path=path,
            name=path.name,
            title=title,
            modified=info.st_mtime,
            done=done,
            total=total,
            problem=problem,
        )

    def find_by_name(self, name: str) -> Path | None:
        """The newest plan whose stem, or slug after the timestamp, matches ``name``."""
        wanted = name.strip()
        if wanted.lower().endswith(".md"):
            wanted = wanted[:-3]
        if not wanted:
            return None
        wanted_slug = slugify(wanted)
        for path, _ in self._entries():
            slug = _slug_part(path.stem)
            if path.stem == wanted or (slug is not None and slug in (wanted, wanted_slug)):
                return path
        return None

    def newest(self) -> Path | None:
        """The most recently modified regular plan file, if any."""
        for path, info in self._entries():
            if stat.S_ISREG(info.st_mode):
                return path
        return None
