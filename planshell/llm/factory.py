"""Pick and build the provider from settings and the environment.

``PROVIDERS`` is the one registry of providers: every list of provider names
(the ``provider`` setting's check, ``--provider``, ``/provider``, doctor) is
derived from it. Its names come from ``planshell.provider_names``, the leaf
module the lower ``config`` layer checks the setting against.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from planshell.config import ConfigError, Settings
from planshell.llm.types import Provider
from planshell.provider_names import AUTO, PROVIDER_NAMES


def _demo(kwargs: dict[str, Any]) -> Provider:
    from planshell.llm.demo import DemoProvider

    return DemoProvider()


def _openai(kwargs: dict[str, Any]) -> Provider:
    from planshell.llm.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(**kwargs)


def _anthropic(kwargs: dict[str, Any]) -> Provider:
    from planshell.llm.anthropic import AnthropicProvider

    return AnthropicProvider(**kwargs)


@dataclass(frozen=True)
class ProviderSpec:
    """How to build one provider (its client module is imported only then) and its defaults."""

    build: Callable[[dict[str, Any]], Provider]
    key_var: str | None = None  # the environment variable holding its API key
    default_model: str | None = None
    default_url: str | None = None

    @property
    def remote(self) -> bool:
        """Talks to an API (model, base URL and key apply), unlike the offline demo."""
        return self.default_url is not None


PROVIDERS: dict[str, ProviderSpec] = {
    "demo": ProviderSpec(_demo),
    "openai": ProviderSpec(_openai, "OPENAI_API_KEY", "gpt-4.1-mini", "https://api.openai.com/v1"),
    "anthropic": ProviderSpec(
        _anthropic, "ANTHROPIC_API_KEY", "claude-sonnet-4-5", "https://api.anthropic.com"
    ),
}
if tuple(PROVIDERS) != PROVIDER_NAMES:  # one entry per name, in the same order
    raise ImportError(f"PROVIDERS {tuple(PROVIDERS)} must match PROVIDER_NAMES {PROVIDER_NAMES}")

PROVIDER_CHOICES: tuple[str, ...] = (AUTO, *PROVIDERS)
"""Every value of the ``provider`` setting, ``--provider`` and ``/provider``."""

DEFAULT_MODELS = {n: s.default_model for n, s in PROVIDERS.items() if s.default_model}
DEFAULT_URLS = {n: s.default_url for n, s in PROVIDERS.items() if s.default_url}
KEY_VARS = {n: s.key_var for n, s in PROVIDERS.items() if s.key_var}


def choose_provider(settings: Settings, environ: Mapping[str, str]) -> str:
    """``auto``: Anthropic key, else OpenAI key (or a custom base URL), else the demo."""
    if settings.provider != AUTO:
        return settings.provider
    if environ.get(KEY_VARS["anthropic"]):
        return "anthropic"
    if environ.get(KEY_VARS["openai"]) or settings.base_url:
        return "openai"
    return "demo"


def switched_settings(
    start: Settings,
    current: Settings,
    environ: Mapping[str, str],
    *,
    provider: str | None = None,
    model: str | None = None,
) -> Settings:
    """The settings after ``/provider NAME`` or ``/model NAME``.

    A configured model and base URL belong to the provider they were set up for
    (the session's provider, or the one ``auto`` picks from them when the session
    started on the demo): switching to that provider brings them back, switching
    to another starts from its defaults, so an Ollama URL is never given to
    Anthropic, nor a Claude model name to OpenAI. The configured context window
    follows the configured model.
    """
    update: dict[str, object] = {}
    if provider is not None:
        spec = PROVIDERS.get(start.provider)
        owner = (
            start.provider
            if spec is not None and spec.remote
            else choose_provider(start.model_copy(update={"provider": AUTO}), environ)
        )
        own = provider in (owner, AUTO)
        update = {
            "provider": provider,
            "model": start.model if own else None,
            "base_url": start.base_url if own else None,
        }
    if model is not None:
        update["model"] = model
    new_model = update.get("model", current.model)
    update["context_window"] = start.context_window if new_model == start.model else None
    return current.model_copy(update=update)


def provider_spec(name: str) -> ProviderSpec:
    """The registry entry for ``name``; ``ConfigError`` naming the valid ones otherwise.

    ``Settings`` checks the name at load time; this guards settings changed
    without validation (``model_copy(update=...)`` in ``/provider``).
    """
    spec = PROVIDERS.get(name)
    if spec is None:
        raise ConfigError(
            f"unknown provider {name!r}: choose one of {', '.join(PROVIDER_CHOICES)}."
        )
    return spec


def make_provider(settings: Settings, environ: Mapping[str, str] | None = None) -> Provider:
    environ = os.environ if environ is None else environ
    spec = provider_spec(choose_provider(settings, environ))
    if not spec.remote:
        return spec.build({})
    assert spec.default_model is not None and spec.default_url is not None
    return spec.build(
        {
            "model": settings.model or spec.default_model,
            "base_url": (settings.base_url or spec.default_url).rstrip("/"),
            "api_key": settings.api_key or (environ.get(spec.key_var) if spec.key_var else None),
            "headers": dict(settings.headers),
            "max_tokens": settings.max_tokens,
            "connect_timeout": settings.connect_timeout,
            "idle_timeout": settings.idle_timeout,
            "max_attempts": settings.max_attempts,
            "tool_choice": settings.request.tool_choice,
            "extra_body": settings.request.extra_body,
            "stream_options": settings.request.stream_options,
        }
    )
