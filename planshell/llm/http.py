"""HTTP behaviour shared by the streaming providers.

Everything that is not about a vendor's wire format lives here: the httpx
client and its timeouts, the retry loop (backoff, jitter, ``Retry-After``),
the rule that nothing is retried once output has reached the user, and the
mapping of HTTP and transport failures to one readable sentence.
Providers subclass :class:`StreamingHTTPProvider` and supply only
``_build_request`` and ``_parse``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from planshell.llm.sse import SSEEvent, aiter_sse
from planshell.llm.types import Message, ProviderError, StreamEvent, ToolSpec
from planshell.logs import register_headers, register_secret

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_IDLE_TIMEOUT = 120.0
DEFAULT_MAX_ATTEMPTS = 4
DEFAULT_BACKOFF_BASE = 0.5
DEFAULT_MAX_RETRY_WAIT = 30.0

RETRYABLE_STATUSES = frozenset({408, 409, 429})
# In-stream error types (OpenAI / Anthropic vocabulary) that a retry may cure.
TRANSIENT_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "rate_limit_error", "server_error", "timeout", "overloaded"}
)
_CONTEXT_LENGTH = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens"
    r"|input is too long|reduce the length"
    # Gemini: "The input token count (…) exceeds the maximum number of tokens allowed (…)"
    r"|input token count .{0,40}exceeds the maximum",
    re.IGNORECASE,
)
# A spent quota or balance (OpenAI's insufficient_quota, Gemini's "exceeded your
# current quota … billing"): waiting a moment cannot help, unlike a rate limit.
_QUOTA_EXHAUSTED = re.compile(
    r"exceeded your current quota|check your plan and billing|insufficient[_ ]quota"
    r"|insufficient (balance|credits?)|credit balance is too low",
    re.IGNORECASE,
)
_LOCAL_HOSTS = frozenset({"localhost", "0.0.0.0", "::1", "[::1]"})
# Shown to the user: long enough for a server's explanation or the line of a
# traceback that matters; the whole body always goes to the log.
_MAX_SERVER_MESSAGE = 1000

Sleep = Callable[[float], Awaitable[None]]


# --- small helpers -----------------------------------------------------------


def build_client(
    connect_timeout: float, idle_timeout: float, base_url: str = ""
) -> httpx.AsyncClient:
    """An async client whose read timeout bounds the gap between two chunks.

    For a plain ``http://`` base URL the client gets a bare TLS context with no
    CA certificates: loading the system or certifi bundle costs tens of
    milliseconds on the first request and is never used, and should a request
    ever reach an ``https://`` URL, verification against no CAs fails closed.
    """
    timeout = httpx.Timeout(
        connect=connect_timeout, read=idle_timeout, write=idle_timeout, pool=connect_timeout
    )
    verify: ssl.SSLContext | bool = True
    if urlsplit(base_url).scheme == "http":
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies; trusts nothing
    return httpx.AsyncClient(timeout=timeout, headers={"user-agent": "planshell"}, verify=verify)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def server_message(body: bytes | str | Any) -> str | None:
    """The server's own explanation from an error body, shortened for display.

    Accepts raw bytes/text (JSON or not) or an already parsed JSON payload.
    """
    payload: Any = body
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        if not text.strip():
            return None
        try:
            payload = json.loads(text)
        except ValueError:
            return _shorten(text)
    payload = _unwrap(payload)
    if not isinstance(payload, dict | str):
        return _shorten(json.dumps(payload, ensure_ascii=False)) if payload else None
    message = _find_message(payload)
    if message is None and isinstance(payload, dict) and set(payload) - {"error", "type"}:
        return _shorten(json.dumps(payload, ensure_ascii=False))  # unknown shape: show it
    return _shorten(message) if message else None


def _unwrap(payload: Any) -> Any:
    """Gemini wraps its error object in a list: ``[{"error": {…}}]``."""
    if isinstance(payload, list) and payload and isinstance(payload[0], dict):
        return payload[0]
    return payload


def _find_message(payload: Any) -> str | None:
    if isinstance(payload, str):
        return payload
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    for key in ("error", "message", "detail"):
        if isinstance(payload.get(key), str):
            return str(payload[key])
    return None


def error_type(payload: Any) -> str | None:
    """The machine-readable error type/code of an error body, if any.

    Nested (``{"error": {"type": …}}``, Gemini's ``status``) or flat (vLLM's
    ``{"object": "error", "type": …}``).
    """
    payload = _unwrap(payload)
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    source = error if isinstance(error, dict) else payload
    for key in ("type", "status", "code"):
        kind = source.get(key)
        if isinstance(kind, str) and kind:
            return kind
    return None


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _MAX_SERVER_MESSAGE:
        text = text[: _MAX_SERVER_MESSAGE - 1] + "…"
    return text


def _sentence(main: str, note: str | None = None, advice: str | None = None) -> str:
    """``main (note); advice.`` — one sentence with exactly one final full stop."""
    if note:
        main = f"{main} ({_trim_stop(note)})"
    if advice:
        main = f"{main}; {advice}"
    return _trim_stop(main) + "."


def _trim_stop(text: str) -> str:
    """Drop one trailing full stop, but keep an ellipsis intact."""
    text = text.rstrip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    return text


def is_local_url(url: str) -> bool:
    """True for loopback URLs, where a refused connection means "not running"."""
    host = (urlsplit(url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def is_quota_exhausted(message: str | None, kind: str | None = None) -> bool:
    return bool(
        (kind and "insufficient_quota" in kind) or (message and _QUOTA_EXHAUSTED.search(message))
    )


def is_context_length_error(message: str | None, kind: str | None = None) -> bool:
    return bool(
        (kind and "context_length" in kind) or (message and _CONTEXT_LENGTH.search(message))
    )


# --- error mapping -----------------------------------------------------------


class StreamCutOff(ProviderError):
    """The body ended cleanly before the reply's final event."""


