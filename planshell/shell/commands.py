"""Per-command rules for the plan-mode bash guard (see ``guard``).

The guard hands every allowlisted simple command to :func:`check_command` as a list of
:class:`Word` objects (already decoded from the source text, never from bashlex's
``node.word``). A rule either returns or raises :class:`Blocked`. Every table here errs
towards blocking: an option we do not know is treated as a flag (so the next word is still
inspected), and only options we are sure about are allowed to consume the next word.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from planshell.procfs import proc_path_problem

__all__ = [
    "ALLOWLIST",
    "ALWAYS_ALLOWED",
    "OPTION_SENSITIVE",
    "Blocked",
    "Word",
    "awk_program_problem",
    "check_command",
    "check_cond",
    "check_prefix_assignment",
    "check_proc_paths",
    "sed_script_problem",
]

FIX_PLAN = "Describe the change in the plan instead."
FIX_LITERAL = "Use a literal value, or put file operands after `--`."


class Blocked(Exception):
    """A rule refused a command: ``why`` says what it would do, ``fix`` what to do instead."""

    def __init__(self, why: str, fix: str = FIX_PLAN) -> None:
        super().__init__(why)
        self.why = why
        self.fix = fix


@dataclass(frozen=True)
class Word:
    """One shell word, decoded from its source span by the guard's own quote scanner."""

    src: str
    value: str | None  # literal value after quote removal; None when it holds $-/`-/<()-expansions
    dynamic: bool = False  # parameter expansion or command substitution
    procsub: bool = False  # holds an input process substitution <(…)
    glob: bool = False  # holds an unquoted *, ? or [
    risky_glob: bool = False  # unquoted glob whose literal prefix is empty or starts with "-"
    brace: bool = False  # unquoted brace expansion such as {a,b} or {1..3}
    split: bool = False  # holds an unquoted expansion (or "$@"): it may become several words
    # Each character as ("u", c) unquoted or ("q", c) quoted, each expansion as ("safe", name)
    # or ("any", ""): what planshell.procfs needs to see which paths the word could name.
    shape: tuple[tuple[str, str], ...] = ()

    @property
    def static(self) -> bool:
        """True when the word is exactly one known string at run time."""
        return self.value is not None and not self.glob and not self.brace


ALWAYS_ALLOWED: frozenset[str] = frozenset(
    """
    cat head tail wc nl tac rev cut tr paste comm join column fold expand unexpand
    diff cmp md5sum sha1sum sha256sum sha512sum cksum od hexdump strings
    basename dirname realpath readlink seq expr true false
    echo pwd cd which type ls stat du df id whoami uname printenv
    grep egrep fgrep jq
    nproc free locale getconf
    """.split()
)
# nproc, free, locale and getconf only read system information (/proc, /sys, the locale
# archive, sysconf); none of them has an option that writes a file or starts a program.


# --------------------------------------------------------------------------- helpers


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def require_safe_arg(cmd: str, word: Word) -> None:
    """Block a word of an option-sensitive command that could turn into an option."""
    if word.dynamic:
        raise Blocked(
            f"{cmd} gets the expanded argument {_short(word.src)} before `--`, "
            "and its value could turn into an option",
            FIX_LITERAL,
        )
    if word.risky_glob:
        raise Blocked(
            f"{cmd} gets the unquoted glob {_short(word.src)}, which could match a file "
            "named like an option",
            "Quote the pattern, or start it with ./ (for example ./*.txt).",
        )
    if word.brace:
        raise Blocked(
            f"{cmd} gets the brace expansion {_short(word.src)}, which could produce an option",
            "Spell out the arguments.",
        )


def require_static(cmd: str, word: Word, role: str) -> str:
    """Return the literal value of a word whose run-time value must be known exactly."""
    if word.value is None or not word.static:
        raise Blocked(
            f"the {role} of {cmd} ({_short(word.src)}) is not a literal, so it cannot be checked",
            "Write it out literally in single quotes.",
        )
    return word.value


# ------------------------------------------------------------------ getopt emulation


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
            shown = f"-{c}" if v == "-" + c else f"{_short(v)} (it holds -{c})"
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


def _fs(words: str) -> frozenset[str]:
    return frozenset(words.split())


# ------------------------------------------------------------------- simple rules


def rule_printf(args: list[Word]) -> None:
    """printf: the builtin stops at the format, so only the first argument matters."""
    if not args:
        return
    first = require_static("printf", args[0], "first argument")
    if first == "--":
        if len(args) > 1:
            require_static("printf", args[1], "format string")
        return
    if first.startswith("-v"):
        raise Blocked("printf -v assigns a shell variable", "Print to stdout instead.")
    if first.startswith("-") and first != "-":
        raise Blocked(f"printf does not take the option {_short(first)}", "Drop the option.")


_DATE = Opts(
    short_flags="uR",
    short_arg="dfr",
    short_optarg="I",
    long_flags=_fs("debug rfc-email rfc-2822 universal utc resolution help version"),
    long_arg=_fs("date file reference rfc-3339"),
    long_optarg=_fs("iso-8601"),
    blocked_short={"s": "sets the system clock"},
    blocked_long={"set": "sets the system clock"},
)


def rule_date(args: list[Word]) -> None:
    """date: -s/--set and a non-+FORMAT operand (MMDDhhmm…) set the clock."""
    parsed = parse_options("date", args, _DATE)
    for _, word in parsed.operands:
        value = require_static("date", word, "operand")
        if not value.startswith("+"):
            raise Blocked(
                f"date {_short(value)} would set the system clock",
                "Use date +FORMAT to print the date.",
            )


_HOSTNAME = Opts(
    short_flags="aAdfiIsvVyhn",
    long_flags=_fs(
        "alias aliases all-fqdns domain fqdn long ip-address ip-addresses "
        "all-ip-addresses short yp nis verbose version help"
    ),
    blocked_short={"F": "sets the host name from a file", "b": "sets the host name"},
    blocked_long={"file": "sets the host name from a file", "boot": "sets the host name"},
)


def rule_hostname(args: list[Word]) -> None:
    """hostname: any operand sets the host name."""
    parsed = parse_options("hostname", args, _HOSTNAME)
    if parsed.operands:
        raise Blocked("hostname with an operand sets the host name", "Run plain hostname.")


_FILE = Opts(
    short_flags="bcdEhiIkLlNnprsSvzZ0",
    short_arg="eFfmP",
    long_arg=_fs("exclude exclude-quiet separator files-from magic-file parameter"),
    blocked_short={"C": "compiles a magic file (it writes *.mgc)"},
    blocked_long={"compile": "compiles a magic file (it writes *.mgc)"},
)


def rule_file(args: list[Word]) -> None:
    """file: -C/--compile writes a .mgc file."""
    parse_options("file", args, _FILE)


def rule_tree(args: list[Word]) -> None:
    """tree: -o writes a file and -R writes 00Tree.html files.

    tree's own parser lets option letters take the *next* words as values, so no word is
    trusted as data: every dash word before a `--` is searched for o and R.
    """
    for word in args:
        require_safe_arg("tree", word)
        v = word.value
        if v is None or not v.startswith("-") or v == "-":
            continue
        if v.startswith("--"):
            name = v[2:].partition("=")[0]
            if name and "output".startswith(name):
                raise Blocked(f"tree --{name} writes its output to a file")
            continue
        if "o" in v[1:]:
            raise Blocked("tree -o writes its output to a file")
        if "R" in v[1:]:
            raise Blocked("tree -R writes 00Tree.html files into directories")


_SORT = Opts(
    short_flags="bcCdfghimMnrRsuVz",
    short_arg="kStT",
    long_flags=_fs(
        "ignore-leading-blanks debug dictionary-order general-numeric-sort "
        "human-numeric-sort ignore-case ignore-nonprinting merge month-sort numeric-sort "
        "random-sort reverse stable unique version-sort zero-terminated help version"
    ),
    long_arg=_fs("key buffer-size field-separator temporary-directory parallel random-source sort"),
    long_optarg=_fs("check"),
    blocked_short={"o": "writes its output to a file"},
    blocked_long={
        "output": "writes its output to a file",
        "compress-program": "runs a compression program",
        # It reads the names of its input files from a file or stdin, so a pipe can hand
        # it /proc/<pid>/environ without the path ever being a word the guard sees.
        "files0-from": "reads the names of the files it prints from another file or stdin",
    },
)


