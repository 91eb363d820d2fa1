"""``planshell doctor``: what planshell would run with, in one report to paste into a bug.

Each section is computed on its own and a failing section prints its error
instead of stopping the report: a diagnostics command must survive the broken
set-ups it exists to explain. It makes no network request, never prints a key
(only the variable or file that supplied it), prints config-derived text
sanitised (the project file is the repository's, so hostile), and imports no
Textual.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

from planshell.sanitize import plain_line
from planshell.text import plural

if TYPE_CHECKING:
    from planshell.config import Settings
    from planshell.llm.types import ToolSpec
    from planshell.plan.controller import PlanController
    from planshell.sandbox.bwrap import WorkspaceExecPolicy

Rows = list[tuple[str, str]]
T = TypeVar("T")

PACKAGES = ("planshell", "textual", "httpx", "pydantic", "bashlex")
EXTERNAL_TOOLS = (("bwrap", "bubblewrap"), ("rg", "ripgrep"), ("git", "git"))
VERSION_TIMEOUT = 5.0
SELF_TEST_TIMEOUT = 10.0
# `ls` proves the sandbox runs and sees the project; `-w` (access(2), no write
# attempted) proves the project is read-only inside it.
SELF_TEST = "ls >/dev/null && if [ -w . ]; then echo writable; else echo read-only; fi"
CHARS_PER_TOKEN = 4


def _ignored_project_keys(root: Path) -> list[str]:
    """Project-config keys ignored because the user has not trusted that file."""
    from planshell.config import ConfigError, load_settings
    from planshell.sanitize import plain_line

    try:
        untrusted = load_settings(root).untrusted_project
    except ConfigError:
        return []
    return [plain_line(name, 80) for name in untrusted.key_names] if untrusted else []


def run_doctor(start: Path, out: TextIO) -> int:
    """Print the report for the project around ``start``; always exits 0."""
    from planshell.plan.store import find_project_root

    root = find_project_root(start)
    settings, settings_rows = _settings(root)
    # Two sections come from one runtime build: build it once (and only when reached).
    measured = functools.cache(lambda: _sandbox_and_schema(settings, root))
    sections: list[tuple[str, Callable[[], Rows]]] = [
        ("versions", _versions),
        ("config", lambda: settings_rows),
        ("provider", lambda: _provider(settings, root)),
        ("external tools", _external_tools),
        ("sandbox (plan mode)", lambda: measured()[0]),
        ("mcp servers", lambda: _mcp(settings, root)),
        ("log", _log),
        ("tool schema (sent with every request)", lambda: measured()[1]),
    ]
    out.write(f"planshell doctor — project {plain_line(str(root), 300)}\n")
    for title, compute in sections:
        out.write(f"\n{title}\n")
        try:
            rows = compute()
        except Exception as exc:  # report and go on: the rest of the report still helps
            rows = [("error", f"{type(exc).__name__}: {exc}")]
        width = max((len(label) for label, _ in rows), default=0)
        for label, value in rows:
            out.write(f"  {label.ljust(width)}  {plain_line(value, 400)}\n")
    out.flush()
    return 0


# --- sections ----------------------------------------------------------------------


def _versions() -> Rows:
    rows: Rows = []
    for name in PACKAGES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    rows.insert(1, ("python", f"{platform.python_version()} ({sys.executable})"))
    rows.append(("platform", platform.platform()))
    return rows


def _settings(root: Path) -> tuple[Settings, Rows]:
    from planshell.config import (
        ConfigError,
        Settings,
        load_settings,
        project_config_path,
        user_config_path,
    )

    user, project = user_config_path(), project_config_path(root)
    ignored = _ignored_project_keys(root)
    rows: Rows = [
        ("user file", f"{user} ({_found(user)})"),
        ("project file", f"{project} ({_found(project)})"),
        ("ignored project keys", ", ".join(ignored) if ignored else "none"),
    ]
    rows.append(("always rules", _always_rules(root)))
    env_names = sorted(n for n in os.environ if n.startswith("PLANSHELL_"))
    rows.append(("PLANSHELL_* set", ", ".join(env_names) if env_names else "none"))
    try:
        settings = load_settings(root)
        if settings.project_config_error:  # the same sentence the TUI and -p show
            rows.append(("settings", f"project file ignored: {settings.project_config_error}"))
        else:
            rows.append(("settings", "valid"))
    except ConfigError as exc:
        settings = Settings()
        rows.append(
            (
                "settings",
                f"INVALID, planshell will not start until it is fixed (defaults used below): {exc}",
            )
        )
    return settings, rows


def _always_rules(root: Path) -> str:
    """Where this project's "always allow" answers are kept (yours, outside the repository)."""
    from planshell.config import ConfigError
    from planshell.permissions.local_rules import load_local_rules, local_rules_path

    path = local_rules_path(root)
    try:
        rules = load_local_rules(path)
    except ConfigError as exc:
        return f"{path} (not applied: {exc})"
    if not path.is_file():
        return f"{path} (not found)"
    return f"{path} ({len(rules)} rule{'' if len(rules) == 1 else 's'}: {', '.join(rules)})"


