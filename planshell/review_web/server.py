"""The loopback server behind a browser review: one review, one token, one port.

Why ``http.server.ThreadingHTTPServer`` (standard library) and not asyncio:
the standard library has a tested HTTP/1.x request parser only in
``http.server`` (asyncio has streams, not HTTP), and a thread per request keeps
markdown rendering, Pygments and the long-lived event stream off the Textual
event loop. Decisions cross back to the engine's loop with
``call_soon_threadsafe``, in the context the review was created in (the app's).
The page is served as HTTP/1.0 (one request per connection), which keeps the
handler simple.

Security (the plan is hostile text and any web page in the same browser is a
hostile client):

* bound to ``127.0.0.1`` only, a random free port (the same port again for the
  same plan while planshell runs, when it is free);
* every URL starts with ``/r/<token>/`` (32 random bytes, compared in constant
  time): a page on another origin cannot guess it;
* ``Host`` must be exactly ``127.0.0.1:PORT`` or ``localhost:PORT`` (421
  otherwise): a DNS-rebinding page talks to us under its own host name;
* only GET, HEAD and POST (405 for anything else); POST bodies are JSON, at
  most 256 KiB (413), need ``Origin`` equal to the page's own origin and the
  per-review CSRF token (not in any URL) in ``X-Planshell-CSRF``: a cross-site
  form cannot send either, and a leaked URL (history) is not enough to decide;
* ``api/seen`` (coverage: the sections the page scrolled wholly into view)
  passes the same checks and can only mark sections seen, never decide;
* every response carries a strict CSP (no inline script or style, nothing from
  the network), ``X-Frame-Options: DENY``, ``nosniff``, ``no-referrer`` and
  ``no-store``.

The server closes on a decision, on :meth:`BrowserReview.close` (the TUI
decided, Esc, the review screen closed, planshell exits: ``atexit``) and on the
page's Close. A closed tab is not the end: a reload after a break must still
find the review, so when the page's event stream has been gone for ``grace``
seconds ``on_page(False)`` is told (the terminal says so) and the server keeps
serving; ``on_page(True)`` when a page connects again.
"""

from __future__ import annotations

import asyncio
import atexit
import bisect
import contextvars
import hashlib
import hmac
import html
import json
import logging
import re
import secrets
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from planshell.markdown import plain_inline
from planshell.plan.blocks import block_lines, section_blocks
from planshell.plan.coverage import UnshownLine, unshown_lines, unshown_summary
from planshell.plan.decider import Decision, Review, ReviewRequest
from planshell.plan.document import PlanDocument, Section, changed_sections, parse_plan
from planshell.plan.review_comments import ReviewComment, comments_from_blocks, comments_message
from planshell.plan.review_format import (
    LEDGER,
    REVIEW_PREFIX,
    Comment,
    FeedbackError,
    ReviewLedger,
    apply_reviews,
    review_lines,
    split_reviews,
)
from planshell.plan.revision_diff import RevisionDiff, revision_diff
from planshell.plan.store import PlanStore, PlanStoreError
from planshell.review_web.render import highlight_css, render_blocks_html
from planshell.sanitize import count_hidden, strip_terminal_controls

__all__ = ["MAX_BODY_BYTES", "BrowserReview", "SeenSection", "close_all"]

MAX_BODY_BYTES = 256 * 1024
MAX_COMMENTS = 500
FIRST_LINES = 300  # source lines of the plan the page itself carries (its first screen)
CHUNK_LINES = 1000  # source lines per chunk the page fetches after it (``sections``)
INLINE_EXTRAS_CHARS = 128 * 1024  # longer plans' notices come after the page (``extras``)
MAX_SEEN = 10_000  # section indices in one "seen" report (more is a malformed request)
HOST = "127.0.0.1"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
_ASSETS = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
_PORTS: dict[str, int] = {}  # plan path -> the port its last review used
_OPEN: weakref.WeakSet[BrowserReview] = weakref.WeakSet()
_log = logging.getLogger(__name__)


def close_all() -> None:
    """Close every open browser review (planshell exits)."""
    for review in list(_OPEN):
        review.close("planshell exited")


atexit.register(close_all)


