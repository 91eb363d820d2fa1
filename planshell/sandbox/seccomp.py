"""The seccomp filter bubblewrap loads for plan-mode bash (``bwrap --seccomp FD``).

The read-only bind and the empty network namespace leave some doors open:
Unix socket *files* (``/run/docker.sock``, the D-Bus bus, ``$SSH_AUTH_SOCK``)
are reachable through the read-only bind, the kernel keyring is shared with
the user, and a handful of syscalls exist mostly to inspect other processes or
to attack the kernel. This filter closes them; everything else is allowed.

Denied with ``EPERM``:

* ``socket()`` for every family except ``AF_INET``/``AF_INET6`` (which reach
  nothing in the empty network namespace): no ``AF_UNIX`` socket can be
  created, so no socket file can be connected to, whatever its path, and
  ``AF_NETLINK``, ``AF_VSOCK``, ``AF_ALG`` and friends are closed too. Denying
  the socket rather than ``connect()`` is what works: seccomp sees only the
  pointer to a ``connect`` address, never the address.
  ``socketpair(AF_UNIX)`` stays allowed (a connected pair reaches nothing).
* ``io_uring_*`` (it can open and connect sockets without those syscalls);
* the keyring: ``add_key``, ``keyctl``, ``request_key``;
* other processes: ``ptrace``, ``process_vm_readv``/``writev``,
  ``pidfd_getfd``, ``process_madvise``;
* namespaces and mounts: ``unshare``, ``setns``, ``clone`` with any
  ``CLONE_NEW*`` flag, ``mount``, ``umount2``, ``pivot_root`` and the new mount
  API (``open_tree``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``,
  ``fspick``, ``mount_setattr``); ``clone3`` answers ``ENOSYS`` (its flags are
  behind a pointer), so the C library falls back to ``clone``;
* kernel attack surface: ``bpf``, ``perf_event_open``, ``userfaultfd``,
  module and kexec loading, ``syslog``, ``acct``, ``swapon``/``swapoff``,
  ``quotactl``, ``lookup_dcookie``, ``vhangup``, ``open_by_handle_at``,
  ``uselib``;
* ``personality()`` other than the default (``PER_LINUX``, ``PER_LINUX32``
  and the query ``0xffffffff``), e.g. switching off address randomisation;
* ``ioctl(TIOCSTI)`` and ``ioctl(TIOCLINUX)`` (typing into a terminal).

The filter first checks the architecture: a syscall made with another ABI
(32-bit x86 on x86_64, or x32) kills the process, since its numbers differ.

**Why a hand-assembled BPF program** rather than libseccomp: the filter is
about fifty instructions of classic BPF, built with :mod:`struct` from the
syscall tables of the two architectures we support (x86_64, aarch64, checked
against the kernel headers by the tests when they are installed). libseccomp
would be a native library that may be missing (``pyseccomp`` is only a ctypes
wrapper around it, and Debian's ``python3-seccomp`` is not installable in a
virtualenv), for a program we can state and test in full here. On any other
architecture :func:`build_filter` returns None and the sandbox runs without
seccomp, which ``/plan why`` says.
"""

from __future__ import annotations

import os
import platform
import struct
from dataclasses import dataclass

# seccomp_data offsets and return values (linux/seccomp.h, linux/filter.h).
_NR, _ARCH = 0, 4


def _arg_low(n: int) -> int:
    """Offset of the low 32 bits of syscall argument ``n`` (little-endian)."""
    return 16 + 8 * n


_LD_W_ABS = 0x20
_JEQ_K, _JGE_K, _JSET_K = 0x15, 0x35, 0x45
_RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
EPERM, ENOSYS = 1, 38

AF_INET, AF_INET6, AF_UNIX = 2, 10, 1
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
CLONE_NEW_ANY = 0x7E020000  # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
PERSONALITIES_ALLOWED = (0x0, 0x8, 0xFFFFFFFF)  # PER_LINUX, PER_LINUX32, query
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class Arch:
    name: str
    audit: int
    syscalls: dict[str, int]
    x32_bit: bool = False


