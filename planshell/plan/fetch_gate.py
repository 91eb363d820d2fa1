"""Plan mode's question before a fetch: a URL can carry what the model read out.

Plan mode may read anything in the project, secrets included, and a fetch
sends its URL to a server: the path and the query string are an exfiltration
channel. So in PLAN (docs/fetch.md):

* a domain in the user's own ``fetch.allow_domains`` is fetched without asking;
* the first fetch to any other domain asks the person, showing the full URL;
  after a yes, that domain is not asked again in this session for URLs
  without a query string;
* a URL with a query string to an unlisted domain asks every time;
* with nobody to ask (headless) only listed domains are fetched.

The same check runs for every redirect hop (the tool's ``redirect_check``), so
an allowed page cannot bounce the request to an unlisted domain unasked.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from planshell.plan.decider import Decider, FetchRequest
from planshell.sanitize import plain_line
from planshell.tools.net_guard import domain_listed

HOW_TO_ALLOW = (
    "To fetch a domain in plan mode without being asked, the user adds it to "
    "fetch.allow_domains in their own config (~/.config/planshell/config.toml), "
    'e.g. [fetch] allow_domains = ["docs.python.org"].'
)


class FetchPlanGate:
    """Remembers the domains a person allowed this session; asks about the others."""

    def __init__(self, allow_domains: Iterable[str], decider: Decider) -> None:
        self.allow_domains = tuple(allow_domains)
        self.decider = decider
        self.allowed: set[str] = set()  # domains a person said yes to (no query strings)

    async def check(self, url: str, *, redirect_from: str = "") -> str | None:
        """None when ``url`` may be fetched in plan mode now; else the refusal for the model."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
        except ValueError:
            return None  # the tool refuses an invalid URL itself
        if not host or domain_listed(host, self.allow_domains):
            return None
        has_query = bool(parts.query)
        if host in self.allowed and not has_query:
            return None
        approve = getattr(self.decider, "approve_fetch", None)
        request = FetchRequest(url, host, has_query, redirect_from)
        if approve is not None and await approve(request):
            if not has_query:
                self.allowed.add(host)
            return None
        return (
            f"Not fetched: {plain_line(url, 300)} — {host} is not in fetch.allow_domains and the "
            "user did not allow this fetch (in plan mode a URL can carry data out, so each new "
            f"domain, and every URL with a query string, needs the user's yes; a non-interactive "
            f"run has nobody to ask). {HOW_TO_ALLOW} Do not retry; go on without it."
        )
