"""Wrappers: the programs that run the words after them, and what each one runs.

``env``, ``nice``, ``sudo``, ``xargs``, ``find -exec``, ``bash -c '…'``, ``eval`` and the
like start another command. For each, :data:`WRAPPERS` holds a handler that reads the
wrapper's own options (as its getopt would) and returns the :class:`Step` it takes: the
command it runs next, command strings it parses, further commands. Options it cannot read
raise :class:`Unresolved`, and the line then asks instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from planshell.permissions.args import Arg, Hole


class Unresolved(Exception):
    """A wrapper whose options or operands cannot be known before it runs."""


@dataclass
class Step:
    """What one wrapper does: the command it runs next, and anything else it runs."""

    inner: list[Arg] = field(default_factory=list)  # the command it runs next; [] none
    layer: bool = True  # the wrapper itself does nothing else
    plain: bool = True  # a rule may cover it (no environment changes, no extra files)
    lines: list[str] = field(default_factory=list)  # command strings it parses and runs
    others: list[list[Arg]] = field(default_factory=list)  # further commands (find -exec)


@dataclass(frozen=True)
class _Opts:
    """A wrapper's options (getopt with a leading '+': they stop at the first operand)."""

    flags: str = ""
    with_arg: str = ""
    long_flags: frozenset[str] = frozenset()
    long_with_arg: frozenset[str] = frozenset()
    numeric: bool = False  # -5 (nice)
    optional: str = ""  # short options whose value, if any, is glued on (xargs -i{})


def _options(args: list[Arg], spec: _Opts, seen: list[tuple[str, str]] | None = None) -> int:
    """Index of the first operand after the options; unknown or unreadable options raise."""
    i = 0
    while i < len(args):
        word = args[i]
        if isinstance(word, Hole):
            raise Unresolved("an option is only known when it runs")
        if word == "--":
            return i + 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in spec.long_with_arg:
                if not eq:
                    i += 1
                    value = _text(args, i)
                if seen is not None:
                    seen.append((name, value))
            elif name not in spec.long_flags:
                raise Unresolved(f"unknown option {word!r}")
            elif seen is not None:
                seen.append((name, value))
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            return i
        if spec.numeric and word[1:].isdigit():
            i += 1
            continue
        for k, c in enumerate(word[1:], start=1):
            if c in spec.optional:
                if seen is not None:
                    seen.append((c, word[k + 1 :]))
                break
            if c in spec.with_arg:
                value = word[k + 1 :]
                if not value:
                    i += 1
                    value = _text(args, i)
                if seen is not None:
                    seen.append((c, value))
                break
            if c not in spec.flags:
                raise Unresolved(f"unknown option -{c}")
            if seen is not None:
                seen.append((c, ""))
        i += 1
    return i


def _text(args: list[Arg], i: int) -> str:
    if i >= len(args):
        return ""
    word = args[i]
    if isinstance(word, Hole):
        raise Unresolved("an option's value is only known when it runs")
    return word


def _simple(spec: _Opts) -> Callable[[list[Arg]], Step]:
    def handler(args: list[Arg]) -> Step:
        return Step(args[_options(args, spec) :])

    return handler