def rule_sort(args: list[Word]) -> None:
    """sort: -o/--output writes a file; --compress-program runs one."""
    parse_options("sort", args, _SORT)


_UNIQ = Opts(
    short_flags="cdDiuz0123456789",
    short_arg="fsw",
    long_flags=_fs("count repeated ignore-case unique zero-terminated help version"),
    long_arg=_fs("skip-fields skip-chars check-chars"),
    long_optarg=_fs("all-repeated group"),
)


def rule_uniq(args: list[Word]) -> None:
    """uniq: a second operand is the output file, so operands must be countable."""
    parsed = parse_options("uniq", args, _UNIQ)
    for _, word in parsed.operands:
        if word.dynamic or word.glob or word.brace:
            raise Blocked(
                f"uniq gets the operand {_short(word.src)}, which could expand to two "
                "files, and uniq writes its second operand",
                "Pass exactly one literal input file.",
            )
    if len(parsed.operands) >= 2:
        raise Blocked("uniq writes its second operand (the output file)", "Pass one input file.")


_BASE64 = Opts(
    short_flags="dDin",
    short_arg="w",
    long_flags=_fs("decode ignore-garbage help version"),
    long_arg=_fs("wrap"),
    blocked_anywhere={"o": "writes its output to a file"},
    blocked_long={"output": "writes its output to a file"},
)


def rule_base64(args: list[Word]) -> None:
    """base64: -o/--output (BSD) writes a file."""
    parse_options("base64", args, _BASE64)


_FD = Opts(
    short_flags="HIsiFgaLpu0lqhV1",
    short_arg="dtecjSE",
    long_flags=_fs(
        "hidden no-ignore no-ignore-vcs no-ignore-parent unrestricted case-sensitive "
        "ignore-case glob regex fixed-strings absolute-path list-details follow full-path "
        "print0 prune quiet show-errors one-file-system help version"
    ),
    long_arg=_fs(
        "type extension exclude max-depth min-depth exact-depth size changed-within "
        "changed-before color threads max-results base-directory path-separator "
        "search-path ignore-file batch-size format"
    ),
    blocked_short={"x": "runs a command for every match", "X": "runs a command on the matches"},
    blocked_long={
        "exec": "runs a command for every match",
        "exec-batch": "runs a command on the matches",
    },
)


def rule_fd(args: list[Word]) -> None:
    """fd: -x/--exec and -X/--exec-batch run programs."""
    parse_options("fd", args, _FD)


_RG = Opts(
    short_flags="abcFhHiIlLnNopqsSuUvVwx0",
    short_arg="ABCefgjmMrtTEd",
    long_arg=_fs(
        "regexp file glob iglob type type-not type-add type-clear max-count max-depth "
        "max-columns max-filesize context after-context before-context threads replace "
        "encoding ignore-file path-separator sort sortr colors color context-separator "
        "field-context-separator field-match-separator engine dfa-size-limit "
        "regex-size-limit pre-glob generate hyperlink-format"
    ),
    blocked_anywhere={"z": "searches compressed files by spawning decompressors"},
    blocked_long={
        "pre": "runs a preprocessor program for every file",
        "hostname-bin": "runs a program to find the host name",
        "search-zip": "spawns decompression programs",
    },
)


def rule_rg(args: list[Word]) -> None:
    """rg: --pre, --hostname-bin and -z/--search-zip run other programs."""
    parse_options("rg", args, _RG)


# ------------------------------------------------------------------------------ find

_FIND_BLOCKED: dict[str, str] = {
    "-exec": "runs a command for every match",
    "-execdir": "runs a command for every match",
    "-ok": "runs a command for every match",
    "-okdir": "runs a command for every match",
    "-delete": "deletes the matches",
    "-fprint": "writes the matches to a file",
    "-fprint0": "writes the matches to a file",
    "-fprintf": "writes the matches to a file",
    "-fls": "writes the matches to a file",
}
_FIND_ONE_ARG = _fs(
    "-amin -anewer -atime -cmin -cnewer -ctime -fstype -gid -group -ilname -iname -inum "
    "-ipath -iregex -iwholename -links -lname -mmin -mtime -name -newer -path -perm -regex "
    "-samefile -size -type -uid -used -user -wholename -xtype -context -maxdepth -mindepth "
    "-printf -files0-from -regextype -D"
)
_FIND_NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]")


def rule_find(args: list[Word]) -> None:
    """find: action primaries run, delete or write; their names are matched exactly.

    find has no end-of-options marker for its expression, so every word is checked.
    """
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        require_safe_arg("find", word)
        v = word.value
        if v is None:
            continue
        if v in _FIND_BLOCKED:
            raise Blocked(
                f"find {v} {_FIND_BLOCKED[v]}",
                "Use -print or -printf, and describe any action in the plan.",
            )
        if (v in _FIND_ONE_ARG or _FIND_NEWER_XY.fullmatch(v)) and i < len(args):
            require_safe_arg("find", args[i])
            i += 1


# ------------------------------------------------------------------------------- sed

_SED = Opts(
    short_flags="nrsuzEb",
    short_arg="el",
    long_flags=_fs(
        "quiet silent regexp-extended separate unbuffered null-data zero-terminated binary "
        "follow-symlinks posix debug sandbox help version"
    ),
    long_arg=_fs("expression line-length"),
    blocked_short={"i": "edits files in place", "f": "reads its script from a file"},
    blocked_long={"in-place": "edits files in place", "file": "reads its script from a file"},
    strict=True,
)


def rule_sed(args: list[Word]) -> None:
    """sed: no in-place edit, no script file, and no w/W/e in the script."""
    parsed = parse_options("sed", args, _SED)
    exprs = parsed.values("-e", "--expression")
    scripts: list[str] = []
    if exprs:
        scripts.append("\n".join(v or "" for _, v in exprs))
    first_expr = min((i for i, _ in exprs), default=None)
    if parsed.operands and (first_expr is None or parsed.operands[0][0] < first_expr):
        # Without -e the first operand is the script. Under POSIXLY_CORRECT an operand
        # before the first -e is one too, so check it as well.
        scripts.append(require_static("sed", parsed.operands[0][1], "script"))
    for script in scripts:
        problem = sed_script_problem(script)
        if problem:
            raise Blocked(f"the sed script {problem}", "Print to stdout with p or s///.")


