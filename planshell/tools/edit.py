"""Tools that change files: ``write`` (whole file) and ``edit`` (exact replacement).

Both write atomically, so a crash or a cancelled call never leaves half a file.
"""

from __future__ import annotations

import asyncio
import difflib
import re
from pathlib import Path

from pydantic import Field

from planshell.fsutil import atomic_write_text, is_binary
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from planshell.tools.files import require_file

_HINT_MAX_LINES = 20_000  # above this the closest-line hint is not worth its time
_MATCH_LINES_SHOWN = 10


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


# --------------------------------------------------------------------------- write


class WriteArgs(ToolArgs):
    path: str = Field(description="File path, relative to the project root.")
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
        path = ctx.resolve(args.path)
        rel = ctx.display(path)
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; give the path of a file inside it.")
        created = not path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, args.content)
        except OSError as exc:
            raise ToolError(f"could not write {rel}: {exc.strerror or exc}.") from None
        size = len(args.content.encode("utf-8"))
        verb = "Created" if created else "Overwrote"
        return ToolResult(
            f"{verb} {rel} ({size} bytes).",
            data={"path": rel, "bytes": size, "created": created},
        )


# --------------------------------------------------------------------------- edit


class EditArgs(ToolArgs):
    path: str = Field(description="File path, relative to the project root.")
    old_string: str = Field(description="Exact text to replace, unique unless replace_all.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(False, description="Replace every occurrence.")


def _read_text(ctx: ToolContext, raw: str) -> tuple[Path, str, str]:
    """The file, its display path and text, refusing anything edit can't handle."""
    path, rel = require_file(
        ctx, raw, missing_hint="use write to create it, or find to locate the right path."
    )
    data = path.read_bytes()
    if is_binary(data):
        raise ToolError(f"{rel} looks like a binary file; edit only changes text files.")
    try:
        return path, rel, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{rel} is not valid UTF-8 (byte {exc.start}); edit would corrupt it."
        ) from None


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
        path, rel, before = _read_text(ctx, args.path)
        after, count = apply_edit(before, rel, args)
        try:
            atomic_write_text(path, after)
        except OSError as exc:
            raise ToolError(f"could not write {rel}: {exc.strerror or exc}.") from None
        diff = unified_diff(rel, before, after)
        noun = "occurrence" if count == 1 else "occurrences"
        return ToolResult(
            f"Edited {rel}: replaced {count} {noun}.\n\n{diff}",
            data={"path": rel, "diff": diff, "replacements": count},
        )
