"""Tools that change files: ``write`` (whole file) and ``edit`` (exact replacement).

Both write atomically, so a crash or a cancelled call never leaves half a file.

What a call will write is computed in one place, ``plan_change``: it reads the
file's raw bytes (``read_current``) and returns a ``FileChange`` holding the
exact bytes before and after. The tools write ``FileChange.after``; the
approval prompt (planshell.permissions) shows a diff of the same two byte
strings, and a person's yes is bound to them (``approve_change``): if the
file is not what the prompt showed when the tool runs, nothing is written.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, PrivateAttr

from planshell.fsutil import ReadRefused, atomic_write_bytes, is_binary, read_user_file
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from planshell.tools.walk import require_file

_HINT_MAX_LINES = 20_000  # above this the closest-line hint is not worth its time
_MATCH_LINES_SHOWN = 10
MAX_FILE_BYTES = 32 * 1024 * 1024  # edit/write refuse to read (and replace) larger files


def unified_diff(rel: str, before: str, after: str) -> str:
    """A ``git diff``-style patch with ``a/``/``b/`` project-relative headers."""
    return "".join(
        difflib.unified_diff(_diff_lines(before), _diff_lines(after), f"a/{rel}", f"b/{rel}")
    )


def _diff_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only, the last one marked if it has no newline."""
    lines = [part for part in re.split(r"(?<=\n)", text) if part]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


# --------------------------------------------------------------------------- what a call writes


def digest(data: bytes | None) -> str:
    """A file's identity for approvals: sha256 of its bytes, or "missing"."""
    return "missing" if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class FileChange:
    """What an edit or write does, as bytes: the file it read and exactly what it writes."""

    rel: str
    before: bytes | None  # None: no file there yet (write creates it)
    after: bytes
    count: int = 1  # edit: replacements made

    @property
    def before_digest(self) -> str:
        return digest(self.before)

    @property
    def after_digest(self) -> str:
        return digest(self.after)


@dataclass(frozen=True)
class _Approved:
    before: str
    after: str


class _FileArgs(ToolArgs):
    """Arguments of a tool that writes a file; a person's approval can be bound to them.

    The binding is a private attribute: the model's JSON cannot set it.
    """

    path: str = Field(description="File path, relative to the project root.")
    _approved: _Approved | None = PrivateAttr(None)


def approve_change(args: _FileArgs, change: FileChange) -> None:
    """A person approved exactly ``change``: the tool now writes those bytes or nothing."""
    args._approved = _Approved(change.before_digest, change.after_digest)


def _check_approved(args: _FileArgs, change: FileChange) -> None:
    """Refuse to write anything but what was approved (the file changed since the prompt)."""
    approved = args._approved
    if approved is None:
        return
    if change.before_digest != approved.before:
        raise ToolError(
            f"{change.rel} changed after the user approved this change, so nothing was "
            "written; read the file again and redo the change."
        )
    if change.after_digest != approved.after:  # cannot happen for the same bytes and args
        raise ToolError(
            f"the change to {change.rel} is not the one the user approved; nothing was written."
        )


