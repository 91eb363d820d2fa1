"""Prompt history, persisted per project as JSON lines (``history.jsonl``)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

log = logging.getLogger(__name__)

HISTORY_LIMIT = 1000


def history_path(root: Path) -> Path:
    from planshell.agent.session import project_dir

    return project_dir(root) / "history.jsonl"


class PromptHistory:
    """Oldest first; ``add`` appends to memory and to the file (best effort)."""

    def __init__(self, path: Path | None, limit: int = HISTORY_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.entries: list[str] = []
        self._total_lines = 0

    def load(self) -> None:
        if self.path is None:
            return
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("cannot read prompt history %s: %s", self.path, exc)
            return
        entries: list[str] = []
        for line in lines[-self.limit :]:
            try:
                text = json.loads(line)["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue
            if isinstance(text, str) and text.strip():
                entries.append(text)
        self.entries = entries + self.entries
        self._total_lines = len(lines)

    def add(self, text: str) -> None:
        if not text.strip():
            return
        if self.entries and self.entries[-1] == text:
            return
        self.entries.append(text)
        del self.entries[: -self.limit]
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(
                    json.dumps({"text": text, "ts": round(time.time(), 3)}, ensure_ascii=False)
                    + "\n"
                )
            self._total_lines += 1
            if self._total_lines > 2 * self.limit:
                self._compact()
        except OSError as exc:
            log.warning("cannot write prompt history %s: %s", self.path, exc)

    def _compact(self) -> None:
        assert self.path is not None
        from planshell.fsutil import atomic_write_text

        body = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in self.entries)
        atomic_write_text(self.path, body)
        self._total_lines = len(self.entries)
