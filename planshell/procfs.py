"""One definition of the process files that give away a process's secrets.

planshell's own environment holds provider API keys. Plan-mode bash gets a scrubbed
environment, but without the sandbox (no bubblewrap, or ``plan.sandbox = "off"``) it can
still read *other* processes' files under ``/proc``: ``/proc/<planshell's pid>/environ``
prints the key. Both the bash guard and the read tool use the rule here, so there is one
list of what counts as such a file.

The rule: under ``/proc/<pid>`` (a number, ``self`` or ``thread-self``, also below
``task/<tid>``) only the entries in :data:`HARMLESS_ENTRIES` may be read; the directory
itself may be listed. Everything else there (``environ``, ``cmdline``, ``mem``, ``fd/*``,
``maps``, …) is refused. ``/proc/cpuinfo``, ``/proc/meminfo`` and the other system-wide
files are not process files and stay readable.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

__all__ = [
    "HARMLESS_ENTRIES",
    "LEAF_SECRETS",
    "is_sensitive_proc_path",
    "proc_path_problem",
]

PID_DIR = re.compile(r"[0-9]+|self|thread-self")
# Entries of /proc/<pid> that hold no secret of the process: state, limits, mounts, ids.
HARMLESS_ENTRIES: frozenset[str] = frozenset(
    "status stat statm comm limits cgroup cpuset mounts mountinfo mountstats oom_score "
    "oom_adj oom_score_adj loginuid sessionid uid_map gid_map setgroups io sched "
    "schedstat wchan".split()
)
# The last component of every path that reads a process secret: its environment, its
# arguments, its memory or memory map, its open files (fd/<n>, map_files/<range>).
LEAF_SECRETS: frozenset[str] = frozenset(
    "environ cmdline mem auxv maps smaps smaps_rollup numa_maps pagemap stack syscall "
    "personality exe".split()
)
_MAP_FILE = re.compile(r"[0-9a-f]+-[0-9a-f]+")
ANY_HOLE = "\x00"  # in a shape: text that may be anything, slashes included


def is_sensitive_proc_path(path: str) -> bool:
    """True for a resolved absolute path inside ``/proc/<pid>`` that is not harmless."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if len(parts) < 3 or parts[0] != "proc" or not PID_DIR.fullmatch(parts[1]):
        return False
    rest = parts[2:]
    if rest[0] == "task" and len(rest) >= 2 and PID_DIR.fullmatch(rest[1]):
        rest = rest[2:]
        if not rest:
            return False
    return not (len(rest) == 1 and rest[0] in HARMLESS_ENTRIES)


# --------------------------------------------------------------------- bash guard


class _Comp:
    """One path component of a shell word: an fnmatch pattern, and whether it globs.

    ``variable`` marks a component that is exactly one trusted variable (``"$f"``,
    ``$PPID``): its value may be a pid or a file name, but never holds ``proc`` (loop lists
    are checked as paths, and planshell's environment is not the attacker's).
    """

    def __init__(self, pattern: str, glob: bool, variable: bool = False) -> None:
        self.pattern = pattern
        self.glob = glob
        self.variable = variable

    def could_be(self, name: str) -> bool:
        if self.variable:
            return name not in ("proc", "dev")
        if not self.glob:
            return self.pattern == name
        return fnmatch.fnmatchcase(name, self.pattern)

    def could_be_pid(self) -> bool:
        if not self.glob:
            return PID_DIR.fullmatch(self.pattern) is not None
        if self.could_be("self") or self.could_be("thread-self"):
            return True
        # Could it match some run of digits? Only if every character outside a bracket
        # expression and the wildcards is a digit (a bracket may always hold one).
        outside = re.sub(r"\[[^]]*\]|[*?]", "", self.pattern)
        return all(c.isdigit() for c in outside)

    def could_be_leaf_secret(self) -> bool:
        if any(self.could_be(name) for name in LEAF_SECRETS):
            return True
        if self.could_be_pid() and not self.could_be("self"):
            return True  # fd/<n>
        return bool(self.glob and fnmatch.fnmatchcase("1a-2b", self.pattern)) or (
            not self.glob and _MAP_FILE.fullmatch(self.pattern) is not None
        )


def _components(shape: Sequence[tuple[str, str]]) -> tuple[list[list[tuple[str, str]]], bool]:
    """Split a word's shape at every ``/``; return the pieces and whether it is absolute."""
    comps: list[list[tuple[str, str]]] = [[]]
    for kind, text in shape:
        if kind in ("u", "q") and text == "/":
            comps.append([])
        else:
            comps[-1].append((kind, text))
    first = comps[0]
    head = "".join(text for _, text in first)
    # A path may also start after `=` or inside an option (--file=/proc/…, -f/proc/…).
    absolute = (
        not first or first[0][0] in ("safe", "any") or head.startswith(("~", "-")) or "=" in head
    )
    return comps, absolute