# Only the syscalls the filter names; numbers from asm/unistd_64.h (x86_64) and
# asm-generic/unistd.h (aarch64).
X86_64 = Arch(
    "x86_64", 0xC000003E,
    {
        "socket": 41, "socketpair": 53, "ioctl": 16, "clone": 56, "clone3": 435,
        "personality": 135, "add_key": 248, "keyctl": 250, "request_key": 249,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "pidfd_getfd": 438, "process_madvise": 440, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321, "perf_event_open": 298,
        "userfaultfd": 323, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
        "finit_module": 313, "delete_module": 176, "syslog": 103, "acct": 163,
        "swapon": 167, "swapoff": 168, "quotactl": 179, "lookup_dcookie": 212,
        "vhangup": 153, "open_by_handle_at": 304, "uselib": 134,
    },
    x32_bit=True,
)  # fmt: skip
AARCH64 = Arch(
    "aarch64", 0xC00000B7,
    {
        "socket": 198, "socketpair": 199, "ioctl": 29, "clone": 220, "clone3": 435,
        "personality": 92, "add_key": 217, "keyctl": 219, "request_key": 218,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "pidfd_getfd": 438, "process_madvise": 440, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "bpf": 280, "perf_event_open": 241,
        "userfaultfd": 282, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39,
        "pivot_root": 41, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
        "finit_module": 273, "delete_module": 106, "syslog": 116, "acct": 89,
        "swapon": 224, "swapoff": 225, "quotactl": 60, "lookup_dcookie": 18,
        "vhangup": 58, "open_by_handle_at": 265,
    },
)  # fmt: skip
ARCHES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}

DENIED = (
    "add_key", "keyctl", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bpf", "perf_event_open", "userfaultfd",
    "unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "syslog", "acct", "swapon", "swapoff", "quotactl", "lookup_dcookie", "vhangup",
    "open_by_handle_at", "uselib",
)  # fmt: skip


class _Asm:
    """Classic BPF with symbolic jump targets, resolved by :meth:`assemble`."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def op(self, code: int, k: int, jt: int | str = 0, jf: int | str = 0) -> None:
        self.code.append((code, jt, jf, k))

    def assemble(self) -> bytes:
        out = bytearray()
        for i, (code, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                offset = self.labels[target] - i - 1 if isinstance(target, str) else target
                if not 0 <= offset <= 255:
                    raise ValueError(f"BPF jump out of range at {i}")
                offsets.append(offset)
            out += struct.pack("=HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)


def build_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one), or None for an unsupported architecture."""
    arch = ARCHES.get((machine or platform.machine()).lower())
    if arch is None:
        return None
    nr = arch.syscalls
    a = _Asm()
    a.op(_LD_W_ABS, _ARCH)
    a.op(_JEQ_K, arch.audit, "arch_ok", "kill")
    a.label("arch_ok")
    a.op(_LD_W_ABS, _NR)
    if arch.x32_bit:
        a.op(_JGE_K, X32_SYSCALL_BIT, "kill", 0)
    for name in DENIED:
        if name in nr:
            a.op(_JEQ_K, nr[name], "eperm", 0)
    a.op(_JEQ_K, nr["clone3"], "enosys", 0)
    for name in ("socket", "socketpair", "clone", "personality", "ioctl"):
        a.op(_JEQ_K, nr[name], name, 0)
    a.op(_RET_K, RET_ALLOW)

    a.label("socket")  # domain: only the IP families (nothing to reach in the empty netns)
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ_K, AF_INET, "allow", 0)
    a.op(_JEQ_K, AF_INET6, "allow", "eperm")
    a.label("socketpair")  # a connected AF_UNIX pair reaches nothing
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JEQ_K, AF_UNIX, "allow", "eperm")
    a.label("clone")
    a.op(_LD_W_ABS, _arg_low(0))
    a.op(_JSET_K, CLONE_NEW_ANY, "eperm", "allow")
    a.label("personality")
    a.op(_LD_W_ABS, _arg_low(0))
    for value in PERSONALITIES_ALLOWED:
        a.op(_JEQ_K, value, "allow", 0)
    a.op(_RET_K, RET_ERRNO | EPERM)
    a.label("ioctl")  # the kernel reads the request as an unsigned int: low word only
    a.op(_LD_W_ABS, _arg_low(1))
    a.op(_JEQ_K, TIOCSTI, "eperm", 0)
    a.op(_JEQ_K, TIOCLINUX, "eperm", "allow")

    a.label("allow")
    a.op(_RET_K, RET_ALLOW)
    a.label("eperm")
    a.op(_RET_K, RET_ERRNO | EPERM)
    a.label("enosys")
    a.op(_RET_K, RET_ERRNO | ENOSYS)
    a.label("kill")
    a.op(_RET_K, RET_KILL_PROCESS)
    return a.assemble()


def filter_fd(program: bytes) -> int:
    """A fresh read-only fd holding ``program`` at offset 0, for one ``bwrap --seccomp``.

    bwrap reads the fd to its end, so each launch needs its own. The caller closes it.
    """
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None:
        fd = memfd("planshell-seccomp", getattr(os, "MFD_CLOEXEC", 0))
        try:
            os.write(fd, program)
            os.lseek(fd, 0, os.SEEK_SET)
        except OSError:
            os.close(fd)
            raise
        return fd
    read, write = os.pipe()  # fits: the program is far below the pipe buffer
    try:
        os.write(write, program)
    finally:
        os.close(write)
    return read
