"""Command line: argv -> settings -> TUI, headless run, or a utility command.

Keep this module's imports light: ``--help`` and ``--version`` must not pay
for Textual (or anything else heavy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from planshell import __version__
from planshell.provider_names import PROVIDER_CHOICES

EXIT_USAGE = 2


def add_directory_argument(parser: argparse.ArgumentParser) -> None:
    """``-C/--directory``, the same for planshell and each of its subcommands."""
    parser.add_argument(
        "-C",
        "--directory",
        type=Path,
        default=None,
        help="project directory (default: the current one)",
    )


def _main_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="planshell",
        description="A terminal coding agent whose centrepiece is plan mode.",
        epilog=(
            "other commands:\n"
            "  planshell check-command [--json] [CMD ...]   test commands against the plan-mode bash guard\n"
            "  planshell review PATH                         review a plan: approve, refine, comment\n"
            "  planshell doctor [-C DIR]                     versions, config, provider, sandbox, log file\n"
            "  planshell report [PLAN]                       the report of a completed plan\n"
            "  planshell trust [--yes | --revoke | --list]   let this project's config change security settings\n\n"
            "With no API key planshell runs an offline demo model. See README.md and docs/."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        help="a request to submit at start (with -p: read from stdin when omitted or -)",
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="print_mode",
        action="store_true",
        help="run the prompt without the UI and print the answer",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="with --print: show provider, tool calls, mode changes and intermediate replies on stderr",
    )
    parser.add_argument("--plan", action="store_true", help="start in plan mode")
    parser.add_argument(
        "--permission-mode",
        choices=["ask", "accept-edits", "auto"],
        help="approvals outside plan mode (headless ask: calls that would ask are denied)",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="run calls this rule covers unasked, e.g. 'bash(pytest *)' (repeatable)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="resume the newest conversation of this project",
    )
    parser.add_argument("-r", "--resume", metavar="ID", help="resume the conversation with this id")
    parser.add_argument("--provider", choices=PROVIDER_CHOICES)
    parser.add_argument("--model", help="model name (the session's: it executes, and plans too)")
    parser.add_argument(
        "--plan-model",
        help="model used while in plan mode (the session's provider unless [plan] provider)",
    )
    parser.add_argument("--base-url", help="API base URL (OpenAI-compatible servers end in /v1)")
    parser.add_argument("--theme", help="UI theme name")
    add_directory_argument(parser)
    parser.add_argument(
        "--debug",
        action="store_true",
        help="log at DEBUG level to the log file (see planshell doctor)",
    )
    parser.add_argument("--version", action="version", version=f"planshell {__version__}")
    return parser


def _cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {
        "provider": args.provider,
        "model": args.model,
        "base_url": args.base_url,
    }
    if getattr(args, "theme", None):
        overrides["ui"] = {"theme": args.theme}
    if getattr(args, "plan_model", None):
        overrides["plan"] = {"model": args.plan_model}
    if getattr(args, "permission_mode", None):
        overrides["permissions"] = {"mode": args.permission_mode}
    return overrides


def _fail(message: str, code: int = 1) -> int:
    print(f"planshell: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the real program (tests call main with a list and keep their process as is)
        from planshell.sandbox.env import hide_own_environment

        hide_own_environment()  # our /proc/<pid>/environ holds the keys bash must not see
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "check-command":
        return _check_command(argv[1:])
    if argv and argv[0] == "review":
        return _review(argv[1:])
    if argv and argv[0] == "doctor":
        return _doctor(argv[1:])
    if argv and argv[0] == "trust":
        return _trust(argv[1:])
    if argv and argv[0] == "report":
        return _report(argv[1:])
    args = _main_parser().parse_args(argv)
    _setup_logs(debug=args.debug, tui=not args.print_mode)
    start = (args.directory or Path.cwd()).resolve()
    if not start.is_dir():
        return _fail(f"{start} is not a directory", EXIT_USAGE)
    if not args.print_mode:
        from planshell.ui.app import run_tui

        # Settings load in a thread after the first frame: start-up stays close
        # to a bare Textual app. A loader error is printed and exits 1.
        return run_tui(
            partial(_load, args, start),
            start,
            prompt=args.prompt,
            plan=args.plan,
            theme=args.theme,
            mode_hint=resume_mode_hint(args, start),
            resume_tail=resume_tail_peek(args, start),
        )
    prompt = _print_prompt(args.prompt)
    if not prompt.strip():
        return _fail(
            '--print needs a prompt, e.g. planshell -p "what is in this repo?" '
            'or echo "task" | planshell -p',
            EXIT_USAGE,
        )
    args.prompt = prompt
    from planshell.config import ConfigError

    try:
        settings, root, resume = _load(args, start)
    except (ConfigError, LookupError) as exc:
        return _fail(str(exc))
    if settings.project_config_error:
        print(f"planshell: warning: {settings.project_config_error}", file=sys.stderr)
    if settings.untrusted_project is not None:
        print(f"planshell: warning: {settings.untrusted_project.warning()}", file=sys.stderr)
    return _run_headless(settings, root, args, resume)


def resume_mode_hint(args: argparse.Namespace, start: Path) -> str | None:
    """The mode ``--continue`` / ``--resume`` will restore, for the TUI's first frame.

    Read cheaply (no pydantic, no engine) so the status bar shows PLAN at once
    instead of ``OFF starting…`` until the session has loaded."""
    if not (args.continue_ or args.resume):
        return None
    from planshell.agent.session_peek import peek_resumed_mode

    return peek_resumed_mode(start, args.resume)


def resume_tail_peek(args: argparse.Namespace, start: Path) -> Callable[[], Any] | None:
    """Reads the end of the session ``--continue`` / ``--resume`` will load, for its last
    screen in the first frames (the full load takes seconds for a long one)."""
    if not (args.continue_ or args.resume):
        return None
    from planshell.agent.session_peek import peek_resumed_tail

    return partial(peek_resumed_tail, start, args.resume)


def _print_prompt(prompt: str | None) -> str:
    """The request for ``--print``: the argument, or stdin when it is piped.

    ``-`` as the prompt also reads stdin. Stdin is read only when no prompt was
    given (or ``-``), so a script that leaves stdin open never hangs.
    """
    if prompt is not None and prompt != "-":
        return prompt
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return ""
    return stdin.read()


def _load(args: argparse.Namespace, start: Path) -> tuple[Any, Path, Any]:
    """Settings, project root and the session to resume (raises with a clear message)."""
    from planshell.agent.session import SessionLog, find_session
    from planshell.config import load_settings
    from planshell.plan.store import find_project_root

    root = find_project_root(start)
    settings = load_settings(root, cli=_cli_overrides(args))
    if args.allow:
        from pydantic import ValidationError

        from planshell.config import ConfigError

        try:
            settings.permissions.allow = [*settings.permissions.allow, *args.allow]
        except ValidationError as exc:
            raise ConfigError(f"--allow: {exc.errors()[0]['msg']}") from None
    resume = None
    if args.continue_ or args.resume:
        resume = SessionLog.load(find_session(root, args.resume))
    return settings, root, resume


def _run_headless(settings: Any, root: Path, args: argparse.Namespace, resume: Any) -> int:
    from planshell.config import ConfigError
    from planshell.headless import run_print
    from planshell.plan.decider import HeadlessDecider
    from planshell.runtime import build_runtime

    decider = HeadlessDecider()
    try:
        provider = headless_provider(settings)
        runtime = build_runtime(
            settings, root, decider, provider=provider, resume=resume, plan=args.plan
        )
    except ConfigError as exc:
        return _fail(str(exc))
    try:
        return asyncio.run(run_print(runtime, decider, args.prompt, verbose=args.verbose))
    except KeyboardInterrupt:
        return 130


def headless_provider(settings: Any) -> Any:
    """The provider for ``--print``: the configured one, with the demo model unpaced.

    The demo model sleeps between chunks so its answer streams visibly in the TUI;
    ``-p`` prints only the final answer, so those pauses (~0.1 s) would only be waited.
    """
    from planshell.llm.demo import DemoProvider
    from planshell.llm.factory import make_provider

    provider = make_provider(settings)
    if isinstance(provider, DemoProvider):
        provider.chunk_delay = 0.0
    return provider


def _check_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planshell check-command",
        description="Show whether plan mode would allow each shell command (the same guard and "
        "config as the app). With no CMD, reads one command per line from stdin. Exits 0 when "
        "every command is allowed, 1 when any is blocked.",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per command")
    parser.add_argument("commands", nargs="*", metavar="CMD")
    args = parser.parse_args(argv)
    from planshell.config import ConfigError, load_settings
    from planshell.plan.store import find_project_root
    from planshell.shell.guard import BashGuard

    root = find_project_root(Path.cwd())
    try:
        settings = load_settings(root)
    except ConfigError as exc:
        return _fail(str(exc))
    bash = settings.plan.bash
    guard = BashGuard(bash.safe_patterns, bash.destructive_patterns)
    for warning in guard.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    commands = args.commands or [line for line in sys.stdin.read().splitlines() if line.strip()]
    blocked = 0
    for command in commands:
        verdict = guard.check(command)
        blocked += not verdict.allowed
        if args.json:
            print(
                json.dumps({"cmd": command, "allowed": verdict.allowed, "reason": verdict.reason})
            )
        else:
            print(f"{'allow' if verdict.allowed else 'block'}\t{command}\t{verdict.reason}")
    return 1 if blocked else 0


def _review(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planshell review",
        description="Open a project's plan (in its .planshell/plans/) in planshell's full review: "
        "approve and run it, refine it, comment, or discard it, as /plan review does. Any other "
        "file, or --read-only, opens in a read-only viewer.",
    )
    parser.add_argument("path", type=Path)
    parser.add_argument("--theme", help="UI theme name")
    parser.add_argument(
        "--read-only", action="store_true", help="only read the plan: no session, no decisions"
    )
    add_directory_argument(parser)
    args = parser.parse_args(argv)
    base = (args.directory or Path.cwd()).resolve()
    # Lexical, not resolve(): a symlink must reach the plan store's checks as a symlink.
    given = Path(os.path.abspath(base / args.path))
    project = None if args.read_only else plan_project_of(given)
    if project is None:
        path = given.resolve()
        if not path.is_file():
            return _fail(f"{args.path}: no such plan file")
        if not args.read_only:
            print(
                f"planshell: {args.path} is not in a project's .planshell/plans/: showing it "
                "read-only (a plan is approved in its own project)",
                file=sys.stderr,
            )
        # Straight to the review app: the chat app and its engine are not needed here.
        from planshell.ui.review_app import run_review

        _setup_logs(tui=True)
        return run_review(path, theme=args.theme)
    try:
        name = checked_plan_name(project, given)
    except ValueError as exc:
        return _fail(f"{args.path}: {exc}")
    from planshell.ui.app import run_tui

    main_args = _main_parser().parse_args(["--theme", args.theme] if args.theme else [])
    _setup_logs(tui=True)
    # The project's own session, which opens the review as `/plan review NAME` would.
    return run_tui(
        partial(_load, main_args, project),
        project,
        prompt=f"/plan review {name}",
        theme=args.theme,
    )


def plan_project_of(path: Path) -> Path | None:
    """The project whose plans directory holds ``path`` (``P/.planshell/plans/x.md``), or None.

    Only a project's own plan can be approved: that project's session runs it.
    """
    plans = path.parent
    if plans.name != "plans" or plans.parent.name != ".planshell":
        return None
    from planshell.plan.store import find_project_root

    project = plans.parent.parent
    # The session runs in the enclosing git work tree: its store must be this one.
    return project if find_project_root(project) == project.resolve() else None


def checked_plan_name(project: Path, path: Path) -> str:
    """The plan's file name, after the plan store's checks; ValueError says what is wrong.

    The store refuses a symlink, a path outside its directory, an oversized, binary
    or non-UTF-8 file, so the session never starts on one.
    """
    from planshell.plan.store import PlanStore, PlanStoreError

    store = PlanStore(project)
    try:
        target = store.resolve(path)
        store.read(target)
    except PlanStoreError as exc:
        raise ValueError(str(exc)) from None
    if any(char.isspace() for char in target.name):
        # `/plan review NAME` takes one word.
        raise ValueError(
            "a plan name with spaces cannot be opened from here; run planshell and pick it "
            "with /plan list"
        )
    return target.name


def _setup_logs(*, debug: bool = False, tui: bool) -> None:
    """The one log file, for the TUI and headless runs alike (planshell/logs.py)."""
    import logging

    from planshell.logs import setup_logging

    setup_logging(debug=debug, tui=tui)
    logging.getLogger("planshell").info(
        "planshell %s starting (%s)", __version__, "tui" if tui else "headless"
    )


def _doctor(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planshell doctor",
        description="Report what planshell would run with: versions, config files, provider "
        "(never the key), external tools, a sandbox self-test, the log file and the tool "
        "schema size. Makes no network request.",
    )
    add_directory_argument(parser)
    args = parser.parse_args(argv)
    start = (args.directory or Path.cwd()).resolve()
    if not start.is_dir():
        return _fail(f"{start} is not a directory", EXIT_USAGE)
    from planshell.doctor import run_doctor

    return run_doctor(start, sys.stdout)


def _report(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planshell report",
        description="Print the report of a completed plan (kept in its run record): steps and "
        "their evidence, Verification commands, files changed against the plan's scope.",
    )
    parser.add_argument(
        "plan", nargs="?", help="plan file or name (default: the newest plan with a report)"
    )
    add_directory_argument(parser)
    args = parser.parse_args(argv)
    from planshell.plan.report import saved_report
    from planshell.plan.store import PlanStore, PlanStoreError, find_project_root
    from planshell.sanitize import strip_terminal_controls

    store = PlanStore(find_project_root(args.directory or Path.cwd()))
    try:
        text = saved_report(store, args.plan)
    except PlanStoreError as exc:
        return _fail(strip_terminal_controls(str(exc)))
    # Step texts, paths and commands are model- and repo-authored: no escape reaches the terminal.
    print(strip_terminal_controls(text), end="")
    return 0


def _trust(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planshell trust",
        description="Let this project's .planshell/config.toml change security settings (sandbox, "
        "bash patterns, tools, provider, base_url, headers, ...). Trust covers the file as it is "
        "now: after any change it is needed again. See docs/security.md#project-trust.",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("-y", "--yes", action="store_true", help="trust without asking")
    action.add_argument("--revoke", action="store_true", help="stop trusting this project's config")
    action.add_argument("--list", action="store_true", help="list trusted project config files")
    add_directory_argument(parser)
    args = parser.parse_args(argv)
    from planshell.config import (
        ConfigError,
        describe_keys,
        project_config_path,
        read_config_file,
        split_project_data,
        trust,
    )
    from planshell.plan.store import find_project_root
    from planshell.sanitize import strip_terminal_controls

    try:
        if args.list:
            return _trust_list(trust.load_store())
        root = find_project_root(args.directory or Path.cwd())
        path = project_config_path(root)
        shown = strip_terminal_controls(str(path))
        if args.revoke:
            done = trust.revoke(path)
            print(f"No longer trusted: {shown}" if done else f"Was not trusted: {shown}")
            return 0
        file = read_config_file(path, project_root=root)
        if file.digest is None:
            return _fail(f"no project config at {shown}; nothing to trust")
        _, keys = split_project_data(file.data)
        if not keys:
            print(f"{shown} changes no security settings; nothing to trust.")
            return 0
        print(f"{shown} changes these security settings:")
        for line in describe_keys(file.data, keys):
            print(f"  {line}")
        if not args.yes:
            print("Trust it? [y/N] ", end="", flush=True)
            answer = sys.stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                print("Not trusted.")
                return 1
        where = trust.trust(file)
    except (ConfigError, OSError) as exc:
        return _fail(str(exc))
    print(f"Trusted {shown} (recorded in {where}). Edit the file and it needs trust again.")
    return 0


def _trust_list(store: Any) -> int:
    from planshell.config import read_config_file
    from planshell.sanitize import strip_terminal_controls

    if not store.projects:
        print("No trusted project config files.")
        return 0
    for key, entry in sorted(store.projects.items()):
        try:
            # Keys are <root>/.planshell/config.toml: a project's file, read as one.
            current = read_config_file(Path(key), project_root=Path(key).parent.parent)
        except Exception:
            current = None
        if current is None or current.digest is None:
            state = "missing or unreadable"
        elif current.digest == entry.sha256 and current.target == entry.target:
            state = "trusted"
        else:
            state = "changed since trusted"
        print(f"{state}\t{strip_terminal_controls(key)}")
    return 0