class HTTPStatusFailure(ProviderError):
    """A non-2xx answer; carries the wait the server asked for, if any."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retryable: bool,
        retry_after: float | None,
        config: bool = False,
    ) -> None:
        super().__init__(message, retryable=retryable, config=config)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class ErrorContext:
    """What a user needs to fix a failure: which URL, model and key."""

    provider: str
    model: str
    base_url: str
    endpoint: str
    key_env: str
    has_key: bool
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT


def status_error(
    status: int, body: bytes, headers: Mapping[str, str], ctx: ErrorContext
) -> HTTPStatusFailure:
    """Map an HTTP error answer to a one-sentence ProviderError."""
    log.warning(
        "%s answered HTTP %d: %s", ctx.endpoint, status, body.decode("utf-8", errors="replace")
    )  # whole: the shown message is shortened
    detail = server_message(body)
    kind = _body_error_type(body)
    retryable = status in RETRYABLE_STATUSES or status >= 500
    should_retry = headers.get("x-should-retry", "").lower()
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    # A key, a model name or a URL to change, or an account to top up: not a retry.
    config = status in (401, 403, 404)
    if status < 500 and is_context_length_error(detail, kind):
        retryable = False
        main, advice = (
            f"The conversation is too long for the context window of model '{ctx.model}'",
            None,
        )
    elif status in (402, 403, 429) and is_quota_exhausted(detail, kind):
        retryable, config = False, True
        main = f"The {ctx.provider} account has no quota or credit left"
        advice = "check the plan and billing of the account behind the API key"
    else:
        main, advice = _status_wording(status, headers, ctx)
    note = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    return HTTPStatusFailure(
        _sentence(main, note, advice),
        status=status,
        retryable=retryable,
        retry_after=parse_retry_after(headers),
        config=config and not retryable,
    )


def _status_wording(
    status: int, headers: Mapping[str, str], ctx: ErrorContext
) -> tuple[str, str | None]:
    """What went wrong and what the user can do about it."""
    server = f"The {ctx.provider} server"
    if status in (401, 403) and not ctx.has_key:
        return f"{server} requires an API key", f"set {ctx.key_env}"
    if status == 401:
        return "The API key was rejected", f"check {ctx.key_env}"
    if status == 403:
        return "Access was denied", (
            f"check that {ctx.key_env} is valid and allowed to use model '{ctx.model}'"
        )
    if status == 404:
        return f"Model '{ctx.model}' or URL {ctx.endpoint} was not found", None
    if status in (400, 422):
        return f"{server} rejected the request", None
    if status == 413:
        return f"The request is too large for the {ctx.provider} server", None
    if status == 429:
        return f"{server} is rate limiting requests", "wait a moment and try again"
    if status >= 500:
        return f"{server} failed", None
    if 300 <= status < 400:
        where = headers.get("location", "another address")
        return f"The server redirected the request to {where}", "use that as the base URL"
    return f"{server} refused the request", None


def _body_error_type(body: bytes) -> str | None:
    try:
        return error_type(json.loads(body))
    except ValueError:
        return None


def transport_error(exc: Exception, ctx: ErrorContext) -> ProviderError:
    """Map an httpx exception to a one-sentence ProviderError."""
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        message = f"Timed out after {ctx.connect_timeout:g} s connecting to {ctx.base_url}."
        return ProviderError(message, retryable=True)
    if isinstance(exc, httpx.ReadTimeout):
        message = (
            f"The {ctx.provider} server at {ctx.base_url} sent nothing"
            f" for {ctx.idle_timeout:g} s, so the request was abandoned."
        )
        return ProviderError(message, retryable=True)
    if isinstance(exc, httpx.ConnectError):
        return ProviderError(_connect_message(exc, ctx), retryable=True)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return ProviderError(bad_base_url(ctx.base_url), config=True)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        main = f"The connection to {ctx.base_url} was cut off before the reply finished"
        return ProviderError(_sentence(main, reason), retryable=True)
    main = f"The request to {ctx.base_url} failed"
    return ProviderError(_sentence(main, reason), retryable=isinstance(exc, httpx.TransportError))


EXAMPLE_BASE_URL = "http://127.0.0.1:11434/v1"


def bad_base_url(url: str) -> str:
    """Why ``url`` cannot be used, with the fix: a settings change, never a retry."""
    return (
        f"The base URL '{url}' is not a valid http(s) URL: --base-url (or base_url in the "
        f"config) must be an http(s) URL like {EXAMPLE_BASE_URL}."
    )


def _connect_message(exc: Exception, ctx: ErrorContext) -> str:
    reason = _connect_reason(exc)
    if is_local_url(ctx.base_url):
        return (
            f"Could not connect to {ctx.base_url} ({reason}); is your local model server"
            " (Ollama, vLLM, LM Studio, …) running at that URL?"
        )
    return f"Could not connect to {ctx.base_url} ({reason}); check the base URL and your network."


def _connect_reason(exc: BaseException) -> str:
    """A short reason, digging through httpx's wrapping for the OS error."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).lower()
        if isinstance(seen, ConnectionRefusedError) or "refused" in text:
            return "connection refused"
        if isinstance(seen, socket.gaierror) or "name or service" in text:
            return "host name not found"
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


