"""Pick and build the provider from settings and the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from planshell.config import ConfigError, Settings
from planshell.llm.types import Provider

if TYPE_CHECKING:
    from planshell.llm.http import StreamingHTTPProvider

DEFAULT_MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def choose_provider(settings: Settings, environ: Mapping[str, str]) -> str:
    """``auto``: Anthropic key, else OpenAI key (or a custom base URL), else the demo."""
    if settings.provider != "auto":
        return settings.provider
    if environ.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if environ.get("OPENAI_API_KEY") or settings.base_url:
        return "openai"
    return "demo"


def make_provider(settings: Settings, environ: Mapping[str, str] | None = None) -> Provider:
    environ = os.environ if environ is None else environ
    name = choose_provider(settings, environ)
    if name == "demo":
        from planshell.llm.demo import DemoProvider

        return DemoProvider()
    provider_class: type[StreamingHTTPProvider]
    if name == "openai":
        from planshell.llm.openai_compat import OpenAICompatProvider

        provider_class = OpenAICompatProvider
    elif name == "anthropic":
        from planshell.llm.anthropic import AnthropicProvider

        provider_class = AnthropicProvider
    else:
        raise ConfigError(f"unknown provider {name!r}")
    return provider_class(
        model=settings.model or DEFAULT_MODELS[name],
        base_url=(settings.base_url or DEFAULT_URLS[name]).rstrip("/"),
        api_key=settings.api_key or environ.get(KEY_VARS[name]),
        headers=dict(settings.headers),
        max_tokens=settings.max_tokens,
        connect_timeout=settings.connect_timeout,
        idle_timeout=settings.idle_timeout,
        max_attempts=settings.max_attempts,
        tool_choice=settings.request.tool_choice,
        extra_body=settings.request.extra_body,
        stream_options=settings.request.stream_options,
    )
