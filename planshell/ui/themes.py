"""Theme files: TOML in the top-level ``themes/`` folder, registered as Textual themes.

A theme file looks like::

    name = "planshell-dark"
    dark = true

    [colors]            # Textual's base colours (primary is required)
    primary = "#6cb6ff"
    background = "#15171c"
    ...

    [variables]         # planshell tokens (mode chips, markdown) and Textual variables
    plan-chip = "#e6b450"
    plan-chip-text = "#15171c"
    ...

A file that cannot be read or validated is skipped with a warning: a bad
theme never stops the app. This module imports Textual's ``Theme`` and
``Color`` only, so loading stays cheap at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

import planshell

DEFAULT_THEME = "planshell-dark"

BASE_COLORS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)

# planshell's own variables; every one must be a colour. Themes that do not set
# them (Textual's built-in themes) get values derived from their base colours.
PLANSHELL_VARIABLES = (
    "off-chip",
    "off-chip-text",
    "plan-chip",
    "plan-chip-text",
    "execute-chip",
    "execute-chip-text",
    "demo-label",
    "user-message",
    "tool-output",
)

_TEXT_STYLE_WORDS = frozenset(
    "none not bold dim italic underline underline2 reverse strike blink b i u r s".split()
)


@dataclass
class ThemeLoad:
    themes: list[Theme] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def theme_dirs() -> list[Path]:
    """Where theme files live: the repository's ``themes/``, else the packaged copy."""
    package = Path(planshell.__file__).parent
    top = package.parent / "themes"
    if top.is_dir():
        return [top]
    packaged = package / "_themes"
    return [packaged] if packaged.is_dir() else []


def load_themes(dirs: list[Path] | None = None) -> ThemeLoad:
    """Read every ``*.toml`` in ``dirs``; bad files become warnings."""
    result = ThemeLoad()
    seen: set[str] = set()
    for folder in theme_dirs() if dirs is None else dirs:
        try:
            files = sorted(folder.glob("*.toml"))
        except OSError as exc:
            result.warnings.append(f"Cannot read the theme folder {folder}: {exc.strerror}.")
            continue
        for path in files:
            try:
                theme = parse_theme_file(path)
            except ThemeFileError as exc:
                result.warnings.append(f"Theme {path.name} skipped: {exc}")
                continue
            if theme.name in seen:
                result.warnings.append(
                    f"Theme {path.name} skipped: the name {theme.name!r} is already used."
                )
                continue
            seen.add(theme.name)
            result.themes.append(theme)
    return result


class ThemeFileError(Exception):
    pass


THEME_MAX_BYTES = 256 * 1024


def parse_theme_file(path: Path) -> Theme:
    import tomllib

    from planshell.fsutil import ReadRefused, read_user_file

    try:
        data = tomllib.loads(read_user_file(path, THEME_MAX_BYTES).decode("utf-8"))
    except ReadRefused as exc:
        raise ThemeFileError(f"{exc}.") from None
    except OSError as exc:
        raise ThemeFileError(f"cannot read it ({exc.strerror}).") from None
    except UnicodeDecodeError:
        raise ThemeFileError("it is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"invalid TOML ({exc}).") from None
    return theme_from_dict(data)


def theme_from_dict(data: dict[str, object]) -> Theme:
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name):
        raise ThemeFileError("'name' must be a non-empty string without spaces.")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError("'dark' must be true or false.")
    colors = data.get("colors", {})
    if not isinstance(colors, dict):
        raise ThemeFileError("[colors] must be a table.")
    unknown = sorted(set(colors) - set(BASE_COLORS))
    if unknown:
        raise ThemeFileError(f"unknown colour {unknown[0]!r} in [colors].")
    if "primary" not in colors:
        raise ThemeFileError("[colors] needs at least 'primary'.")
    for key, value in colors.items():
        _check_color(f"colors.{key}", value)
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeFileError("[variables] must be a table.")
    for key, value in variables.items():
        if not isinstance(value, str):
            raise ThemeFileError(f"variables.{key} must be a string.")
        if key.endswith("-text-style"):
            words = value.split()
            if not words or any(w not in _TEXT_STYLE_WORDS for w in words):
                raise ThemeFileError(f"variables.{key}: {value!r} is not a text style.")
        else:
            _check_color(f"variables.{key}", value)
    extra = sorted(set(data) - {"name", "dark", "colors", "variables", "description"})
    if extra:
        raise ThemeFileError(f"unknown key {extra[0]!r}.")
    return Theme(name=name, dark=dark, variables=dict(variables), **colors)