# --- retry policy ------------------------------------------------------------


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; the server's ``Retry-After`` wins (capped)."""

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_base: float = DEFAULT_BACKOFF_BASE
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    sleep: Sleep = field(default=asyncio.sleep, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_wait)
        backoff = self.backoff_base * 2.0 ** (attempt - 1)
        return min(backoff * random.uniform(0.5, 1.0), self.max_retry_wait)

    async def wait(self, attempt: int, retry_after: float | None = None) -> None:
        await self.sleep(self.delay(attempt, retry_after))


# --- the shared provider base -------------------------------------------------


@dataclass(frozen=True)
class StreamRequest:
    """One POST: where to, which headers, which JSON body."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


class StreamingHTTPProvider:
    """Base for providers that POST JSON and read an SSE reply.

    Subclasses set ``name``, ``key_env`` and ``display_name`` and implement
    ``_build_request`` and ``_parse``. ``_parse`` turns SSE events into stream
    events and raises ProviderError (``retryable`` when a retry may help);
    this class decides whether to retry, which is only while nothing has
    been yielded to the caller.

    Callers should consume ``stream()`` inside ``contextlib.aclosing`` so the
    connection closes as soon as they stop reading; cancelling the task
    that awaits the next event closes it too.
    """

    name = ""
    display_name = ""
    key_env = ""
    default_base_url = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        max_tokens: int | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        api_key_env: str | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        stream_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key = api_key or None
        self.headers = dict(headers or {})
        self.max_tokens = max_tokens
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.retry = RetryPolicy(max(1, max_attempts), backoff_base, max_retry_wait)
        # Request options from settings (``[request]``): what some servers need
        # to use tools at all (llama-cpp-python ignores ``tools`` without a
        # ``tool_choice``) or to report usage.
        self.tool_choice = tool_choice
        self.extra_body = dict(extra_body or {})
        self.stream_options = (
            {"include_usage": True} if stream_options is None else dict(stream_options)
        )
        self._next_budget: int | None = None  # one request's raised max_tokens
        if api_key_env:
            self.key_env = api_key_env
        # Whatever a server echoes back or an exception carries, the key stays out of the log.
        register_secret(self.api_key)
        register_headers(self.headers)
        self._client: httpx.AsyncClient | None = None

    @property
    def label(self) -> str:
        return f"{self.name} · {self.model}"

    async def aclose(self) -> None:
        """Close pooled connections; the provider may still be used afterwards."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    # --- to be provided by subclasses ---

    def _build_request(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        max_output: int | None = None,
    ) -> StreamRequest:
        raise NotImplementedError

    def _parse(self, events: AsyncIterator[SSEEvent]) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

    def default_output_budget(self) -> int | None:
        """The reply token limit sent when none is configured (None: the server's)."""
        return None

    # --- shared machinery ---

    def _output_budget(self, cap: int | None = None) -> int | None:
        """``max_tokens`` for the request being built: a one-off raise, else the setting,
        never above the caller's ``cap`` for this request."""
        budget = self._next_budget or self.max_tokens
        if cap is None:
            return budget
        return cap if budget is None else min(budget, cap)

    def raise_output_budget(self) -> int | None:
        """Double the reply token limit for the next request only.

        Used once when a tool call was cut off by the limit. Returns the new
        limit, or None when the limit in force is the server's own (unknown),
        so there is nothing to raise.
        """
        current = self.max_tokens or self.default_output_budget()
        if current is None:
            return None
        self._next_budget = current * 2
        return self._next_budget

    def _error_context(self, endpoint: str) -> ErrorContext:
        return ErrorContext(
            provider=self.display_name,
            model=self.model,
            base_url=self.base_url,
            endpoint=endpoint,
            key_env=self.key_env,
            has_key=self.api_key is not None,
            connect_timeout=self.connect_timeout,
            idle_timeout=self.idle_timeout,
        )

    def _event_json(self, event: SSEEvent) -> Any:
        """The JSON payload of a stream event; garbage is a protocol error."""
        try:
            return json.loads(event.data)
        except ValueError:
            raise ProviderError(
                _sentence(
                    f"The {self.display_name} server sent a malformed stream event",
                    _shorten(event.data[:80]),
                )
            ) from None

    def _stream_error(self, payload: Any) -> ProviderError:
        """An ``error`` reported inside an otherwise successful stream."""
        log.warning("%s: error event in the stream: %s", self.name, json.dumps(payload))
        detail = server_message(payload) or "no details"
        kind = error_type(payload)
        if is_context_length_error(detail, kind):
            main = f"The conversation is too long for the context window of model '{self.model}'"
            return ProviderError(_sentence(main, f"server said: {detail}"))
        main = f"The {self.display_name} server reported an error mid-stream"
        return ProviderError(
            _sentence(main, f"server said: {detail}"), retryable=kind in TRANSIENT_ERROR_TYPES
        )

    def _cut_off(self) -> ProviderError:
        """The body ended cleanly but before the reply's final event."""
        return StreamCutOff(
            f"The stream was cut off before the reply finished: the {self.display_name}"
            " server closed the connection early.",
            retryable=True,
        )

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None or self._client.is_closed:
            self._client = build_client(self.connect_timeout, self.idle_timeout, self.base_url)
        return self._client

    async def stream(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        max_output: int | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one reply, retrying transient failures until output starts."""
        request = self._build_request(system, messages, tools, max_output)
        self._next_budget = None  # a raised limit is for this one request
        ctx = self._error_context(request.url)
        attempt = 0
        while True:
            attempt += 1
            yielded = False
            received = _Counter()
            try:
                async with self._get_client().stream(
                    "POST", request.url, json=request.body, headers=request.headers
                ) as response:
                    await _check_response(response, ctx)
                    async with (
                        aclosing(received.count(aiter_sse(response.aiter_bytes()))) as sse,
                        aclosing(self._parse(sse)) as events,
                    ):
                        async for event in events:
                            yielded = True
                            yield event
                return
            except StreamCutOff as exc:
                error = exc if received.events else _sent_nothing(ctx)
            except ProviderError as exc:
                error = exc
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                error = transport_error(exc, ctx)
                error.__cause__ = exc
            if yielded:
                raise ProviderError(error.message, retryable=False, partial=True) from error
            if not error.retryable or attempt >= self.retry.max_attempts:
                raise _final(error, attempt)
            retry_after = getattr(error, "retry_after", None)
            log.info("%s: attempt %d failed (%s); retrying", self.name, attempt, error.message)
            await self.retry.wait(attempt, retry_after)


@dataclass
class _Counter:
    """Counts the SSE events of one response, to tell "nothing" from "cut off"."""

    events: int = 0

    async def count(self, sse: AsyncIterator[SSEEvent]) -> AsyncGenerator[SSEEvent, None]:
        async with aclosing(sse):  # type: ignore[type-var]
            async for event in sse:
                self.events += 1
                yield event


def _sent_nothing(ctx: ErrorContext) -> ProviderError:
    """A 200 event stream with no events: the server failed without saying why.

    llama-cpp-python does this for a prompt larger than its context and for
    some requests it cannot serve; asking again gets the same, so no retry.
    """
    return ProviderError(
        f"The {ctx.provider} server at {ctx.base_url} sent nothing (an empty event stream for"
        f" model '{ctx.model}'); check its log for the reason."
    )


def _final(error: ProviderError, attempts: int) -> ProviderError:
    """The error to raise once retrying stops, noting how often we tried."""
    if not error.retryable or attempts < 2 or not error.message.endswith("."):
        return error  # a message ending in a question reads badly with a suffix
    final = ProviderError(
        f"{_trim_stop(error.message)}; gave up after {attempts} attempts.", retryable=True
    )
    final.__cause__ = error
    return final


async def _check_response(response: httpx.Response, ctx: ErrorContext) -> None:
    """Raise for error statuses and for 200 answers that are not a stream."""
    if response.status_code >= 300 or response.status_code < 200:
        try:
            body = await response.aread()
        except httpx.HTTPError:
            body = b""
        raise status_error(response.status_code, body, response.headers, ctx)
    content_type = response.headers.get("content-type", "").lower()
    if content_type.startswith(("text/html", "application/xhtml")):
        body = await response.aread()
        log.warning(
            "%s answered a web page: %s", ctx.endpoint, body[:4000].decode(errors="replace")
        )
        raise ProviderError(
            f"The server at {ctx.endpoint} answered with a web page, not a stream;"
            f" check the base URL ({ctx.base_url}): an OpenAI-compatible one usually ends in /v1."
            if ctx.provider.startswith("OpenAI")
            else f"The server at {ctx.endpoint} answered with a web page, not a stream;"
            f" check the base URL ({ctx.base_url})."
        )
    if content_type.startswith("application/json"):
        body = await response.aread()
        detail = server_message(body)
        raise ProviderError(
            _sentence(
                f"The {ctx.provider} server answered with JSON instead of a stream",
                f"server said: {detail}" if detail else None,
            )
        )
