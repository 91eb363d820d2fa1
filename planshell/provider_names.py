"""The provider names, as a leaf module every layer may import.

``planshell.llm.factory.PROVIDERS`` is the registry: one entry per name here,
with how to build that provider, its key variable, default model and URL.
The bare names live below it so that ``config`` (a lower layer) can check the
``provider`` setting at load time, naming the file that set it, and the CLI
can offer them as choices without importing pydantic before the first frame.
"""

from __future__ import annotations

AUTO = "auto"
"""Picks a provider from the API keys in the environment (see ``choose_provider``)."""

PROVIDER_NAMES: tuple[str, ...] = ("demo", "openai", "anthropic")

PROVIDER_CHOICES: tuple[str, ...] = (AUTO, *PROVIDER_NAMES)
"""What a user may set ``provider`` to."""
