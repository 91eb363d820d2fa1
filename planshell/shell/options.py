"""getopt emulation for the bash-guard rules: long-option abbreviations, short clusters.

Every table errs towards blocking: an option we do not know is treated as a flag (so the
next word is still inspected), and only options we are sure about consume the next word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from planshell.shell.words import Blocked, Word, require_safe_arg, shorten


@dataclass(frozen=True)
class Opts:
    """An option table for a GNU getopt_long style command."""

    short_flags: str = ""  # letters known to take no value
    short_arg: str = ""  # letters that take a required value (attached or next word)
    short_optarg: str = ""  # letters that take an optional attached value
    long_flags: frozenset[str] = frozenset()
    long_arg: frozenset[str] = frozenset()  # value attached with = or in the next word
    long_optarg: frozenset[str] = frozenset()  # value only with =
    blocked_short: Mapping[str, str] = field(default_factory=dict)  # letter -> why
    blocked_long: Mapping[str, str] = field(default_factory=dict)  # name -> why
    blocked_anywhere: Mapping[str, str] = field(default_factory=dict)  # letter in any cluster
    strict: bool = False  # unknown options block (the command runs code we must parse)

    def known_long(self) -> frozenset[str]:
        return self.long_flags | self.long_arg | self.long_optarg | frozenset(self.blocked_long)


@dataclass
class Parsed:
    """Options and operands, in order, with the index of the word they came from."""

    options: list[tuple[int, str, str | None]] = field(default_factory=list)
    operands: list[tuple[int, Word]] = field(default_factory=list)

    def values(self, *names: str) -> list[tuple[int, str | None]]:
        return [(i, v) for i, n, v in self.options if n in names]


def resolve_long(cmd: str, name: str, opts: Opts) -> str | None:
    """Map a (possibly abbreviated) long option to its full name, blocking abbreviations of
    blocked options the way getopt_long and git's parse-options would accept them."""
    if not name:
        raise Blocked(f"{cmd} gets a malformed long option", "Remove it.")
    if name in opts.blocked_long:
        raise Blocked(f"{cmd} --{name} {opts.blocked_long[name]}")
    known = opts.known_long()
    if name in known:
        return name
    for full, why in opts.blocked_long.items():
        if full.startswith(name):
            raise Blocked(f"{cmd} --{name} abbreviates --{full}, which {why}")
    matches = [k for k in known if k.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if opts.strict:
        raise Blocked(
            f"{cmd} gets the option --{name}, which the guard does not know",
            "Use only common options, spelled out in full.",
        )
    return None


def parse_options(cmd: str, args: list[Word], opts: Opts) -> Parsed:
    """Walk ``args`` like getopt_long with argument permutation.

    Every word before the real end-of-options marker must be safe (no expansion, no
    leading glob). A ``--`` right after an option we do not know is treated as that
    option's possible value, so checking goes on past it.
    """
    out = Parsed()
    i, end, uncertain = 0, False, False
    while i < len(args):
        idx, word = i, args[i]
        i += 1
        if end:
            out.operands.append((idx, word))
            continue
        require_safe_arg(cmd, word)
        v = word.value
        if v is None or v == "-" or not v.startswith("-"):
            out.operands.append((idx, word))
            uncertain = False
            continue
        if v == "--":
            if uncertain:
                uncertain = False
                continue
            end = True
            continue
        if v.startswith("--"):
            name, eq, val = v[2:].partition("=")
            full = resolve_long(cmd, name, opts)
            value: str | None = val if eq else None
            if full is None:
                uncertain = not eq
                out.options.append((idx, "--" + name, value))
                continue
            if full in opts.long_arg and not eq and i < len(args):
                require_safe_arg(cmd, args[i])
                value = args[i].value
                i += 1
            out.options.append((idx, "--" + full, value))
            uncertain = False
            continue
        i, uncertain = _parse_cluster(cmd, v, idx, args, i, opts, out)
    return out


def _parse_cluster(
    cmd: str, v: str, idx: int, args: list[Word], i: int, opts: Opts, out: Parsed
) -> tuple[int, bool]:
    """Parse one ``-abc`` cluster; return the next word index and whether its end is unsure."""
    for c, why in opts.blocked_anywhere.items():
        if c in v[1:]:
            shown = f"-{c}" if v == "-" + c else f"{shorten(v)} (it holds -{c})"
            raise Blocked(f"{cmd} {shown} {why}")
    j = 1
    while j < len(v):
        c = v[j]
        if c in opts.blocked_short:
            raise Blocked(f"{cmd} -{c} {opts.blocked_short[c]}")
        if c in opts.short_arg:
            value: str | None = v[j + 1 :]
            if not value and i < len(args):
                require_safe_arg(cmd, args[i])
                value = args[i].value
                i += 1
            out.options.append((idx, "-" + c, value))
            return i, False
        if c in opts.short_optarg:
            out.options.append((idx, "-" + c, v[j + 1 :] or None))
            return i, False
        if c not in opts.short_flags:
            if opts.strict:
                raise Blocked(
                    f"{cmd} gets the option -{c}, which the guard does not know",
                    "Use only common options.",
                )
            if j == len(v) - 1:
                out.options.append((idx, "-" + c, None))
                return i, True
        out.options.append((idx, "-" + c, None))
        j += 1
    return i, False


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())
