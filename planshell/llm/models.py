"""What a model can hold: its context window, from settings, the server, or a small table.

Local servers know the window they were started with and say so, each in its
own place: vLLM's ``/v1/models`` (``max_model_len``), llama.cpp's ``/props``
(``n_ctx``), LM Studio's ``/api/v0/models/<id>``, Ollama's ``/api/show`` and
OpenRouter's model list (``context_length``). Hosted vendors' ``/models`` do
not, so a short table covers well-known hosted models. Every lookup has a
short timeout and its answer is cached for the session: a slow or silent
server costs one wait, once, and never stops a request.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

LOOKUP_TIMEOUT = 2.0
MAX_BODY = 4 * 1024 * 1024  # model lists of big routers are a few hundred KiB

# Longest prefix wins. Hosted windows as documented by each vendor (input + output).
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("mistral-large", 128_000),
    ("codestral", 256_000),
    ("deepseek-chat", 64_000),
    ("deepseek-reasoner", 64_000),
)

_CACHE: dict[tuple[str, str], int | None] = {}
_MODEL_ID = re.compile(r"^[\w.:/@+-]{1,200}$")


def table_window(model: str) -> int | None:
    """The documented window of a well-known hosted model, by name prefix."""
    name = model.lower().rsplit("/", 1)[-1]  # "openai/gpt-4o" on a router
    best: tuple[int, int] | None = None
    for prefix, window in KNOWN_WINDOWS:
        if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


def server_root(base_url: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080`` (where /props and /api live)."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return int(value)
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return None


def window_from_model_list(payload: Any, model: str) -> int | None:
    """vLLM, OpenRouter and LM Studio entries of an OpenAI-style model list."""
    entries = payload.get("data") if isinstance(payload, dict) else payload
    if not isinstance(entries, list):
        return None
    dicts = [e for e in entries if isinstance(e, dict)]
    matching = [e for e in dicts if e.get("id") == model] or (dicts if len(dicts) == 1 else [])
    for entry in matching:
        window = window_from_entry(entry)
        if window:
            return window
    return None


def window_from_entry(entry: dict[str, Any]) -> int | None:
    # The loaded/served size first: a model may be trained longer than it is served.
    for key in ("max_model_len", "loaded_context_length", "context_length", "max_context_length"):
        window = _positive(entry.get(key))
        if window:
            return window
    top = entry.get("top_provider")
    if isinstance(top, dict):
        return _positive(top.get("context_length"))
    return None


def window_from_props(payload: Any) -> int | None:
    """llama.cpp's ``/props``: the server's ``n_ctx`` (per slot)."""
    if not isinstance(payload, dict):
        return None
    settings = payload.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return _positive(settings.get("n_ctx"))
    return _positive(payload.get("n_ctx"))


def window_from_ollama(payload: Any) -> int | None:
    """Ollama's ``/api/show``: ``num_ctx`` if the model sets it, else its context length."""
    if not isinstance(payload, dict):
        return None
    parameters = payload.get("parameters")
    if isinstance(parameters, str):
        match = re.search(r"^\s*num_ctx\s+(\d+)", parameters, re.MULTILINE)
        if match:
            return _positive(match.group(1))
    info = payload.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length"):
                window = _positive(value)
                if window:
                    return window
    return None


async def _get_json(
    client: httpx.AsyncClient, method: str, url: str, body: Any = None
) -> Any | None:
    """One request; None for any failure (not found, not JSON, too big, timeout)."""
    import httpx

    try:
        async with client.stream(method, url, json=body) as response:
            if response.status_code != 200:
                return None
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_BODY:
                    return None
        return json.loads(bytes(data))
    except (httpx.HTTPError, ValueError, OSError) as exc:
        log.debug("model lookup %s %s failed: %s", method, url, exc)
        return None


def _client(headers: dict[str, str], timeout: float) -> httpx.AsyncClient:
    # httpx is imported here, on the first lookup: the demo model, ``planshell -p`` and
    # the TUI's first frame never need its ~45 ms (and the Rich it brings along).
    import httpx

    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout), headers={"user-agent": "planshell", **headers}
    )


async def probe_window(
    base_url: str, model: str, headers: dict[str, str], timeout: float = LOOKUP_TIMEOUT
) -> int | None:
    """Ask an OpenAI-compatible server for ``model``'s window, in each server's own place."""
    base = base_url.rstrip("/")
    root = server_root(base)
    async with _client(headers, timeout) as client:
        window = window_from_model_list(await _get_json(client, "GET", f"{base}/models"), model)
        if window:
            return window
        window = window_from_props(await _get_json(client, "GET", f"{root}/props"))
        if window:
            return window
        lmstudio = await _get_json(client, "GET", f"{root}/api/v0/models/{model}")
        if isinstance(lmstudio, dict):
            window = window_from_entry(lmstudio)
            if window:
                return window
        # POST only to a server that says it is Ollama (GET /api/version).
        version = await _get_json(client, "GET", f"{root}/api/version")
        if not (isinstance(version, dict) and "version" in version):
            return None
        return window_from_ollama(
            await _get_json(client, "POST", f"{root}/api/show", {"model": model})
        )


async def list_models(
    base_url: str,
    headers: dict[str, str],
    timeout: float = LOOKUP_TIMEOUT,
    *,
    server_order: bool = False,
) -> list[str]:
    """The model ids an OpenAI-compatible server offers (``GET /models``); [] if it won't say.

    Sorted, or in the server's own order with ``server_order`` (servers list the
    loaded or newest model first: that is the one to pick when none was chosen).
    Ids are the server's text: only plain identifiers are returned (no spaces,
    control characters or escapes), so a listing cannot put markup on screen.
    """
    async with _client(headers, timeout) as client:
        payload = await _get_json(client, "GET", f"{base_url.rstrip('/')}/models")
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        return []
    ids = [e.get("id") for e in entries if isinstance(e, dict)]
    plain = list(dict.fromkeys(i for i in ids if isinstance(i, str) and _MODEL_ID.match(i)))
    return plain if server_order else sorted(plain)


def auth_headers(provider: object) -> dict[str, str]:
    """The headers a provider sends (its key included), for lookups on the same server."""
    headers = dict(getattr(provider, "headers", {}) or {})
    key = getattr(provider, "api_key", None)
    if key:
        if getattr(provider, "name", "") == "anthropic":
            headers.setdefault("x-api-key", key)
        else:
            headers.setdefault("authorization", f"Bearer {key}")
    return headers


async def find_window(
    provider: object,
    configured: int | None = None,
    *,
    default_urls: dict[str, str] | None = None,
    timeout: float = LOOKUP_TIMEOUT,
) -> int | None:
    """settings > the server (OpenAI-compatible, not the vendor's own API) > the table."""
    if configured:
        return configured
    model = str(getattr(provider, "model", "") or "")
    name = str(getattr(provider, "name", "") or "")
    base = str(getattr(provider, "base_url", "") or "").rstrip("/")
    if not model:
        return None
    key = (base, model)
    if key in _CACHE:
        return _CACHE[key]
    window: int | None = None
    vendor = (default_urls or {}).get(name, "").rstrip("/")
    if name == "openai" and base and base != vendor:
        window = await probe_window(base, model, auth_headers(provider), timeout)
    if window is None:
        window = table_window(model)
    _CACHE[key] = window
    return window


def clear_cache() -> None:
    _CACHE.clear()
