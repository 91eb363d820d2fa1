"""The plan-mode chip in the status bar: OFF / PLAN / EXECUTE (+ the plan title, step count).

Colours come from the theme variables ``$off-chip``, ``$plan-chip`` and
``$execute-chip`` (with ``-text`` variants) through CSS classes; a label's
``widget_color`` in the settings (``plan.labels.<mode>.widget_color``) may
name another theme variable or a literal colour. Labels come from
``settings.plan.labels``. In EXECUTE the steps done are appended
(``EXECUTE · Add caching · 2/5``) unless the label itself uses ``{done}``
or ``{total}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.color import Color, ColorParseError
from textual.message import Message
from textual.widgets import Static

if TYPE_CHECKING:
    from planshell.config import PlanLabels

MODES = ("off", "plan", "execute")
TITLE_MAX = 32


class ModeChip(Static):
    class Changed(Message):
        """The label changed: the status bar refits its row."""

    def __init__(self, labels: PlanLabels | None = None, id: str | None = None) -> None:
        super().__init__("", id=id, classes="mode-chip -off")
        self.labels = labels
        self.mode = "off"
        self.title = ""
        self.progress: tuple[int, int] | None = None  # (done, total) steps in EXECUTE
        self.title_shown = True  # False: the status bar has no room for the plan title
        self._render_label()

    def show_title(self, shown: bool) -> None:
        """With or without the plan title (the status bar decides, by the room it has)."""
        if shown != self.title_shown:
            self.title_shown = shown
            self._render_label()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: Any) -> None:
        self.call_after_refresh(self._apply_custom_colour)

    def set_mode(
        self, mode: str, title: str | None = None, progress: tuple[int, int] | None = None
    ) -> None:
        mode = mode if mode in MODES else "off"
        self.mode = mode
        self.title = (title or "").strip()
        self.progress = progress if mode == "execute" and progress and progress[1] > 0 else None
        for name in MODES:
            self.set_class(name == mode, f"-{name}")
        self._render_label()
        self._apply_custom_colour()
        self.post_message(self.Changed())

    def label_text(self, *, with_title: bool | None = None) -> str:
        """The label; ``with_title`` False leaves the plan title out (default: as shown)."""
        label = getattr(self.labels, self.mode, None) if self.labels is not None else None
        shown = self.title_shown if with_title is None else with_title
        title = self.title if shown else ""
        if len(title) > TITLE_MAX:  # cut at a word boundary, never mid-word
            cut = title[: TITLE_MAX - 1]
            title = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:·-") + "…"
        done, total = self.progress or (0, 0)
        steps = f"{done}/{total}" if self.progress else ""
        if label is None:
            base = self.mode.upper()
            text = f"{base} · {title}" if title and self.mode != "off" else base
            return f"{text} · {steps}" if steps else text
        template = label.widget_with_title if title and self.mode != "off" else label.widget
        try:
            text = template.format(title=title, done=done, total=total)
        except (KeyError, IndexError, ValueError):
            text = f"{label.widget} · {title}" if title and self.mode != "off" else label.widget
        if steps and "{done}" not in template and "{total}" not in template:
            text = f"{text} · {steps}"
        return text

    def _render_label(self) -> None:
        self.update(Text(f" {self.label_text()} "))

    def _custom_colour(self) -> Color | None:
        label = getattr(self.labels, self.mode, None) if self.labels is not None else None
        wanted = getattr(label, "widget_color", "") or ""
        if not wanted or wanted == f"${self.mode}-chip":
            return None  # the theme's chip colour, through CSS
        if wanted.startswith("$"):
            wanted = self.app.theme_variables.get(wanted[1:], "") if self.is_attached else ""
        try:
            return Color.parse(wanted) if wanted else None
        except ColorParseError:
            return None

    def _apply_custom_colour(self) -> None:
        colour = self._custom_colour()
        if colour is None:
            self.styles.clear_rule("background")
            self.styles.clear_rule("color")
            return
        from planshell.ui.themes import readable_on

        self.styles.background = colour
        self.styles.color = readable_on(colour.with_alpha(1.0))