def _command(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    i = _options(args, _Opts("pvV"), seen)
    if any(name in ("v", "V") for name, _ in seen):
        return Step()  # command -v only says what a name is
    return Step(args[i:])


def _builtin(args: list[Arg]) -> Step:
    return Step(args[_options(args, _Opts()) :])


def _env(args: list[Arg]) -> Step:
    spec = _Opts("i0v", "uCS", frozenset({
        "--ignore-environment", "--null", "--debug", "--default-signal", "--ignore-signal",
        "--block-signal", "--list-signal-handling"}),
        frozenset({"--unset", "--chdir", "--split-string"}))  # fmt: skip
    rest = list(args)
    plain = True
    while True:
        seen: list[tuple[str, str]] = []
        i = _options(rest, spec, seen)
        if i < len(rest) and rest[i] == "-":  # env - is env -i
            rest = rest[i + 1 :]
            continue
        split = [v for name, v in seen if name in ("S", "--split-string")]
        plain = plain and not any(n in ("S", "--split-string", "C", "--chdir") for n, _ in seen)
        if not split:
            break
        text = split[-1]
        if any(c in text for c in "$\\#'\""):
            raise Unresolved("env -S with quotes, escapes or variables")
        rest = [*text.split(), *rest[i:]]  # env -S splits, then reads options again
    rest = rest[i:]
    while rest and (isinstance(rest[0], Hole) or "=" in rest[0]):
        if isinstance(rest[0], Hole):
            raise Unresolved("an argument is only known when it runs")
        plain = False  # VAR=x changes what the command does, as an assignment would
        rest = rest[1:]
    return Step(rest, plain=plain)


def _timeout(args: list[Arg]) -> Step:
    spec = _Opts(
        "v",
        "ks",
        frozenset({"--preserve-status", "--foreground", "--verbose"}),
        frozenset({"--kill-after", "--signal"}),
    )
    i = _options(args, spec)
    if i < len(args) and args[i] is Hole.MANY:
        raise Unresolved("the duration is only known when it runs")
    return Step(args[i + 1 :])


def _time(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts(
        "pavqV",
        "fo",
        frozenset({"--portability", "--append", "--verbose", "--quiet", "--help", "--version"}),
        frozenset({"--format", "--output"}),
    )
    i = _options(args, spec, seen)
    return Step(args[i:], plain=not any(n in ("o", "--output") for n, _ in seen))


def _sudo(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts(
        "AbBEeHiKklNnPSsVv",
        "aCcDghpRrTtUu",
        frozenset(
            {
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--edit",
                "--set-home",
                "--login",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--no-update",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--shell",
                "--version",
                "--validate",
            }
        ),
        frozenset(
            {
                "--close-from",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            }
        ),
    )
    i = _options(args, spec, seen)
    if any(n in ("e", "--edit") for n, _ in seen):
        return Step(layer=False)  # sudoedit: the operands are files
    rest = args[i:]
    while rest and isinstance(rest[0], str) and "=" in rest[0]:
        rest = rest[1:]
    return Step(rest, layer=False)


def _doas(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    i = _options(args, _Opts("Lns", "aCu"), seen)
    if any(n == "C" for n, _ in seen):
        return Step(layer=False)  # checks a config file
    return Step(args[i:], layer=False)


def _su(args: list[Arg]) -> Step:
    """su/runuser run only a ``-c`` string; their options may follow the user name."""
    return Step(layer=False, lines=_dash_c(args, ("--command", "--session-command")))


def _dash_c(args: list[Arg], long_names: tuple[str, ...]) -> list[str]:
    """The ``-c STRING`` values anywhere in ``args`` (``-lc 'x'``, ``--command=x``)."""
    if any(isinstance(w, Hole) for w in args):
        raise Unresolved("an argument is only known when it runs")
    words = [w for w in args if isinstance(w, str)]
    lines: list[str] = []
    for k, word in enumerate(words):
        nxt = words[k + 1] if k + 1 < len(words) else ""
        name, eq, value = word.partition("=")
        if name in long_names:
            lines.append(value if eq else nxt)
        elif word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            glued = word[word.index("c", 1) + 1 :]
            lines.append(glued or nxt)
    return [t for t in lines if t]


def _pkexec(args: list[Arg]) -> Step:
    spec = _Opts(
        "", "", frozenset({"--disable-internal-agent", "--keep-cwd"}), frozenset({"--user"})
    )
    return Step(args[_options(args, spec) :], layer=False)


def _xargs(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts("0oprtx", "adEILnPs", frozenset({
        "--null", "--open-tty", "--interactive", "--no-run-if-empty", "--verbose", "--exit",
        "--show-limits", "--replace", "--eof", "--max-lines"}),
        frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars",
                   "--process-slot-var"}), optional="iel")  # fmt: skip
    i = _options(args, spec, seen)
    replace = [v or "{}" for n, v in seen if n in ("I", "i", "--replace")]
    inner = args[i:] or ["echo"]
    if replace:
        marker = replace[-1]
        return Step([Hole.ONE if isinstance(w, str) and marker in w else w for w in inner])
    return Step([*inner, Hole.MANY])


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(args: list[Arg]) -> Step:
    step = Step(layer=False)
    if Hole.MANY in args:
        raise Unresolved("an argument is only known when it runs (it could be -exec)")
    if Hole.ONE in args and any(w in (";", "+") for w in args):
        raise Unresolved("an argument is only known when it runs (it could be -exec)")
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j] not in (";", "+"):
                j += 1
            inner = [Hole.ONE if isinstance(w, str) and "{}" in w else w for w in args[i + 1 : j]]
            if inner:
                step.others.append(inner)
            i = j
        i += 1
    return step


_SHELL_FLAGS = "abcefhiklmnprstuvxBCDEHPT"


def _shell(args: list[Arg]) -> Step:
    """bash/sh/zsh …: ``-c STRING`` is parsed as a line; reading stdin cannot be resolved."""
    command_mode = reads_stdin = False
    i = 0
    while i < len(args):
        word = args[i]
        if isinstance(word, Hole):
            raise Unresolved("an argument is only known when it runs")
        if word == "--" or word == "-":
            i += 1
            break
        if word in ("--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            for c in word[1:]:
                if c not in _SHELL_FLAGS + "oO":
                    raise Unresolved(f"unknown option {word!r}")
            command_mode |= "c" in word[1:] and word[0] == "-"
            reads_stdin |= "s" in word[1:] and word[0] == "-"
            i += 2 if word[-1] in "oO" else 1
            continue
        break
    if command_mode:
        text = _text(args, i)
        if i >= len(args):
            return Step()
        return Step(lines=[text])
    if reads_stdin or i >= len(args):
        raise Unresolved("the shell reads its commands from stdin")
    return _script(args[i])


_STDIN = re.compile(r"/dev/(?:stdin|fd/\d+)|/proc/(?:self|\d+)/fd/\d+|-")


def _script(path: Arg) -> Step:
    """A script file runs by the shell's name only (like python or make); stdin cannot."""
    if isinstance(path, Hole) or _STDIN.fullmatch(path):
        raise Unresolved("the script it runs is only known when it runs (stdin, <(…), $x)")
    return Step(layer=False)


def _source(args: list[Arg]) -> Step:
    return _script(args[0]) if args else Step(layer=False)


def _eval(args: list[Arg]) -> Step:
    if any(isinstance(w, Hole) for w in args):
        raise Unresolved("eval runs text that is only known when it runs")
    text = " ".join(w for w in args if isinstance(w, str))
    return Step(lines=[text] if text.strip() else [])


def _trap(args: list[Arg]) -> Step:
    i = _options(args, _Opts("lp"))
    if i >= len(args) or i + 1 >= len(args):
        return Step(layer=False)  # trap -p, trap SIG: nothing set to run
    text = _text(args, i)
    return Step(layer=False, lines=[text] if text not in ("", "-") else [])


def _alias(args: list[Arg]) -> Step:
    lines = []
    for word in args:
        if isinstance(word, Hole):
            raise Unresolved("an alias is only known when it runs")
        _name, eq, value = word.partition("=")
        if eq and value.strip():
            lines.append(value)
    return Step(layer=False, lines=lines)


def _hash(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    _options(args, _Opts("lrdt", "p"), seen)
    paths = [v for n, v in seen if n == "p"]
    return Step(layer=False, others=[[p, Hole.MANY] for p in paths if p])


def _watch(args: list[Arg]) -> Step:
    seen: list[tuple[str, str]] = []
    spec = _Opts("bcCdeghtwpqrx", "n", frozenset({
        "--beep", "--color", "--no-color", "--differences", "--errexit", "--chgexit",
        "--no-title", "--no-wrap", "--precise", "--exec", "--no-rerun"}),
        frozenset({"--interval", "--equexit"}))  # fmt: skip
    i = _options(args, spec, seen)
    rest = args[i:]
    if any(n in ("x", "--exec") for n, _ in seen):
        return Step(rest)
    if any(isinstance(w, Hole) for w in rest):
        raise Unresolved("the command is only known when it runs")
    return Step(lines=[" ".join(w for w in rest if isinstance(w, str))] if rest else [])


def _callback(spec: _Opts) -> Callable[[list[Arg]], Step]:
    """mapfile -C, compgen/complete -C: the option's value runs as a command."""

    def handler(args: list[Arg]) -> Step:
        seen: list[tuple[str, str]] = []
        _options(args, spec, seen)
        return Step(layer=False, lines=[v for n, v in seen if n == "C" and v])

    return handler


def _runner(operands: int = 0, spec: _Opts | None = None) -> Callable[[list[Arg]], Step]:
    """A program that runs the command after its options and ``operands`` words.

    Without ``spec`` its options are not read at all: any option cannot be resolved.
    """

    def handler(args: list[Arg]) -> Step:
        if spec is not None:
            i = _options(args, spec)
        elif args and (isinstance(args[0], Hole) or args[0].startswith("-")):
            raise Unresolved("its options are not understood")
        else:
            i = 0
        if Hole.MANY in args[i : i + operands]:
            raise Unresolved("an argument is only known when it runs")
        return Step(args[i + operands :])

    return handler


def _unknown(args: list[Arg]) -> Step:
    raise Unresolved("the commands it runs are not understood")


def _flock(args: list[Arg]) -> Step:
    """flock [options] FILE -c 'CMD', or flock [options] FILE CMD …"""
    spec = _Opts(
        "sxunoFe",
        "Ew",
        frozenset(
            {
                "--shared",
                "--exclusive",
                "--unlock",
                "--nonblock",
                "--close",
                "--no-fork",
                "--verbose",
            }
        ),
        frozenset({"--conflict-exit-code", "--wait", "--timeout"}),
    )
    i = _options(args, spec)
    if i + 1 < len(args) and args[i + 1] in ("-c", "--command"):
        return Step(lines=[_text(args, i + 2)])
    if Hole.MANY in args[i : i + 1]:
        raise Unresolved("an argument is only known when it runs")
    return Step(args[i + 1 :])


def _script_command(args: list[Arg]) -> Step:
    lines = _dash_c(args, ("--command",))
    if not lines:
        raise Unresolved("script starts a shell that reads its commands from stdin")
    return Step(layer=False, lines=lines)


def _sg(args: list[Arg]) -> Step:
    """sg GROUP [-c] 'CMD': the command is a string for /bin/sh."""
    rest = args[1:]
    if rest[:1] == ["-c"]:
        rest = rest[1:]
    if not rest:
        raise Unresolved("sg starts a shell that reads its commands from stdin")
    return Step(layer=False, lines=[_text(rest, 0)])


def _busybox(args: list[Arg]) -> Step:
    if args and isinstance(args[0], str) and args[0].startswith("--"):
        return Step()
    return Step(list(args))


WRAPPERS: dict[str, Callable[[list[Arg]], Step]] = {
    "command": _command,
    "builtin": _builtin,
    "exec": _simple(_Opts("cl", "a")),
    "env": _env,
    "nice": _simple(_Opts("", "n", frozenset(), frozenset({"--adjustment"}), numeric=True)),
    "nohup": _simple(_Opts()),
    "timeout": _timeout,
    "stdbuf": _simple(_Opts("", "ioe", frozenset(), frozenset({"--input", "--output", "--error"}))),
    "setsid": _simple(_Opts("cfw", "", frozenset({"--ctty", "--fork", "--wait"}))),
    "time": _time,
    "sudo": _sudo,
    "doas": _doas,
    "su": _su,
    "runuser": _su,
    "pkexec": _pkexec,
    "xargs": _xargs,
    "find": _find,
    "eval": _eval,
    "trap": _trap,
    "alias": _alias,
    "hash": _hash,
    "watch": _watch,
    "busybox": _busybox,
    "source": _source,
    "ionice": _runner(0, _Opts("t", "cn")),
    "chrt": _runner(1),
    "taskset": _runner(1, _Opts("ac")),
    "chroot": _runner(
        1, _Opts("", "", frozenset({"--skip-chdir"}), frozenset({"--userspec", "--groups"}))
    ),
    "flock": _flock,
    "faketime": _runner(1),
    **{
        name: _runner()
        for name in (
            "unshare",
            "nsenter",
            "strace",
            "ltrace",
            "valgrind",
            "numactl",
            "firejail",
            "systemd-run",
            "run0",
            "fakeroot",
            "unbuffer",
            "rlwrap",
            "torsocks",
            "proxychains",
            "proxychains4",
            "catchsegv",
            "dbus-run-session",
            "xvfb-run",
            "ccache",
            "sem",
        )
    },
    "parallel": _unknown,
    "script": _script_command,
    "sg": _sg,
    "mapfile": _callback(_Opts("t", "dnOsuCc")),
    "readarray": _callback(_Opts("t", "dnOsuCc")),
    "compgen": _callback(_Opts("abcdefgjksuvDEI", "oAGWFPSXC")),
    "complete": _callback(_Opts("abcdefgjksuvDEIpr", "oAGWFPSXC")),
    ".": _source,
    **{name: _shell for name in ("bash", "sh", "dash", "ksh", "mksh", "ash", "yash")},
    # Shells whose syntax is not bash's (zsh runs =rm as /bin/rm): never resolved.
    **{
        name: _unknown
        for name in (
            "zsh",
            "fish",
            "csh",
            "tcsh",
            "rc",
            "es",
            "elvish",
            "nu",
            "xonsh",
            "pwsh",
            "oksh",
            "loksh",
        )
    },
}