class _SedScan:
    """A small GNU sed script reader that finds w, W and e commands and flags."""

    def __init__(self, text: str) -> None:
        self.t = text
        self.p = 0

    def peek(self) -> str:
        return self.t[self.p] if self.p < len(self.t) else ""

    def skip_blank(self) -> None:
        while self.peek() in (" ", "\t"):
            self.p += 1

    def delimited(self) -> None:
        """Skip one delimited part (regex or replacement) after its opening delimiter."""
        delim = self.t[self.p - 1]
        while self.p < len(self.t):
            c = self.t[self.p]
            if c == "\\":
                self.p += 2
                continue
            if c == "\n":
                raise ValueError("has an unterminated expression")
            self.p += 1
            if c == delim:
                return
        raise ValueError("has an unterminated expression")

    def ascii_delimiter(self) -> None:
        """Refuse a non-ASCII delimiter: GNU sed reads bytes in the C locale.

        There sed takes the first byte of a multibyte character as the delimiter, so it
        splits the script at other places than this reader does (`sé…` ends at any byte
        0xC3, the start of è as well), and the flags it then reads are not the ones checked
        here. In a UTF-8 locale sed refuses such a delimiter outright. Non-ASCII text inside
        a pattern or replacement is fine: with an ASCII delimiter every byte of it is
        plain text to sed in any locale.
        """
        if not self.peek().isascii():
            raise ValueError(f"uses the non-ASCII delimiter {self.peek()!r}")

    def address(self, second: bool) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.p += 1
            if self.peek() == "~":
                self.p += 1
                while self.peek().isdigit():
                    self.p += 1
        elif c == "$":
            self.p += 1
        elif second and c in ("+", "~"):
            self.p += 1
            while self.peek().isdigit():
                self.p += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.p += 1
                if not self.peek() or self.peek() in "\n\\":
                    raise ValueError("has a bad address")
                self.ascii_delimiter()
            self.p += 1
            self.delimited()
            while self.peek() in ("I", "M"):
                self.p += 1

    def to_eol(self) -> str:
        end = self.t.find("\n", self.p)
        end = len(self.t) if end < 0 else end
        text = self.t[self.p : end]
        self.p = end
        return text

    def text_arg(self) -> None:
        """Skip the text of a, i or c (to the end of line, with backslash continuation)."""
        self.skip_blank()
        if self.peek() == "\\":
            self.p += 1
            if self.peek() == "\n":
                self.p += 1
        while self.p < len(self.t):
            c = self.t[self.p]
            if c == "\\":
                self.p += 2
                continue
            if c == "\n":
                return
            self.p += 1

    def label(self) -> None:
        self.skip_blank()
        while self.peek() and self.peek() not in " \t\n;}#":
            self.p += 1

    def s_flags(self) -> str | None:
        while True:
            c = self.peek()
            if c in ("", "\n", ";", "}", "#"):
                return None
            if c == "e":
                return "uses the e flag of s, which runs the pattern space as a command"
            if c == "w":
                return "uses the w flag of s, which writes to a file"
            if c not in "gpiImM0123456789 \t":
                raise ValueError(f"has an unknown s flag {c!r}")
            self.p += 1

    def command(self) -> str | None:
        cmd = self.peek()
        self.p += 1
        if cmd in ("w", "W"):
            return f"uses the {cmd} command, which writes to a file"
        if cmd == "e":
            return "uses the e command, which runs a shell command"
        if cmd in ("s", "y"):
            if not self.peek() or self.peek() in "\n\\":
                raise ValueError(f"has a bad {cmd} command")
            self.ascii_delimiter()
            self.p += 1
            self.delimited()
            self.delimited()
            return self.s_flags() if cmd == "s" else None
        if cmd in ("a", "i", "c"):
            self.text_arg()
        elif cmd in ("r", "R"):
            if any(ch in self.to_eol() for ch in ";}"):
                raise ValueError("has a file name that holds ; or }")
        elif cmd in (":", "b", "t", "T"):
            self.label()
        elif cmd in ("l", "L", "q", "Q"):
            self.skip_blank()
            while self.peek().isdigit():
                self.p += 1
        elif cmd == "v":
            self.label()
        elif cmd not in "{}=dDgGhHnNpPxzF":
            raise ValueError(f"has the unknown command {cmd!r}")
        return None

    def run(self) -> str | None:
        while True:
            while self.peek() and self.peek() in " \t\n;":
                self.p += 1
            if not self.peek():
                return None
            if self.peek() == "#":
                self.to_eol()
                continue
            self.address(second=False)
            self.skip_blank()
            if self.peek() == ",":
                self.p += 1
                self.skip_blank()
                self.address(second=True)
            self.skip_blank()
            while self.peek() == "!":
                self.p += 1
                self.skip_blank()
            if not self.peek():
                raise ValueError("is missing a command")
            opens_block = self.peek() == "{"
            problem = self.command()
            if problem:
                return problem
            if opens_block:
                continue
            self.skip_blank()
            if self.peek() and self.peek() not in "\n;}#":
                raise ValueError(f"has unexpected text after a command near {self.peek()!r}")


def sed_script_problem(script: str) -> str | None:
    """Describe why a sed script could write or run something, or return None."""
    try:
        return _SedScan(script).run()
    except (ValueError, IndexError) as exc:
        return f"{exc} and cannot be checked" if str(exc) else "cannot be checked"


# ------------------------------------------------------------------------------- awk

_AWK = Opts(
    short_flags="bcCghMnNOPrsStV",
    short_arg="Fve",
    long_flags=_fs(
        "characters-as-bytes traditional copyright gen-pot help usage bignum "
        "non-decimal-data use-lc-numeric optimize no-optimize posix re-interval sandbox "
        "lint-old version csv"
    ),
    long_arg=_fs("field-separator assign source"),
    long_optarg=_fs("lint"),
    blocked_short={
        "f": "reads its program from a file",
        "E": "reads its program from a file",
        "i": "includes an awk source file",
        "l": "loads an extension library",
        "W": "passes implementation options (mawk -W exec runs a file)",
        "o": "writes a pretty-printed program to a file",
        "p": "writes a profile to a file",
        "d": "writes a variable dump to a file",
        "D": "starts the debugger",
    },
    blocked_long={
        "file": "reads its program from a file",
        "exec": "reads its program from a file",
        "include": "includes an awk source file",
        "load": "loads an extension library",
        "dump-variables": "writes a variable dump to a file",
        "debug": "starts the debugger",
        "pretty-print": "writes a pretty-printed program to a file",
        "profile": "writes a profile to a file",
    },
    strict=True,
)


def rule_awk(cmd: str) -> Callable[[list[Word]], None]:
    """awk/gawk/mawk/nawk: no program file, and a program that cannot run or write."""

    def rule(args: list[Word]) -> None:
        parsed = parse_options(cmd, args, _AWK)
        sources = parsed.values("-e", "--source")
        programs = [v or "" for _, v in sources]
        first_src = min((i for i, _ in sources), default=None)
        files = parsed.operands
        if parsed.operands and (first_src is None or parsed.operands[0][0] < first_src):
            programs.append(require_static(cmd, parsed.operands[0][1], "program"))
            files = parsed.operands[1:]
        for _, word in files:
            # gawk opens a file operand named /inet/tcp/… as a network connection. A glob
            # only matches existing files (there is no /inet), but an expansion or a brace
            # ({/in,x}et/…) can spell the name, even after `--`.
            if word.value is None or word.brace:
                raise Blocked(
                    f"the file operand {_short(word.src)} of {cmd} is not a literal, and gawk "
                    "opens /inet/… names as network connections",
                    "Name the input files literally.",
                )
            value = word.value
            if "/inet" in value:
                raise Blocked(f"{cmd} {_short(value)} opens a network connection (gawk /inet)")
        # gawk joins its -e sources into one program, so a statement can start in one -e
        # and end in the next: check them joined, the way gawk reads them.
        problem = awk_program_problem("\n".join(programs)) if programs else None
        if problem:
            raise Blocked(f"the {cmd} program {problem}", "Print to stdout only.")

    return rule


_AWK_OPERAND_END = frozenset({")", "]"})
_AWK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_NUMBER = re.compile(r"[0-9.]+(?:[eE][-+]?[0-9]+)?")
_AWK_EXPR_KEYWORDS = _fs("return in case do else if while for delete exit printf print")


_AWK_BLOCKED_NAMES: dict[str, str] = {
    "system": "calls system(), which runs a shell command",
    "extension": "calls extension(), which loads a library",
    # gawk opens every ARGV entry as an input file, /inet/tcp/… included, and SYMTAB
    # reaches ARGV indirectly: a program that can change them can open the network.
    "ARGV": "uses ARGV, whose entries gawk opens as input files (/inet/… opens the network)",
    "SYMTAB": "uses SYMTAB, which reaches every variable (ARGV included) indirectly",
}
# After one of these a newline cannot end a statement (it ends only after an operand):
# awk continues a statement over a newline after , { && || do else, and gawk after ? :.
_AWK_TARGET_END = frozenset(");}\n#<>=!&|,")


