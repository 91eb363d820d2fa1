"""The one way planshell calls bashlex: imported lazily, and never left to loop forever.

bashlex 0.18's ``subst._paramexpand`` looks for the ``}`` of a ``${`` with
``str.find``; when there is none it gets -1, restarts the scan at the start of
the word and appends parts until memory runs out. The tokenizer catches most
unclosed ``${``, but not all (a word continued after a here-doc operator,
for one), so a model could take planshell's memory with one bash call. An
unclosed ``${`` is a syntax error in bash too; here it becomes bashlex's own
``ParsingError``, which every caller already treats as "cannot be parsed".

Imported lazily (bashlex costs ~100 ms at start-up).
"""

from __future__ import annotations

from typing import Any

_hardened = False


def parse(text: str) -> list[Any]:
    """``bashlex.parse(text)``; raises whatever bashlex raises, never loops on ``${``."""
    import bashlex

    _harden()
    return list(bashlex.parse(text))


def _harden() -> None:
    global _hardened
    if _hardened:
        return
    from bashlex import errors, subst

    original = subst._paramexpand

    def paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
        if string.startswith("${", sindex) and string.find("}", sindex + 2) < 0:
            raise errors.ParsingError("bad substitution: no closing '}'", string, sindex)
        return original(parserobj, string, sindex)

    subst._paramexpand = paramexpand
    _hardened = True
