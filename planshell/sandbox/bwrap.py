"""How plan-mode bash runs: the bash guard decides, this module contains.

The guard (``planshell.shell.guard``) is the gate: a command runs only when it is
proved read-only. This module is the second layer, for the commands the
guard allowed: on Linux with bubblewrap, every plan-mode ``bash`` call runs as

    bwrap --ro-bind / / --dev /dev --proc /proc
          --ro-bind-try /proc/sys /proc/sys
          --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger
          --tmpfs /tmp
          --unshare-net --unshare-pid --unshare-ipc --unshare-uts
          --die-with-parent --new-session --cap-drop ALL
          [--ro-bind DIR DIR ...]   # project root, git top level and git shim when under /tmp
          --chdir ROOT --seccomp FD -- bash -c COMMAND

i.e. the whole filesystem read-only, a private writable ``/tmp`` that vanishes
with the call, fresh ``/dev`` and ``/proc`` (``/proc/sys`` stays read-only), no
network (a new, empty network namespace), no capabilities even when planshell
runs as root (root keeps them by default, and could remount ``/`` writable),
and the sandbox dies with planshell. ``--unshare-pid`` makes bwrap PID 1 of
the sandbox, so when the bash tool kills the command's process group (bwrap
leads it) the kernel kills every process left inside; ``--new-session`` does
not get in the way of that (tested in ``tests/sandbox/test_sandbox.py``).
``--seccomp FD`` loads the filter of ``seccomp.py`` (no Unix sockets, no
keyring, no ptrace, no namespaces or mounts, ...) into the command; when
bubblewrap cannot load it the sandbox runs without it and says so.

Plan-mode bash also gets, whether or not the sandbox is available, the
environment of ``env.py`` (no secrets, fixed locale, clean ``PATH``) and
the git hardening of ``gitsafe.py`` (config overrides and the ``git`` shim).

``plan.sandbox``: ``auto`` sandboxes when bubblewrap works and otherwise runs
with the guard only; ``required`` refuses plan-mode bash without the sandbox;
``off`` never sandboxes. Whether bubblewrap works is probed once per process
(one ``bwrap ... true``, ~10 ms, 3 s timeout), and only when plan mode is first
entered, never at start-up; a second probe checks the seccomp filter loads.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

from planshell.config import PermissionsSettings, PlanSettings
from planshell.sandbox.env import plan_environment, scrub_environment
from planshell.sandbox.gitsafe import git_safe_env, git_shim_dir
from planshell.sandbox.seccomp import build_filter, filter_fd
from planshell.tools.base import ExecPolicy, Launch
from planshell.workspace.protected import readonly_binds

SandboxState = Literal["sandboxed", "guarded", "refused"]

INSTALL_HINT = (
    "install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`, "
    "`pacman -S bubblewrap`) and make sure unprivileged user namespaces are allowed"
)
PROBE_TIMEOUT = 3.0

SANDBOX_ARGS: tuple[str, ...] = (
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--ro-bind-try", "/proc/sys", "/proc/sys",
    "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
    "--tmpfs", "/tmp",
    "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--die-with-parent", "--new-session",
    "--cap-drop", "ALL",
)  # fmt: skip
PRIVATE_TMP = Path("/tmp")


@dataclass(frozen=True)
class SandboxStatus:
    """Where plan-mode bash stands: ``state``, a one-line ``reason`` and how to get the sandbox."""

    state: SandboxState
    reason: str
    how: str = ""  # empty when sandboxed
    bwrap: str | None = None
    seccomp: bytes | None = None  # the filter bwrap loads; None: sandbox without seccomp

    @property
    def line(self) -> str:
        text = f"{self.state}: {self.reason}"
        return f"{text} (to sandbox: {self.how})" if self.how else text


@dataclass
class PlanExecPolicy(ExecPolicy):
    """The plan-mode ``ExecPolicy``: scrubbed environment, sandbox and seccomp per launch.

    ``notice`` is the one warning the controller shows when plan mode is first
    entered (the sandbox was wanted but is not available).
    """

    status: SandboxStatus | None = None
    root: Path = field(default_factory=Path.cwd)
    env_deny: tuple[str, ...] = ()
    env_allow: tuple[str, ...] = ()
    notice: str | None = None

    def environment(self) -> dict[str, str]:
        """The whole environment plan-mode bash gets (see ``env.py``)."""
        scrubbed = plan_environment(os.environ, self.root, self.env_deny, self.env_allow)
        return {**scrubbed.env, **self.extra_env}

    @contextmanager
    def launch(self, argv: list[str]) -> Iterator[Launch]:
        env = self.environment()
        program = self.status.seccomp if self.status is not None else None
        if not self.wrap or program is None:
            yield Launch([*self.wrap, *argv], env)
            return
        fd = filter_fd(program)
        try:
            wrap = [*self.wrap[:-1], "--seccomp", str(fd), "--"]  # wrap ends in "--"
            yield Launch([*wrap, *argv], env, (fd,))
        finally:
            os.close(fd)


# Output that a failed command prints when the workspace sandbox stopped it. A
# heuristic: the same messages also come from real permission problems, a server
# that is down or a typo in a host name, so the note says "may", never "did".
FAILURE_SIGNS: tuple[tuple[str, str, bool], ...] = (
    # (kind, text, only when the network is cut off)
    ("read-only file system", "read-only file system", False),  # EROFS: outside the project, .git
    ("permission denied", "permission denied", False),  # EACCES
    (
        "operation not permitted",
        "operation not permitted",
        False,
    ),  # EPERM: seccomp, no capabilities
    ("no network", "network is unreachable", True),
    ("no network", "temporary failure in name resolution", True),
    ("no network", "could not resolve host", True),
    ("no network", "name or service not known", True),
    ("no network", "failed to resolve", True),
    ("no network", "getaddrinfo", True),
    ("no network", "connection refused", True),  # a server outside: unreachable from inside
)


def sandbox_failure(output: str, network: bool) -> str | None:
    """The kind of sandbox refusal ``output`` shows (see ``FAILURE_SIGNS``), or None."""
    text = output.lower()
    for kind, sign, needs_no_network in FAILURE_SIGNS:
        if sign in text and not (needs_no_network and network):
            return kind
    return None


@dataclass
class WorkspaceExecPolicy(ExecPolicy):
    """How ``bash`` runs outside plan mode: the workspace-write sandbox when it works.

    The project root is writable (its ``.git`` is not), the rest of the file
    system read-only, ``/tmp`` private, no network unless ``network``, the
    environment without secrets (``env.scrub_environment``: PATH, locale
    and git are left as the user has them) and the seccomp filter of plan mode.
    Resolved lazily: the bwrap probe runs before the first command (in a
    thread, see ``prepare``), never at start-up. Without a working bubblewrap
    (or with ``permissions.sandbox = "off"``) commands run as the plain
    ``ExecPolicy`` runs them, and the first command emits ``notice`` once.

    ``escape``: whether ``sandbox=false`` may leave the sandbox. Only where the
    permission gate asks about such calls (the main agent); a sub-agent's copy
    has ``escape=False``.
    """

    setting: str = "workspace-write"
    root: Path = field(default_factory=Path.cwd)
    network: bool = False
    env_deny: tuple[str, ...] = ()
    env_allow: tuple[str, ...] = ()
    escape: bool = True
    on_notice: Callable[[str], object] | None = None
    status: SandboxStatus | None = None
    notice: str | None = None

    def prepare(self) -> None:
        if self.status is not None:
            return
        status = sandbox_status("off" if self.setting == "off" else "auto")
        if status.state == "sandboxed" and status.bwrap is not None:
            self.label = "workspace sandbox"
            self.extra_env = {"TMPDIR": "/tmp"}  # a TMPDIR elsewhere would be read-only
        else:
            self.label = ""
            if self.setting != "off":
                self.notice = (
                    "Shell commands run without the workspace sandbox (project writable, the "
                    f"rest read-only, no network): {status.reason}. To sandbox them, {status.how}."
                )
        self.status = status
        if self.notice and self.on_notice is not None:
            self.on_notice(self.notice)

    @property
    def active(self) -> bool:
        """Whether commands run in the sandbox (probes bubblewrap on first use)."""
        self.prepare()
        return self.status is not None and self.status.state == "sandboxed"

    @property
    def known_active(self) -> bool | None:
        """``active`` without probing: None until the first command (or ``prepare``)."""
        return None if self.status is None else self.status.state == "sandboxed"

    def environment(self) -> dict[str, str]:
        scrubbed = scrub_environment(os.environ, self.env_deny, self.env_allow)
        return {**scrubbed.env, **self.extra_env}

    @contextmanager
    def launch(self, argv: list[str]) -> Iterator[Launch]:
        if not self.active or self.status is None or self.status.bwrap is None:
            with ExecPolicy.launch(self, argv) as plain:
                yield plain
            return
        wrap = bwrap_command(self.status.bwrap, self.root, writable=True, network=self.network)
        env = self.environment()
        program = self.status.seccomp
        if program is None:
            yield Launch([*wrap, *argv], env)
            return
        fd = filter_fd(program)
        try:
            yield Launch([*wrap[:-1], "--seccomp", str(fd), "--", *argv], env, (fd,))
        finally:
            os.close(fd)

    def outside(self) -> ExecPolicy:
        return ExecPolicy(label="outside the sandbox") if self.escape else self

    def sealed(self) -> WorkspaceExecPolicy:
        """A copy without the way out (``sandbox=false`` stays inside), for sub-agents."""
        return dataclasses.replace(self, escape=False, on_notice=None)

    def explain_failure(self, output: str) -> tuple[str, str] | None:
        if not self.known_active:
            return None
        kind = sandbox_failure(output, self.network)
        if kind is None:
            return None
        reach = "the project is writable except .git; the rest of the file system is read-only"
        if not self.network:
            reach += "; there is no network"
        return kind, (
            f"[sandbox] This command ran in the workspace sandbox ({reach}) and its output "
            f"shows '{kind}', so the sandbox may be why it failed (a guess from the output, "
            "not a certainty). If it really needs more than the sandbox allows, call bash "
            "again with the same command and sandbox=false: the user is asked first."
        )


def workspace_exec_policy(
    settings: PermissionsSettings,
    root: Path,
    env_deny: tuple[str, ...] = (),
    env_allow: tuple[str, ...] = (),
) -> WorkspaceExecPolicy:
    """The OFF/EXECUTE ``ExecPolicy`` for ``permissions.sandbox`` (nothing is probed yet)."""
    return WorkspaceExecPolicy(
        setting=settings.sandbox,
        root=root.resolve(),
        network=settings.network,
        env_deny=env_deny,
        env_allow=env_allow,
    )


def find_bwrap() -> str | None:
    """The bubblewrap binary on ``PATH`` (tests replace this to simulate its absence)."""
    return shutil.which("bwrap")


_probe_cache: dict[str, tuple[bool, str]] = {}


def probe(bwrap: str) -> tuple[bool, str]:
    """Whether ``bwrap`` can start a sandbox with our flags here; cached per binary."""
    if bwrap not in _probe_cache:
        _probe_cache[bwrap] = _run_probe(bwrap)
    return _probe_cache[bwrap]


_seccomp_cache: dict[str, tuple[bytes | None, str]] = {}


def probe_seccomp(bwrap: str) -> tuple[bytes | None, str]:
    """The seccomp filter when ``bwrap`` loads it here (else None) and a line saying so; cached."""
    if bwrap not in _seccomp_cache:
        _seccomp_cache[bwrap] = _run_seccomp_probe(bwrap)
    return _seccomp_cache[bwrap]


def _run_seccomp_probe(bwrap: str) -> tuple[bytes | None, str]:
    import platform

    program = build_filter()
    if program is None:
        return None, f"seccomp filter off: no syscall table for {platform.machine() or 'this CPU'}"
    fd = filter_fd(program)
    try:
        done = _bwrap_true(bwrap, ["--seccomp", str(fd)], (fd,))
    finally:
        os.close(fd)
    if isinstance(done, str):
        return None, f"seccomp filter off: {done}"
    if done.returncode != 0:
        detail = _first_line(done.stderr, done.returncode)
        return None, f"seccomp filter off: bubblewrap could not load it ({detail})"
    return program, "seccomp filter: no Unix sockets, keyring, ptrace, namespaces or mounts"


def _bwrap_true(
    bwrap: str, extra: list[str], pass_fds: tuple[int, ...] = ()
) -> subprocess.CompletedProcess[bytes] | str:
    """``bwrap <our flags> extra -- true``, or why it could not be run."""
    try:
        return subprocess.run(
            [bwrap, *SANDBOX_ARGS, "--chdir", "/", *extra, "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            pass_fds=pass_fds,
        )
    except subprocess.TimeoutExpired:
        return f"bubblewrap ({bwrap}) did not start within {PROBE_TIMEOUT:g} s"
    except OSError as exc:
        return f"bubblewrap ({bwrap}) could not be run: {exc.strerror or exc}"


def _first_line(stderr: bytes, code: int) -> str:
    return next(
        (ln.strip() for ln in stderr.decode(errors="replace").splitlines() if ln.strip()),
        f"exit code {code}",
    )


def _run_probe(bwrap: str) -> tuple[bool, str]:
    done = _bwrap_true(bwrap, [])
    if isinstance(done, str):
        return False, done
    if done.returncode == 0:
        return True, f"bubblewrap ({bwrap}): read-only filesystem, private /tmp, no network"
    detail = _first_line(done.stderr, done.returncode)
    return False, f"bubblewrap ({bwrap}) cannot start a sandbox here: {detail}"


def sandbox_status(mode: str) -> SandboxStatus:
    """The sandbox state for ``plan.sandbox = mode``; probes bwrap (once) unless ``off``."""
    if mode == "off":
        return SandboxStatus(
            "guarded",
            'plan.sandbox = "off": the bash guard and git hardening only',
            'set plan.sandbox = "auto"',
        )
    bwrap: str | None = None
    if not sys.platform.startswith("linux"):
        ok, why = False, "the bubblewrap sandbox needs Linux"
    else:
        bwrap = find_bwrap()
        if bwrap is None:
            ok, why = False, "bubblewrap (bwrap) is not installed"
        else:
            ok, why = probe(bwrap)
    if ok and bwrap is not None:
        program, seccomp_line = probe_seccomp(bwrap)
        return SandboxStatus("sandboxed", f"{why}; {seccomp_line}", "", bwrap, program)
    how = INSTALL_HINT if sys.platform.startswith("linux") else "run planshell on Linux"
    state: SandboxState = "refused" if mode == "required" else "guarded"
    return SandboxStatus(state, why, how, bwrap)


def refusal_message(status: SandboxStatus) -> str:
    return (
        'Plan mode requires the bubblewrap sandbox (plan.sandbox = "required"), but it is not '
        f"available: {status.reason}. Nothing was run. To fix it, {status.how}; or set "
        'plan.sandbox = "auto" to run guarded commands without the sandbox. Meanwhile use the '
        "read, ls, find and grep tools."
    )


def sandbox_binds(root: Path) -> list[Path]:
    """Directories to bind back (read-only) over the private ``/tmp``.

    The project root, its git top level (so git finds ``.git``) and the git shim
    would otherwise be hidden when they live under ``/tmp``.
    """
    root = root.resolve()
    candidates = [root, _git_top(root), git_shim_dir()]
    binds: list[Path] = []
    for path in candidates:
        if path is None:
            continue
        path = path.resolve()
        if (path == PRIVATE_TMP or PRIVATE_TMP in path.parents) and path not in binds:
            binds.append(path)
    return binds


def sandbox_args(network: bool = False) -> list[str]:
    """``SANDBOX_ARGS``, keeping the host network when ``network`` (workspace mode only)."""
    return [a for a in SANDBOX_ARGS if not (network and a == "--unshare-net")]


def protected_paths(root: Path) -> list[Path]:
    """What stays read-only inside the writable project (``protected.readonly_binds``).

    A writable ``.git`` lets a command plant a hook or a ``core.fsmonitor`` /
    ``core.hooksPath`` that the user's own git runs later, outside any sandbox;
    protecting only ``hooks`` and ``config`` is not enough (``mv .git x`` and a
    rebuilt ``.git`` get round it), so the whole of it is bound read-only, as
    Codex does by default. A bind mount cannot be renamed or removed (EBUSY).
    The same holds for nested repositories (``vendor/x/.git``), submodule
    pointer files and their git directories, ``.gitmodules`` and
    ``.planshell/``. A ``.git`` that does not exist yet cannot be bound: the
    project watch (``gitwatch.py``) moves such a new one aside after the command.
    """
    return readonly_binds(root)


def bwrap_command(
    bwrap: str, root: Path, *, writable: bool = False, network: bool = False
) -> list[str]:
    """The argv prefix that runs a command in the sandbox, ending in ``--``.

    ``writable``: the workspace-write sandbox, the project root bound read-write
    over the read-only file system (its ``.git`` read-only again on top).
    """
    root = root.resolve()
    argv = [bwrap, *sandbox_args(network)]
    for path in sandbox_binds(root):
        argv += ["--ro-bind", str(path), str(path)]
    if writable:
        argv += ["--bind", str(root), str(root)]
        for path in protected_paths(root):  # -try: one removed since the scan needs no bind
            argv += ["--ro-bind-try", str(path), str(path)]
    return [*argv, "--chdir", str(root), "--"]


def guard_only_notice(status: SandboxStatus) -> str:
    return (
        "Plan mode runs shell commands with the bash guard only, no sandbox: "
        f"{status.reason}. To sandbox them, {status.how}."
    )


def plan_exec_policy(settings: PlanSettings, root: Path) -> PlanExecPolicy:
    """How plan-mode bash runs under ``settings.sandbox`` (probes bubblewrap once)."""
    status = sandbox_status(settings.sandbox)
    policy = partial(
        PlanExecPolicy,
        root=root.resolve(),
        env_deny=tuple(settings.env_deny),
        env_allow=tuple(settings.env_allow),
        status=status,
    )
    env = git_safe_env()
    if status.state == "refused":
        return policy(extra_env=env, label="refused", refusal=refusal_message(status))
    if status.state == "sandboxed" and status.bwrap is not None:
        env["TMPDIR"] = "/tmp"  # a TMPDIR elsewhere would be read-only or hidden inside
        return policy(wrap=bwrap_command(status.bwrap, root), extra_env=env, label="sandboxed")
    notice = guard_only_notice(status) if settings.sandbox == "auto" else None
    return policy(extra_env=env, label="guarded", notice=notice)


def _git_top(root: Path) -> Path | None:
    for candidate in (root, *root.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
