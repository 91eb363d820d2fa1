"""fetch against a real loopback server: conversion, caps, and every refused target."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planshell.tools.base import ToolContext, ToolError
from planshell.tools.fetch import FetchArgs, FetchTool
from planshell.tools.net_guard import TargetRefused, check_url
from tests.fetch_helpers import FetchServer, fetch_server, make_fetch_tool, resolver


@pytest.fixture
def server() -> Iterator[FetchServer]:
    with fetch_server() as running:
        yield running


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(root=tmp_path)


async def fetch(url: str, ctx: ToolContext, tool: FetchTool | None = None, **kw: int) -> str:
    result = await (tool or make_fetch_tool()).run(FetchArgs(url=url, **kw), ctx)
    return result.content


async def test_html_becomes_markdown_without_scripts_or_styles(
    server: FetchServer, ctx: ToolContext
) -> None:
    text = await fetch(server.url("/page"), ctx)
    assert "# Install" in text and "`pip install x`" in text and "[more](/more)" in text
    assert "- one" in text
    assert "tracking code" not in text and "color:red" not in text
    # Pinned: the connection went to the checked address, the name went in the Host header.
    assert server.hosts == [f"docs.test:{server.port}"]


async def test_plain_text_json_and_charset(server: FetchServer, ctx: ToolContext) -> None:
    assert "café" in await fetch(server.url("/latin1"), ctx)
    assert '{"ok": true}' in await fetch(server.url("/json"), ctx)


async def test_terminal_controls_are_removed(server: FetchServer, ctx: ToolContext) -> None:
    text = await fetch(server.url("/escape"), ctx)
    assert "\x1b" not in text and "\x07" not in text and "red" in text and "end" in text


async def test_other_types_are_refused(server: FetchServer, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="application/pdf"):
        await fetch(server.url("/pdf"), ctx)


async def test_the_byte_cap_stops_the_read_and_the_char_cap_cuts(
    server: FetchServer, ctx: ToolContext
) -> None:
    text = await fetch(server.url("/big"), ctx, make_fetch_tool(max_bytes=5000))
    assert "stopped reading at 5,000 bytes" in text and "x" * 5001 not in text
    text = await fetch(server.url("/big"), ctx, max_chars=1000)
    assert "… (cut at 1,000 characters)" in text and "x" * 1001 not in text


async def test_a_slow_server_meets_the_timeout(server: FetchServer, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"no complete answer within 0\.5 s"):
        await fetch(server.url("/slow"), ctx, make_fetch_tool(timeout=0.5))


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://docs.test/x", "gopher://docs.test/", "javascript:alert(1)"],
)
async def test_only_http_and_https(url: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="refused"):
        await fetch(url, ctx)


async def test_credentials_in_the_url_are_refused(server: FetchServer, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="credentials"):
        await fetch(f"http://user:pass@docs.test:{server.port}/page", ctx)
    assert server.paths == []


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "10.0.0.1",
        "192.168.1.1",
        "[::1]",
        "169.254.169.254",
        "[::ffff:127.0.0.1]",
        "[fd00:ec2::254]",
        "[fe80::1]",
        "100.64.0.1",
        "0.0.0.0",
        "localhost",
        "metadata.google.internal",
    ],
)
async def test_literal_local_and_private_targets_are_refused(
    host: str, server: FetchServer, ctx: ToolContext
) -> None:
    # The injected resolver maps names to loopback; a literal address never asks it.
    with pytest.raises(ToolError, match="fetch refused"):
        await fetch(f"http://{host}:{server.port}/page", ctx)
    assert server.paths == []


@pytest.mark.parametrize("name", ["private.test", "rebind.test", "mixed.test"])
async def test_a_name_resolving_to_a_private_address_is_refused(
    name: str, server: FetchServer, ctx: ToolContext
) -> None:
    with pytest.raises(ToolError, match="resolves to"):
        await fetch(server.url("/page", host=name), ctx)
    assert server.paths == []


@pytest.mark.parametrize(
    "target",
    ["http://127.0.0.1:{port}/page", "http://rebind.test:{port}/page", "http://[::1]:{port}/"],
)
async def test_a_redirect_to_a_local_target_is_refused(
    target: str, server: FetchServer, ctx: ToolContext
) -> None:
    url = server.url("/redirect?to=" + target.format(port=server.port))
    with pytest.raises(ToolError, match=r"refused \(redirected to"):
        await fetch(url, ctx)
    assert server.paths == [server.paths[0]]  # only the redirect itself was requested


async def test_redirects_are_followed_and_limited(server: FetchServer, ctx: ToolContext) -> None:
    text = await fetch(server.url("/redirect?to=/json"), ctx)
    assert '{"ok": true}' in text and text.startswith(server.url("/json"))
    with pytest.raises(ToolError, match="more than 5 redirects"):
        await fetch(server.url("/loop"), ctx)


async def test_a_redirect_check_can_refuse_a_hop(server: FetchServer, ctx: ToolContext) -> None:
    tool = make_fetch_tool()
    seen: list[str] = []

    async def refuse(url: str, first: str) -> str | None:
        seen.append(url)
        return "not this hop"

    tool.redirect_check = refuse
    target = server.url("/json", host="other.test")
    with pytest.raises(ToolError, match="not this hop"):
        await fetch(server.url("/redirect?to=" + target), ctx, tool)
    assert seen == [target]


def test_check_url_pins_the_checked_address() -> None:
    target = check_url("https://docs.test/x", resolver, frozenset({"docs.test"}))
    assert (target.host, target.ip, target.port) == ("docs.test", "127.0.0.1", 443)
    with pytest.raises(TargetRefused):
        check_url("https://docs.test/x", resolver)  # without the test exemption: loopback