class _AwkScan:
    """A small awk lexer: strings and regex literals are skipped, code is searched.

    A print/printf statement stays "open" (so a `>` at its paren depth is an output
    redirection) until a `;`, a brace, or a newline that can end a statement: a newline
    right after an operand. After anything else (`,`, `&&`, `||`, `?`, `:`, `{`, `do`,
    `else`, an operator) awk continues the statement on the next line, so the scanner
    does too. Likewise a getline stays open until its expression ends, and every `<` in
    it must be followed by one plain string literal (no escapes, no /inet, nothing
    concatenated to it).
    """

    def __init__(self, text: str) -> None:
        self.t = text
        self.p = 0
        self.depth = 0
        self.print_depth: int | None = None
        self.getline_depth: int | None = None
        self.operand = False  # was the previous token an operand (so / means division)?

    def string(self) -> str:
        start = self.p
        self.p += 1
        while self.p < len(self.t):
            c = self.t[self.p]
            if c == "\\":
                self.p += 2
                continue
            if c == "\n":
                break
            self.p += 1
            if c == '"':
                return self.t[start : self.p]
        raise ValueError("has an unterminated string")

    def regex(self) -> None:
        self.p += 1
        while self.p < len(self.t):
            c = self.t[self.p]
            if c == "\\":
                self.p += 2
                continue
            if c == "\n":
                break
            self.p += 1
            if c == "/":
                return
        raise ValueError("has an unterminated regular expression")

    def division(self) -> None:
        """A / read as division: refuse when a regex reading would hide code differently."""
        end = self.t.find("/", self.p + 1)
        nl = self.t.find("\n", self.p + 1)
        if nl >= 0 and (end < 0 or nl < end):
            end = nl
        ahead = self.t[self.p + 1 : end if end >= 0 else len(self.t)]
        if '"' in ahead or "#" in ahead:
            raise ValueError("has a / that could start a regular expression")
        self.p += 1
        self.operand = False

    def word(self) -> str | None:
        m = _AWK_NAME.match(self.t, self.p)
        if m is None:
            raise ValueError("has a malformed name")
        self.p = m.end()
        name = m.group()
        if name in _AWK_BLOCKED_NAMES:
            return _AWK_BLOCKED_NAMES[name]
        if name in ("print", "printf"):
            self.print_depth = self.depth
        if name == "getline":
            self.getline_depth = self.depth
        self.operand = name not in _AWK_EXPR_KEYWORDS
        return None

    def punct(self, c: str) -> str | None:
        nxt = self.t[self.p + 1 : self.p + 2]
        if c == "|":
            if nxt == "|":
                self.p += 2
                self.operand = False
                return None
            return "uses a | pipe, which runs a command"
        if c == "@":
            return "uses @ (@load, @include or an indirect call)"
        if c == ">" and self.print_depth is not None and self.depth == self.print_depth:
            return "redirects print output with >, which writes a file"
        if c == "<" and self.getline_depth is not None and self.depth >= self.getline_depth:
            return self.getline_target()
        if c in "([":
            self.depth += 1
        elif c in ")]":
            self.depth -= 1
            if self.getline_depth is not None and self.depth < self.getline_depth:
                self.getline_depth = None
        elif c in "{};":
            self.end_statement()
        if c in "+-" and nxt == c:
            self.p += 2
            self.operand = True
            return None
        self.p += 1
        self.operand = c in _AWK_OPERAND_END
        return None

    def end_statement(self) -> None:
        self.print_depth = None
        self.getline_depth = None

    def getline_target(self) -> str | None:
        """Check `getline … < TARGET`: TARGET must be one plain string literal."""
        t = self.t
        j = self.p + 1
        while t[j : j + 1] in (" ", "\t"):
            j += 1
        if t[j : j + 1] != '"':
            return "reads with getline from a file name that is not a plain string literal"
        self.p = j
        lit = self.string()
        if "\\" in lit:
            return "reads with getline from a file name with escape sequences"
        if "/inet" in lit:
            return "names a /inet special file, which opens a network connection"
        k = self.p
        while t[k : k + 1] in (" ", "\t"):
            k += 1
        if k < len(t) and t[k] not in _AWK_TARGET_END:
            return "builds a getline file name from several parts (it could spell /inet/…)"
        self.operand = True
        return None

    def run(self) -> str | None:
        t = self.t
        while self.p < len(t):
            c = t[self.p]
            if c in " \t\r":
                self.p += 1
            elif c == "\\" and t[self.p + 1 : self.p + 2] == "\n":
                self.p += 2
            elif c == "\n":
                self.p += 1
                if self.operand:  # only a newline after an operand can end a statement
                    self.end_statement()
                self.operand = False
            elif c == "#":
                nl = t.find("\n", self.p)
                self.p = len(t) if nl < 0 else nl
            elif c == '"':
                lit = self.string()
                if "/inet" in lit:
                    return "names a /inet special file, which opens a network connection"
                self.operand = True
            elif c == "/":
                if self.operand:
                    self.division()
                else:
                    self.regex()
                    self.operand = True
            elif c.isalpha() or c == "_":
                problem = self.word()
                if problem:
                    return problem
            elif c.isdigit() or c == ".":
                m = _AWK_NUMBER.match(t, self.p)
                self.p = m.end() if m and m.end() > self.p else self.p + 1
                self.operand = True
            elif c == "$":
                self.p += 1
                self.operand = False
            elif c in "|@<>=!~+-*%^?:,&(){}[];":
                problem = self.punct(c)
                if problem:
                    return problem
            else:
                raise ValueError(f"has the unexpected character {c!r}")
        return None


def awk_program_problem(program: str) -> str | None:
    """Describe why an awk program could run, load or write something, or return None."""
    try:
        return _AwkScan(program).run()
    except (ValueError, IndexError) as exc:
        return f"{exc} and cannot be checked" if str(exc) else "cannot be checked"


# ------------------------------------------------------------------------------- git

GIT_READ_SUBCOMMANDS = _fs(
    "status log show diff blame shortlog describe rev-parse rev-list ls-files ls-tree "
    "cat-file grep merge-base name-rev show-ref for-each-ref count-objects whatchanged "
    "diff-tree diff-files diff-index check-ignore version show-branch"
)
GIT_LIST_SUBCOMMANDS = _fs(
    "branch tag remote stash reflog worktree notes submodule sparse-checkout cherry var"
)
_GIT_BLOCKED_LONG: dict[str, str] = {
    "output": "writes a file",
    "ext-diff": "runs the configured external diff program",
    "textconv": "runs the configured textconv programs",
    "open-files-in-pager": "runs a program on the matches",
    "help": "starts man",
    "filters": "runs the repository's content filters",
}
_GIT_SAFE_EXACT = _fs("text")  # --text (diff -a) is a prefix of --textconv but is its own option
# Options that are known to take no separate value in every read subcommand; a `--` after
# anything else might be that option's value, so checking continues past it.
_GIT_NO_VALUE = _fs(
    "-p -u -s -w -b -a -z -r -t -q -l -i -v -c -d -g -W -E -F -P -M -R -D -H -h -o -I "
    "--cached --staged --stat --shortstat --numstat --name-only --name-status --oneline "
    "--patch --no-patch --follow --all --graph --decorate --no-color --color --summary "
    "--raw --reverse --merges --no-merges --first-parent --full-history --no-renames "
    "--quiet --exit-code --no-index --ignore-all-space --ignore-space-change --word-diff "
    "--abbrev-commit --relative --minimal --histogram --patience --full-index --binary "
    "--check --text --no-ext-diff --no-textconv --source --date-order --topo-order "
    "--no-walk --boundary --left-right --cherry-pick --ignored --porcelain --short "
    "--long --verbose --count --untracked --others --modified --deleted --tags --heads "
    "--verify --stdin --recursive --no-recursive --line-number --files-with-matches "
    "--ignore-case --invert-match --word-regexp --extended-regexp --fixed-strings "
    "--perl-regexp --untracked-files --show-toplevel --show-prefix --git-dir "
    "--is-inside-work-tree --abbrev-ref --symbolic-full-name --root"
)
_GIT_FIX = "Use a read-only git subcommand such as status, log, show or diff."


def rule_git(args: list[Word]) -> None:
    """git: global options, a read subcommand, and no option that writes or runs programs."""
    i = 0
    while i < len(args):
        require_safe_arg("git", args[i])
        v = args[i].value or ""
        if v in ("--no-pager", "-P"):
            i += 1
        elif v == "-C":
            if i + 1 >= len(args):
                raise Blocked("git -C needs a directory", "Give the directory after -C.")
            require_safe_arg("git", args[i + 1])
            i += 2
        elif v.startswith("-"):
            raise Blocked(
                f"the global git option {_short(v)} is not allowed (global options such as "
                "-c, --exec-path and -p can make git run other programs)",
                "Only --no-pager, -P and -C <dir> may come before the subcommand.",
            )
        else:
            break
    else:
        raise Blocked("git without a subcommand is not a read", _GIT_FIX)
    sub = args[i].value or ""
    rest = args[i + 1 :]
    if sub == "config":
        _git_config([w.value or "" for w in rest])
        return
    if sub == "help":
        raise Blocked("git help starts man or a browser", "Describe what you need in the plan.")
    if sub not in GIT_READ_SUBCOMMANDS and sub not in GIT_LIST_SUBCOMMANDS:
        raise Blocked(f"git {_short(sub)} is not a read-only git subcommand", _GIT_FIX)
    _git_options(sub, rest)
    checker = _GIT_LIST_CHECKS.get(sub)
    if checker is not None:
        # Every word, `--` and what follows included: `git tag -- v1` creates v1, and
        # `git remote -- add x y` adds a remote, so the name after `--` counts.
        checker([w.value or "" for w in rest])


