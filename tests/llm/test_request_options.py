"""``[request]`` settings: what reaches the server, and who may set it.

They change what is sent and what the server does with it (``store``,
``tool_choice``, any extra field), so a cloned repository cannot set them
until the user trusts its config file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planshell.config import ConfigError, load_settings, project_config_path, read_config_file
from planshell.config.trust import trust
from planshell.llm.factory import make_provider
from planshell.llm.openai_compat import OpenAICompatProvider
from planshell.llm.types import ToolSpec
from tests.provider_helpers import collect
from tests.sse_server import (
    Response,
    SSEServer,
    sse_event,
)

HOSTILE = (
    "[request]\n"
    'tool_choice = "required"\n'
    "stream_options = { include_usage = false }\n"
    "[request.extra_body]\n"
    "store = true\n"
    'metadata = { exfil = "1" }\n'
)
TOOL = ToolSpec("read", "Read a file.", {"type": "object", "properties": {}})


def _project(tmp_path: Path, text: str) -> Path:
    config = tmp_path / ".planshell" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    return tmp_path


def test_untrusted_project_cannot_set_request_options(tmp_path: Path) -> None:
    project = _project(tmp_path, HOSTILE)
    settings = load_settings(project, user_file=tmp_path / "no-user.toml")
    assert settings.request.tool_choice is None
    assert settings.request.extra_body == {}
    assert settings.request.stream_options == {"include_usage": True}
    untrusted = settings.untrusted_project
    assert untrusted is not None
    assert {
        "request.tool_choice",
        "request.stream_options.include_usage",
        "request.extra_body.store",
    } <= set(untrusted.key_names)
    # Once the user trusts the file, it applies as written.
    trust(read_config_file(project_config_path(project)))
    trusted = load_settings(project, user_file=tmp_path / "no-user.toml")
    assert trusted.request.tool_choice == "required"
    assert trusted.request.extra_body == {"store": True, "metadata": {"exfil": "1"}}
    assert trusted.request.stream_options == {"include_usage": False}


def test_user_config_sets_request_options(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[request]\ntool_choice = "auto"\nextra_body = { cache_prompt = true }\n')
    settings = load_settings(tmp_path / "proj", user_file=user)
    assert settings.request.tool_choice == "auto"
    assert settings.request.extra_body == {"cache_prompt": True}


@pytest.mark.parametrize("field", ["messages", "model", "tools", "stream", "system"])
def test_extra_body_cannot_replace_what_planshell_builds(tmp_path: Path, field: str) -> None:
    user = tmp_path / "user.toml"
    user.write_text(f'[request.extra_body]\n{field} = "x"\n')
    with pytest.raises(ConfigError, match="extra_body"):
        load_settings(tmp_path / "proj", user_file=user)


async def test_settings_reach_the_wire(sse_server: SSEServer, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text(
        f'provider = "openai"\nbase_url = "{sse_server.url}/v1"\nmodel = "smollm2"\n'
        '[request]\ntool_choice = "auto"\nstream_options = {}\n'
        "[request.extra_body]\ncache_prompt = true\n"
    )
    settings = load_settings(tmp_path / "proj", user_file=user, environ={})
    provider = make_provider(settings, environ={})
    assert isinstance(provider, OpenAICompatProvider)
    done = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    sse_server.add(Response.sse([sse_event(done), sse_event("[DONE]")]))
    await collect(provider, tools=[TOOL])
    body = sse_server.requests[0].json
    assert body["tool_choice"] == "auto" and body["cache_prompt"] is True
    assert "stream_options" not in body
