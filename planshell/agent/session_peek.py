"""The mode a resumed session will restore, read cheaply before the TUI's first frame.

``--continue`` loads settings and the session after the first frame (pydantic and
the engine take a second or more to import); until then the status bar would say
``OFF starting…`` for a session that resumes in PLAN. This peek uses only the
standard library and platformdirs (``planshell.locations``), finds the same file as
``planshell.agent.session.find_session`` and reads its last ``mode`` entry. It is
a hint for the first frames only: the loaded session and the controller decide the
real mode (a hostile session file can at most mislabel the chip until they do).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planshell.locations import data_dir, find_project_root, project_key

MODE_MARK = b'{"type": "mode"'  # how SessionLog.append writes a mode entry (json.dumps)
MODES = frozenset({"off", "plan", "execute"})
TAIL_BYTES = 256 * 1024  # enough for the last screen of any conversation


def _session_file(root: Path, session_id: str | None) -> Path | None:
    folder = data_dir() / "projects" / project_key(root) / "sessions"
    try:
        files = [p for p in folder.glob("*.jsonl") if p.is_file()]
        files.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    except OSError:
        return None
    if session_id is not None:
        files = [p for p in files if p.stem.startswith(session_id)]
    return files[0] if files else None


def peek_resumed_mode(start: Path, session_id: str | None) -> str | None:
    """``off``, ``plan`` or ``execute`` from the session ``--continue`` (``session_id`` None)
    or ``--resume ID`` would load; None when there is none or it cannot be read."""
    try:
        path = _session_file(find_project_root(start), session_id)
        if path is None:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    for line in reversed(data.split(b"\n")):
        if not line.startswith(MODE_MARK):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a truncated last line: the loader skips it too
        mode = entry.get("mode", "off") if isinstance(entry, dict) else None
        return mode if mode in MODES else None
    return None


def peek_resumed_tail(
    start: Path, session_id: str | None, limit: int = TAIL_BYTES
) -> tuple[str, list[dict[str, Any]]] | None:
    """(session id, the raw messages at its end) of the session that would be resumed.

    Reads only the last ``limit`` bytes, so the TUI can draw the last screen of a
    long conversation before the full load (seconds for 10,000 entries) is done.
    The messages are always a suffix of what the full load gives: a ``clear``,
    ``rewind`` or ``compaction`` entry in the window drops what came before it
    (those entries rewrite history this window cannot see whole).
    """
    try:
        path = _session_file(find_project_root(start), session_id)
        if path is None:
            return None
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return None
    lines = data.split(b"\n")
    if size > limit:
        lines = lines[1:]  # starts inside an entry
    messages: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a truncated last line: the loader skips it too
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "message" and isinstance(entry.get("message"), dict):
            messages.append(entry["message"])
        elif kind in ("clear", "rewind", "compaction"):
            messages.clear()
    return path.stem, messages