_CONFIG_MODES = {"--get": 2, "--get-all": 2, "--get-regexp": 2, "-l": 0, "--list": 0}
_CONFIG_READ_FLAGS = frozenset(
    "--show-origin --show-scope --null -z --name-only --local --global --system --worktree "
    "--includes --no-includes".split()
)
_CONFIG_FIX = "Use git config --get NAME, git config --get-regexp PATTERN or git config --list."


def _git_config(words: list[str]) -> None:
    """git config: only the explicit read modes --get, --get-all, --get-regexp and -l.

    Whether `git config` reads or writes depends on the argument count (`git config a.b`
    reads, `git config a.b c` writes) and on many flags (--add, --unset, --edit opens an
    editor, --file and --blob pick another file), so the bare form stays blocked and only
    an explicit read mode, spelled out in full, with a few display flags and at most the
    name and value-pattern operands it takes, is allowed. The reads run no program.
    """
    modes, operands, after_dashdash = [], 0, False
    for word in words:
        if after_dashdash or not word.startswith("-"):
            operands += 1
        elif word == "--":
            after_dashdash = True
        elif word in _CONFIG_MODES:
            modes.append(word)
        elif word not in _CONFIG_READ_FLAGS:
            raise Blocked(f"git config {_short(word)} is not a read-only option", _CONFIG_FIX)
    if len(modes) != 1:
        raise Blocked(
            "git config without exactly one of --get, --get-all, --get-regexp or --list "
            "may write (git config NAME VALUE sets a value)",
            _CONFIG_FIX,
        )
    limit = _CONFIG_MODES[modes[0]]
    if operands > limit or (limit and operands == 0):
        raise Blocked(
            f"git config {modes[0]} takes {'no operand' if not limit else 'a name and at most a value pattern'}",
            _CONFIG_FIX,
        )


def _git_options(sub: str, rest: list[Word]) -> None:
    """Check the words after a git subcommand for options that write or run programs."""
    uncertain = False
    for word in rest:
        require_safe_arg(f"git {sub}", word)
        v = word.value
        if v is None or v == "-" or not v.startswith("-"):
            uncertain = False
            continue
        if v == "--":
            if not uncertain:
                return
            uncertain = False
            continue
        if v.startswith("--"):
            name, eq, _ = v[2:].partition("=")
            _git_long(sub, name)
            uncertain = not eq and v not in _GIT_NO_VALUE
            continue
        if sub == "grep" and "O" in v[1:]:
            raise Blocked(f"git {sub} -O opens the matches in a pager program")
        # Elsewhere (diff, log, show, …) -O<orderfile> only reads the order file.
        uncertain = v not in _GIT_NO_VALUE


def _git_long(sub: str, name: str) -> None:
    if name in _GIT_SAFE_EXACT or name.startswith("output-indicator-"):
        return
    if name.startswith("output"):
        raise Blocked(f"git {sub} --{name} writes files")
    for full, why in _GIT_BLOCKED_LONG.items():
        if full.startswith(name):
            shown = f"--{name}" if name == full else f"--{name} (an abbreviation of --{full})"
            raise Blocked(f"git {sub} {shown} {why}")


_LIST_MODE = _fs("-l --list --contains --no-contains --merged --no-merged --points-at")
_REF_FILTERS = _fs("--contains --no-contains --merged --no-merged")  # optional next-word value
_REQUIRED_VALUE = _fs("--points-at --sort --format")


def _list_form(cmd: str, words: list[str], flags: frozenset[str], short: str) -> None:
    """Allow only listing options; positional patterns need an explicit list mode."""
    listing, positional, i = False, False, 0
    while i < len(words):
        v = words[i]
        i += 1
        if v == "--":  # everything after it is a name or pattern, never an option
            positional = positional or i < len(words)
            break
        name = v.partition("=")[0]
        if name in _REF_FILTERS | _REQUIRED_VALUE and "=" not in v:
            takes_next = name in _REQUIRED_VALUE or (
                i < len(words) and not words[i].startswith("-")
            )
            i += 1 if takes_next else 0
        elif v.startswith("--") and name not in flags | _REF_FILTERS | _REQUIRED_VALUE:
            raise Blocked(f"git {cmd} {_short(v)} is not a listing option", _GIT_FIX)
        elif v.startswith("-") and not v.startswith("--"):
            if cmd == "tag" and re.fullmatch(r"-n[0-9]*", v):
                listing = True
                continue
            if not re.fullmatch(f"-[{short}]+", v):
                raise Blocked(f"git {cmd} {_short(v)} is not a listing option", _GIT_FIX)
            listing = listing or "l" in v
            continue
        elif not v.startswith("-"):
            positional = True
            continue
        listing = listing or name in _LIST_MODE
    if positional and not listing:
        raise Blocked(
            f"git {cmd} with a name creates a {cmd}",
            f"Use git {cmd} --list <pattern> to list.",
        )


def _git_branch(words: list[str]) -> None:
    flags = _fs(
        "--all --remotes --verbose --list --show-current --ignore-case --no-color "
        "--no-column --no-abbrev --omit-empty --color --column --abbrev"
    )
    _list_form("branch", words, flags, "arvli")


def _git_tag(words: list[str]) -> None:
    flags = _fs("--list --ignore-case --no-column --no-color --color --column --omit-empty")
    _list_form("tag", words, flags, "li")


def _git_remote(words: list[str]) -> None:
    rest = [w for w in words if w not in ("-v", "--verbose")]
    if "--" in rest:
        raise Blocked(
            "git remote with -- is not a listing form (`git remote -- add …` adds a remote)",
            "Use git remote -v or git remote get-url <name>.",
        )
    if not rest:
        return
    if rest[0] == "get-url":
        names = [w for w in rest[1:] if w not in ("--push", "--all")]
        if len(names) <= 1 and not any(n.startswith("-") for n in names):
            return
    raise Blocked(
        f"git remote {_short(' '.join(rest))} is not a listing form",
        "Use git remote -v or git remote get-url <name>.",
    )


# `git stash list` runs a child `git log` and `git reflog` runs log in-process; with -p,
# --stat, -S, -L and the like they compute diffs, and a child git escapes the shim (so the
# repository's textconv programs run). Only these options, which cannot produce a diff:
_LOG_SAFE_FLAGS = _fs(
    "--oneline --abbrev-commit --no-abbrev-commit --no-abbrev --relative-date --decorate "
    "--no-decorate --color --no-color --date-order --topo-order --first-parent --no-merges "
    "--merges -z -i --regexp-ignore-case --walk-reflogs -g --pretty --format"
)
_LOG_SAFE_VALUED = _fs(
    "--max-count --skip --date --pretty --format --grep --author --committer --since "
    "--until --after --before"
)
_LOG_SAFE_EQ_ONLY = _fs("--abbrev --decorate --color")


def _log_safe_options(cmd: str, words: list[str], positional_ok: bool) -> list[str]:
    """Check log options against the allowlist above; return the positional words."""
    positionals: list[str] = []
    i = 0
    while i < len(words):
        v = words[i]
        i += 1
        name, eq, _ = v.partition("=")
        if v in _LOG_SAFE_FLAGS or re.fullmatch(r"-[0-9]+|-n[0-9]+", v):
            continue
        if v == "-n" or (name in _LOG_SAFE_VALUED and not eq):
            if i >= len(words) or words[i] == "--":
                raise Blocked(f"git {cmd} {v} needs a value", "Give it a value.")
            i += 1
            continue
        if eq and (name in _LOG_SAFE_VALUED or name in _LOG_SAFE_EQ_ONLY):
            continue
        if v.startswith("-"):
            raise Blocked(
                f"git {cmd} {_short(v)} is not allowed here (only options that cannot "
                "produce a diff: a diff would run outside planshell's git hardening)",
                f"Use git {cmd} with --oneline, -n N or --format, or git log -g for details.",
            )
        if not positional_ok:
            raise Blocked(f"git {cmd} takes no argument {_short(v)} here", f"Run git {cmd}.")
        positionals.append(v)
    return positionals