def _version(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _CommentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: int = Field(ge=0)
    end: int = Field(ge=1)
    text: str = Field(max_length=8000)


class _SaveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: str = Field(max_length=64)
    comments: list[_CommentIn] = Field(max_length=MAX_COMMENTS)


class _ApproveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: str = Field(max_length=64)


class _CloseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SeenIn(BaseModel):
    """Sections the page has shown whole (indices of the page's sections, top to bottom)."""

    model_config = ConfigDict(extra="forbid")
    version: str = Field(max_length=64)
    sections: list[StrictInt] = Field(max_length=MAX_SEEN)


@dataclass(frozen=True)
class SeenSection:
    """A section the page scrolled wholly into view: its index, heading level and title.

    The TUI marks its own section ``index`` seen only when that one has the same
    level and title, so a report about another revision of the plan marks nothing.
    """

    index: int
    level: int
    title: str


class BrowserReview:
    """One plan review served to a browser; decisions go to ``on_decision``.

    ``on_decision`` receives the same :class:`Review` the TUI review screen
    would return (APPROVE with the exact reviewed text, REFINE with the saved
    comments as feedback), so the engine takes one path for both.
    ``on_closed`` is told when the browser side ends without a decision.
    ``on_seen`` receives the sections the page newly scrolled wholly into view
    (coverage, as the TUI counts it; never a decision).
    ``on_page`` is told whether a page is connected (False once its event stream has
    been gone for ``grace`` seconds; the server keeps serving).
    They run on ``loop`` when one is given, else on a server thread.
    """

    def __init__(
        self,
        request: ReviewRequest,
        store: PlanStore,
        *,
        allow_approve: bool,
        on_decision: Callable[[Review], None],
        on_closed: Callable[[str], None] | None = None,
        on_seen: Callable[[tuple[SeenSection, ...]], None] | None = None,
        on_page: Callable[[bool], None] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        grace: float = 10.0,
        heartbeat: float = 2.0,
        ledger: ReviewLedger = LEDGER,
    ) -> None:
        self.request = request
        self.store = store
        self.ledger = (
            ledger  # which review lines the person wrote (planshell's memory, not the file)
        )
        self.allow_approve = allow_approve
        self._on_decision = on_decision
        self._on_closed = on_closed
        self._on_seen = on_seen
        self._seen: set[int] = set()  # sections the page reported seen (never forgotten)
        self._on_page = on_page
        self._page_gone = False  # on_page(False) was told and no page came back since
        self._loop = loop
        # Callbacks run on ``loop`` in the context this review was made in (the app's):
        # in a server thread's own context Textual finds no active app.
        self._context = contextvars.copy_context()
        self.grace = grace
        self.heartbeat = heartbeat
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self._lock = threading.Lock()
        self._view_lock = threading.Lock()
        self._cached_view: _View | None = None
        self._closed = threading.Event()  # closing: event streams say goodbye
        self._stopped = threading.Event()  # the listening socket is closed
        self._decided = False
        self._streams = 0
        self._grace_timer: threading.Timer | None = None
        self.close_reason = ""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/r/{self.token}/"

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def start(self) -> str:
        """Bind 127.0.0.1 (the plan's previous port when free) and serve; returns the URL."""
        key = str(self.request.path)
        handler = _handler_for(self)
        server: ThreadingHTTPServer | None = None
        for port in (_PORTS.get(key, 0), 0):
            try:
                server = ThreadingHTTPServer((HOST, port), handler)
                break
            except OSError:
                continue
        if server is None:
            raise OSError("could not bind a port on 127.0.0.1")
        server.daemon_threads = True
        self._server = server
        _PORTS[key] = self.port
        _OPEN.add(self)
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name=f"planshell-review-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self.url

    def close(self, reason: str = "closed") -> None:
        """Stop serving (idempotent). Open pages are told through their event stream."""
        with self._lock:
            if self._closed.is_set():
                return
            self.close_reason = reason
            self._closed.set()
            if self._grace_timer is not None:
                self._grace_timer.cancel()
        _OPEN.discard(self)
        server = self._server
        if server is None:
            self._stopped.set()
            return

        def stop() -> None:
            server.shutdown()
            server.server_close()
            self._stopped.set()

        if self._thread is not None and threading.current_thread() is self._thread:
            threading.Thread(target=stop, daemon=True).start()
        else:
            stop()

    # -- callbacks into the engine

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        if self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(callback, *args, context=self._context)
            except RuntimeError:  # the loop is gone: planshell is exiting
                pass
        else:
            callback(*args)

    def _claim(self) -> bool:
        """Take the one decision of this review; hold ``_lock``. False when it is taken or closed."""
        if self._decided or self._closed.is_set():
            return False
        self._decided = True
        return True

    def _deliver(self, review: Review) -> None:
        """Hand a claimed decision to the engine and close (outside ``_lock``)."""
        self._call(self._on_decision, review)
        threading.Thread(target=self.close, args=("decided",), daemon=True).start()

    def _decide(self, review: Review) -> bool:
        with self._lock:
            claimed = self._claim()
        if claimed:
            self._deliver(review)
        return claimed

    def _end_without_decision(self, reason: str) -> None:
        if self.closed:
            return
        self.close(reason)
        if self._on_closed is not None:
            self._call(self._on_closed, reason)

    # -- event streams

    def stream_opened(self) -> None:
        with self._lock:
            self._streams += 1
            if self._grace_timer is not None:
                self._grace_timer.cancel()
                self._grace_timer = None
            back, self._page_gone = self._page_gone, False
        if back and self._on_page is not None:
            self._call(self._on_page, True)

    def stream_closed(self) -> None:
        with self._lock:
            self._streams -= 1
            if self._streams or self._closed.is_set():
                return
            timer = threading.Timer(self.grace, self._grace_over)
            timer.daemon = True
            self._grace_timer = timer
        timer.start()

    def _grace_over(self) -> None:
        """No page for ``grace`` seconds: say so, and keep serving for a reload."""
        with self._lock:
            if self._streams or self._closed.is_set() or self._page_gone:
                return
            self._page_gone = True
        if self._on_page is not None:
            self._call(self._on_page, False)

    def wait_closed(self, timeout: float) -> bool:
        """Wait until the port no longer listens; False on timeout."""
        return self._stopped.wait(timeout)

    # -- the page

    def current_text(self) -> str:
        return self.store.read(self.request.path)

    def _authored(self) -> Callable[[str], bool]:
        return self.ledger.authored(self.request.path)

    def _view(self, text: str) -> _View:
        """What the page shows of ``text`` (cached per text: chunks and reports reuse it)."""
        with self._view_lock:
            cached = self._cached_view
            if cached is not None and cached.text == text:
                return cached
            base, comments = split_reviews(text, self._authored())
            doc = parse_plan(base)
            changed: set[int] = set()
            if self.request.previous_text is not None:
                changed = changed_sections(parse_plan(self.request.previous_text), doc)
            clean = strip_terminal_controls(base)
            page_doc = parse_plan(clean)
            view = _View(
                text=text,
                version=_version(text),
                base=base,
                base_lines=base.split("\n"),
                comments={(c.start, c.end): c.text for c in comments},
                doc=doc,
                sections=page_doc.sections,
                starts=[section.start for section in page_doc.sections],
                lines=block_lines(clean),
                changed_starts=frozenset(
                    doc.sections[i].start for i in changed if i < len(doc.sections)
                ),
            )
            self._cached_view = view
            return view

    def chunk(self, first: int, version: str) -> tuple[HTTPStatus, dict[str, Any]]:
        """Sections from ``first`` on (about :data:`CHUNK_LINES` source lines) as page HTML.

        A long plan's page carries its first screen and fetches the rest with
        this, in order, so the page is up before the whole plan is rendered.
        ``next`` is the section after the chunk (the count of sections at the end).
        """
        view = self._view(self.current_text())
        if not hmac.compare_digest(version, view.version):
            return HTTPStatus.CONFLICT, {"error": "The plan file changed since this page loaded."}
        if not 0 <= first < len(view.sections):
            return HTTPStatus.BAD_REQUEST, {"error": "no such section"}
        stop = _chunk_end(view, first, CHUNK_LINES)
        return HTTPStatus.OK, {"next": stop, "html": _blocks_html(view, first, stop)}

    def extras(self, version: str) -> tuple[HTTPStatus, dict[str, Any]]:
        """A long plan's notices (unshown lines, hidden characters, the revision diff): each is
        O(plan), seconds at 100k lines, so the page fetches them after its first screen."""
        view = self._view(self.current_text())
        if not hmac.compare_digest(version, view.version):
            return HTTPStatus.CONFLICT, {"error": "The plan file changed since this page loaded."}
        top, confirm = self._extras_html(view.base)
        return HTTPStatus.OK, {"top": top, "confirm": confirm}

    def _extras_html(self, base: str) -> tuple[str, str]:
        """The notices above the plan, and the approve dialog's unshown-lines warning."""
        unshown = unshown_lines(base)
        unshown_warning = (
            f"<p>{unshown_summary(len(unshown))}: the agent will read them too (h shows them).</p>"
            if unshown
            else ""
        )
        top = (
            f"{_unshown_html(base, unshown)}\n"
            f"{_comment_status_html(self.request.comments)}\n"
            f"{self._changes_html(base)}"
        )
        return top, unshown_warning

    def page(self) -> bytes:
        text = self.current_text()
        view = self._view(text)
        base, doc = view.base, view.doc
        title = doc.title or self.request.path.stem
        esc = html.escape
        # The outline lists every heading (cheap); the body carries the first screen's
        # sections and the page script fetches the rest in chunks (``sections``).
        outline: list[str] = []
        for index, section in enumerate(view.sections):
            if 1 <= section.level <= 3:
                mark = " changed" if section.start in view.changed_starts else ""
                outline.append(
                    f'<li class="lvl-{section.level}{mark}" data-section="{index}">'
                    f'<a href="#b-{section.start}">{esc(_heading_text(section.title)) or "(untitled)"}'
                    "</a></li>"
                )
        loaded = _chunk_end(view, 0, FIRST_LINES) if view.sections else 0
        body = _blocks_html(view, 0, loaded)
        steps = (
            f'<span class="progress">{doc.done_count}/{doc.total_steps} steps done</span>'
            if doc.total_steps
            else ""
        )
        approve = (
            '<button type="button" id="approve" class="primary">Approve &amp; run</button>'
            if self.allow_approve
            else ""
        )
        lazy = len(base) > INLINE_EXTRAS_CHARS
        top, unshown_warning = ("", "") if lazy else self._extras_html(base)
        page = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{esc(title)}</title>
<link rel="stylesheet" href="style.css">
<script src="app.js" defer></script>
</head>
<body data-csrf="{esc(self.csrf)}" data-version="{view.version}" data-sections="{len(view.sections)}" data-loaded="{loaded}" data-extras="{"lazy" if lazy else "inline"}">
<header class="bar">
<div class="title"><strong>{esc(title)}</strong> <span class="path">{esc(self.request.path.name)}</span> {steps} <span id="coverage" class="coverage"></span></div>
<div class="actions">
<span id="status" role="status"></span>
<button type="button" id="save">Save feedback</button>
{approve}
<button type="button" id="close">Close</button>
</div>
</header>
<div id="banner" hidden><span id="banner-text"></span> <button type="button" id="reload" hidden>Reload</button></div>
<div id="extras">{top}</div>
<div class="layout">
<nav class="outline" aria-label="Outline"><ul>{"".join(outline)}</ul></nav>
<main id="plan">{body}</main>
</div>
<dialog id="confirm">
<p>Approve this plan and let the agent run it?</p><div id="confirm-extras">{unshown_warning}</div>
<p id="confirm-unseen" hidden></p>
<div class="dialog-actions">
<button type="button" id="confirm-cancel" autofocus>Cancel</button>
<button type="button" id="confirm-ok" class="primary">Approve &amp; run</button>
</div>
</dialog>
</body>
</html>
"""
        return page.encode("utf-8")

    def _changes_html(self, base: str) -> str:
        """What changed since the last review (a toggle), sections changed without request,
        and cited files changed since the plan was written: as the TUI's header shows them."""
        request = self.request
        parts: list[str] = []
        if request.unrequested:
            names = ", ".join(html.escape(strip_terminal_controls(t)) for t in request.unrequested)
            parts.append(f'<p class="unrequested">\u26a0 Changed without request: {names}</p>')
        if request.mcp_ran:
            parts.append(f'<p class="mcp-ran">\u26a0 {html.escape(request.mcp_line())}</p>')
        if request.staleness is not None and request.staleness.stale:
            summary = html.escape(strip_terminal_controls(request.staleness.summary))
            parts.append(f'<p class="stale">\u26a0 Plan {summary}</p>')
        diff = revision_diff(request.previous_text, base)
        if not diff.empty:
            count = diff.places
            noun = "place" if count == 1 else "places"
            parts.append(
                f'<details id="revision-diff"><summary>What changed since your last review '
                f"({count} changed {noun}) \u2014 show the diff</summary>"
                f"{_diff_html(diff)}</details>"
            )
        return f'<div class="changes">{"".join(parts)}</div>' if parts else ""

    # -- decisions from the page

    def save(self, data: _SaveIn) -> tuple[HTTPStatus, dict[str, Any]]:
        """Write the comments and decide REFINE, or do neither: one lock around both.

        The decision is claimed before anything is written, so an answer never
        contradicts the file: 200 means written and decided, anything else
        means the file is as it was (a save that loses to an approval answers
        410 without touching the file).
        """
        with self._lock:
            text = self.current_text()
            refused = self._refusal(data.version, text)
            if refused is not None:
                return refused
            comments = [Comment(c.start, c.end, c.text) for c in data.comments if c.text.strip()]
            if not comments:
                return HTTPStatus.BAD_REQUEST, {"error": "Write a comment first."}
            authored = self._authored()
            try:
                new_text = apply_reviews(text, comments, authored)
            except FeedbackError as exc:
                return HTTPStatus.BAD_REQUEST, {"error": str(exc)}
            try:
                self.store.write(self.request.path, new_text)
            except PlanStoreError as exc:  # the old file is intact (the write is atomic)
                return HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"Saving failed: {exc}"}
            self.ledger.record(self.request.path, review_lines(comments))
            self._claim()  # free: checked at the top, under this same lock
        base, written = split_reviews(new_text, self._authored())
        # Tracked like the TUI's comments (planshell.plan.review_comments): the next
        # revision shows each as addressed or open; open ones of the last round go along.
        earlier = [c for c in self.request.comments if c.open]
        saved = comments_from_blocks(base, written, self.request.comments)
        kept = {c.text for c in saved}
        sent = [*(c for c in earlier if c.text not in kept), *saved]
        message = comments_message(sent)
        self._deliver(Review(Decision.REFINE, feedback=message, comments=tuple(sent)))
        return HTTPStatus.OK, {"ok": True, "saved": len(written)}

    def approve(self, data: _ApproveIn) -> tuple[HTTPStatus, dict[str, Any]]:
        if not self.allow_approve:
            return HTTPStatus.FORBIDDEN, {"error": "Approve from the review the agent asked for."}
        reviewed = self.request.text
        with self._lock:  # the same lock as save: the file cannot change between check and claim
            if self._decided or self._closed.is_set():
                return HTTPStatus.GONE, {"error": "This review was already decided."}
            current = self.current_text()
            if not hmac.compare_digest(data.version, _version(reviewed)) or current != reviewed:
                return HTTPStatus.CONFLICT, {
                    "error": "The plan is not the one this review opened with; nothing was approved."
                }
            self._claim()
        # Exactly what the TUI's `a` returns: approval bound to the text reviewed.
        self._deliver(Review(Decision.APPROVE, reviewed_text=reviewed))
        return HTTPStatus.OK, {"ok": True}

    def _refusal(self, version: str, text: str) -> tuple[HTTPStatus, dict[str, Any]] | None:
        """Why a page's request may not act (decided or closed: 410; a page of another text:
        409), or None. Called with the lock held."""
        if self._decided or self._closed.is_set():
            return HTTPStatus.GONE, {"error": "This review was already decided."}
        if not hmac.compare_digest(version, _version(text)):
            return HTTPStatus.CONFLICT, {"error": "The plan file changed since this page loaded."}
        return None

    def mark_seen(self, data: _SeenIn) -> tuple[HTTPStatus, dict[str, Any]]:
        """Record sections the page showed whole and hand the new ones to ``on_seen``.

        Only ever coverage: nothing here decides. Indices are the page's
        sections of the text it loaded (``version``); out-of-range ones are
        ignored, repeated ones are no-ops, a page of another text gets 409.
        """
        with self._lock:
            text = self.current_text()
            refused = self._refusal(data.version, text)
            if refused is not None:
                return refused
            sections = self._view(text).sections
            new = sorted({i for i in data.sections if 0 <= i < len(sections)} - self._seen)
            self._seen.update(new)
            seen = sorted(self._seen)
        if new and self._on_seen is not None:
            self._call(
                self._on_seen,
                tuple(SeenSection(i, sections[i].level, sections[i].title) for i in new),
            )
        return HTTPStatus.OK, {"ok": True, "seen": seen}

    def close_from_page(self) -> tuple[HTTPStatus, dict[str, Any]]:
        self._end_without_decision("closed in the browser")
        return HTTPStatus.OK, {"ok": True}


