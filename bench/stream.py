"""Streaming and long sessions in a real terminal (issue 28, section 2), against a loopback model.

1. **stream**: a loopback OpenAI-compatible server streams one answer (markdown
   like a long model answer: headings, lists, inline code, links, fences,
   tables; ~6 characters a delta, like a token) to ``python -m planshell`` in
   tmux at 120x40, while 20 marks are typed into the prompt 0.4 s apart.
   Measured at 5,000 deltas/s for 20 s (100,000 deltas) and at 1,000 deltas/s
   (20,000 deltas). Figures: key echo p95 (typing a mark until it is on
   screen), the end lag (the server's last delta until the answer's last words
   are on screen) and planshell's resident memory afterwards (5,000/s only).
2. **resume**: ``planshell --continue`` of a PLAN session of 10,000 entries
   (~5 MB of text, with tool rows). Figure: from starting the process until a
   mark typed into the prompt is echoed, with the first frame of the resumed
   view (its last entry, the resume note and the PLAN chip) on screen before
   the mark is typed: "a usable screen".

``--baseline REV`` also measures the planshell of git revision REV (checked
out into a temporary worktree and put first on PYTHONPATH), for a table of
"before" and "after". ``--json FILE`` appends the figures for ``bench/run.py``.
Timings poll ``capture-pane`` every 10 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.figures import Figure, checkout, report  # noqa: E402
from tests.tmux_harness import TmuxPane, isolated_env, tmux_path  # noqa: E402

SECTION = "2 streaming"
CHARS_PER_DELTA = 6  # about a token

END_MARK = "END-OF-ANSWER-7731"
POLL = 0.01


# ----------------------------------------------------------------------- content


def answer_text(target: int = 120_000) -> str:
    """Markdown like a long model answer, ending with ``END_MARK``."""
    parts: list[str] = []
    size = 0
    n = 0
    while size < target:
        n += 1
        section = (
            f"## Part {n}: the `module_{n}` changes\n\n"
            f"The handler in [server.py](https://example.com/src/server_{n}.py) reads the "
            f"*request* and calls **`dispatch()`** with the parsed body; see `tests/test_{n}.py`.\n\n"
            f"- [ ] update `load_config()` for case {n}\n- [x] keep the old path working\n"
            f"  - nested detail about retries and time-outs\n- a plain bullet with a [link](https://x.org/{n})\n\n"
            f"```python\ndef handler_{n}(request):\n    body = parse(request)\n"
            f"    return dispatch(body, retries={n % 5})\n```\n\n"
            f"| step | file | status |\n|---|---|---|\n| {n} | `src/a_{n}.py` | done |\n"
            f"| {n + 1} | `src/b_{n}.py` | todo |\n\n"
            "> A note on the design: keep the change small and testable.\n\n"
        )
        parts.append(section)
        size += len(section)
    parts.append(f"That is all. {END_MARK}\n")
    return "".join(parts)


def split_deltas(text: str, count: int) -> list[str]:
    step = max(1, len(text) // count)
    deltas = [text[i : i + step] for i in range(0, len(text), step)]
    # The last delta carries the end mark whole, so "seen" means "all arrived".
    tail = len(END_MARK) + 2
    joined_tail = "".join(deltas[-(tail // step + 2) :])
    deltas = [*deltas[: -(tail // step + 2)], joined_tail]
    return deltas


# ------------------------------------------------------------------------ server


class Server:
    """A loopback OpenAI-compatible /v1/chat/completions that streams one long answer.

    The first chat request gets the long answer at ``rate`` deltas per second;
    later ones get a one-word answer; anything else (the model list) a 404. ``finished`` is when the last delta was sent.
    """

    def __init__(self, deltas: list[str], rate: float) -> None:
        self.deltas = deltas
        self.rate = rate
        self.requests = 0
        self.started: float | None = None
        self.finished: float | None = None
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(body) < length:
                body += conn.recv(65536)
            if not head.startswith(b"POST ") or b"/chat/completions" not in head.split(b"\r\n")[0]:
                # planshell asks the server what it serves (/v1/models, /props…): not here.
                conn.sendall(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
                return
            self.requests += 1
            first = self.requests == 1
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"cache-control: no-cache\r\nconnection: close\r\n\r\n"
            )
            deltas = self.deltas if first else ["ok"]
            if first:
                self.started = time.monotonic()
            start = time.monotonic()
            for number, delta in enumerate(deltas):
                due = start + number / self.rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                event = {"choices": [{"index": 0, "delta": {"content": delta}}]}
                conn.sendall(b"data: " + json.dumps(event).encode() + b"\n\n")
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            conn.sendall(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
            if first:
                self.finished = time.monotonic()

    def close(self) -> None:
        self.sock.close()


# ------------------------------------------------------------------------- probes


def rss_mib(pane: TmuxPane) -> float:
    """Largest RSS among the pane's python processes (planshell itself)."""
    shell = int(pane._tmux("display-message", "-p", "-t", "main", "#{pane_pid}").strip())
    best = 0
    stack = [shell]
    while stack:
        pid = stack.pop()
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        stack.extend(int(child) for child in children)
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                best = max(best, int(line.split()[1]))
    return best / 1024


