"""Toasts an app showed, kept so what was said can be read back (Textual keeps none public)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App, ReturnType

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

TOASTS_KEPT = 100


@dataclass(frozen=True)
class Toast:
    message: str
    severity: SeverityLevel
    title: str = ""
    markup: bool = True


class ToastLog(App[ReturnType]):
    """An app whose ``notify`` also records each toast in ``toasts`` (the last 100)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.toasts: deque[Toast] = deque(maxlen=TOASTS_KEPT)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.toasts.append(Toast(message, severity, title, markup))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)
