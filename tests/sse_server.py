"""A scripted HTTP/1.1 server on 127.0.0.1 for exercising streaming clients.

It is a real asyncio socket server (not a mock transport) so tests see what
production sees: TCP writes that split events anywhere, chunked bodies that
are cut mid-way, keep-alive reuse and clients that hang up early.

Use in tests::

    from tests.sse_server import Response, SSEServer  # conftest provides ``sse_server``

    async def test_x(sse_server: SSEServer) -> None:
        sse_server.add(Response.sse(b"data: hi\\n\\n"))
        ... request sse_server.url ...
        assert sse_server.requests[0].json["model"] == "m"

Each request takes the next queued :class:`Response` (the last one is
reused when ``repeat_last`` is set); with nothing queued the server answers
418 with a JSON error so the mistake is obvious.

Standalone (for end-to-end tests of the CLI)::

    python -m tests.sse_server --port 0 --script FILE [--log REQUESTS.jsonl]

prints ``PORT=<n>`` on its first line, then serves until killed. ``--log``
appends one JSON line per request (method, path, headers, json).

Script format (JSON): either a list of responses or an object
``{"responses": [...], "repeat_last": false, "routes": {"/v1/models": {...}}}``.
``routes`` answers requests for a path (query string ignored) with the same
response every time, outside the queue: a client's side requests (a model
list asked for at start-up) then never take a scripted reply, whenever they
happen. Each response object may have:

- ``status`` (default 200) and ``headers`` (object of strings);
- the body, as exactly one of:
  ``sse_file`` (path of an SSE transcript, relative to the script file),
  ``events`` (list of ``{"event": name?, "data": str-or-JSON}`` formatted as SSE),
  ``json`` (any JSON value, sent with ``content-type: application/json``),
  ``body`` (a string sent as is);
- ``chunk_size`` (split the body into writes of this many bytes; default:
  one write per SSE event for streams, one write otherwise);
- ``delay`` (seconds between writes), ``framing`` (``chunked`` | ``length``
  | ``close``), ``cut`` (close the socket before the body is complete),
  ``hold`` (seconds to keep the stream open after the last write, ending
  early if the client hangs up), ``wait_for_file`` (a path, relative to the
  script file: the answer starts only once that file exists, so an
  end-to-end test can change the world between two model replies at a point
  it chooses; ending early if the client hangs up).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Literal

Framing = Literal["chunked", "length", "close"]
DATA_DIR = Path(__file__).parent / "data" / "sse"
GATE_POLL = 0.02  # seconds between checks for a response's ``wait_for_file``


# --- building responses ------------------------------------------------------


def sse_event(data: Any, event: str | None = None) -> bytes:
    """Format one SSE event; non-string data is JSON-encoded."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines = [f"event: {event}"] if event else []
    lines += [f"data: {line}" for line in text.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


def split_events(body: bytes) -> list[bytes]:
    """Split an SSE body after each blank line, keeping the separators."""
    normalised = body.replace(b"\r\n", b"\n")
    if normalised != body:
        return [body]  # CRLF bodies: callers choose their own chunking
    parts = body.split(b"\n\n")
    chunks = [part + b"\n\n" for part in parts[:-1]]
    if parts[-1]:
        chunks.append(parts[-1])
    return chunks


def split_every(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def load_transcript(name: str) -> bytes:
    """An SSE transcript from ``tests/data/sse``."""
    return (DATA_DIR / name).read_bytes()


def closed_port() -> int:
    """A local port with nothing listening, for connection-refused tests."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Response:
    """One scripted answer.

    ``chunks`` are written as separate TCP writes; a float item pauses for
    that many seconds instead.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Sequence[bytes | float] = ()
    delay: float = 0.0
    framing: Framing = "chunked"
    cut: bool = False
    hold: float = 0.0
    wait_for_file: Path | None = None  # answer only once this file exists

    @classmethod
    def sse(
        cls,
        body: bytes | str | Iterable[bytes | float],
        *,
        chunk_size: int | None = None,
        **kw: Any,
    ) -> Response:
        """A ``text/event-stream`` answer, one write per event by default."""
        if isinstance(body, str):
            body = body.encode()
        if isinstance(body, bytes):
            chunks: list[bytes | float] = list(
                split_every(body, chunk_size) if chunk_size else split_events(body)
            )
        else:
            chunks = list(body)
        headers = {"content-type": "text/event-stream", **kw.pop("headers", {})}
        return cls(headers=headers, chunks=chunks, **kw)

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
        body = json.dumps(payload).encode()
        merged = {"content-type": "application/json", **(headers or {})}
        return cls(status=status, headers=merged, chunks=[body], framing="length")


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One OpenAI chat-completions streaming event carrying ``delta``."""
    return sse_event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def openai_tool_call_response(name: str, args: dict[str, Any]) -> Response:
    """An OpenAI-compatible streamed reply that calls tool ``name`` with ``args``."""
    call = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return Response.sse(
        [
            openai_chunk({"role": "assistant", "tool_calls": [call]}),
            openai_chunk({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )


def openai_text_response(text: str) -> Response:
    """An OpenAI-compatible streamed reply that says ``text`` and stops."""
    return Response.sse(
        [
            openai_chunk({"role": "assistant", "content": text}),
            openai_chunk({}, "stop"),
            b"data: [DONE]\n\n",
        ]
    )


# --- recording requests -------------------------------------------------------


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float
    client_closed_at: float | None = None
    client_closed_early: bool = False
    finished: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def to_dict(self) -> dict[str, Any]:
        try:
            body: Any = self.json
        except ValueError:
            body = self.body.decode(errors="replace")
        return {"method": self.method, "path": self.path, "headers": self.headers, "json": body}


class _ClientGone(Exception):
    """The client closed the connection while we were answering."""


# --- the server -------------------------------------------------------------


class SSEServer:
    """Answers each request with the next scripted :class:`Response`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, log_path: Path | None = None):
        self.host = host
        self._port = port
        self._queue: deque[Response] = deque()
        self.repeat_last = False
        # Fixed answers by request path, outside the queue (see the module docstring).
        self.routes: dict[str, Response] = {}
        self.requests: list[RecordedRequest] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._log_path = log_path

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def add(self, *responses: Response) -> None:
        self._queue.extend(responses)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connect, self.host, self._port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    async def __aenter__(self) -> SSEServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_for_close(self, index: int = -1, timeout: float = 5.0) -> RecordedRequest:
        """Wait until request ``index`` has been answered or abandoned."""
        request = self.requests[index]
        await asyncio.wait_for(request.finished.wait(), timeout)
        return request

    def _next_response(self) -> Response:
        if len(self._queue) > 1 or (self._queue and not self.repeat_last):
            return self._queue.popleft()
        if self._queue:
            return self._queue[0]
        return Response.json(418, {"error": {"message": "sse_server: no scripted response left"}})

    # --- connection handling ---

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, _ClientGone):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        prefix = b""
        while True:
            request = await _read_request(reader, prefix)
            if request is None:
                return
            self.requests.append(request)
            self._log(request)
            route = self.routes.get(request.path.partition("?")[0])
            answer = _Answer(request, route or self._next_response(), reader, writer)
            try:
                keep_alive = await answer.run()
            finally:
                request.finished.set()
            if not keep_alive:
                return
            prefix = answer.early_bytes

    def _log(self, request: RecordedRequest) -> None:
        if self._log_path is not None:
            with self._log_path.open("a") as log:
                log.write(json.dumps(request.to_dict()) + "\n")


