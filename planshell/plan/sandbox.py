"""How plan-mode bash runs: the bash guard decides, this module contains.

The guard (``bash_guard.py``) is the gate: a command runs only when it is
proved read-only. This module is the second layer, for the commands the
guard allowed: on Linux with bubblewrap, every plan-mode ``bash`` call runs as

    bwrap --ro-bind / / --dev /dev --proc /proc
          --ro-bind-try /proc/sys /proc/sys
          --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger
          --tmpfs /tmp
          --unshare-net --unshare-pid --unshare-ipc --unshare-uts
          --die-with-parent --new-session --cap-drop ALL
          [--ro-bind DIR DIR ...]   # project root, git top level and git shim when under /tmp
          --chdir ROOT -- bash -c COMMAND

i.e. the whole filesystem read-only, a private writable ``/tmp`` that vanishes
with the call, fresh ``/dev`` and ``/proc`` (``/proc/sys`` stays read-only), no
network (a new, empty network namespace), no capabilities even when planshell
runs as root (root keeps them by default, and could remount ``/`` writable),
and the sandbox dies with planshell. ``--unshare-pid`` makes bwrap PID 1 of
the sandbox, so when the bash tool kills the command's process group (bwrap
leads it) the kernel kills every process left inside; ``--new-session`` does
not get in the way of that (tested in ``tests/test_sandbox.py``).

Plan-mode bash also gets the git hardening of ``gitsafe.py`` (config overrides
and the ``git`` shim on ``PATH``) whether or not the sandbox is available.

``plan.sandbox``: ``auto`` sandboxes when bubblewrap works and otherwise runs
with the guard only; ``required`` refuses plan-mode bash without the sandbox;
``off`` never sandboxes. Whether bubblewrap works is probed once per process
(one ``bwrap ... true``, ~10 ms, 3 s timeout), and only when plan mode is first
entered, never at start-up.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from planshell.config import PlanSettings
from planshell.plan.gitsafe import git_shim_dir, plan_git_env
from planshell.tools.base import ExecPolicy

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

    @property
    def line(self) -> str:
        text = f"{self.state}: {self.reason}"
        return f"{text} (to sandbox: {self.how})" if self.how else text


@dataclass
class PlanExecPolicy(ExecPolicy):
    """The plan-mode ``ExecPolicy``, remembering the sandbox status it was built from."""

    status: SandboxStatus | None = None


def find_bwrap() -> str | None:
    """The bubblewrap binary on ``PATH`` (tests replace this to simulate its absence)."""
    return shutil.which("bwrap")


_probe_cache: dict[str, tuple[bool, str]] = {}


def probe(bwrap: str) -> tuple[bool, str]:
    """Whether ``bwrap`` can start a sandbox with our flags here; cached per binary."""
    if bwrap not in _probe_cache:
        _probe_cache[bwrap] = _run_probe(bwrap)
    return _probe_cache[bwrap]


def _run_probe(bwrap: str) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            [bwrap, *SANDBOX_ARGS, "--chdir", "/", "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"bubblewrap ({bwrap}) did not start within {PROBE_TIMEOUT:g} s"
    except OSError as exc:
        return False, f"bubblewrap ({bwrap}) could not be run: {exc.strerror or exc}"
    if done.returncode == 0:
        return True, f"bubblewrap ({bwrap}): read-only filesystem, private /tmp, no network"
    detail = next(
        (ln.strip() for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()),
        f"exit code {done.returncode}",
    )
    return False, f"bubblewrap ({bwrap}) cannot start a sandbox here: {detail}"


def sandbox_status(mode: str) -> SandboxStatus:
    """The sandbox state for ``plan.sandbox = mode``; probes bwrap (once) unless ``off``."""
    if mode == "off":
        return SandboxStatus(
            "guarded", 'plan.sandbox = "off": the bash guard and git hardening only',
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
    if ok:
        return SandboxStatus("sandboxed", why, "", bwrap)
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


def bwrap_command(bwrap: str, root: Path) -> list[str]:
    """The argv prefix that runs a command in the read-only sandbox, ending in ``--``."""
    argv = [bwrap, *SANDBOX_ARGS]
    for path in sandbox_binds(root):
        argv += ["--ro-bind", str(path), str(path)]
    return [*argv, "--chdir", str(root.resolve()), "--"]


def plan_exec_policy(settings: PlanSettings, root: Path) -> PlanExecPolicy:
    """How plan-mode bash runs under ``settings.sandbox`` (probes bubblewrap once)."""
    status = sandbox_status(settings.sandbox)
    env = plan_git_env()
    if status.state == "refused":
        return PlanExecPolicy(
            extra_env=env, label="refused", refusal=refusal_message(status), status=status
        )
    if status.state == "sandboxed" and status.bwrap is not None:
        env["TMPDIR"] = "/tmp"  # a TMPDIR elsewhere would be read-only or hidden inside
        return PlanExecPolicy(
            wrap=bwrap_command(status.bwrap, root), extra_env=env, label="sandboxed", status=status
        )
    return PlanExecPolicy(extra_env=env, label="guarded", status=status)


def _git_top(root: Path) -> Path | None:
    for candidate in (root, *root.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
