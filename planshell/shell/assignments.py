"""The bash guard's check of prefix assignments (``LC_ALL=C sort f``)."""

from __future__ import annotations

import re

from planshell.shell.words import Blocked

# A fixed locale or time zone only changes how an allowed command formats or sorts its
# output. The values are names, never paths: glibc reads locales from its own archive and
# zone files from /usr/share/zoneinfo, and neither runs code. Every other variable is
# refused (PATH, LD_*, GIT_*, PAGER, EDITOR, BASH_ENV, … change what runs).
_LOCALE_NAMES = frozenset(
    "LANG LC_ALL LC_COLLATE LC_CTYPE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME".split()
)
_LOCALE_VALUE = re.compile(r"[A-Za-z0-9_.@-]{1,40}")
_TZ_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{0,30}(?:/[A-Za-z][A-Za-z0-9_+-]{0,30}){0,2}")


def check_prefix_assignment(text: str | None) -> None:
    """Allow ``LC_ALL=C`` or ``TZ=UTC`` before a command; refuse every other assignment."""
    name, eq, value = (text or "").partition("=")
    ok = bool(eq) and (
        (name in _LOCALE_NAMES and _LOCALE_VALUE.fullmatch(value) is not None)
        or (name == "TZ" and _TZ_VALUE.fullmatch(value) is not None)
    )
    if not ok:
        raise Blocked(
            "variable assignments are not allowed (they can change what a command runs); "
            "only a literal locale (LC_ALL=C, LANG=C.UTF-8) or time zone (TZ=UTC) may "
            "prefix a command",
            "Drop the assignment.",
        )
