"""A loopback OpenAI-compatible server that lists models, and a chat app talking to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.config import Settings
from planshell.ui.app import PlanshellApp
from tests.sse_server import Response, SSEServer


def serve_models(sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch, names: list[str]) -> None:
    """``GET /v1/models`` answers ``names``; no API key from the environment leaks in."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = [{"id": name, "object": "model"} for name in names]
    sse_server.routes["/v1/models"] = Response.json(200, {"object": "list", "data": data})


def openai_app(project: Path, server: SSEServer, model: str) -> PlanshellApp:
    """The chat on ``server`` (OpenAI-compatible) with ``model``, a known window, no session file."""
    settings = Settings(
        provider="openai", base_url=f"{server.url}/v1", model=model, context_window=8192
    )
    return PlanshellApp(settings, project, persist=False, project_label="~/proj")
