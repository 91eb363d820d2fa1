"""The bash guard's check that no command reads another process's secrets under /proc."""

from __future__ import annotations

from planshell.procfs import proc_path_problem
from planshell.shell.words import Blocked, Word, shorten

# Commands that never open their operands as files (names and lookups only); every other
# command's words are checked as paths it could read.
_NOT_READERS = frozenset(
    "echo printf test [ true false basename dirname seq expr pwd which type id whoami "
    "uname hostname printenv command hash sleep ls stat df realpath readlink locale "
    "getconf nproc free env uptime tty jobs set declare ulimit lsb_release".split()
)
_RECURSIVE_LONG = ("--recursive", "--dereference-recursive", "--directories")
_FIX_PROC = (
    "Other processes' environments hold planshell's API keys; read system-wide files such "
    "as /proc/cpuinfo, or name the file literally."
)


def _recursive(name: str, args: list[Word]) -> bool:
    """Does this reader descend into directories (so / or /proc would reach environ)?"""
    if name == "rg":
        return True
    if name == "git":  # git grep/diff --no-index walk any directory (prefixes count)
        return any((w.value or "").startswith("--no-i") for w in args)
    if name not in ("grep", "egrep", "fgrep", "zgrep", "diff"):
        return False
    letters = "r" if name == "diff" else "rRd"
    for word in args:
        v = word.value
        if v is None:
            return True  # an expansion could be -r
        if v == "--":
            return False
        if v.startswith("--") and any(
            long.startswith(v.partition("=")[0])
            for long in _RECURSIVE_LONG
            if len(v.partition("=")[0]) > 2
        ):
            return True
        if v.startswith("-") and not v.startswith("--") and any(c in v for c in letters):
            return True
    return False


_GREP_VALUE_LETTERS = "efmABCdD"
_SEARCH_VALUE_LETTERS = {
    "rg": "ABCefgjmMrtTEd",
    **dict.fromkeys(("grep", "egrep", "fgrep", "zgrep"), _GREP_VALUE_LETTERS),
}


def _search_pattern(name: str, args: list[Word]) -> int | None:
    """The index of grep's or rg's pattern operand (a regex, not a path), if it has one.

    Only that word is checked as a plain word rather than as a search root, so
    `grep -rn "/proc/" src` stays allowed. With -e or -f every operand is a path. Taking an
    option's value for the pattern by mistake only makes the real pattern stricter.
    """
    letters = _SEARCH_VALUE_LETTERS.get(name)
    if letters is None:
        return None
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            return None
        if v == "--":
            return i + 1 if i + 1 < len(args) else None
        if v.startswith("--"):
            if v.partition("=")[0] in ("--regexp", "--file"):
                return None
        elif v.startswith("-") and v != "-":
            for j, c in enumerate(v[1:], 1):
                if c in "ef":
                    return None
                if c in letters:
                    i += 0 if v[j + 1 :] else 1
                    break
        else:
            return i
        i += 1
    return None


def check_proc_paths(name: str, args: list[Word], recursive: bool | None = None) -> None:
    """Refuse a word that could make ``name`` read another process's secrets.

    planshell.procfs holds the rule (also used by the read tool). ``cd`` counts as
    recursive: after `cd /` or `cd /proc` every relative path could lead there.
    """
    if name in _NOT_READERS:
        return
    if recursive is None:
        recursive = name == "cd" or _recursive(name, args)
    pattern = _search_pattern(name, args) if recursive else None
    for index, word in enumerate(args):
        problem = proc_path_problem(word.shape, recursive and index != pattern)
        if problem:
            raise Blocked(f"{name} {shorten(word.src)}: {problem}", _FIX_PROC)