def _pattern(piece: list[tuple[str, str]]) -> _Comp:
    if len(piece) == 1 and piece[0][0] == "safe":
        return _Comp("*", True, variable=True)
    out, glob = [], False
    for kind, text in piece:
        if kind == "u":
            out.append(text)
            glob = glob or text in "*?["
        elif kind == "q":
            out.append(f"[{text}]" if text in "*?[" else text)
        else:  # a hole: any text within this component
            out.append("*")
            glob = True
    return _Comp("".join(out), glob)


def _normalise(comps: list[_Comp]) -> list[_Comp]:
    """Drop ``.`` and empty components and resolve ``..`` the way the text reads."""
    out: list[_Comp] = []
    for comp in comps:
        if not comp.glob and comp.pattern in ("", "."):
            continue
        if not comp.glob and comp.pattern == ".." and out and out[-1].pattern != "..":
            out.pop()
            continue
        out.append(comp)
    return out


def proc_path_problem(shape: Sequence[tuple[str, str]], recursive: bool) -> str | None:
    """Why a shell word could make a reader open a process's secrets, or None.

    ``shape`` is the word as the guard decoded it: ``("u", c)`` an unquoted character
    (globs active), ``("q", c)`` a quoted one, ``("safe", name)`` an expansion of a
    variable no command here can set to a chosen path (``$HOME``, a loop variable whose
    list was checked, ``$PPID``), ``("any", "")`` one that can be anything (``$(…)``,
    ``$_``). ``recursive`` is True for a reader that descends into directories (``grep
    -r``, ``rg``), for ``cd`` and for a ``for`` list: then any path that could reach
    ``/proc`` — ``/``, ``/proc`` itself, a relative path starting with ``..`` — is refused.
    The reading is textual: ``//``, ``.``, ``..`` and globs such as ``/pr?c/[0-9]*/env*``
    count, and ``$PPID`` stands for any pid.
    """
    pieces, absolute = _components(shape)
    if any(kind == "any" for kind, _ in shape):
        if recursive:
            return "its value comes from a command or special variable and could name /proc"
        last = pieces[-1]
        if not last or _pattern(last).could_be_leaf_secret():
            return (
                "its value comes from a command or special variable and could name a "
                "process file such as /proc/<pid>/environ"
            )
        return None
    # Resolving .. by the text is wrong after a link: /dev/fd is /proc/self/fd, so
    # /dev/fd/../../1/environ is /proc/1/environ, and /proc/net/.. is /proc/self.
    raw = [c for c in (_pattern(p) for p in pieces) if c.glob or c.pattern not in ("", ".")]
    for j, comp in enumerate(raw):
        climbs = j > 0 and not comp.glob and comp.pattern == ".." and raw[j - 1].pattern != ".."
        if climbs and any(c.could_be("proc") or c.could_be("dev") for c in raw[:j]):
            return "a .. after /dev or /proc can follow a link into /proc/<pid>"
    comps = _normalise([_pattern(p) for p in pieces])
    if recursive:
        if absolute and comps and comps[0].could_be("dev"):
            return "/dev/fd and /dev/std* are links into /proc/self"
        if absolute and not comps:
            return "/ is above /proc, where other processes' environments live"
        if comps and not comps[0].glob and comps[0].pattern == "..":
            return "a path that starts with .. can climb to / and from there into /proc"
    for i, comp in enumerate(comps):
        if not comp.could_be("proc"):
            continue
        # A word that starts with `proc/` names the project's own directory: cd never
        # leaves the working directory at / (check_proc_paths refuses `cd /`). A `/proc`
        # anywhere else in a word counts, wherever the path starts: `-f/proc/…`,
        # `--file=/proc/…`, a sed `r/proc/…` or an awk `getline < "/proc/…"`.
        if i == 0 and not absolute:
            continue
        if recursive:
            return "it could reach /proc, where other processes' environments live"
        if i + 1 >= len(comps) or not comps[i + 1].could_be_pid():
            continue
        rest = comps[i + 2 :]
        readings = []  # what follows /proc/<pid>, read directly or below task/<tid>
        if len(rest) >= 2 and rest[0].could_be("task") and rest[1].could_be_pid():
            readings.append(rest[2:])
        if rest and (rest[0].glob or rest[0].pattern != "task"):
            readings.append(rest)
        if any(not _harmless(r) for r in readings):
            return "it could read a process file such as /proc/<pid>/environ"
    return None


def _harmless(rest: list[_Comp]) -> bool:
    """The pid directory itself (a listing) or one harmless entry in it."""
    return not rest or (len(rest) == 1 and not rest[0].glob and rest[0].pattern in HARMLESS_ENTRIES)