def _found(path: Path) -> str:
    return "found" if path.is_file() else "not found"


def _provider(settings: Settings, root: Path) -> Rows:
    from planshell.llm.factory import choose_provider, make_provider, provider_spec

    name = choose_provider(settings, os.environ)
    why = ""
    if settings.provider == "auto":
        why = " (auto: no API key or base URL found)" if name == "demo" else " (auto)"
    provider = make_provider(settings)  # builds a client lazily: no request is made
    rows: Rows = [("provider", f"{name}{why}")]
    key_var = provider_spec(name).key_var
    if key_var is None:
        rows.append(("model", "offline demo model (no network, no key)"))
        return rows
    rows += [
        ("model", str(getattr(provider, "model", "?"))),
        ("base URL", str(getattr(provider, "base_url", "?"))),
        ("API key", _key_source(settings, root, key_var)),
    ]
    if settings.headers:
        rows.append(("extra headers", ", ".join(sorted(settings.headers)) + " (values not shown)"))
    return rows


def _key_source(settings: Settings, root: Path, key_var: str) -> str:
    """Where the key comes from, never the key itself (mirrors ``make_provider``)."""
    from planshell.config import project_config_path, read_config_file, user_config_path

    if settings.api_key:
        if os.environ.get("PLANSHELL_API_KEY"):
            return "from PLANSHELL_API_KEY (value not shown)"
        untrusted = settings.untrusted_project
        project_ignored = untrusted is not None and ("api_key",) in untrusted.keys
        paths = (
            [user_config_path()]
            if project_ignored
            else [project_config_path(root), user_config_path()]
        )
        for path in paths:  # the project layer wins over the user's
            project_root = root if path == project_config_path(root) else None
            try:
                if "api_key" in read_config_file(path, project_root).data:
                    return f"from api_key in {path} (value not shown)"
            except Exception:
                continue
        return "from the api_key setting (value not shown)"
    if os.environ.get(key_var):
        return f"from {key_var} (value not shown)"
    return f"none: {key_var} is not set (requests go without a key)"


def _external_tools() -> Rows:
    from planshell.sandbox.bwrap import find_bwrap
    from planshell.tools.grep_rg import find_rg

    # Found the way planshell finds them (rg: the wheel's binary first), not only on PATH.
    finders = {"bwrap": find_bwrap, "rg": find_rg}
    rows: Rows = []
    for binary, label in EXTERNAL_TOOLS:
        finder = finders.get(binary)
        path = finder() if finder is not None else shutil.which(binary)
        rows.append((label, f"{path} ({_version_of(path)})" if path else "not found"))
    return rows


def _version_of(path: str) -> str:
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True,
            timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"--version failed: {exc}"
    first = next((ln.strip() for ln in (done.stdout + done.stderr).splitlines() if ln.strip()), "")
    return first or f"--version exited {done.returncode}"


def _sandbox_and_schema(settings: Settings, root: Path) -> tuple[Rows, Rows]:
    """Build the real runtime (demo provider, no session), measure its tools, enter PLAN, run bash."""
    from planshell.llm.demo import DemoProvider
    from planshell.llm.factory import choose_provider
    from planshell.plan.decider import HeadlessDecider
    from planshell.runtime import build_runtime
    from planshell.sandbox.bwrap import PlanExecPolicy
    from planshell.tools.shell import BashArgs

    runtime = build_runtime(
        settings, root, HeadlessDecider(), provider=DemoProvider(), persist=False
    )
    try:
        anthropic = choose_provider(settings, os.environ) == "anthropic"
        normal = _schema_row(runtime.registry.specs(), anthropic)
        runtime.plan.enter_plan()
        plan = _schema_row(runtime.registry.specs(), anthropic)
        policy = runtime.plan.plan_exec_policy
        status = policy.status if isinstance(policy, PlanExecPolicy) else None
        sandbox: Rows = [("plan.sandbox", settings.plan.sandbox)]
        if status is not None:
            sandbox.append(("state", status.line))
        sandbox += _workspace_rows(runtime.workspace, settings.permissions.network)
        bash = runtime.registry.get("bash")
        if bash is None:
            sandbox.append(("self-test", "skipped: no bash tool"))
        else:
            args = BashArgs(command=SELF_TEST, timeout=SELF_TEST_TIMEOUT)
            result = asyncio.run(_after_snapshot(runtime.plan, bash.run(args, runtime.agent.ctx)))
            sandbox.append(("self-test", _self_test_verdict(policy.label, result.content)))
    finally:
        runtime.close()
    schema: Rows = [
        ("format", "Anthropic" if anthropic else "OpenAI-compatible"),
        ("normal mode", normal),
        ("plan mode", plan),
    ]
    return sandbox, schema


