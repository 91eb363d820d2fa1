"""A real HTTP server on loopback for the fetch tool, and a resolver that names it.

``docs.test`` resolves to 127.0.0.1 and is the one name whose loopback answer
the tool accepts (``LOOPBACK_NAMES``); ``private.test`` answers 10.0.0.1,
``rebind.test`` answers 127.0.0.1 (not accepted), ``mixed.test`` a public and a
loopback address. Literal addresses never reach the resolver.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from planshell.tools.fetch import FetchTool

NAMES = {
    "docs.test": ["127.0.0.1"],
    "other.test": ["127.0.0.1"],
    "private.test": ["10.0.0.1"],
    "rebind.test": ["127.0.0.1"],
    "mixed.test": ["93.184.216.34", "127.0.0.1"],
}
LOOPBACK_NAMES = frozenset({"docs.test", "other.test"})

PAGE = (
    "<html><head><title>Guide</title><style>body{color:red}</style></head><body>"
    "<h1>Install</h1><p>Run <code>pip install x</code> and read <a href='/more'>more</a>.</p>"
    "<script>document.write('tracking code')</script><ul><li>one</li><li>two</li></ul>"
    "</body></html>"
)


def resolver(host: str) -> list[str]:
    if host not in NAMES:
        raise OSError(f"no such test host {host}")
    return NAMES[host]


@dataclass
class FetchServer:
    port: int
    hosts: list[str] = field(default_factory=list)  # the Host header of every request
    paths: list[str] = field(default_factory=list)

    def url(self, path: str, host: str = "docs.test") -> str:
        return f"http://{host}:{self.port}{path}"


def _handler(server: FetchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def send(self, status: int, kind: str, body: bytes, extra: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            server.hosts.append(self.headers.get("Host", ""))
            server.paths.append(self.path)
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            if parts.path == "/page":
                self.send(200, "text/html; charset=utf-8", PAGE.encode())
            elif parts.path == "/latin1":
                self.send(200, "text/plain; charset=iso-8859-1", "café".encode("latin-1"))
            elif parts.path == "/json":
                self.send(200, "application/json", b'{"ok": true}')
            elif parts.path == "/escape":
                self.send(200, "text/plain", b"red \x1b[31mtext\x1b[0m\x07 end")
            elif parts.path == "/pdf":
                self.send(200, "application/pdf", b"%PDF-1.4")
            elif parts.path == "/big":
                self.send(200, "text/plain", b"x" * 200_000)
            elif parts.path == "/slow":
                time.sleep(3)
                self.send(200, "text/plain", b"late")
            elif parts.path == "/redirect":
                self.send(302, "text/plain", b"", {"Location": query["to"][0]})
            elif parts.path == "/loop":
                self.send(302, "text/plain", b"", {"Location": "/loop"})
            else:
                self.send(404, "text/plain", b"not here")

    return Handler


@contextmanager
def fetch_server() -> Iterator[FetchServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    httpd.daemon_threads = True
    server = FetchServer(httpd.server_address[1])
    httpd.RequestHandlerClass = _handler(server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


def make_fetch_tool(**kwargs: object) -> FetchTool:
    """The fetch tool with the test resolver (docs.test is the loopback server)."""
    return FetchTool(resolver=resolver, loopback_names=LOOPBACK_NAMES, **kwargs)  # type: ignore[arg-type]
