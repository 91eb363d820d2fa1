"""Append-only JSONL session logs, one file per conversation, per project.

Each entry is flushed as it is written so a crash loses at most the entry in
flight; loading tolerates a truncated last line and reports corrupt ones.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from planshell.llm.types import Message
from planshell.locations import data_dir, project_key

__all__ = ["data_dir", "project_key"]  # re-exported: callers find the data dir beside the sessions


def project_dir(root: Path) -> Path:
    return data_dir() / "projects" / project_key(root)


def sessions_dir(root: Path) -> Path:
    return project_dir(root) / "sessions"


def list_sessions(root: Path) -> list[Path]:
    """Session files of this project, newest first."""
    folder = sessions_dir(root)
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.jsonl") if p.is_file()]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name), reverse=True)


class SessionNotFound(LookupError):
    pass


def find_session(root: Path, session_id: str | None) -> Path:
    """The newest session (``None``) or the one whose id starts with ``session_id``."""
    sessions = list_sessions(root)
    if session_id is None:
        if not sessions:
            raise SessionNotFound("no earlier session in this project to continue")
        return sessions[0]
    matches = [p for p in sessions if p.stem.startswith(session_id)]
    if not matches:
        raise SessionNotFound(f"no session {session_id!r} in this project (see /resume for a list)")
    return matches[0]


@dataclass
class LoadedSession:
    path: Path
    messages: list[Message] = field(default_factory=list)
    mode: dict[str, Any] | None = None  # the last mode entry
    problems: list[str] = field(default_factory=list)
    first_prompt: str = ""
    summary: str | None = None  # the last compaction's summary, when the history was compacted


class SessionLog:
    """Writes one conversation's entries to ``<id>.jsonl``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[str] | None = None
        self._pending_meta: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.path.stem

    @classmethod
    def create(cls, root: Path) -> SessionLog:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = sessions_dir(root) / f"{stamp}-{secrets.token_hex(3)}.jsonl"
        log = cls(path)
        # Written with the first real entry, so merely starting leaves no file.
        log._pending_meta = {"type": "meta", "root": str(root.resolve()), "created": time.time()}
        return log

    def append(self, entry: dict[str, Any]) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
            if self._pending_meta is not None:
                self._fh.write(json.dumps(self._pending_meta) + "\n")
                self._pending_meta = None
        self._fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._fh.flush()

    def append_message(self, message: Message) -> None:
        self.append({"type": "message", "message": message.to_dict()})

    def append_rewind(self, keep: int) -> None:
        """``/retry``: the history was cut back to its first ``keep`` messages."""
        self.append({"type": "rewind", "keep": keep})

    def append_history(self, messages: list[Message], *, reason: str, summary: str) -> None:
        """A compaction: the whole new history, so ``--continue`` resumes from it."""
        self.append(
            {
                "type": "compaction",
                "reason": reason,
                "summary": summary,
                "messages": [m.to_dict() for m in messages],
            }
        )

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @staticmethod
    def load(path: Path) -> LoadedSession:
        loaded = LoadedSession(path)
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                _apply(loaded, entry)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                if number - 1 == last and not line.endswith("}"):
                    loaded.problems.append(f"line {number}: truncated last entry ignored")
                else:
                    loaded.problems.append(f"line {number}: unreadable entry skipped ({exc})")
        return loaded

    @classmethod
    def reopen(cls, path: Path) -> SessionLog:
        """Continue appending to an existing log (after a resume)."""
        text = path.read_bytes()
        if text and not text.endswith(b"\n"):
            # A truncated last line would swallow our next entry: end it first.
            with path.open("ab") as fh:
                fh.write(b"\n")
        return cls(path)


def _apply(loaded: LoadedSession, entry: dict[str, Any]) -> None:
    kind = entry["type"]
    if kind == "message":
        message = Message.from_dict(entry["message"])
        if message.role == "user" and not loaded.first_prompt:
            loaded.first_prompt = message.content
        loaded.messages.append(message)
    elif kind == "mode":
        loaded.mode = entry
    elif kind == "clear":
        loaded.messages.clear()
        loaded.summary = None
    elif kind == "rewind":
        keep = int(entry["keep"])
        if keep < 0:
            raise ValueError("negative rewind")
        del loaded.messages[keep:]
    elif kind == "compaction":
        messages = [Message.from_dict(m) for m in entry["messages"]]
        loaded.messages = messages
        loaded.summary = str(entry.get("summary") or "")
