"""One diagnostics path: a rotating log file a user can attach to a bug report.

A full-screen app cannot show a traceback on stderr (it would garble the
screen, and vanish with it), so everything goes to
``<data dir>/logs/planshell.log`` (``PLANSHELL_DATA_DIR`` moves the data dir),
rotated at about 1 MB with three old files kept. ``setup_logging`` runs once at
start for the TUI and for ``-p``; the level is WARNING, ``PLANSHELL_LOG_LEVEL``
(``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``) changes it and ``--debug`` means
DEBUG. The level applies to planshell's own loggers; other libraries log
warnings and errors only (asyncio's "exception never retrieved" among them).

Two rules keep the file safe to share and safe to read:

* secrets never reach it: the values of API-key-like environment variables and
  of every key or auth header a provider is given are registered here and
  replaced by ``[redacted]``, and ``Authorization``/``x-api-key`` header
  values and ``Bearer`` tokens are masked wherever they appear;
* model-authored text is sanitised (no terminal escapes, so ``cat`` and
  ``less -R`` on the log are harmless) and every continuation line of a record
  is indented, so text cannot forge a log record of its own.

Headless: this module imports neither Textual nor pydantic.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

from planshell.sanitize import strip_terminal_controls

LEVEL_ENV = "PLANSHELL_LOG_LEVEL"
DEFAULT_LEVEL = logging.WARNING
MAX_BYTES = 1_000_000
BACKUP_COUNT = 3
REDACTED = "[redacted]"
# Shorter values would redact ordinary words; no real key is this short.
_MIN_SECRET = 8
_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
           "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL}  # fmt: skip

# Environment variables whose values are secrets wherever they show up.
_SECRET_ENV = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
# Header names whose values are secrets (for headers given to a provider).
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|session|password", re.I)
# Secrets recognisable by their shape, registered or not.
_SECRET_SHAPES = re.compile(
    r"(?P<head>\b(?:proxy-)?authorization\b['\"]?\s*[:=]\s*['\"]?)(?:(?:bearer|basic|token)\s+)?[^\s'\",}]+"
    r"|(?P<head2>\b(?:x-)?api[-_]?key\b['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"
    r"|(?P<head3>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\bsk-[A-Za-z0-9_-]{16,}",
    re.IGNORECASE,
)

_secrets: set[str] = set()
_handler: DeferredFileHandler | None = None
_captured_warnings = False


def log_path() -> Path:
    """Where the log file lives (whether or not anything was written yet)."""
    from planshell.config import data_dir

    return data_dir() / "logs" / "planshell.log"


def where_logged() -> str:
    """A phrase for user-facing notices: where the details can be read."""
    path = current_log_file()
    return str(path) if path is not None else "the log (no log file is set up)"


def level_from(environ: Mapping[str, str], debug: bool = False) -> tuple[int, str | None]:
    """The level for planshell's loggers, and a problem with ``PLANSHELL_LOG_LEVEL`` if any."""
    if debug:
        return logging.DEBUG, None
    raw = environ.get(LEVEL_ENV, "").strip()
    if not raw:
        return DEFAULT_LEVEL, None
    level = _LEVELS.get(raw.upper())
    if level is None:
        choices = ", ".join(_LEVELS)
        return DEFAULT_LEVEL, f"{LEVEL_ENV}={raw!r} is not a level ({choices}); using WARNING"
    return level, None


def register_secret(value: str | None) -> None:
    """Never write ``value`` to the log (an API key, an auth header's value)."""
    if value and len(value) >= _MIN_SECRET:
        _secrets.add(value)


def register_headers(headers: Mapping[str, str]) -> None:
    """Register the values of auth-like headers (``Authorization``, ``x-api-key``, …)."""
    for name, value in headers.items():
        if SECRET_HEADER.search(name):
            register_secret(value.split()[-1] if value.split() else value)


def register_environ_secrets(environ: Mapping[str, str]) -> None:
    for name, value in environ.items():
        if _SECRET_ENV.search(name):
            register_secret(value)


def redact(text: str) -> str:
    """``text`` with registered secrets and secret-shaped values replaced by ``[redacted]``."""
    for secret in sorted(_secrets, key=len, reverse=True):  # longest first: no partial leftovers
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _SECRET_SHAPES.sub(_mask, text)


def _mask(match: re.Match[str]) -> str:
    head = match.group("head") or match.group("head2") or match.group("head3") or ""
    return head + REDACTED


class SafeFormatter(logging.Formatter):
    """Formats a record as one unforgeable, secret-free, escape-free block."""

    def format(self, record: logging.LogRecord) -> str:
        text = redact(strip_terminal_controls(super().format(record)))
        return text.replace("\n", "\n    ")


FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"


class DeferredFileHandler(logging.Handler):
    """The rotating file, opened on the first record.

    Start-up pays nothing for it: no file is created, and finding the data
    dir (which may import the config module and pydantic) waits until
    something is worth logging. If the file cannot be opened, records go to
    ``fallback`` instead (stderr headless, nowhere in the TUI).
    """

    def __init__(self, fallback: logging.Handler) -> None:
        super().__init__(logging.DEBUG)
        self._fallback = fallback
        self._target: logging.Handler | None = None
        self.path: Path | None = None
        self.problem: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._target is None:
            self._target = self._open()
        self._target.emit(record)  # our lock is held (Handler.handle): one writer at a time

    def _open(self) -> logging.Handler:
        from logging.handlers import RotatingFileHandler

        path = log_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            target: logging.Handler = RotatingFileHandler(
                path, maxBytes=MAX_BYTES, backupCount=BACKUP_COUNT, encoding="utf-8"
            )
            self.path = path
        except OSError as exc:
            self.problem = f"cannot write the log file {path}: {exc.strerror or exc}"
            target = self._fallback
        target.setFormatter(self.formatter)
        return target

    def flush(self) -> None:
        if self._target is not None:
            self._target.flush()

    def close(self) -> None:
        if self._target is not None and self._target is not self._fallback:
            self._target.close()
        super().close()


def current_log_file() -> Path | None:
    """The file this process logs to, or None when file logging is not set up or failed."""
    if _handler is None or _handler.problem is not None:
        return None
    return _handler.path or log_path()


def setup_logging(
    *, debug: bool = False, environ: Mapping[str, str] | None = None, tui: bool = False
) -> None:
    """Send planshell's log to the rotating file (see the module docstring).

    Idempotent: calling it again replaces the handler it installed before.
    """
    global _handler, _captured_warnings
    environ = os.environ if environ is None else environ
    reset_logging()
    level, problem = level_from(environ, debug)
    register_environ_secrets(environ)
    # The TUI owns the terminal: a log line on stderr would garble the screen.
    handler = DeferredFileHandler(logging.NullHandler() if tui else logging.StreamHandler())
    handler.setFormatter(SafeFormatter(FORMAT))
    # On the root logger (at its default WARNING): other libraries' warnings land here too.
    logging.getLogger().addHandler(handler)
    logging.getLogger("planshell").setLevel(level)
    if level <= logging.DEBUG:
        logging.getLogger("httpx").setLevel(logging.INFO)  # one line per request, no headers
    logging.captureWarnings(True)
    _captured_warnings = True
    _handler = handler
    if problem:
        logging.getLogger(__name__).warning("%s", problem)


def reset_logging() -> None:
    """Remove what ``setup_logging`` installed (tests; a second setup)."""
    global _handler, _captured_warnings
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None
    if _captured_warnings:
        logging.captureWarnings(False)
        _captured_warnings = False
    logging.getLogger("planshell").setLevel(logging.NOTSET)
