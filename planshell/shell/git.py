"""The bash guard's rule for git: read-only subcommands, and the options and list forms of
each that cannot write or run a program.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planshell.shell.options import word_set
from planshell.shell.words import Blocked, Word, require_safe_arg, shorten

GIT_READ_SUBCOMMANDS = word_set(
    "status log show diff blame shortlog describe rev-parse rev-list ls-files ls-tree "
    "cat-file grep merge-base name-rev show-ref for-each-ref count-objects whatchanged "
    "diff-tree diff-files diff-index check-ignore version show-branch"
)
GIT_LIST_SUBCOMMANDS = word_set(
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
# --text (diff -a) is a prefix of --textconv but is its own option.
_GIT_SAFE_EXACT = word_set("text")
# Options that are known to take no separate value in every read subcommand; a `--` after
# anything else might be that option's value, so checking continues past it.
_GIT_NO_VALUE = word_set(
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
                f"the global git option {shorten(v)} is not allowed (global options such as "
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
        raise Blocked(f"git {shorten(sub)} is not a read-only git subcommand", _GIT_FIX)
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
            raise Blocked(f"git config {shorten(word)} is not a read-only option", _CONFIG_FIX)
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


_LIST_MODE = word_set("-l --list --contains --no-contains --merged --no-merged --points-at")
_REF_FILTERS = word_set("--contains --no-contains --merged --no-merged")  # optional next-word value
_REQUIRED_VALUE = word_set("--points-at --sort --format")


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
            raise Blocked(f"git {cmd} {shorten(v)} is not a listing option", _GIT_FIX)
        elif v.startswith("-") and not v.startswith("--"):
            if cmd == "tag" and re.fullmatch(r"-n[0-9]*", v):
                listing = True
                continue
            if not re.fullmatch(f"-[{short}]+", v):
                raise Blocked(f"git {cmd} {shorten(v)} is not a listing option", _GIT_FIX)
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
    flags = word_set(
        "--all --remotes --verbose --list --show-current --ignore-case --no-color "
        "--no-column --no-abbrev --omit-empty --color --column --abbrev"
    )
    _list_form("branch", words, flags, "arvli")


def _git_tag(words: list[str]) -> None:
    flags = word_set("--list --ignore-case --no-column --no-color --color --column --omit-empty")
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
        f"git remote {shorten(' '.join(rest))} is not a listing form",
        "Use git remote -v or git remote get-url <name>.",
    )


# `git stash list` runs a child `git log` and `git reflog` runs log in-process; with -p,
# --stat, -S, -L and the like they compute diffs, and a child git escapes the shim (so the
# repository's textconv programs run). Only these options, which cannot produce a diff:
_LOG_SAFE_FLAGS = word_set(
    "--oneline --abbrev-commit --no-abbrev-commit --no-abbrev --relative-date --decorate "
    "--no-decorate --color --no-color --date-order --topo-order --first-parent --no-merges "
    "--merges -z -i --regexp-ignore-case --walk-reflogs -g --pretty --format"
)
_LOG_SAFE_VALUED = word_set(
    "--max-count --skip --date --pretty --format --grep --author --committer --since "
    "--until --after --before"
)
_LOG_SAFE_EQ_ONLY = word_set("--abbrev --decorate --color")


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
                f"git {cmd} {shorten(v)} is not allowed here (only options that cannot "
                "produce a diff: a diff would run outside planshell's git hardening)",
                f"Use git {cmd} with --oneline, -n N or --format, or git log -g for details.",
            )
        if not positional_ok:
            raise Blocked(f"git {cmd} takes no argument {shorten(v)} here", f"Run git {cmd}.")
        positionals.append(v)
    return positionals


_STASH_SHOW_SAFE = word_set(
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
            f"git stash show {shorten(' '.join(refs))} is not allowed (only --stat, "
            "--name-only, --name-status, --numstat, --shortstat and a stash)",
            "Use git stash show --stat [stash@{N}].",
        )


_REFLOG_SUBCOMMANDS = word_set("expire delete exists drop write list")


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
                f"git submodule status {shorten(w)} is not allowed (--recursive runs git "
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