def _check_color(key: str, value: object) -> None:
    if not isinstance(value, str):
        raise ThemeFileError(f'{key} must be a colour string like "#1e1e2e".')
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"{key}: {value!r} is not a colour.") from None


def variable_defaults(theme: Theme) -> dict[str, str]:
    """planshell variables for a theme that does not define them (literal colours)."""
    return defaults_from_system(theme.to_color_system().generate(), theme.dark)


def defaults_from_system(system: dict[str, str], dark: bool) -> dict[str, str]:
    """Like :func:`variable_defaults`, from an already generated colour system."""

    def colour(name: str) -> Color:
        return Color.parse(system[name])

    background = colour("background")
    chips = {
        "off-chip": colour("panel").lighten(0.08) if dark else colour("panel").darken(0.08),
        "plan-chip": colour("warning"),
        "execute-chip": colour("success"),
    }
    out: dict[str, str] = {}
    for name, chip in chips.items():
        chip = chip.with_alpha(1.0)
        out[name] = chip.hex6
        out[f"{name}-text"] = readable_on(chip).hex6
    out["demo-label"] = colour("warning").with_alpha(1.0).hex6
    out["user-message"] = colour("surface").with_alpha(1.0).hex6
    out["tool-output"] = (background.lighten(0.03) if dark else background.darken(0.03)).hex6
    return out


def rich_markdown_styles(variables: dict[str, str]) -> dict[str, str]:
    """Rich ``markdown.*`` styles from theme variables (for Rich-rendered replies)."""

    def colour(name: str) -> str:
        try:
            return Color.parse(variables[name]).with_alpha(1.0).hex6
        except (KeyError, ColorParseError):
            return ""

    styles: dict[str, str] = {}
    for level in range(1, 7):
        words = variables.get(f"markdown-h{level}-text-style", "bold").split()
        text_style = " ".join(w for w in words if w != "none" and w in _TEXT_STYLE_WORDS)
        styles[f"markdown.h{level}"] = (
            f"{text_style} {colour(f'markdown-h{level}-color')}".strip() or "bold"
        )
    styles["markdown.code"] = colour("warning") or "bold"
    styles["markdown.item.bullet"] = colour("primary") or "bold"
    styles["markdown.item.number"] = colour("primary") or "bold"
    styles["markdown.link"] = colour("primary") or "underline"
    styles["markdown.link_url"] = colour("primary") or "underline"
    styles["markdown.block_quote"] = colour("secondary") or "italic"
    styles["markdown.hr"] = colour("panel") or "dim"
    return styles


def readable_on(background: Color) -> Color:
    """Black or white, whichever contrasts more with ``background``."""
    black, white = Color(0, 0, 0), Color(255, 255, 255)
    return (
        black if contrast_ratio(black, background) >= contrast_ratio(white, background) else white
    )


def relative_luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast_ratio(a: Color, b: Color) -> float:
    """WCAG 2 contrast ratio of two opaque colours (1..21)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def peek_configured_theme(start: Path) -> str | None:
    """The theme the settings will most likely name, read cheaply (no pydantic).

    Used only to theme the first frame when settings load after it; the real
    settings win once loaded. Order as in the config: user file < project
    file < ``PLANSHELL_UI__THEME``.
    """
    import os

    env = os.environ.get("PLANSHELL_UI__THEME")
    if env:
        return env
    found: str | None = None
    candidates: list[Path] = []
    try:
        from platformdirs import user_config_dir

        candidates.append(Path(user_config_dir("planshell")) / "config.toml")
    except Exception:
        pass
    root = start
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            root = candidate
            break
    candidates.append(root / ".planshell" / "config.toml")
    # Not planshell.config: its package imports pydantic (~0.1 s), the first frame must not.
    from planshell.fsutil import CONFIG_MAX_BYTES, ReadRefused, read_project_file, read_user_file

    for path in candidates:
        try:
            if path.is_relative_to(root):  # the repository's file: the safe reader's rules
                raw = read_project_file(root, path, CONFIG_MAX_BYTES)
            else:
                raw = read_user_file(path, CONFIG_MAX_BYTES)
            import tomllib  # ~15 ms, before the first frame: only when there is a file

            data = tomllib.loads(raw.decode("utf-8"))
        except (OSError, ReadRefused, ValueError):  # TOML and UTF-8 errors are ValueErrors
            continue
        ui = data.get("ui")
        if isinstance(ui, dict) and isinstance(ui.get("theme"), str):
            found = ui["theme"]
    return found
