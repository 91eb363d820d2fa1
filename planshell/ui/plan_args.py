"""How ``/plan`` arguments and the plan-mode toggle keys are parsed.

Pure functions, no Textual: :func:`parse_plan_argument` turns the text after
``/plan`` into a form and a value (the forms are listed in
:mod:`planshell.ui.plan_ui`), :func:`toggle_keys` turns
``plan.shortcuts.toggle_mode`` into the keys of the toggle binding.
"""

from __future__ import annotations

from planshell.ui.keys import DEFAULT_TOGGLE_KEYS

__all__ = ["FORBIDDEN_KEYS", "RESERVED", "parse_plan_argument", "toggle_keys"]

# In legacy terminals Ctrl+Shift+L *is* ctrl+l (and many users press ctrl+l to
# clear a screen): it never toggles plan mode, even when configured.
FORBIDDEN_KEYS = frozenset({"ctrl+l"})
RESERVED = ("on", "off", "list", "review", "why", "new")


# --- keys -------------------------------------------------------------------------


def toggle_keys(configured: str | None) -> tuple[str, list[str]]:
    """The keys for the toggle binding from ``plan.shortcuts.toggle_mode``, and warnings.

    Plain ``ctrl+l`` is dropped; nothing usable left means the defaults.
    """
    warnings: list[str] = []
    keys: list[str] = []
    for raw in (configured or "").split(","):
        key = raw.strip()
        if not key:
            continue
        if key in FORBIDDEN_KEYS:
            warnings.append(
                f"plan.shortcuts.toggle_mode: {key} is not used (terminals send it for "
                "Ctrl+Shift+L and to clear the screen); use F2 or ctrl+shift+l."
            )
            continue
        if key not in keys:
            keys.append(key)
    if not keys:
        if configured and configured.strip():
            warnings.append("plan.shortcuts.toggle_mode has no usable key; using the defaults.")
        return DEFAULT_TOGGLE_KEYS, warnings
    return ",".join(keys), warnings


# --- /plan argument parsing ----------------------------------------------------------


def parse_plan_argument(arg: str) -> tuple[str, str]:
    """``/plan`` argument -> (form, value); forms: bare, on, off, list, why, review,
    review-browser, new, name, request.

    ``new REQUEST`` plans REQUEST in a new file (a plain request in PLAN refines
    the current plan).

    Reserved words count only on their own (``review`` also with one path ending
    in ``.md`` or containing ``/``); anything else of one word is a plan name,
    more than one word a planning request.
    """
    text = arg.strip()
    if not text:
        return "bare", ""
    lowered = text.lower()
    if lowered in RESERVED:
        return lowered, ""
    words = text.split()
    if len(words) in (2, 3) and words[0].lower() == "review" and words[1] == "--browser":
        if len(words) == 2:
            return "review-browser", ""
        if words[2].lower().endswith(".md") or "/" in words[2]:
            return "review-browser", words[2]
    if len(words) >= 2 and words[0].lower() == "new":
        return "new", text[len(words[0]) :].strip()
    if len(words) == 2 and words[0].lower() == "review":
        target = words[1]
        if target.lower().endswith(".md") or "/" in target:
            return "review", target
    if len(words) == 1:
        return "name", text
    return "request", text
