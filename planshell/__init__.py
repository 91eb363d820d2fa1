"""planshell: a terminal coding agent built around plan mode."""

__version__ = "0.1.0"