@dataclass(frozen=True)
class _View:
    """One text of the plan as the page cuts it: base text, sections, comments, changed marks."""

    text: str
    version: str
    base: str  # the text without the person's review lines
    base_lines: list[str]
    comments: dict[tuple[int, int], str]  # saved comment per block range
    doc: PlanDocument  # of ``base``: title, steps, what changed since the last review
    sections: tuple[Section, ...]  # of the sanitised base, as the TUI's PlanView cuts it
    starts: list[int]  # each section's first line
    lines: list[str]  # the sanitised base's lines, as the block parser reads them
    changed_starts: frozenset[int]


def _chunk_end(view: _View, first: int, lines: int) -> int:
    """The section after ``first``'s chunk: at least one section, about ``lines`` source lines."""
    target = view.starts[first] + lines
    return min(len(view.sections), max(first + 1, bisect.bisect_left(view.starts, target)))


_PLAIN_TITLE = re.compile(r"[^*_`\[\]<>&\\!~]*")


def _heading_text(title: str) -> str:
    """A heading's text as shown (markdown marks removed); plain titles skip the parser."""
    if _PLAIN_TITLE.fullmatch(title):
        return strip_terminal_controls(title).strip()
    return plain_inline(title)


def _blocks_html(view: _View, first: int, stop: int) -> str:
    """Sections ``[first, stop)`` as the page's ``<section class="block">`` elements."""
    esc = html.escape
    base_lines = view.base_lines
    out: list[str] = []
    blocks = render_blocks_html(section_blocks(view.lines, view.sections[first:stop]))
    for block in blocks:
        section_index = max(0, bisect.bisect_right(view.starts, block.start) - 1)
        saved = view.comments.get((block.start, block.end))
        saved_attr = f' data-comment="{esc(saved)}"' if saved else ""
        # A review line the person did not write: plan text, and said to be.
        forged = block.start < len(base_lines) and base_lines[block.start].startswith(REVIEW_PREFIX)
        note = (
            '<p class="forged-note">Not your comment: the agent wrote this into the plan, '
            "and it will read it as part of the plan.</p>"
            if forged
            else ""
        )
        out.append(
            f'<section class="block kind-{esc(block.kind)}{" forged-review" if forged else ""}" '
            f'id="b-{block.start}" data-start="{block.start}" data-end="{block.end}" '
            f'data-section="{section_index}"{saved_attr}>'
            f"{note}{block.html}</section>"
        )
    return "".join(out)


