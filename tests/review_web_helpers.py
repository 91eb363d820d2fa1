"""A real loopback BrowserReview and a raw HTTP client that can send any Host/Origin."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.plan.decider import Review, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.review_comments import ReviewComment
from planshell.plan.store import PlanStore
from planshell.review_web.server import BrowserReview, SeenSection
from planshell.runtime import Runtime, build_runtime
from tests.engine_helpers import HANG_GUARD, ScriptedDecider

PLAN = """# Plan: widget cache

## Context

Widgets are slow to serve.

## Steps

- [ ] add the cache
- [x] measure

## Verification

```bash
pytest -q
```
"""


@dataclass
class Served:
    review: BrowserReview
    store: PlanStore
    path: Path
    decisions: list[Review] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    seen: list[tuple[SeenSection, ...]] = field(default_factory=list)  # on_seen reports
    pages: list[bool] = field(default_factory=list)  # on_page: a page connected, or gone
    told: threading.Condition = field(default_factory=threading.Condition)

    def page(self, connected: bool) -> None:
        """``on_page`` (a server thread calls it): record it and wake whoever waits."""
        with self.told:
            self.pages.append(connected)
            self.told.notify_all()

    def saw(self, sections: tuple[SeenSection, ...]) -> None:
        """``on_seen`` (a server thread calls it): record it and wake whoever waits."""
        with self.told:
            self.seen.append(sections)
            self.told.notify_all()

    def wait_for(self, done: Callable[[], bool], what: str) -> None:
        """Until ``done`` holds, woken by each report (``HANG_GUARD``: only against a hang)."""
        with self.told:
            self.told.wait_for(done, timeout=HANG_GUARD)
            assert done(), what

    def wait_for_pages(self, expected: list[bool]) -> None:
        """Until ``on_page`` has been told exactly ``expected``."""
        self.wait_for(lambda: self.pages == expected, f"on_page was told {self.pages}")

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.review.port}"

    @property
    def base(self) -> str:
        return f"/r/{self.review.token}/"

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        host: str | None = "default",
        address: str = "127.0.0.1",
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(address, self.review.port, timeout=30)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            if host is not None:
                conn.putheader("Host", self.host if host == "default" else host)
            for name, value in (headers or {}).items():
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            conn.close()

    def post(self, route: str, data: Any, **overrides: str) -> tuple[int, dict[str, Any]]:
        headers = {
            "Origin": f"http://{self.host}",
            "X-Planshell-CSRF": self.review.csrf,
            "Content-Type": "application/json",
        }
        headers.update(overrides)
        status, _, body = self.request(
            "POST", self.base + route, body=json.dumps(data).encode(), headers=headers
        )
        return status, json.loads(body or b"{}")

    def page_version(self) -> str:
        status, _, body = self.request("GET", self.base)
        assert status == 200
        marker = 'data-version="'
        text = body.decode()
        start = text.index(marker) + len(marker)
        return text[start : text.index('"', start)]


def serve(
    root: Path,
    text: str = PLAN,
    *,
    allow_approve: bool = True,
    previous: str | None = None,
    grace: float = 10.0,
    heartbeat: float = 2.0,
    comments: tuple[ReviewComment, ...] = (),
) -> Served:
    store = PlanStore(root)
    store.ensure_dir()
    path = store.write(store.plans_dir / "cache.md", text)
    request = ReviewRequest(
        path, text, parse_plan(text).title, previous_text=previous, comments=comments
    )
    served: Served
    decisions: list[Review] = []
    ended: list[str] = []
    review = BrowserReview(
        request,
        store,
        allow_approve=allow_approve,
        on_decision=decisions.append,
        on_closed=ended.append,
        on_seen=lambda sections: served.saw(sections),
        on_page=lambda connected: served.page(connected),
        grace=grace,
        heartbeat=heartbeat,
    )
    served = Served(review, store, path, decisions, ended)
    review.start()
    return served


def running(served: Served) -> Iterator[Served]:
    try:
        yield served
    finally:
        served.review.close()


class BrowserDecider(ScriptedDecider):
    """Serves each plan review in a BrowserReview, as the review screen's ``w`` does."""

    def __init__(self) -> None:
        super().__init__()
        self.runtime: Runtime | None = None
        self.served: asyncio.Queue[Served] = asyncio.Queue()

    async def review_plan(self, request: ReviewRequest) -> Review:
        assert self.runtime is not None
        self.requests.append(request)
        loop = asyncio.get_running_loop()
        decided: asyncio.Future[Review] = loop.create_future()

        def decide(review: Review) -> None:
            if not decided.done():
                decided.set_result(review)

        review = BrowserReview(
            request, self.runtime.store, allow_approve=True, on_decision=decide, loop=loop
        )
        review.start()
        await self.served.put(Served(review, self.runtime.store, request.path))
        try:
            return await decided
        finally:
            review.close()


def planning_in_the_browser(project: Path, text: str) -> tuple[Runtime, BrowserDecider, Path]:
    """A runtime in PLAN on a saved plan holding ``text``, whose reviews open in the browser."""
    decider = BrowserDecider()
    runtime = build_runtime(
        Settings.model_validate({"plan": {"sandbox": "off"}}),
        project,
        decider,
        provider=ScriptedProvider([]),
        persist=False,
    )
    decider.runtime = runtime
    runtime.store.ensure_dir()
    path = runtime.store.write(runtime.store.plans_dir / "cache.md", text)
    runtime.plan.enter_plan(plan_path=path)
    return runtime, decider, path