def wait(pane: TmuxPane, predicate, timeout: float) -> float | None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate(pane.capture()):
            return time.monotonic()
        time.sleep(POLL)
    return None


def type_marks(pane: TmuxPane, count: int, gap: float, timeout: float) -> list[float]:
    """Type ``count`` marks ``gap`` apart; return each one's echo time (s)."""
    marks = [f"~{chr(65 + i % 26)}" for i in range(count)]
    sent: list[float] = []
    echoes: list[float] = [float("nan")] * count
    done = threading.Event()

    def typist() -> None:
        for mark in marks:
            sent.append(time.monotonic())
            pane.type(mark)
            time.sleep(gap)
        done.set()

    threading.Thread(target=typist, daemon=True).start()
    seen = 0
    deadline = time.monotonic() + count * gap + timeout
    while seen < count and time.monotonic() < deadline:
        screen = pane.capture().replace("\n", "")
        now = time.monotonic()
        while seen < min(len(sent), count) and "".join(marks[: seen + 1]) in screen:
            echoes[seen] = now - sent[seen]
            seen += 1
        time.sleep(POLL)
    return echoes


def p95(values: list[float], timeout: float) -> float:
    """95th percentile; a mark never echoed counts as ``timeout``."""
    ok = sorted(v if v == v else timeout for v in values)
    return ok[min(len(ok) - 1, round(0.95 * (len(ok) - 1)))] if ok else timeout


def summary(values: list[float]) -> str:
    ok = sorted(v for v in values if v == v)
    if not ok:
        return "n/a"
    missing = len(values) - len(ok)
    extra = f" ({missing} never echoed)" if missing else ""
    return f"median {statistics.median(ok) * 1000:.0f} ms{extra}"


# ------------------------------------------------------------------------- runs


