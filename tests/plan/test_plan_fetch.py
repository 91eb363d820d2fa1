"""Plan mode's fetch question: a URL can carry secrets out, so unlisted domains ask.

Through the real runtime (plan gate, permission gate, tool) against a loopback
server that the injected resolver names ``docs.test`` / ``other.test``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planshell.config import Settings, load_settings
from planshell.llm.scripted import Reply
from planshell.plan.decider import HeadlessDecider
from planshell.runtime import build_runtime
from planshell.tools.fetch import FetchTool
from tests.engine_helpers import make_runtime
from tests.fetch_helpers import LOOPBACK_NAMES, FetchServer, fetch_server, resolver


@pytest.fixture
def server() -> Iterator[FetchServer]:
    with fetch_server() as running:
        yield running


def _use_test_resolver(runtime: Any) -> None:
    tool = runtime.registry.get("fetch")
    assert isinstance(tool, FetchTool)
    tool.resolver = resolver
    tool.loopback_names = LOOPBACK_NAMES


def planning(tmp_path: Path, urls: list[str], fetches=(), allow: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """A PLAN-mode runtime whose model fetches ``urls``, one call per reply."""
    replies = [Reply(calls=[("fetch", {"url": u})]) for u in urls] + [Reply(text="done")]
    settings = Settings(fetch={"allow_domains": list(allow)})
    runtime, provider, decider, _ = make_runtime(tmp_path, replies, settings=settings, plan=True)
    decider.fetches = list(fetches)
    _use_test_resolver(runtime)
    return runtime, provider, decider


def tool_results(provider: Any) -> list[str]:
    return [m.content for m in provider.requests[-1].messages if m.role == "tool"]


async def test_the_first_fetch_to_a_domain_asks_with_the_full_url(
    tmp_path: Path, server: FetchServer
) -> None:
    first, second = server.url("/page"), server.url("/json")
    runtime, provider, decider = planning(tmp_path, [first, second], fetches=[True])
    try:
        await runtime.agent.submit("look it up")
        assert [r.url for r in decider.fetch_requests] == [first]  # the second did not ask
        assert decider.fetch_requests[0].domain == "docs.test"
        results = tool_results(provider)
        assert "# Install" in results[0] and '{"ok": true}' in results[1]
        assert len(server.paths) == 2
    finally:
        runtime.close()


async def test_a_refused_fetch_sends_nothing(tmp_path: Path, server: FetchServer) -> None:
    secret = server.url("/page/AKIA-SECRET")
    runtime, provider, decider = planning(tmp_path, [secret], fetches=[False])
    try:
        await runtime.agent.submit("look it up")
        assert [r.url for r in decider.fetch_requests] == [secret]
        assert "Not fetched" in tool_results(provider)[0]
        assert "fetch.allow_domains" in tool_results(provider)[0]
        assert server.paths == []
    finally:
        runtime.close()


async def test_a_query_string_asks_every_time(tmp_path: Path, server: FetchServer) -> None:
    urls = [server.url("/json?q=1"), server.url("/json?q=2"), server.url("/json")]
    runtime, _, decider = planning(tmp_path, urls, fetches=[True, True, True])
    try:
        await runtime.agent.submit("look it up")
        # A yes to a URL with a query string allows that URL only, not the domain.
        assert [r.url for r in decider.fetch_requests] == urls
        assert [r.has_query for r in decider.fetch_requests] == [True, True, False]
    finally:
        runtime.close()


async def test_a_listed_domain_never_asks(tmp_path: Path, server: FetchServer) -> None:
    urls = [server.url("/page"), server.url("/json?q=anything")]
    runtime, _, decider = planning(tmp_path, urls, allow=("docs.test",))
    try:
        await runtime.agent.submit("look it up")
        assert decider.fetch_requests == []
        assert len(server.paths) == 2
    finally:
        runtime.close()


async def test_a_redirect_from_a_listed_domain_to_an_unlisted_one_asks(
    tmp_path: Path, server: FetchServer
) -> None:
    # An open redirect on an allowed site must not carry data to another domain unasked.
    target = server.url("/json?leak=1", host="other.test")
    url = server.url("/redirect?to=" + target)
    runtime, provider, decider = planning(tmp_path, [url], fetches=[False], allow=("docs.test",))
    try:
        await runtime.agent.submit("look it up")
        assert [r.url for r in decider.fetch_requests] == [target]
        assert "Not fetched" in tool_results(provider)[0]
        assert len(server.paths) == 1  # the redirect only
    finally:
        runtime.close()


async def test_headless_plan_mode_fetches_only_listed_domains(
    tmp_path: Path, server: FetchServer
) -> None:
    from planshell.llm.scripted import ScriptedProvider

    urls = [server.url("/page", host="other.test"), server.url("/json")]
    provider = ScriptedProvider(
        [*(Reply(calls=[("fetch", {"url": u})]) for u in urls), Reply(text="done")]
    )
    settings = Settings(fetch={"allow_domains": ["docs.test"]})
    runtime = build_runtime(
        settings, tmp_path, HeadlessDecider(), provider=provider, persist=False, plan=True
    )
    _use_test_resolver(runtime)
    try:
        await runtime.agent.submit("look it up")
        refused, fetched = tool_results(provider)
        assert "Not fetched" in refused and "fetch.allow_domains" in refused
        assert '{"ok": true}' in fetched
        assert server.paths == ["/json"]
    finally:
        runtime.close()


async def test_fetch_asks_through_the_permission_gate_outside_plan_mode(
    tmp_path: Path, server: FetchServer
) -> None:
    replies = [Reply(calls=[("fetch", {"url": server.url("/json")})]), Reply(text="done")]
    runtime, provider, decider, _ = make_runtime(tmp_path, replies)
    _use_test_resolver(runtime)
    try:
        await runtime.agent.submit("look it up")
        assert [r.tool for r in decider.approval_requests] == ["fetch"]
        assert decider.fetch_requests == []  # the plan-mode question is PLAN's only
        assert '{"ok": true}' in tool_results(provider)[0]
    finally:
        runtime.close()


def test_a_project_config_cannot_list_fetch_domains(tmp_path: Path) -> None:
    from planshell.config import project_config_path, read_config_file
    from planshell.config.trust import trust

    root = tmp_path / "repo"
    (root / ".planshell").mkdir(parents=True)
    (root / ".planshell" / "config.toml").write_text(
        '[fetch]\nallow_domains = ["evil.example"]\ntimeout = 5\n'
    )
    for trusted in (False, True):
        if trusted:
            trust(read_config_file(project_config_path(root)))
        settings = load_settings(root, environ={})
        assert settings.fetch.allow_domains == []
        assert "Ignoring fetch.allow_domains" in settings.user_only_warning
    assert settings.fetch.timeout == 5  # trusted: the project's other fetch keys apply
    user = tmp_path / "user.toml"
    user.write_text('[fetch]\nallow_domains = ["docs.python.org", "*.readthedocs.io"]\n')
    mine = load_settings(root, environ={}, user_file=user)
    assert mine.fetch.allow_domains == ["docs.python.org", "*.readthedocs.io"]


@pytest.mark.parametrize("bad", ["https://docs.python.org", "docs.python.org/x", "*", "a*.b.c"])
def test_allow_domains_are_host_names(bad: str) -> None:
    with pytest.raises(ValueError, match="not a host name"):
        Settings(fetch={"allow_domains": [bad]})


def test_sub_agents_never_get_fetch(tmp_path: Path) -> None:
    from planshell.agents.subagents import profile_problems
    from planshell.config.schema import AgentProfile

    problems = profile_problems({"web": AgentProfile(tools=["fetch", "read"])})
    assert any("'fetch'" in p for p in problems)


# ---- outside plan mode: domain rules (fetch(domain:…)) and redirects --------------------


def executing(tmp_path: Path, urls: list[str], **permissions: Any):  # type: ignore[no-untyped-def]
    """An ordinary-mode runtime whose model fetches ``urls``, one call per reply."""
    replies = [Reply(calls=[("fetch", {"url": u})]) for u in urls] + [Reply(text="done")]
    settings = Settings(permissions=permissions)
    runtime, provider, decider, _ = make_runtime(tmp_path, replies, settings=settings)
    _use_test_resolver(runtime)
    return runtime, provider, decider


async def test_a_domain_rule_allows_that_domain_only(tmp_path: Path, server: FetchServer) -> None:
    urls = [server.url("/json"), server.url("/json", host="other.test")]
    runtime, provider, decider = executing(tmp_path, urls, allow=["fetch(domain:docs.test)"])
    try:
        await runtime.agent.submit("look it up")
        assert [r.headline for r in decider.approval_requests] == [f"fetch {urls[1]}"]
        assert all('{"ok": true}' in r for r in tool_results(provider))
    finally:
        runtime.close()


async def test_a_deny_rule_wins_and_its_wildcard_covers_the_apex(
    tmp_path: Path, server: FetchServer
) -> None:
    urls = [server.url("/json"), server.url("/json", host="other.test")]
    runtime, provider, decider = executing(
        tmp_path, urls, allow=["fetch"], deny=["fetch(domain:*.docs.test)"]
    )
    try:
        await runtime.agent.submit("look it up")
        denied, fetched = tool_results(provider)
        assert "Denied by the rule fetch(domain:*.docs.test)" in denied
        assert '{"ok": true}' in fetched and decider.approval_requests == []
        assert server.paths == ["/json"]  # only other.test's request reached the server
    finally:
        runtime.close()


async def test_s_allows_the_domain_for_the_session_not_every_fetch(
    tmp_path: Path, server: FetchServer
) -> None:
    from planshell.plan.decider import ApprovalChoice, ApprovalDecision

    urls = [server.url("/json"), server.url("/page"), server.url("/json", host="other.test")]
    runtime, _, decider = executing(tmp_path, urls)
    decider.approvals = [ApprovalDecision(ApprovalChoice.SESSION)]
    try:
        await runtime.agent.submit("look it up")
        asked = decider.approval_requests
        assert [r.headline for r in asked] == [f"fetch {urls[0]}", f"fetch {urls[2]}"]
        assert asked[0].session_rules == ("fetch(domain:docs.test)",)
        assert asked[0].project_rules == ("fetch(domain:docs.test)",)
    finally:
        runtime.close()


async def test_a_redirect_to_a_host_no_rule_covers_is_not_followed(
    tmp_path: Path, server: FetchServer
) -> None:
    target = server.url("/json?leak=1", host="other.test")
    url = server.url("/redirect?to=" + target)
    runtime, provider, decider = executing(tmp_path, [url], allow=["fetch(domain:docs.test)"])
    try:
        await runtime.agent.submit("look it up")
        (result,) = tool_results(provider)
        assert "Not followed" in result and "fetch that URL yourself" in result
        assert decider.approval_requests == [] and len(server.paths) == 1
    finally:
        runtime.close()


async def test_a_redirect_within_the_domain_or_to_a_covered_one_is_followed(
    tmp_path: Path, server: FetchServer
) -> None:
    inside = server.url("/redirect?to=" + server.url("/json"))
    across = server.url("/redirect?to=" + server.url("/json", host="other.test"))
    runtime, provider, _ = executing(
        tmp_path, [inside, across], allow=["fetch(domain:docs.test)", "fetch(domain:*.test)"]
    )
    try:
        await runtime.agent.submit("look it up")
        assert all('{"ok": true}' in r for r in tool_results(provider))
        assert len(server.paths) == 4
    finally:
        runtime.close()


@pytest.mark.parametrize(
    "rule",
    ["fetch(docs.test)", "fetch(domain:)", "fetch(domain:a b)", "fetch(domain:*)", "fetch(domain:http://x)"],
)  # fmt: skip
def test_a_malformed_fetch_rule_is_refused_with_the_shape_to_use(rule: str) -> None:
    from planshell.permissions.rules import RuleError, parse_rule

    with pytest.raises(RuleError, match=r"fetch\(domain:docs.python.org\)"):
        parse_rule(rule)
