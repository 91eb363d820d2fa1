"""The seccomp filter inside the bubblewrap sandbox, with the real bwrap and kernel."""

from __future__ import annotations

import platform
import re
import socket
import struct
from pathlib import Path

import pytest

from planshell.config import PlanSettings
from planshell.sandbox import bwrap, seccomp
from planshell.tools.base import ExecPolicy
from tests.sandbox_helpers import needs_bwrap, run, sandboxed

ARCH = seccomp.ARCHES.get(platform.machine().lower())
HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("arch", [seccomp.X86_64, seccomp.AARCH64], ids=lambda a: a.name)
def test_syscall_numbers_match_the_kernel_headers(arch):
    header = HEADERS[arch.name]
    if not header.exists():
        pytest.skip(f"{header} is not installed (apt install linux-libc-dev)")
    text = header.read_text()
    for name, number in arch.syscalls.items():
        found = re.search(rf"^#define __NR(?:3264)?_{name}\s+(\d+)", text, re.M)
        assert found, name
        assert int(found.group(1)) == number, name


def test_filter_shape():
    for machine in ("x86_64", "aarch64"):
        program = seccomp.build_filter(machine)
        assert program is not None and len(program) % 8 == 0
        code, _jt, _jf, k = struct.unpack_from("=HBBI", program, 0)
        assert (code, k) == (0x20, 4)  # first: load the architecture
    assert seccomp.build_filter("riscv64") is None


PY = "python3 -c"
SOCKET_UNIX = f"{PY} \"import socket; socket.socket(socket.AF_UNIX); print('made a unix socket')\""
SOCKET_NETLINK = (
    f"{PY} \"import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW); print('netlink')\""
)
SOCKETPAIR = (
    f"{PY} \"import socket; a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))\""
)


def _syscall(name: str, *args: int) -> str:
    assert ARCH is not None
    number = ARCH.syscalls[name]
    call = ", ".join([str(number), *(f"ctypes.c_long({a})" for a in args)])
    return (
        f'{PY} "import ctypes; libc = ctypes.CDLL(None, use_errno=True); '
        f"r = libc.syscall({call}); print('result', r, 'errno', ctypes.get_errno())\""
    )


needs_seccomp = pytest.mark.skipif(
    ARCH is None, reason=f"no seccomp table for {platform.machine()}"
)


@needs_bwrap
@needs_seccomp
@pytest.mark.bwrap
async def test_filter_is_loaded(repo):
    policy = sandboxed(repo)
    assert policy.status is not None and policy.status.seccomp is not None
    assert "seccomp filter:" in policy.status.reason
    result = await run(policy, repo, "grep Seccomp: /proc/self/status")
    assert "Seccomp:\t2" in result.content


@needs_bwrap
@needs_seccomp
@pytest.mark.bwrap
@pytest.mark.parametrize(
    ("command", "outside"),
    [
        (SOCKET_UNIX, "made a unix socket"),
        (SOCKET_NETLINK, "netlink"),
        (_syscall("keyctl", 0, -4, 0) if ARCH else "", "errno 0"),  # KEYCTL_GET_KEYRING_ID, user
        (_syscall("add_key", 0, 0, 0, 0, -4) if ARCH else "", "errno 14"),  # EFAULT outside
        (_syscall("ptrace", 0x4206, 1, 0, 0) if ARCH else "", "errno"),  # PTRACE_SEIZE
        (_syscall("io_uring_setup", 1, 0) if ARCH else "", "errno 14"),
        (_syscall("unshare", 0x10000000) if ARCH else "", "errno"),  # CLONE_NEWUSER
        (_syscall("bpf", 0, 0, 0) if ARCH else "", "errno"),
        (_syscall("personality", 0x0040000) if ARCH else "", "errno 0"),  # ADDR_NO_RANDOMIZE
        (_syscall("userfaultfd", 0) if ARCH else "", "errno"),
    ],
    ids=[
        "socket-unix",
        "socket-netlink",
        "keyctl",
        "add_key",
        "ptrace",
        "io_uring",
        "unshare",
        "bpf",
        "personality",
        "userfaultfd",
    ],
)
async def test_denied_with_eperm(repo, command, outside):
    plain = await run(ExecPolicy(), repo, command)
    assert outside in plain.content  # the command does run outside the filter
    result = await run(sandboxed(repo), repo, command)
    assert "Operation not permitted" in result.content or "errno 1\n" in result.content, (
        result.content
    )


@needs_bwrap
@needs_seccomp
@pytest.mark.bwrap
async def test_host_unix_socket_is_unreachable(repo):
    path = repo / "host.sock"  # inside the project, so visible (read-only) in the sandbox
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        listener.listen()
        listener.settimeout(5)
        probe = (
            f'{PY} "import socket; s = socket.socket(socket.AF_UNIX); '
            f"s.connect('{path}'); print('connected')\""
        )
        plain = await run(ExecPolicy(), repo, probe)
        assert "connected" in plain.content
        listener.accept()[0].close()
        inside = await run(sandboxed(repo), repo, f"test -S {path} && echo visible; {probe}")
        assert inside.content.startswith("visible")
        assert "connected" not in inside.content
        assert "PermissionError: [Errno 1] Operation not permitted" in inside.content
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


@needs_bwrap
@needs_seccomp
@pytest.mark.bwrap
async def test_ordinary_commands_still_work(repo):
    command = (
        "ls -la && git log --oneline && git status --short && grep -rn hello . && "
        "find . -name '*.md' | sort | head && wc -l README.md && "
        f"{SOCKETPAIR} && python3 -c \"import subprocess; print(subprocess.run(['true']).returncode)\""
    )
    result = await run(sandboxed(repo), repo, command)
    assert not result.is_error, result.content
    assert "init" in result.content and "README.md:3:hello" in result.content
    assert "pair b'x'" in result.content and "exit code 0" in result.content


@needs_bwrap
@pytest.mark.bwrap
def test_without_seccomp_the_sandbox_still_runs_and_says_so(repo, monkeypatch, tmp_path):
    real = bwrap.find_bwrap()
    fake = tmp_path / "bwrap-no-seccomp"
    fake.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = --seccomp ] && { echo "bwrap: prctl(PR_SET_SECCOMP): Invalid argument" >&2; exit 1; }; done\n'
        f'exec {real} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: str(fake))
    policy = bwrap.plan_exec_policy(PlanSettings(sandbox="required"), repo)
    assert policy.label == "sandboxed" and policy.status is not None
    assert policy.status.seccomp is None
    assert "seccomp filter off: bubblewrap could not load it" in policy.status.reason
    assert "PR_SET_SECCOMP" in policy.status.reason
    with policy.launch(["true"]) as launch:
        assert "--seccomp" not in launch.argv and launch.pass_fds == ()


def test_unsupported_architecture_means_no_filter(repo, monkeypatch, tmp_path):
    monkeypatch.setattr(seccomp.platform, "machine", lambda: "riscv64")
    program, line = bwrap._run_seccomp_probe("/nonexistent/bwrap")
    assert program is None and "no syscall table for riscv64" in line