_STASH_SHOW_SAFE = _fs(
    "--stat --numstat --shortstat --name-only --name-status --summary --include-untracked "
    "-u --only-untracked --no-color --color"
)


def _git_stash(words: list[str]) -> None:
    if not words or words[0] not in ("list", "show"):
        raise Blocked("git stash without list or show changes the stash", "Use git stash list.")
    if words[0] == "list":
        _log_safe_options("stash list", words[1:], positional_ok=False)
        return
    # stash show: summaries only (-p and other diff options can run textconv programs).
    refs = [w for w in words[1:] if w not in _STASH_SHOW_SAFE]
    if len(refs) > 1 or any(r.startswith("-") for r in refs):
        raise Blocked(
            f"git stash show {_short(' '.join(refs))} is not allowed (only --stat, "
            "--name-only, --name-status, --numstat, --shortstat and a stash)",
            "Use git stash show --stat [stash@{N}].",
        )


_REFLOG_SUBCOMMANDS = _fs("expire delete exists drop write list")


def _git_reflog(words: list[str]) -> None:
    args = words[1:] if words[:1] == ["show"] else words
    for ref in _log_safe_options("reflog", args, positional_ok=True):
        if ref in _REFLOG_SUBCOMMANDS or ref == "show":
            raise Blocked(
                "git reflog is only allowed bare or as git reflog show", "Use git reflog show."
            )


def _git_worktree(words: list[str]) -> None:
    if (
        not words
        or words[0] != "list"
        or any(w not in ("--porcelain", "-v", "--verbose", "-z") for w in words[1:])
    ):
        raise Blocked("git worktree is only allowed as git worktree list", "Use git worktree list.")


def _git_notes(words: list[str]) -> None:
    """git notes [--ref=R] [list [OBJECT]]: every other notes subcommand writes or runs."""
    rest = list(words)
    if rest[:1] == ["--ref"] and len(rest) >= 2:
        rest = rest[2:]
    elif rest[:1] and rest[0].startswith("--ref="):
        rest = rest[1:]
    if rest[:1] == ["list"]:
        rest = rest[1:]
    elif rest:
        raise Blocked("git notes is only allowed as git notes list", "Use git notes list.")
    if len(rest) > 1 or any(w.startswith("-") for w in rest):
        raise Blocked("git notes list takes at most one object", "Use git notes list [OBJECT].")


def _git_submodule(words: list[str]) -> None:
    """git submodule status [--cached] [-- paths]: compares gitlinks with submodule HEADs.

    It starts only `git describe` inside each submodule (refs only, with planshell's config
    overrides in its environment). --recursive runs a whole `git submodule status` inside
    every submodule, whose own configuration planshell's shim does not neutralise.
    """
    if not words or words[0] != "status":
        raise Blocked(
            "git submodule is only allowed as git submodule status", "Use git submodule status."
        )
    for w in words[1:]:
        if w == "--":
            return
        if w.startswith("-") and w not in ("--cached", "-q", "--quiet"):
            raise Blocked(
                f"git submodule status {_short(w)} is not allowed (--recursive runs git "
                "inside every submodule)",
                "Use git submodule status [--cached].",
            )


def _git_sparse_checkout(words: list[str]) -> None:
    if words != ["list"]:
        raise Blocked(
            "git sparse-checkout is only allowed as git sparse-checkout list",
            "Use git sparse-checkout list.",
        )


def _git_cherry(words: list[str]) -> None:
    """git cherry [-v] [--abbrev[=N]] [upstream [head [limit]]]: patch ids, no output diff."""
    names = [w for w in words if not (w in ("-v", "--abbrev") or w.startswith("--abbrev="))]
    if len(names) > 3 or any(w.startswith("-") for w in names):
        raise Blocked(
            "git cherry only takes -v, --abbrev and up to three commits",
            "Use git cherry -v [upstream [head]].",
        )


def _git_var(words: list[str]) -> None:
    """git var -l or git var GIT_NAME: prints configuration and identity values."""
    if words == ["-l"] or (len(words) == 1 and re.fullmatch(r"GIT_[A-Z_]+", words[0])):
        return
    raise Blocked("git var takes exactly -l or one GIT_* name", "Use git var -l.")


_GIT_LIST_CHECKS: dict[str, Callable[[list[str]], None]] = {
    "branch": _git_branch,
    "tag": _git_tag,
    "remote": _git_remote,
    "stash": _git_stash,
    "reflog": _git_reflog,
    "worktree": _git_worktree,
    "notes": _git_notes,
    "submodule": _git_submodule,
    "sparse-checkout": _git_sparse_checkout,
    "cherry": _git_cherry,
    "var": _git_var,
}


# ------------------------------------------------------------------------ test and [

_SUBSCRIPT_OPS = frozenset({"-v", "-R"})


def _may_be_subscript_op(word: Word) -> bool:
    """Could this word be `-v` or `-R` when test runs?"""
    if word.value is not None and not (word.glob or word.brace):
        return word.value in _SUBSCRIPT_OPS
    if word.glob and not word.brace and word.value is not None:
        return word.risky_glob  # a glob with a literal prefix such as src/ never matches -v
    return True


def _may_hold_subscript(word: Word) -> bool:
    """Could this word hold an array subscript (a `[`) when test runs?"""
    return not word.static or "[" in (word.value or "")


def rule_test(cmd: str) -> Callable[[list[Word]], None]:
    """test and [: `-v NAME[SUB]` (and `-R`) make bash evaluate SUB, which runs `$(…)`.

    bash evaluates the subscript of `-v`/`-R`'s operand as arithmetic (indexed arrays) or
    expands it (associative arrays), so `test -v 'x[$(id)]'` runs id, and so does
    `test -v 'x[y]'` when the variable y holds `$(id)`. The operand of a unary operator is
    always the word right after it, so a command is blocked when a word that could be -v/-R
    is followed by a word that could hold a `[`. A word that may split into several words
    at run time (an unquoted expansion, "$@", a glob, a brace expansion) can shift every
    position, so one such word blocks when any word could be -v/-R and any could hold `[`.
    The other test operators never evaluate their operands: -eq and friends take only
    plain integers in the test builtin ("integer expression expected"), unlike [[ ]].
    """

    def rule(args: list[Word]) -> None:
        words = list(args)
        if cmd == "[" and words and words[-1].static and words[-1].value == "]":
            words = words[:-1]
        why = (
            f"{cmd} -v (or -R) makes bash evaluate an array subscript, which can run a "
            "command substitution"
        )
        fix = "Test a plain variable name (no [ ]), written literally."
        if any(w.split or w.glob or w.brace for w in words):
            if any(map(_may_be_subscript_op, words)) and any(map(_may_hold_subscript, words)):
                raise Blocked(why, fix)
            return
        for op, operand in itertools.pairwise(words):
            if _may_be_subscript_op(op) and _may_hold_subscript(operand):
                raise Blocked(why, fix)

    return rule


# ---------------------------------------------------------------------------- [[ ]]

_COND_ARITH = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = re.compile(r"[+-]?[0-9]+")


def check_cond(items: list[Word | str]) -> None:
    """``[[ … ]]`` (policy v2): file and string tests only.

    ``items`` are the words between ``[[`` and ``]]``, with ``&& || ( ) < >`` as plain
    strings. bash picks the operators of ``[[`` when it parses, before any expansion, so an
    expansion is always an operand, never an operator. Two kinds of operator evaluate their
    operand as code: ``-v``/``-R`` (an array subscript runs ``$(…)``) and the arithmetic
    comparisons ``-eq``…``-ge`` (bash evaluates both sides as arithmetic, where a name's
    value is evaluated again). The latter are allowed only between two integer literals.
    """
    for index, item in enumerate(items):
        if isinstance(item, str):
            continue
        value = item.value if item.static else None
        if value in _SUBSCRIPT_OPS:
            raise Blocked(
                f"[[ {value} ]] makes bash evaluate an array subscript, which can run a "
                "command substitution",
                "Test the value with -n or -z instead.",
            )
        if value in _COND_ARITH:
            around = items[index - 1 : index] + items[index + 1 : index + 2]
            if len(around) != 2 or not all(
                isinstance(w, Word) and w.static and _INTEGER.fullmatch(w.value or "")
                for w in around
            ):
                raise Blocked(
                    f"[[ … {value} … ]] evaluates both sides as arithmetic, where a name's "
                    "value runs as code; only integer literals are allowed there",
                    "Compare strings with == instead, or use literal numbers.",
                )


