"""A scripted OpenAI-compatible model for end-to-end tests: replies in, a served script out.

``python -m tests.sse_server --script FILE`` replays one response per request;
this module writes that FILE from a list of replies the way a test thinks of
them (words and tool calls), in the OpenAI chat-completions streaming format
(tests/data/sse/openai_tool_calls.txt), and runs the server as a subprocess::

    replies = [SseReply(calls=[("read", {"path": "README.md"})]), SseReply("Done.")]
    with ScriptedServer(replies, tmp_path) as server:
        ... planshell --provider openai --base-url {server.base_url} --model scripted ...
        assert len(server.requests()) == 2

Every chat request takes the next reply, whatever it asks (the server never
looks at it): a test that lets planshell make an unexpected request sees the
script run out (HTTP 418) instead of a wrong answer. ``GET /v1/models`` (which
planshell's chat asks at start-up) has a fixed answer outside the queue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0
MODEL = "scripted"  # the model name the server lists and the replies carry  # a hang guard while the server starts, never a speed budget


@dataclass
class SseReply:
    """One model reply: ``text``, then ``calls`` as ``(tool name, arguments)``."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    usage: tuple[int, int] | None = None  # (prompt tokens, completion tokens)
    # Sent only once this file (a name in the server's workdir) exists: the test
    # creates it when it has done what must happen before this reply.
    wait_for_file: str | None = None


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def reply_events(reply: SseReply, number: int) -> list[dict[str, Any]]:
    """The SSE events of one streamed reply (``number`` makes the call ids unique)."""
    events: list[dict[str, Any]] = [{"data": _chunk({"role": "assistant", "content": reply.text})}]
    for index, (name, args) in enumerate(reply.calls):
        call = {
            "index": index,
            "id": f"call_{number}_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        events.append({"data": _chunk({"tool_calls": [call]})})
    events.append({"data": _chunk({}, "tool_calls" if reply.calls else "stop")})
    if reply.usage is not None:
        prompt, completion = reply.usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        events.append({"data": {"object": "chat.completion.chunk", "choices": [], "usage": usage}})
    events.append({"data": "[DONE]"})
    return events


def _response(reply: SseReply, number: int) -> dict[str, Any]:
    response: dict[str, Any] = {"events": reply_events(reply, number)}
    if reply.wait_for_file is not None:
        response["wait_for_file"] = reply.wait_for_file  # relative to the script file
    return response


def script(replies: Sequence[SseReply]) -> dict[str, Any]:
    """The standalone server's script (tests/sse_server.py) answering with ``replies`` in order."""
    return {
        "responses": [_response(r, n) for n, r in enumerate(replies, 1)],
        "repeat_last": False,
        # planshell's chat asks an OpenAI-compatible server for its models at start-up
        # (for /model): answered outside the queue, so it never takes a reply.
        "routes": {"/v1/models": {"json": {"object": "list", "data": [{"id": MODEL}]}}},
    }


class ScriptedServer:
    """``python -m tests.sse_server`` serving ``replies``, started and stopped with the block."""

    def __init__(self, replies: Sequence[SseReply], workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.script_path = workdir / "script.json"
        self.log_path = workdir / "requests.jsonl"
        self.script_path.write_text(json.dumps(script(replies)))
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``--base-url``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedServer:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.sse_server",
                "--port",
                "0",
                "--script",
                str(self.script_path),
                "--log",
                str(self.log_path),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        # The server prints PORT=<n> once it listens; readline blocks until then (or EOF).
        line = self.process.stdout.readline().strip()
        if not line.startswith("PORT="):
            self.stop()
            raise RuntimeError(f"the scripted server did not start: {line!r}")
        self.port = int(line.removeprefix("PORT="))
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=START_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def requests(self) -> list[dict[str, Any]]:
        """Every request so far (method, path, headers, json), oldest first."""
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]

    def release(self, name: str) -> None:
        """Let a reply with ``wait_for_file=name`` be sent (it waits for that file)."""
        (self.workdir / name).touch()

    def chat_requests(self) -> list[dict[str, Any]]:
        """The chat-completion requests (each took one reply), oldest first."""
        return [r for r in self.requests() if r["path"] == "/v1/chat/completions"]

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