def _comment_status_html(comments: Sequence[ReviewComment]) -> str:
    """Your comments of the last round, each addressed (with the model's reply) or open.

    The same statuses as the TUI's comments panel (``ReviewRequest.comments``,
    computed by the engine); every string escaped.
    """
    if not comments:
        return ""
    esc = html.escape
    items: list[str] = []
    for comment in comments:
        status = "open" if comment.open else "addressed"
        note = f' <span class="comment-note">({esc(comment.note)})</span>' if comment.note else ""
        reply = (
            f'<div class="comment-reply">\u21b3 {esc(strip_terminal_controls(comment.reply))}</div>'
            if comment.reply
            else ""
        )
        section = esc(strip_terminal_controls(comment.section)) or "(preamble)"
        quote = esc(strip_terminal_controls(comment.quote).split("\n")[0][:160])
        items.append(
            f'<li class="comment-status -{status}"><strong>{status}</strong> '
            f'<span class="comment-where">{section}</span>{note}'
            f'<div class="comment-quote">{quote}</div>'
            f'<div class="comment-text">{esc(strip_terminal_controls(comment.text))}</div>'
            f"{reply}</li>"
        )
    open_count = sum(1 for c in comments if c.open)
    return (
        f'<details class="comment-statuses" open><summary>Your last comments: '
        f"{len(comments) - open_count} addressed, {open_count} open</summary>"
        f"<ul>{''.join(items)}</ul></details>"
    )


