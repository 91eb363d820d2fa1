"""Helpers for turning theme colours into rich styles in Line-API widgets."""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


def solid_component_style(widget: Widget, name: str) -> Style:
    """A component class's rich style with a translucent colour made solid.

    ``get_component_rich_style`` drops a colour's alpha (``$foreground-muted``
    would come out as full ``$foreground``), so it is blended onto the
    widget's background here. ``auto`` colours (``$text-muted``,
    ``$text-disabled``) reach component styles as translucent *white* whatever
    the background, so component classes use ``$foreground-muted`` /
    ``$foreground-disabled`` instead.
    """
    style = widget.get_component_rich_style(name, partial=True)
    styles = widget.get_component_styles(name)
    if styles.has_rule("color"):
        color = styles.color
        if color.a < 1:
            background = widget.background_colors[1]
            style += Style(color=(background + color).rich_color)
    return style
