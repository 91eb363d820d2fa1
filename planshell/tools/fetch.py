"""``fetch``: GET one public web page as text (HTML as markdown), nothing more.

The URL is model-chosen, so it is hostile (docs/fetch.md):

* GET only, http(s) only, no credentials in the URL, no proxy from the
  environment; a total timeout and a cap on the bytes read (streamed: the
  read stops at the cap);
* the target is checked after DNS resolution (``net_guard``): loopback,
  private, link-local, metadata and other non-public addresses are refused,
  and the connection goes to the checked address (Host header and TLS SNI carry
  the name), so DNS rebinding between check and connect cannot get through;
* redirects are followed by hand, at most ``MAX_REDIRECTS``, every hop checked
  again, and ``redirect_check`` (plan mode's per-domain question, deny rules)
  asked for each new URL;
* HTML becomes markdown with markdownify (scripts and styles dropped first),
  plain text and JSON are returned as they are, anything else is refused;
  terminal controls are removed from what the model (and the person) sees.

Whether a call may run at all is decided before it (the plan gate in PLAN,
the permission gate elsewhere): the tool declares ``Effect.NETWORK``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar

from pydantic import field_validator

from planshell.sanitize import strip_terminal_controls
from planshell.tools.base import Effect, Tool, ToolArgs, ToolContext, ToolError, ToolResult
from planshell.tools.net_guard import Resolver, TargetRefused, check_url, system_resolver

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 20.0
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "application/json"})
_DROPPED_TAGS = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "head")

#: Asked before following a redirect: ``(url, first_url)`` -> a refusal message, or None
#: to go on. ``first_url`` is the URL the call asked for (the one a person or rule allowed).
RedirectCheck = Callable[[str, str], Awaitable[str | None]]


MAX_CHARS = (500, 100_000)  # the range max_chars is held to (a validator: a lean schema)


class FetchArgs(ToolArgs):
    url: str
    max_chars: int = 20_000

    @field_validator("max_chars")
    @classmethod
    def _in_range(cls, value: int) -> int:
        """Held to ``MAX_CHARS`` rather than refused: the model's guess is rarely wrong twice."""
        return min(max(value, MAX_CHARS[0]), MAX_CHARS[1])


class FetchTool(Tool[FetchArgs]):
    name = "fetch"
    description = "GET a public http(s) URL as text (HTML as markdown)."
    Args = FetchArgs
    effects: ClassVar[frozenset[Effect]] = frozenset({Effect.NETWORK})
    more_hint: ClassVar[str] = "ask for a smaller max_chars or a more specific page"
    concurrent: ClassVar[bool] = True

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        resolver: Resolver = system_resolver,
        loopback_names: frozenset[str] = frozenset(),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.resolver = resolver
        self.loopback_names = loopback_names  # tests only: names whose loopback answer counts
        self.transport = transport
        self.redirect_check: RedirectCheck | None = None  # set by the runtime

    def headline(self, args: FetchArgs) -> str:
        return f"fetch {args.url}"

    async def run(self, args: FetchArgs, ctx: ToolContext) -> ToolResult:
        import httpx  # here, not at the top: ~45 ms every start-up would pay for

        try:
            async with asyncio.timeout(self.timeout):
                return await self._fetch(args)
        except TimeoutError:
            raise ToolError(
                f"fetch {args.url} stopped: no complete answer within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(f"fetch {args.url} failed: {type(exc).__name__}: {exc}") from None

    async def _fetch(self, args: FetchArgs) -> ToolResult:
        import httpx

        url = first = normalise(args.url)
        async with httpx.AsyncClient(
            trust_env=False,  # no proxy: the connection must go to the checked address
            follow_redirects=False,
            timeout=httpx.Timeout(self.timeout),
            transport=self.transport,
        ) as client:
            for hop in range(MAX_REDIRECTS + 1):
                try:
                    target = await asyncio.to_thread(
                        check_url, url, self.resolver, self.loopback_names
                    )
                except TargetRefused as exc:
                    where = f" (redirected to {url})" if hop else ""
                    raise ToolError(f"fetch refused{where}: {exc}") from None
                if hop and self.redirect_check is not None:
                    refusal = await self.redirect_check(url, first)
                    if refusal:
                        raise ToolError(refusal)
                parsed = httpx.URL(url)
                headers = {
                    "Host": parsed.netloc.decode("ascii"),
                    "User-Agent": "planshell-fetch",
                    "Accept": "text/html, text/plain, text/markdown, application/json;q=0.9",
                }
                extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
                pinned = parsed.copy_with(host=target.ip, fragment=None)
                async with client.stream(
                    "GET", pinned, headers=headers, extensions=extensions
                ) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = normalise(str(parsed.join(location)))
                        continue
                    body, cut = await read_capped(response, self.max_bytes)
                    return render(url, response, body, cut, args.max_chars, self.max_bytes)
        raise ToolError(f"fetch {args.url}: more than {MAX_REDIRECTS} redirects; stopped")


def normalise(url: str) -> str:
    """``url`` as httpx sends it (an international name in punycode), or a refusal."""
    import httpx

    try:
        return str(httpx.URL(url.strip()))
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ToolError(f"fetch refused: not a valid URL: {exc}") from None


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """The (decoded) body up to ``limit`` bytes, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def render(
    url: str, response: httpx.Response, body: bytes, cut: bool, max_chars: int, max_bytes: int
) -> ToolResult:
    """The model's text for a response: converted, sanitised, capped, with a header line."""
    kind = response.headers.get("content-type", "")
    mime = kind.split(";", 1)[0].strip().lower()
    charset = response.charset_encoding or "utf-8"
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if mime in HTML_TYPES:
        text = html_to_markdown(text)
    elif not (mime in TEXT_TYPES or mime.endswith("+json")):
        raise ToolError(
            f"fetch {url}: the answer is {mime or 'of no stated type'} (HTTP "
            f"{response.status_code}); fetch returns only HTML, plain text and JSON"
        )
    text = strip_terminal_controls(text).strip()
    notes: list[str] = []
    if cut:
        notes.append(f"(stopped reading at {max_bytes:,} bytes)")
    if len(text) > max_chars:
        text = text[:max_chars]
        notes.append(f"… (cut at {max_chars:,} characters)")
    head = f"{strip_terminal_controls(url)} (HTTP {response.status_code}, {mime})"
    content = "\n\n".join([head, text, *notes]) if notes else f"{head}\n\n{text}"
    data = {"url": url, "status": response.status_code, "type": mime, "bytes": len(body)}
    if response.is_error:
        return ToolResult(content, True, data)
    return ToolResult(content, False, data)


def html_to_markdown(html: str) -> str:
    """Markdown for ``html``: scripts, styles and other non-content dropped first.

    markdownify's ``strip`` keeps a tag's text (a script's code would become
    prose), so those tags are removed from the tree before converting.
    """
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_DROPPED_TAGS):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"# {title}\n\n{text}" if title and title not in text[:200] else text