def read_current(path: Path, rel: str) -> bytes | None:
    """The raw bytes edit and write work on, and the approval prompt shows (None: no file).

    One reader for the tools and the prompt, so both see the same bytes (no
    newline translation, no decoding). Regular files only, opened so a FIFO
    cannot hang the caller, and at most ``MAX_FILE_BYTES``.
    """
    try:
        # ``path`` is already contained by ToolContext.resolve (symlinks resolved);
        # the reader adds: regular, non-blocking, capped, never /proc, /sys, /dev.
        return read_user_file(path, MAX_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except ReadRefused as exc:
        if exc.reason == "too-large":
            raise ToolError(
                f"{rel} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB ({exc.size:,} "
                "bytes); edit and write do not change files that large."
            ) from None
        raise ToolError(
            f"{rel} is not a regular file (a device, socket or pipe); it cannot be changed."
        ) from None
    except OSError as exc:
        raise ToolError(f"could not read {rel}: {exc.strerror or exc}.") from None


def _encode(text: str, rel: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{what} holds a character that cannot be written as UTF-8 (position "
            f"{exc.start}: {text[exc.start]!r}); nothing was written to {rel}."
        ) from None


def plan_edit(data: bytes, rel: str, args: EditArgs) -> FileChange:
    """The exact bytes an edit of ``data`` writes, or a ToolError saying why it cannot."""
    if is_binary(data):
        raise ToolError(f"{rel} looks like a binary file; edit only changes text files.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{rel} is not valid UTF-8 (byte {exc.start}); edit would corrupt it."
        ) from None
    after, count = apply_edit(text, rel, args)
    return FileChange(rel, data, _encode(after, rel, "new_string"), count)


def plan_write(data: bytes | None, rel: str, args: WriteArgs) -> FileChange:
    """The exact bytes a write puts over ``data`` (None: a new file)."""
    return FileChange(rel, data, _encode(args.content, rel, "content"))


def plan_change(ctx: ToolContext, args: EditArgs | WriteArgs) -> tuple[Path, FileChange]:
    """Read the file a call targets and compute what it would write (the tool and the prompt)."""
    if isinstance(args, EditArgs):
        path, rel = require_file(
            ctx, args.path, missing_hint="use write to create it, or find to locate the right path."
        )
        data = read_current(path, rel)
        if data is None:
            raise ToolError(f"{rel} does not exist; use write to create it.")
        return path, plan_edit(data, rel, args)
    path = ctx.resolve(args.path)
    rel = ctx.display(path)
    if path.is_dir():
        raise ToolError(f"{rel} is a directory; give the path of a file inside it.")
    return path, plan_write(read_current(path, rel), rel, args)


def _write_change(ctx: ToolContext, path: Path, change: FileChange) -> None:
    if ctx.before_write is not None and change.before is not None:
        ctx.before_write(path)  # the old bytes are kept before they are replaced
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, change.after)
    except OSError as exc:
        raise ToolError(f"could not write {change.rel}: {exc.strerror or exc}.") from None


# --------------------------------------------------------------------------- write


class WriteArgs(_FileArgs):
    content: str = Field(description="The whole new content.")


class WriteTool(Tool[WriteArgs]):
    name = "write"
    description = (
        "Create a file or replace all of its content (parent directories are created). "
        "To change part of a file, use edit."
    )
    Args = WriteArgs
    effects = frozenset({Effect.WRITE})

    def headline(self, args: WriteArgs) -> str:
        return f"write {args.path}"

    async def run(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._write, args, ctx)

    def _write(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        path, change = plan_change(ctx, args)
        _check_approved(args, change)
        _write_change(ctx, path, change)
        size = len(change.after)
        created = change.before is None
        verb = "Created" if created else "Overwrote"
        return ToolResult(
            f"{verb} {change.rel} ({size} bytes).",
            data={"path": change.rel, "bytes": size, "created": created},
        )


# --------------------------------------------------------------------------- edit


class EditArgs(_FileArgs):
    old_string: str = Field(description="Exact text to replace, unique unless replace_all.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence.")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrence_lines(text: str, needle: str) -> list[int]:
    """1-based line numbers where ``needle`` starts (non-overlapping)."""
    lines, start = [], 0
    while (index := text.find(needle, start)) != -1:
        lines.append(_line_of(text, index))
        start = index + len(needle)
    return lines


def _closest_line_hint(text: str, old: str) -> str:
    """Point at the line most like the first line of ``old``, if one is close."""
    needle = next((line.strip() for line in old.splitlines() if line.strip()), "")
    lines = text.splitlines()
    if not needle or len(lines) > _HINT_MAX_LINES:
        return ""
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(needle, stripped, n=1, cutoff=0.6)
    if not close:
        return ""
    lineno = stripped.index(close[0]) + 1
    return (
        f" The closest line is {lineno}: {lines[lineno - 1].strip()!r}; read the file "
        "again and copy the text exactly."
    )


def _match_crlf(text: str, old: str, new: str) -> tuple[str, str]:
    """Let an edit written with ``\\n`` apply to a file that uses ``\\r\\n``."""
    if "\r\n" in text and "\n" in old and "\r\n" not in old and old not in text:
        crlf_old = old.replace("\n", "\r\n")
        if crlf_old in text:
            return crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new


def apply_edit(text: str, rel: str, args: EditArgs) -> tuple[str, int]:
    """The new text and the number of replacements, or a refusal the model can act on."""
    if not args.old_string:
        raise ToolError("old_string is empty; to create or overwrite a whole file use write.")
    if args.old_string == args.new_string:
        raise ToolError("old_string and new_string are identical, so there is nothing to change.")
    old, new = _match_crlf(text, args.old_string, args.new_string)
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string was not found in {rel}.{_closest_line_hint(text, old)}")
    if count > 1 and not args.replace_all:
        where = ", ".join(map(str, _occurrence_lines(text, old)[:_MATCH_LINES_SHOWN]))
        raise ToolError(
            f"old_string occurs {count} times in {rel} (starting on lines {where}); include "
            "more surrounding text to pick one, or set replace_all=true to change them all."
        )
    return text.replace(old, new, -1 if args.replace_all else 1), count if args.replace_all else 1


class EditTool(Tool[EditArgs]):
    name = "edit"
    description = (
        "Replace exact text in a file (whitespace included, without read's line-number "
        "prefix); returns a diff. Add surrounding lines to make old_string unique."
    )
    Args = EditArgs
    effects = frozenset({Effect.WRITE})

    def headline(self, args: EditArgs) -> str:
        return f"edit {args.path}"

    async def run(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._edit, args, ctx)

    def _edit(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        path, change = plan_change(ctx, args)
        _check_approved(args, change)
        _write_change(ctx, path, change)
        rel, count = change.rel, change.count
        diff = unified_diff(
            rel, (change.before or b"").decode("utf-8"), change.after.decode("utf-8")
        )
        noun = "occurrence" if count == 1 else "occurrences"
        return ToolResult(
            f"Edited {rel}: replaced {count} {noun}.\n\n{diff}",
            data={"path": rel, "diff": diff, "replacements": count},
        )