async def _read_request(
    reader: asyncio.StreamReader, prefix: bytes = b""
) -> RecordedRequest | None:
    try:
        head = prefix + await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return RecordedRequest(method, path, headers, body, received_at=time.monotonic())


class _Answer:
    """Writes one scripted response while watching for the client leaving."""

    def __init__(
        self,
        request: RecordedRequest,
        response: Response,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.request, self.response = request, response
        self.reader, self.writer = reader, writer
        self.gone = asyncio.Event()
        self.early_bytes = b""  # start of the next request, read by the watcher

    async def run(self) -> bool:
        """Answer; return True when the connection may serve another request."""
        watcher = asyncio.create_task(self._watch())
        try:
            await self._write_all()
        except (_ClientGone, ConnectionError):
            self._mark_gone()
            return False
        finally:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher
        r = self.response
        return not (r.cut or r.framing == "close") and self.request.client_closed_at is None

    async def _watch(self) -> None:
        # The client sends nothing while we answer (no pipelining), so EOF
        # here means it hung up; a byte is the next request arriving just as
        # the answer completed, and is handed on to the request reader.
        data = b""
        with contextlib.suppress(ConnectionError):
            data = await self.reader.read(1)
        if data:
            self.early_bytes = data
        else:
            self._mark_gone()

    def _mark_gone(self) -> None:
        if self.request.client_closed_at is None:
            self.request.client_closed_at = time.monotonic()
            self.request.client_closed_early = True
        self.gone.set()

    async def _pause(self, seconds: float) -> None:
        if seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.gone.wait(), seconds)
        if self.gone.is_set():
            raise _ClientGone

    async def _send(self, data: bytes) -> None:
        if self.gone.is_set():
            raise _ClientGone
        self.writer.write(data)
        await self.writer.drain()

    async def _wait_for_file(self, path: Path) -> None:
        """Hold the answer until ``path`` exists (polled; a test creates it when ready)."""
        while not path.exists():
            await self._pause(GATE_POLL)

    async def _write_all(self) -> None:
        r = self.response
        if r.wait_for_file is not None:
            await self._wait_for_file(r.wait_for_file)
        body = b"".join(c for c in r.chunks if isinstance(c, bytes))
        await self._send(self._head(len(body)))
        first = True
        for chunk in r.chunks:
            if isinstance(chunk, float | int):
                await self._pause(float(chunk))
                continue
            if not first:
                await self._pause(r.delay)
            first = False
            if chunk:
                await self._send(self._frame(chunk))
        await self._pause(r.hold)
        if r.cut:
            return
        if r.framing == "chunked":
            await self._send(b"0\r\n\r\n")

    def _head(self, body_length: int) -> bytes:
        r = self.response
        try:
            reason = HTTPStatus(r.status).phrase
        except ValueError:
            reason = "Unknown"
        headers = dict(r.headers)
        if r.framing == "chunked":
            headers["transfer-encoding"] = "chunked"
        elif r.framing == "length":
            # A cut body promises more than it delivers.
            headers["content-length"] = str(body_length + (100 if r.cut else 0))
        if r.framing == "close" or r.cut:
            headers["connection"] = "close"
        lines = [f"HTTP/1.1 {r.status} {reason}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _frame(self, chunk: bytes) -> bytes:
        if self.response.framing == "chunked":
            return b"%x\r\n%s\r\n" % (len(chunk), chunk)
        return chunk


# --- standalone mode -----------------------------------------------------------


def response_from_script(spec: dict[str, Any], base: Path) -> Response:
    """Build a Response from one entry of a ``--script`` file."""
    if "sse_file" in spec:
        body = (base / spec["sse_file"]).read_bytes()
    elif "events" in spec:
        body = b"".join(sse_event(e["data"], e.get("event")) for e in spec["events"])
    elif "json" in spec:
        body = json.dumps(spec["json"]).encode()
    else:
        body = str(spec.get("body", "")).encode()
    is_json = "json" in spec
    content_type = "application/json" if is_json else "text/event-stream"
    headers = {"content-type": content_type, **spec.get("headers", {})}
    size = spec.get("chunk_size")
    if size:
        chunks = split_every(body, int(size))
    else:
        chunks = [body] if is_json or "body" in spec else split_events(body)
    return Response(
        status=int(spec.get("status", 200)),
        headers=headers,
        chunks=list(chunks),
        delay=float(spec.get("delay", 0.0)),
        framing=spec.get("framing", "length" if is_json else "chunked"),
        cut=bool(spec.get("cut", False)),
        hold=float(spec.get("hold", 0.0)),
        wait_for_file=base / spec["wait_for_file"] if "wait_for_file" in spec else None,
    )


def load_script(path: Path) -> tuple[list[Response], bool]:
    script = json.loads(path.read_text())
    if isinstance(script, list):
        script = {"responses": script}
    responses = [response_from_script(spec, path.parent) for spec in script["responses"]]
    return responses, bool(script.get("repeat_last", False))


def load_routes(path: Path) -> dict[str, Response]:
    """The script's fixed answers by path (``routes``), if it has any."""
    script = json.loads(path.read_text())
    routes = script.get("routes", {}) if isinstance(script, dict) else {}
    return {name: response_from_script(spec, path.parent) for name, spec in routes.items()}


async def _serve_forever(port: int, script: Path, log_path: Path | None) -> None:
    responses, repeat_last = load_script(script)
    server = SSEServer(port=port, log_path=log_path)
    server.add(*responses)
    server.repeat_last = repeat_last
    server.routes = load_routes(script)
    async with server:
        print(f"PORT={server.port}", flush=True)
        await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve scripted SSE responses on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(args.port, args.script, args.log))


if __name__ == "__main__":
    main(sys.argv[1:])
