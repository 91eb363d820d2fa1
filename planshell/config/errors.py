"""The one exception of configuration: ``ConfigError``."""

from __future__ import annotations


class ConfigError(Exception):
    """A configuration problem, with a message fit to show as-is."""

    source: str | None = None  # the layer at fault, when one is (a file's path, "environment")
