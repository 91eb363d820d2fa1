"""The bash guard's simple per-command rules (printf, sort, find, ps, tar, …).

Each rule gets a command's arguments as :class:`~planshell.shell.words.Word` objects and
returns or raises :class:`~planshell.shell.words.Blocked`; ``allowlist`` maps every command
name to its rule. Unknown options count as flags, so the next word is still inspected.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planshell.shell.options import Opts, parse_options, word_set
from planshell.shell.words import Blocked, Word, require_safe_arg, require_static, shorten

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
        raise Blocked(f"printf does not take the option {shorten(first)}", "Drop the option.")


_DATE = Opts(
    short_flags="uR",
    short_arg="dfr",
    short_optarg="I",
    long_flags=word_set("debug rfc-email rfc-2822 universal utc resolution help version"),
    long_arg=word_set("date file reference rfc-3339"),
    long_optarg=word_set("iso-8601"),
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
                f"date {shorten(value)} would set the system clock",
                "Use date +FORMAT to print the date.",
            )


_HOSTNAME = Opts(
    short_flags="aAdfiIsvVyhn",
    long_flags=word_set(
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
    long_arg=word_set("exclude exclude-quiet separator files-from magic-file parameter"),
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
    long_flags=word_set(
        "ignore-leading-blanks debug dictionary-order general-numeric-sort "
        "human-numeric-sort ignore-case ignore-nonprinting merge month-sort numeric-sort "
        "random-sort reverse stable unique version-sort zero-terminated help version"
    ),
    long_arg=word_set(
        "key buffer-size field-separator temporary-directory parallel random-source sort"
    ),
    long_optarg=word_set("check"),
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
    long_flags=word_set("count repeated ignore-case unique zero-terminated help version"),
    long_arg=word_set("skip-fields skip-chars check-chars"),
    long_optarg=word_set("all-repeated group"),
)


def rule_uniq(args: list[Word]) -> None:
    """uniq: a second operand is the output file, so operands must be countable."""
    parsed = parse_options("uniq", args, _UNIQ)
    for _, word in parsed.operands:
        if word.dynamic or word.glob or word.brace:
            raise Blocked(
                f"uniq gets the operand {shorten(word.src)}, which could expand to two "
                "files, and uniq writes its second operand",
                "Pass exactly one literal input file.",
            )
    if len(parsed.operands) >= 2:
        raise Blocked("uniq writes its second operand (the output file)", "Pass one input file.")


_BASE64 = Opts(
    short_flags="dDin",
    short_arg="w",
    long_flags=word_set("decode ignore-garbage help version"),
    long_arg=word_set("wrap"),
    blocked_anywhere={"o": "writes its output to a file"},
    blocked_long={"output": "writes its output to a file"},
)


def rule_base64(args: list[Word]) -> None:
    """base64: -o/--output (BSD) writes a file."""
    parse_options("base64", args, _BASE64)


_FD = Opts(
    short_flags="HIsiFgaLpu0lqhV1",
    short_arg="dtecjSE",
    long_flags=word_set(
        "hidden no-ignore no-ignore-vcs no-ignore-parent unrestricted case-sensitive "
        "ignore-case glob regex fixed-strings absolute-path list-details follow full-path "
        "print0 prune quiet show-errors one-file-system help version"
    ),
    long_arg=word_set(
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
    long_arg=word_set(
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
_FIND_ONE_ARG = word_set(
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
                f"ps -o {shorten(keyword)} prints every process's environment, planshell's "
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
                    f"{cmd} takes no options here ({shorten(word.value)})", "Drop the option."
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
                raise Blocked(f"xz {shorten(v)} is not allowed", "Use xz -dc FILE.")
            flags.add(long[v])
        elif v.startswith("-") and v != "-":
            if not set(v[1:]) <= set("dckqv"):
                raise Blocked(f"xz {shorten(v)} is not allowed", "Use xz -dc FILE.")
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
                raise Blocked(f"unzip {shorten(value)} is not allowed", "Use unzip -l FILE.zip.")
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
                raise Blocked(f"tar {shorten(value)} is not allowed", _TAR_FIX)
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
            raise Blocked(f"{cmd} {shorten(value)} is not allowed here", f"Run plain {cmd}.")

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