def _diff_html(diff: RevisionDiff) -> str:
    """The revision diff as escaped text: deleted words in ``<del>``, inserted ones in ``<ins>``.

    The same engine output as the TUI's ``d`` (:func:`planshell.plan.revision_diff.revision_diff`).
    """
    tags = {"insert": "ins", "delete": "del"}
    out: list[str] = []
    for change in diff.changes:
        title = html.escape(strip_terminal_controls(change.title)) or "(before the first heading)"
        lines: list[str] = []
        for line in change.lines:
            pieces = []
            for fragment in line.fragments:
                text = html.escape(strip_terminal_controls(fragment.text))
                tag = tags.get(fragment.op)
                pieces.append(f"<{tag}>{text}</{tag}>" if tag else text)
            lines.append("".join(pieces))
        out.append(
            f'<section class="diff-section"><h3>{title} <span class="diff-kind">{change.kind}'
            f'</span></h3><pre class="diff">{chr(10).join(lines)}</pre></section>'
        )
    return "".join(out)


def _unshown_html(base: str, unshown: Sequence[UnshownLine]) -> str:
    """The notice about text the page does not show, and that text, one click away.

    The same lines as the TUI's ``h`` (:func:`planshell.plan.coverage.unshown_lines`),
    as escaped literal text; plus the count of invisible characters removed.
    """
    parts: list[str] = []
    hidden = count_hidden(base)
    if hidden:
        noun = "character" if hidden == 1 else "characters"
        parts.append(
            f'<p class="unshown-note">\u26a0 This plan contains {hidden} invisible or bidi {noun} '
            "(not shown here): the model may read text you cannot see.</p>"
        )
    if unshown:
        rows = "\n".join(
            f"line {item.line + 1}: {html.escape(strip_terminal_controls(item.text))}    \u2014 {item.why}"
            for item in unshown
        )
        parts.append(
            f'<details class="unshown-lines"><summary>\u26a0 {unshown_summary(len(unshown))} '
            "(the agent will read them) \u2014 show them (h)</summary>"
            f"<pre>{rows}</pre></details>"
        )
    return f'<div class="unshown" role="alert">{"".join(parts)}</div>' if parts else ""