def _mcp(settings: Settings, root: Path) -> Rows:
    """Each MCP server: started or not, its tools and how many plan mode may use, last error."""
    from planshell.mcp.manager import McpManager, untrusted_servers
    from planshell.tools.registry import ToolRegistry

    untrusted = untrusted_servers(settings)
    if not settings.mcp.servers and not untrusted:
        return [("servers", "none configured (see docs/mcp.md)")]
    manager = McpManager(
        settings.mcp,
        ToolRegistry(),
        on_notice=lambda text: None,
        on_added=lambda names, offer: None,
        in_plan=lambda: False,
        plan_names=frozenset,
        untrusted=untrusted,
        root=str(root),
    )

    async def probe() -> None:
        manager.start()
        try:
            await asyncio.gather(
                *(s.wait_started() for s in manager.servers.values()), return_exceptions=True
            )
        finally:
            await manager.stop()

    asyncio.run(probe())
    rows: Rows = []
    for info in manager.states():
        if info.state == "running":
            planned = sum(1 for t in info.tools if t.plan_permitted)
            value = f"started: {len(info.tools)} tools, {planned} allowed in plan mode"
            if info.config.origin == "project":
                value += " (project config)"
        elif info.state == "untrusted":
            value = "not started: the project config is not trusted (planshell trust)"
        elif info.state == "disabled":
            value = "not started: enabled = false"
        else:
            value = f"NOT started ({info.state}): {info.last_error or 'no answer'}"
        rows.append((info.name, value))
    return rows


def _workspace_rows(workspace: WorkspaceExecPolicy | None, network: bool) -> Rows:
    """How bash runs outside plan mode (``permissions.sandbox``), as one row."""
    if workspace is None:
        return []
    workspace.prepare()
    if workspace.known_active:
        net = "network allowed" if network else "no network"
        state = f"sandboxed: project writable (not .git), rest read-only, {net}"
    elif workspace.setting == "off":
        state = 'no sandbox (permissions.sandbox = "off")'
    else:
        state = workspace.notice or "no sandbox"
    return [("workspace", state)]


async def _after_snapshot(plan: PlanController, run: Awaitable[T]) -> T:
    """Plan mode's barrier for the self-test: the receipt's snapshot completes first."""
    await plan.wait_for_snapshot()
    return await run


def _self_test_verdict(label: str, output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    verdict = lines[0] if lines else ""
    if label == "refused":
        return "refused: plan-mode bash will not run (see state)"
    if label == "sandboxed":
        if verdict == "read-only":
            return "ok: `ls` ran in the sandbox and the project is read-only inside it"
        if verdict == "writable":
            return "FAILED: the project is writable inside the sandbox"
        return f"FAILED: {' / '.join(lines[:3]) or 'no output'}"
    if verdict in ("read-only", "writable"):
        return "`ls` ran without a sandbox (the bash guard and git hardening only)"
    return f"FAILED: {' / '.join(lines[:3]) or 'no output'}"


def _schema_row(specs: list[ToolSpec], anthropic: bool) -> str:
    from planshell.llm.anthropic import to_anthropic_tool
    from planshell.llm.openai_compat import to_openai_tool

    wire = [to_anthropic_tool(s) if anthropic else to_openai_tool(s) for s in specs]
    chars = len(json.dumps(wire, ensure_ascii=False))
    names = ", ".join(s.name for s in specs)
    return f"{len(specs)} tools, {chars:,} chars, ~{chars // CHARS_PER_TOKEN:,} tokens ({names})"


def _log() -> Rows:
    from planshell.logs import BACKUP_COUNT, LEVEL_ENV, MAX_BYTES, level_from, log_path

    path = log_path()
    if path.is_file():
        state = f"{path.stat().st_size:,} bytes"
        rotated = [p for p in path.parent.glob(path.name + ".*") if p.is_file()]
        if rotated:
            state += f", {plural(len(rotated), 'rotated file')}"
    else:
        state = "not written yet"
    level, problem = level_from(os.environ)
    level_text = logging.getLevelName(level)
    source = f"from {LEVEL_ENV}" if os.environ.get(LEVEL_ENV) else "default"
    rows: Rows = [
        ("file", f"{path} ({state})"),
        ("rotation", f"at {MAX_BYTES // 1_000_000} MB, {BACKUP_COUNT} old files kept"),
        ("level", f"{level_text} ({source}; --debug logs DEBUG)"),
    ]
    if problem:
        rows.append(("problem", problem))
    return rows
