"""The start-up question: apply an untrusted project config's security settings?

Shown once settings are loaded when the repository's ``.planshell/config.toml``
sets security-relevant keys the user has not trusted. The answer defaults to
*no* (focused button, Enter, Esc and ``n``); only ``y`` or the Trust button
trusts. Everything shown comes from the repository, so it is escaped by
``UntrustedProject`` and rendered as plain text (no markup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planshell.sanitize import strip_terminal_controls
from planshell.ui.screens.confirm import ConfirmScreen

if TYPE_CHECKING:
    from planshell.config import UntrustedProject

MAX_LINES = 8


def trust_question(untrusted: UntrustedProject) -> str:
    return f"This project's config changes security settings: {', '.join(untrusted.key_names)}. Trust it?"


def trust_detail(untrusted: UntrustedProject) -> str:
    lines = untrusted.describe()
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], f"… and {len(lines) - MAX_LINES + 1} more"]
    where = strip_terminal_controls(str(untrusted.file.path))
    return "\n".join(
        [
            where,
            *(f"  {line}" for line in lines),
            "",
            "No keeps your own settings for them. Trust covers the file as it is now; "
            "after an edit you are asked again (`planshell trust --revoke` undoes it).",
        ]
    )


class TrustScreen(ConfirmScreen):
    """Yes/no about one untrusted project file; dismisses with True only on an explicit yes."""

    # Focus "no" from the first frame (not only once on_mount runs), so an Enter
    # typed while the dialog appears cannot land on "Trust".
    AUTO_FOCUS = "#no"

    def __init__(self, untrusted: UntrustedProject) -> None:
        super().__init__(
            trust_question(untrusted),
            detail=trust_detail(untrusted),
            yes="Trust",
            no="Don't trust",
            default=False,
        )
        self.untrusted = untrusted