def _handler_for(review: BrowserReview) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = review

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: BrowserReview
    server_version = "planshell"
    timeout = 15  # a slow client cannot pin a thread forever

    # -- plumbing

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        """Never stderr (it would draw over the TUI): the debug log."""
        _log.debug("review server: %s", (format % args).replace(self.owner.token, "<token>"))

    def __getattr__(self, name: str) -> Any:
        # BaseHTTPRequestHandler answers unknown methods with 501; every method
        # but GET, HEAD and POST is refused the same way: 405.
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Parse errors too get the security headers (and no HTML echo of the request)."""
        self._reply(HTTPStatus(code), {"error": message or HTTPStatus(code).phrase})

    def _headers(self, status: HTTPStatus, content_type: str, length: int | None) -> None:
        self.send_response(status)
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", "GET, HEAD, POST")
        self.send_header("Connection", "close")
        self.end_headers()

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self._headers(status, content_type, len(body))
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reply(self, status: HTTPStatus, data: dict[str, Any]) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _not_allowed(self) -> None:
        if self._host_ok():
            self._reply(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "method not allowed"})

    # -- checks

    def _host_ok(self) -> bool:
        port = self.owner.port
        host = self.headers.get("Host", "")
        if (
            host in (f"{HOST}:{port}", f"localhost:{port}")
            and len(self.headers.get_all("Host") or []) == 1
        ):
            return True
        self._reply(HTTPStatus.MISDIRECTED_REQUEST, {"error": "unknown host"})
        return False

    def _route(self) -> str | None:
        """The path after ``/r/<token>/``, or None after answering 403/404."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        parts = path.split("/", 3)
        if len(parts) < 3 or parts[0] != "" or parts[1] != "r":
            self._reply(HTTPStatus.FORBIDDEN, {"error": "forbidden"})
            return None
        given = parts[2].encode("utf-8", "replace")
        if not hmac.compare_digest(given, self.owner.token.encode()):
            self._reply(HTTPStatus.FORBIDDEN, {"error": "forbidden"})
            return None
        if len(parts) < 4:  # /r/<token> without the slash: the page's relative URLs need it
            self._send(HTTPStatus.NOT_FOUND, b"{}", "application/json")
            return None
        return parts[3]

    # -- methods

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        route = self._route()
        if route is None:
            return
        owner = self.owner
        if route == "":
            try:
                self._send(HTTPStatus.OK, owner.page(), "text/html; charset=utf-8")
            except PlanStoreError as exc:
                self._reply(HTTPStatus.NOT_FOUND, {"error": str(exc)})
        elif route in _ASSETS:
            body = resources.files(__package__).joinpath("assets", route).read_bytes()
            if route == "style.css":
                body += highlight_css().encode()
            self._send(HTTPStatus.OK, body, _ASSETS[route])
        elif route == "events":
            self._events()
        elif route in ("sections", "extras"):
            query = parse_qs(self.path.partition("?")[2].partition("#")[0])
            version = query.get("version", [""])[0]
            try:
                if route == "extras":
                    status, reply = owner.extras(version)
                else:
                    first = query.get("from", [""])[0]
                    if not first.isdigit() or len(first) > 9:
                        status, reply = HTTPStatus.BAD_REQUEST, {"error": "malformed request"}
                    else:
                        status, reply = owner.chunk(int(first), version)
            except PlanStoreError as exc:
                status, reply = HTTPStatus.NOT_FOUND, {"error": str(exc)}
            self._reply(status, reply)
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": "not found"})

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        route = self._route()
        if route is None:
            return
        data = self._json_body()
        if data is None:
            return
        owner = self.owner
        try:
            match route:
                case "api/save":
                    status, reply = owner.save(_SaveIn.model_validate(data))
                case "api/approve":
                    status, reply = owner.approve(_ApproveIn.model_validate(data))
                case "api/seen":
                    status, reply = owner.mark_seen(_SeenIn.model_validate(data))
                case "api/close":
                    _CloseIn.model_validate(data)
                    status, reply = owner.close_from_page()
                case _:
                    status, reply = HTTPStatus.NOT_FOUND, {"error": "not found"}
        except ValidationError:
            status, reply = HTTPStatus.BAD_REQUEST, {"error": "malformed request"}
        except PlanStoreError as exc:
            status, reply = HTTPStatus.CONFLICT, {"error": str(exc)}
        self._reply(status, reply)

    def _json_body(self) -> Any | None:
        """The checked JSON body (Origin, CSRF token, type, size), or None after answering."""
        owner = self.owner
        origin = self.headers.get("Origin", "")
        if origin != f"http://{self.headers.get('Host', '')}":
            self._reply(HTTPStatus.FORBIDDEN, {"error": "cross-origin request refused"})
            return None
        csrf = self.headers.get("X-Planshell-CSRF", "").encode("utf-8", "replace")
        if not hmac.compare_digest(csrf, owner.csrf.encode()):
            self._reply(HTTPStatus.FORBIDDEN, {"error": "missing or wrong CSRF token"})
            return None
        if self.headers.get("Transfer-Encoding"):
            self._reply(HTTPStatus.LENGTH_REQUIRED, {"error": "send a Content-Length"})
            return None
        raw_length = self.headers.get("Content-Length")
        if raw_length is None or not raw_length.isdigit():
            self._reply(HTTPStatus.LENGTH_REQUIRED, {"error": "send a Content-Length"})
            return None
        length = int(raw_length)
        if length > MAX_BODY_BYTES:
            self._reply(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "request body too large"})
            return None
        content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            self._reply(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send JSON"})
            return None
        try:
            return json.loads(self.rfile.read(length))
        except (ValueError, OSError):
            self._reply(HTTPStatus.BAD_REQUEST, {"error": "malformed JSON"})
            return None

    def _events(self) -> None:
        """Server-sent events, used to notice a page gone away and to tell the page we closed."""
        owner = self.owner
        self._headers(HTTPStatus.OK, "text/event-stream", None)
        if self.command == "HEAD":
            return
        owner.stream_opened()
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while not owner._closed.wait(owner.heartbeat):
                self.wfile.write(b": ping\n\n")
                self.wfile.flush()
            reason = owner.close_reason.replace("\n", " ")
            self.wfile.write(f"event: closed\ndata: {reason}\n\n".encode())
            self.wfile.flush()
        except OSError:
            pass
        finally:
            owner.stream_closed()