def project_dir(base: Path) -> Path:
    project = base / "proj"
    project.mkdir()
    (project / "README.md").write_text("# Widget service\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


def planshell_env(home: Path, code: Path) -> dict[str, str]:
    env = isolated_env(home)
    env["PYTHONPATH"] = str(code)
    env["OPENAI_API_KEY"] = "sk-bench"
    return env


def run_stream(code: Path, count: int, rate: float, args: argparse.Namespace) -> dict[str, float]:
    deltas = split_deltas(answer_text(count * CHARS_PER_DELTA), count)
    server = Server(deltas, rate)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        project = project_dir(base)
        command = [
            sys.executable,
            "-m",
            "planshell",
            "-C",
            str(project),
            "--provider",
            "openai",
            "--base-url",
            f"http://127.0.0.1:{server.port}/v1",
            "--model",
            "bench",
        ]
        with TmuxPane.start(
            command, env=planshell_env(home, code), cwd=project, size=(120, 40)
        ) as pane:
            pane.wait_for("Ask anything", timeout=60)
            pane.wait_for("· bench", timeout=60)  # the status bar's model: start-up is done
            time.sleep(0.5)
            for _ in range(3):  # a request typed while the machine is busy is retried
                pane.keys("C-u")
                pane.type("write the long answer")
                pane.keys("Enter")
                deadline = time.monotonic() + 10
                while server.started is None and time.monotonic() < deadline:
                    time.sleep(0.01)
                if server.started is not None:
                    break
            else:
                raise RuntimeError("planshell never sent the request")
            time.sleep(1.0)  # typing starts while the answer streams
            echoes = type_marks(pane, 20, 0.4, timeout=args.timeout)
            seen = wait(pane, lambda screen: END_MARK in screen, args.timeout)
            finished = server.finished
            lag = (seen - finished) if seen is not None and finished is not None else None
            time.sleep(0.5)
            rss = rss_mib(pane)
    server.close()
    print(
        f"  stream {len(deltas)} deltas ({sum(map(len, deltas)) // 1000} KB) at {rate:g}/s: "
        f"echo {summary(echoes)}",
        file=sys.stderr,
    )
    return {
        "echo_p95": p95(echoes, args.timeout),
        "end_lag": args.timeout if lag is None else lag,
        "rss": rss,
    }


SEED_SESSION = r"""
import sys
from pathlib import Path
from planshell.agent.session import SessionLog
from planshell.llm.types import Message, ToolCall

root = Path(sys.argv[1])
entries = int(sys.argv[2])
log = SessionLog.create(root)
log.append({"type": "mode", "mode": "plan", "plan_path": None, "saved_tools": None})
body = sys.argv[3]
n = 0
while n < entries:
    log.append_message(Message("user", f"question {n}: explain part {n}"))
    n += 1
    call = ToolCall(f"c{n}", "read", '{"path": "README.md"}')
    log.append_message(Message("assistant", body.replace("#N", str(n)), tool_calls=[call]))
    n += 2
    log.append_message(Message("tool", "# Widget service\n" * 20, tool_call_id=call.id))
log.append_message(Message("user", "the very last question"))
log.append_message(Message("assistant", "LAST-ENTRY-4410 is the answer."))
log.close()
print(log.path)
"""


def run_long(code: Path, args: argparse.Namespace) -> dict[str, float]:
    body = answer_text(5_000_000 // max(1, args.entries // 3))
    body = body.replace(END_MARK, "#N")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        project = project_dir(base)
        env = planshell_env(home, code)
        subprocess.run(
            [sys.executable, "-c", SEED_SESSION, str(project), str(args.entries), body],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
        command = [sys.executable, "-m", "planshell", "-C", str(project), "-c"]
        command += ["--provider", "demo"]
        with TmuxPane.start(command, env=env, cwd=project, size=(120, 40)) as pane:
            start = pane.started_at

            def resumed(screen: str) -> bool:
                return all(m in screen for m in ("LAST-ENTRY-4410", "Resumed conversation", "PLAN"))

            chip = wait(pane, lambda s: "PLAN" in s, args.timeout)
            shown = wait(pane, resumed, args.timeout)
            usable = float("nan")
            if shown is not None:
                pane.type("~Q")
                echoed = wait(pane, lambda s: "~Q" in s, args.timeout)
                usable = args.timeout if echoed is None else echoed - start
            # Backspaces, not C-u: tmux delivered one `send-keys C-u` to planshell as two
            # ctrl+u key events (seen with a key log), the second after the next mark,
            # which then vanished and the echo read "n/a".
            pane.keys("BSpace", "BSpace")
            echoes = type_marks(pane, 20, 0.2, timeout=args.timeout)
            pane.keys("C-u")  # clear the prompt
            scrolls: list[float] = []
            for _ in range(15):
                before = pane.capture()
                sent = time.monotonic()
                pane.keys("PageUp")
                changed = wait(pane, lambda s, before=before: s != before, 10.0)
                scrolls.append(float("nan") if changed is None else changed - sent)
                time.sleep(0.1)
            rss = rss_mib(pane)
    first = "did not load" if shown is None else f"{shown - start:.2f} s"
    if chip is not None:
        first += f" (the first frame with the chip: {chip - start:.2f} s)"
    print(
        f"  resume {args.entries} entries: first frame {first}, echo {summary(echoes)}, "
        f"PageUp {summary(scrolls)}, RSS {rss:.0f} MiB",
        file=sys.stderr,
    )
    return {"usable": args.timeout if usable != usable else usable}


def measure(code: Path, tree: str, args: argparse.Namespace) -> list[Figure]:
    """Every figure of section 2 for the planshell at ``code``."""
    baseline = tree != "this tree"
    figures: list[Figure] = []

    def add(name: str, value: float, unit: str, goal: float, method: str) -> None:
        figures.append(Figure(SECTION, name, value, unit, goal, "lower", method, tree))

    how = "tmux 120x40, loopback OpenAI SSE server, ~6 chars/delta markdown, 20 marks typed 0.4 s apart"
    if args.only in (None, "stream"):
        fast = run_stream(code, args.deltas, args.rate, args)
        add(
            f"key echo p95 @ {args.rate:g} deltas/s",
            fast["echo_p95"],
            "s",
            0.1,
            f"{how}; {args.deltas} deltas; p95 of mark typed -> on screen",
        )
        add(
            f"end lag @ {args.rate:g} deltas/s",
            fast["end_lag"],
            "s",
            0.5,
            f"{how}; server's last delta -> last words on screen",
        )
        add(
            f"RSS @ {args.rate:g} deltas/s",
            fast["rss"],
            "MiB",
            150,
            f"{how}; VmRSS of planshell after the answer",
        )
        slow = run_stream(code, args.slow_deltas, args.slow_rate, args)
        add(
            f"key echo p95 @ {args.slow_rate:g} deltas/s",
            slow["echo_p95"],
            "s",
            0.05,
            f"{how}; {args.slow_deltas} deltas; p95 of mark typed -> on screen",
        )
    if args.only in (None, "long"):
        long = run_long(code, args)
        add(
            f"resume {args.entries} entries to a usable screen",
            long["usable"],
            "s",
            1.0,
            "tmux, --continue of a PLAN session (~5 MB, tool rows): process start -> last entry, "
            "resume note and PLAN chip shown, then a typed mark echoed",
        )
    if baseline:
        figures = [Figure(**{**f.__dict__, "goal": None}) for f in figures]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=5_000.0, help="deltas per second")
    parser.add_argument("--slow-deltas", type=int, default=20_000)
    parser.add_argument("--slow-rate", type=float, default=1_000.0, help="deltas per second")
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    parser.add_argument("--only", choices=["stream", "long"], help="run one scenario")
    parser.add_argument("--json", type=Path, help="append the figures here (bench/run.py)")
    args = parser.parse_args()
    if tmux_path() is None:
        print("tmux is not installed: skipped", file=sys.stderr)
        return 0
    figures: list[Figure] = []
    if args.baseline:
        with checkout(args.baseline) as tree:
            figures += measure(tree, f"baseline {args.baseline}", args)
    figures += measure(ROOT, "this tree", args)
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