# ---------------------------------------------------------- process secrets (/proc)

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
            raise Blocked(f"{name} {_short(word.src)}: {problem}", _FIX_PROC)


# ------------------------------------------------------------- prefix assignments

# A fixed locale or time zone only changes how an allowed command formats or sorts its
# output. The values are names, never paths: glibc reads locales from its own archive and
# zone files from /usr/share/zoneinfo, and neither runs code. Every other variable is
# refused (PATH, LD_*, GIT_*, PAGER, EDITOR, BASH_ENV, … change what runs).
_LOCALE_NAMES = frozenset(
    "LANG LC_ALL LC_COLLATE LC_CTYPE LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME".split()
)
_LOCALE_VALUE = re.compile(r"[A-Za-z0-9_.@-]{1,40}")
_TZ_VALUE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{0,30}(?:/[A-Za-z][A-Za-z0-9_+-]{0,30}){0,2}")


def check_prefix_assignment(text: str | None) -> None:
    """Allow ``LC_ALL=C`` or ``TZ=UTC`` before a command; refuse every other assignment."""
    name, eq, value = (text or "").partition("=")
    ok = bool(eq) and (
        (name in _LOCALE_NAMES and _LOCALE_VALUE.fullmatch(value) is not None)
        or (name == "TZ" and _TZ_VALUE.fullmatch(value) is not None)
    )
    if not ok:
        raise Blocked(
            "variable assignments are not allowed (they can change what a command runs); "
            "only a literal locale (LC_ALL=C, LANG=C.UTF-8) or time zone (TZ=UTC) may "
            "prefix a command",
            "Drop the assignment.",
        )


# ------------------------------------------------------------- lookups and system info


def rule_env(args: list[Word]) -> None:
    """env: with no argument it prints the environment; with any it runs a program."""
    if args:
        raise Blocked("env with arguments runs a program", "Run plain env or printenv NAME.")


def rule_hash(args: list[Word]) -> None:
    """hash: no argument lists the table; `hash NAME`, -p, -d and -r change it."""
    if args:
        raise Blocked("hash with arguments changes the shell's command table", "Run plain hash.")


def rule_command(args: list[Word]) -> None:
    """command: only `command -v` / `command -V`, which look a name up and run nothing.

    bash reads command's options (-p, -v, -V) only from its leading words, and once -v or
    -V is among them it describes the names instead of running them, whatever follows.
    """
    if not args or args[0].value not in ("-v", "-V") or not args[0].static:
        raise Blocked(
            "command runs the program named by its arguments",
            "Use command -v NAME or type NAME to look a command up.",
        )


_PS_UNIX_FLAGS = frozenset("AadefFHjlLMNTwyZcPmVX")  # procps -x letters without a value
_PS_UNIX_VALUE = frozenset("CGgpqstuUoOkD")
_PS_BSD_VALUE = frozenset("pqtUoOk")
_PS_LONG_VALUE = frozenset(
    "pid ppid sid tty user User group Group format sort cols columns lines rows width "
    "quick-pid date-format".split()
)
_FIX_PS = "Use ps aux, ps -ef or ps -o pid,args (the environment of processes is off limits)."


def _ps_format(fmt: str) -> None:
    """Refuse a format that shows the environment (procps' hidden `environ` keyword)."""
    for keyword in re.split(r"[,\s]+", fmt):
        name = re.split(r"[=:]", keyword, maxsplit=1)[0].lower()
        if name.startswith("env"):
            raise Blocked(
                f"ps -o {_short(keyword)} prints every process's environment, planshell's "
                "API keys included",
                _FIX_PS,
            )


def rule_ps(args: list[Word]) -> None:
    """ps: reads /proc only, but BSD `e` and the `environ` format print environments.

    procps shows every process's environment (planshell's API keys included) with the BSD
    modifier `e` (`ps axeww`, `ps aux e`) and the format keyword `environ`. A dash cluster
    with a letter that is no UNIX option falls back to BSD parsing (`ps -aex` is `ps aex`),
    so an `e` there counts too; `-e` among UNIX letters only selects every process.
    Arguments must be literal, so a run-time value cannot inject anything doubtful.
    """
    env_why = "ps e prints every process's environment, planshell's API keys included"
    pending: str | None = None  # the option whose value the next word is
    for word in args:
        v = require_static("ps", word, "argument")
        if pending is not None:
            if pending in ("o", "O", "format"):
                _ps_format(v)
            pending = None
            continue
        if v.startswith("--"):
            name, eq, value = v[2:].partition("=")
            is_format = len(name) >= 2 and "format".startswith(name)
            if is_format or name in _PS_LONG_VALUE:
                if eq:
                    if is_format:
                        _ps_format(value)
                else:
                    pending = "format" if is_format else name
            continue
        dash = v.startswith("-")
        letters = v[1:] if dash else v
        for j, c in enumerate(letters):
            if c in (_PS_UNIX_VALUE if dash else _PS_BSD_VALUE):
                head, rest = letters[:j], letters[j + 1 :]
                if rest:
                    if c in "oO":
                        _ps_format(rest)
                    elif "e" in rest and dash:
                        raise Blocked(env_why, _FIX_PS)  # -auxe: procps may re-read it as BSD
                else:
                    pending = c
                break
        else:
            head = letters
        if "e" in head and (not dash or not set(head) <= _PS_UNIX_FLAGS):
            raise Blocked(env_why, _FIX_PS)


def rule_pgrep(args: list[Word]) -> None:
    """pgrep: lists matching pids and names; its signal options belong to pkill."""
    for word in args:
        v = require_static("pgrep", word, "argument")
        if v.startswith("--sig") or re.fullmatch(r"-[0-9]+|-[A-Z]+[0-9]*", v):
            raise Blocked("pgrep with a signal is pkill's job", "Use pgrep to list only.")


def rule_decompress_cat(cmd: str) -> Callable[[list[Word]], None]:
    """zcat, bzcat, xzcat: plain file operands only.

    Each runs its decompressor with -dc, which writes only to stdout. Their options could
    change that meaning (xz --files=, bzip2 -z), so none is allowed; `--` is fine.
    """

    def rule(args: list[Word]) -> None:
        for word in args:
            require_safe_arg(cmd, word)
            if word.value == "--":
                return
            if word.value is not None and word.value.startswith("-") and word.value != "-":
                raise Blocked(
                    f"{cmd} takes no options here ({_short(word.value)})", "Drop the option."
                )

    return rule


def rule_xz(args: list[Word]) -> None:
    """xz: only `xz -dc FILE…` (decompress to stdout); every other mode writes files."""
    flags: set[str] = set()
    for i, word in enumerate(args):
        require_safe_arg("xz", word)
        v = word.value or ""
        if v == "--":
            args = args[i + 1 :]
            break
        if v.startswith("--"):
            long = {
                "--decompress": "d",
                "--uncompress": "d",
                "--stdout": "c",
                "--to-stdout": "c",
                "--keep": "k",
                "--quiet": "q",
                "--verbose": "v",
            }
            if v not in long:
                raise Blocked(f"xz {_short(v)} is not allowed", "Use xz -dc FILE.")
            flags.add(long[v])
        elif v.startswith("-") and v != "-":
            if not set(v[1:]) <= set("dckqv"):
                raise Blocked(f"xz {_short(v)} is not allowed", "Use xz -dc FILE.")
            flags |= set(v[1:])
    if not {"d", "c"} <= flags:
        raise Blocked(
            "xz without both -d and -c writes a file next to its input", "Use xz -dc FILE."
        )


def rule_zgrep(args: list[Word]) -> None:
    """zgrep: a shell script around gzip and grep; literal words only.

    zgrep builds a sed and grep command line from its arguments (CVE-2022-1271 wrote
    files through a crafted name), so every word must be literal, without a glob that
    could pick up such a name, and free of newlines.
    """
    for word in args:
        value = require_static("zgrep", word, "argument")
        if "\n" in value:
            raise Blocked("zgrep gets an argument with a newline", "Use a one-line pattern.")


