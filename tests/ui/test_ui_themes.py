"""Theme files: loading, validation, contrast, and use by the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.color import Color

import planshell.ui
from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.ui import themes
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.chat import ChatScreen

SHIPPED = ("planshell-dark", "planshell-light")


def shipped() -> dict[str, object]:
    loaded = themes.load_themes()
    assert loaded.warnings == []
    return {t.name: t for t in loaded.themes}


def test_theme_folder_is_found() -> None:
    (folder,) = themes.theme_dirs()
    assert folder.name == "themes"
    assert {p.stem for p in folder.glob("*.toml")} >= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_theme_contrast(name: str) -> None:
    theme = shipped()[name]
    background = Color.parse(theme.background)  # type: ignore[attr-defined]
    foreground = Color.parse(theme.foreground)  # type: ignore[attr-defined]
    assert themes.contrast_ratio(foreground, background) >= 7
    variables = theme.variables  # type: ignore[attr-defined]
    for chip in ("off-chip", "plan-chip", "execute-chip"):
        ratio = themes.contrast_ratio(
            Color.parse(variables[chip]), Color.parse(variables[f"{chip}-text"])
        )
        assert ratio >= 4.5, f"{name}: {chip} text contrast {ratio:.2f}"
    # Coloured text on the background (errors, links, the demo label) stays readable.
    for key in ("primary", "error", "success", "warning"):
        ratio = themes.contrast_ratio(Color.parse(getattr(theme, key)), background)
        assert ratio >= 4.5, f"{name}: {key} on background {ratio:.2f}"
    assert themes.contrast_ratio(Color.parse(variables["demo-label"]), background) >= 4.5


def test_shipped_themes_define_every_planshell_variable() -> None:
    for theme in shipped().values():
        missing = set(themes.PLANSHELL_VARIABLES) - set(theme.variables)  # type: ignore[attr-defined]
        assert not missing, f"{theme.name} lacks {sorted(missing)}"  # type: ignore[attr-defined]


def test_contrast_ratio_reference_values() -> None:
    black, white = Color(0, 0, 0), Color(255, 255, 255)
    assert themes.contrast_ratio(black, white) == pytest.approx(21.0)
    assert themes.contrast_ratio(white, white) == pytest.approx(1.0)
    assert themes.contrast_ratio(Color.parse("#767676"), white) == pytest.approx(4.54, abs=0.01)


GOOD = """
name = "tiny"
dark = true
[colors]
primary = "#3366ff"
background = "#000000"
foreground = "#ffffff"
[variables]
plan-chip = "#ffaa00"
markdown-h1-text-style = "bold underline"
"""


def write_theme_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "themes"
    folder.mkdir()
    (folder / "good.toml").write_text(GOOD)
    (folder / "broken.toml").write_text("name = 'x'\n[colors\nprimary = '#fff'\n")
    (folder / "badcolour.toml").write_text('name = "bad"\n[colors]\nprimary = "not-a-colour"\n')
    (folder / "noprimary.toml").write_text('name = "np"\n[colors]\nbackground = "#000"\n')
    (folder / "badstyle.toml").write_text(
        'name = "bs"\n[colors]\nprimary = "#fff"\n[variables]\nmarkdown-h1-text-style = "shiny"\n'
    )
    (folder / "duplicate.toml").write_text(GOOD)
    (folder / "binary.toml").write_bytes(b"\xff\xfe\x00junk")
    return folder


def test_malformed_theme_files_are_skipped_with_warnings(tmp_path: Path) -> None:
    loaded = themes.load_themes([write_theme_dir(tmp_path)])
    assert [t.name for t in loaded.themes] == ["tiny"]
    text = "\n".join(loaded.warnings)
    for name in ("broken.toml", "badcolour.toml", "noprimary.toml", "badstyle.toml", "binary.toml"):
        assert name in text
    assert "already used" in text
    assert len(loaded.warnings) == 6


def test_missing_theme_folder_is_a_warning(tmp_path: Path) -> None:
    loaded = themes.load_themes([tmp_path / "nope"])
    assert loaded.themes == []


async def test_app_skips_bad_theme_files_and_still_starts(tmp_path: Path, project: Path) -> None:
    app = PlanshellApp(
        Settings(),
        project,
        provider=ScriptedProvider([]),
        persist=False,
        theme_dirs=[write_theme_dir(tmp_path)],
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        messages = [n.message for n in app.toasts]
        assert any("broken.toml" in m for m in messages)
        # planshell-dark is not in that folder: the app falls back and says so.
        assert app.theme == "textual-dark"
        assert any("Unknown theme 'planshell-dark'" in m for m in messages)
        app.theme = "tiny"
        await pilot.pause()
        assert app.get_css_variables()["plan-chip"] == "#ffaa00"


def _variables_used() -> set[str]:
    used: set[str] = set()
    sheets = sorted(Path(planshell.ui.__file__).parent.rglob("*.tcss"))
    assert len(sheets) >= 6  # beside the screens and widgets that use them
    for sheet in sheets:
        used |= set(re.findall(r"\$([a-z][a-z0-9-]*)", sheet.read_text()))
    return used


@pytest.mark.parametrize("theme", [*SHIPPED, "textual-dark", "textual-light", "nord"])
async def test_every_css_variable_is_defined(theme: str, project: Path) -> None:
    app = PlanshellApp(Settings(), project, provider=ScriptedProvider([]), persist=False)
    app.theme = theme
    variables = app.get_css_variables()
    missing = _variables_used() - set(variables)
    assert not missing, f"undefined CSS variables with {theme}: {sorted(missing)}"
    for name in themes.PLANSHELL_VARIABLES:
        Color.parse(variables[name])  # literal colours only


async def test_builtin_theme_gets_readable_chip_defaults(project: Path) -> None:
    app = PlanshellApp(Settings(), project, provider=ScriptedProvider([]), persist=False)
    app.theme = "textual-light"
    variables = app.get_css_variables()
    for chip in ("off-chip", "plan-chip", "execute-chip"):
        ratio = themes.contrast_ratio(
            Color.parse(variables[chip]), Color.parse(variables[f"{chip}-text"])
        )
        assert ratio >= 4.5


async def test_configured_theme_is_used_at_start(project: Path) -> None:
    settings = Settings.model_validate({"ui": {"theme": "planshell-light"}})
    app = PlanshellApp(settings, project, provider=ScriptedProvider([]), persist=False)
    assert app.theme == "planshell-light"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.current_theme.dark
