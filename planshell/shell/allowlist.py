"""The bash guard's allowlist: which commands may run, and which rule checks each one.

:func:`check_command` is what the guard calls for every simple command it has decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from planshell.shell.awk import rule_awk
from planshell.shell.commands import (
    rule_base64,
    rule_command,
    rule_date,
    rule_declare,
    rule_decompress_cat,
    rule_env,
    rule_fd,
    rule_file,
    rule_find,
    rule_hash,
    rule_hostname,
    rule_no_operands,
    rule_pgrep,
    rule_printf,
    rule_ps,
    rule_rg,
    rule_set,
    rule_sleep,
    rule_sort,
    rule_tar,
    rule_tree,
    rule_uniq,
    rule_unzip,
    rule_version,
    rule_xxd,
    rule_xz,
    rule_zgrep,
)
from planshell.shell.conditions import rule_test
from planshell.shell.git import rule_git
from planshell.shell.sed import rule_sed
from planshell.shell.words import Blocked, Word

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