_XXD_VALUE = frozenset("-c -g -l -s -o -n -R".split())  # they take the next word


def rule_xxd(args: list[Word]) -> None:
    """xxd: a hex dump to stdout; -r (any option starting so) reverts, and a second
    operand is an output file it writes (`xxd in out`)."""
    operands = 0
    skip = False
    for word in args:
        value = require_static("xxd", word, "argument")
        if skip:
            skip = False
            continue
        if value.startswith("-r"):
            raise Blocked("xxd -r turns a dump back into a binary file", "Drop -r.")
        if value in _XXD_VALUE:
            skip = True
        elif not value.startswith("-") or value == "-":
            operands += 1
    if operands > 1:
        raise Blocked("xxd writes its second operand (the output file)", "Pass one input file.")


def rule_unzip(args: list[Word]) -> None:
    """unzip: only the listing (-l) or testing (-t) modes; by default it extracts."""
    modes: set[str] = set()
    for word in args:
        value = require_static("unzip", word, "argument")
        if value.startswith("-"):
            if not re.fullmatch(r"-[lvqt]+", value):
                raise Blocked(f"unzip {_short(value)} is not allowed", "Use unzip -l FILE.zip.")
            modes |= set(value[1:]) & {"l", "t"}
    if not modes:
        raise Blocked("unzip without -l or -t extracts files", "Use unzip -l FILE.zip.")


_TAR_LONG = frozenset(
    "--list --verbose --gzip --gunzip --ungzip --bzip2 --xz --zstd --auto-compress "
    "--numeric-owner --utc --full-time --wildcards --no-wildcards".split()
)
_TAR_FIX = "Use tar -tf FILE.tar (or tar -tzf FILE.tar.gz) to list an archive."


def rule_tar(args: list[Word]) -> None:
    """tar: only listing an archive (-t), with a local archive name.

    tar runs programs with -I/--use-compress-program, --to-command, --checkpoint-action,
    -F/--info-script and --rsh-command (a `host:file` archive starts a remote shell), and
    writes files with --index-file, --volno-file and every mode but -t; so only a short
    list of letters and long options is allowed, spelled out in full.
    """
    listing, pending_file = False, False
    for index, word in enumerate(args):
        value = require_static("tar", word, "argument")
        if pending_file:
            _tar_archive(value)
            pending_file = False
            continue
        if value.startswith("--"):
            name, eq, rest = value.partition("=")
            if name == "--file":
                if eq:
                    _tar_archive(rest)
                else:
                    pending_file = True
                continue
            if name not in _TAR_LONG or eq:
                raise Blocked(f"tar {_short(value)} is not allowed", _TAR_FIX)
            listing = listing or name == "--list"
            continue
        letters = value[1:] if value.startswith("-") else (value if index == 0 else "")
        if not letters:
            continue  # a member name to list
        for j, c in enumerate(letters):
            if c not in "tvfzjJa":
                raise Blocked(f"tar -{c} is not allowed (only listing)", _TAR_FIX)
            listing = listing or c == "t"
            if c == "f":
                attached = letters[j + 1 :] if value.startswith("-") else ""
                if attached:
                    _tar_archive(attached)
                else:
                    pending_file = True
                break
    if not listing:
        raise Blocked("tar without -t creates or extracts an archive", _TAR_FIX)


def _tar_archive(name: str) -> None:
    if ":" in name:
        raise Blocked(
            "tar reads an archive named host:file through a remote shell", "Name a local file."
        )


def rule_no_operands(cmd: str, flags: str, longs: str = "") -> Callable[[list[Word]], None]:
    """uptime, tty, lsb_release, jobs, ulimit: options from a fixed set, no operand.

    They print system or shell information. An operand would make them do something else
    (`ulimit -n 10` sets a limit), and jobs -x runs a command, so only the listed option
    letters (and long options) are allowed.
    """
    allowed_long = frozenset(longs.split())

    def rule(args: list[Word]) -> None:
        for word in args:
            value = require_static(cmd, word, "argument")
            if value in allowed_long or re.fullmatch(f"-[{flags}]+", value):
                continue
            raise Blocked(f"{cmd} {_short(value)} is not allowed here", f"Run plain {cmd}.")

    return rule


def rule_set(args: list[Word]) -> None:
    """set: bare `set` lists the shell's variables; any argument changes options or $@."""
    if args:
        raise Blocked("set with arguments changes the shell's options", "Run plain set.")


def rule_declare(args: list[Word]) -> None:
    """declare: only `declare -p [NAME…]`, which prints; every other form assigns."""
    if not args or require_static("declare", args[0], "option") != "-p":
        raise Blocked("declare assigns or changes variables", "Use declare -p [NAME].")
    for word in args[1:]:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", require_static("declare", word, "name")):
            raise Blocked("declare -p takes only variable names", "Use declare -p [NAME].")


_SLEEP_MAX = 10.0


def rule_sleep(args: list[Word]) -> None:
    """sleep: one literal number of seconds, at most 10 (a bounded wait, nothing else)."""
    value = require_static("sleep", args[0], "duration") if len(args) == 1 else ""
    if not re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,3})?", value) or float(value) > _SLEEP_MAX:
        raise Blocked(
            f"sleep takes exactly one literal number of seconds up to {_SLEEP_MAX:g}",
            "Use for example sleep 0.5.",
        )


def rule_version(cmd: str, form: str) -> Callable[[list[Word]], None]:
    """`python3 --version` and friends: exactly the one version word, nothing else.

    These interpreters print their version and exit before they read any script, startup
    file or module. Any other argument (a script, -c, -m, …) runs code, so it blocks.
    """

    def rule(args: list[Word]) -> None:
        if len(args) != 1 or not args[0].static or args[0].value != form:
            raise Blocked(f"{cmd} runs code; only `{cmd} {form}` is allowed", f"Use {cmd} {form}.")

    return rule


# ---------------------------------------------------------------------------- registry

RULES: dict[str, Callable[[list[Word]], None]] = {
    "printf": rule_printf,
    "date": rule_date,
    "hostname": rule_hostname,
    "file": rule_file,
    "tree": rule_tree,
    "sort": rule_sort,
    "uniq": rule_uniq,
    "base64": rule_base64,
    "find": rule_find,
    "fd": rule_fd,
    "rg": rule_rg,
    "sed": rule_sed,
    "git": rule_git,
    **{name: rule_awk(name) for name in ("awk", "gawk", "mawk", "nawk")},
    "test": rule_test("test"),
    "[": rule_test("["),
    "env": rule_env,
    "hash": rule_hash,
    "command": rule_command,
    "ps": rule_ps,
    "pgrep": rule_pgrep,
    **{name: rule_decompress_cat(name) for name in ("zcat", "bzcat", "xzcat")},
    "xz": rule_xz,
    "zgrep": rule_zgrep,
    "xxd": rule_xxd,
    "unzip": rule_unzip,
    "tar": rule_tar,
    "uptime": rule_no_operands("uptime", "psV", "--pretty --since --version"),
    "tty": rule_no_operands("tty", "s", "--silent --quiet"),
    "lsb_release": rule_no_operands(
        "lsb_release", "aidrcsv", "--all --id --description --release --codename --short"
    ),
    "jobs": rule_no_operands("jobs", "lnprs"),
    "ulimit": rule_no_operands("ulimit", "HSabcdefiklmnpqrstuvxPRT"),
    "set": rule_set,
    "declare": rule_declare,
    "sleep": rule_sleep,
    "python3": rule_version("python3", "--version"),
    "python": rule_version("python", "--version"),
    "node": rule_version("node", "--version"),
}
OPTION_SENSITIVE: frozenset[str] = frozenset(RULES)
ALLOWLIST: frozenset[str] = ALWAYS_ALLOWED | OPTION_SENSITIVE


def check_command(name: str, args: Iterable[Word]) -> None:
    """Raise :class:`Blocked` unless the allowlisted command ``name`` with ``args`` only reads."""
    if name not in ALLOWLIST:
        raise Blocked(f"{name} is not a read-only command")
    rule = RULES.get(name)
    if rule is not None:
        rule(list(args))
