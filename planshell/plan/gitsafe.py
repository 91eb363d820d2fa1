"""Git hardening for plan mode: config overrides plus a small ``git`` shim.

A cloned repository's configuration can name programs that "read-only" git
commands run: ``core.fsmonitor`` (status, diff), ``diff.external`` and
per-driver ``diff.<driver>.command`` (diff, log -p, show), textconv drivers
(``diff.<driver>.textconv``: diff, log -p, show, blame) and content filters
(``filter.<driver>.clean``/``process``: status, diff and blame run the clean
filter to compare the work tree with the index). Plan mode defends against
them in two ways, with or without the kernel sandbox:

1. **Config overrides** (:func:`git_safe_env`): ``GIT_CONFIG_COUNT`` /
   ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` take precedence over every
   config file, so ``core.fsmonitor``, ``core.hooksPath``, pagers, the ssh
   command, credential helpers, gpg programs and similar settings are pinned
   to harmless values. ``diff.external`` cannot be switched off this way (an
   empty or ``false`` value makes ``git diff`` fail with "external diff
   died"), which is what the shim is for.
2. **The git shim** (:func:`git_shim_dir`): a directory holding a ``git``
   script, prepended to ``PATH`` for plan-mode bash. The bash guard only allows
   a bare ``git`` (no path), so the shell reaches the shim. It skips the global
   options the guard allows (``--no-pager``, ``-P``, ``-C <dir>``), inserts
   ``--no-ext-diff --no-textconv`` right after diff, log, show, whatchanged,
   diff-tree, diff-files and diff-index, and ``--no-textconv`` after blame and
   grep, blanks every ``filter.<driver>.clean/smudge/process`` that the
   configuration defines (and sets ``filter.<driver>.required=false``, found
   with ``git config --get-regexp``, which reads config but runs nothing),
   then execs the real git (an absolute path resolved when the shim is made).

What this layer cannot cover on its own:

* textconv for a subcommand that has no ``--no-textconv`` and is not listed
  above (none of the subcommands the guard allows applies textconv unless
  asked with ``--textconv``, which the guard blocks);
* filter drivers on checkout/switch/reset (smudge) — those subcommands are
  not reachable from the commands the guard allows;
* programs git starts for subcommands the guard never allows (hooks on
  commit, ``remote.*.uploadpack`` on fetch, merge drivers);
* a git that is called by absolute path (the guard refuses ``/usr/bin/git``)
  or by another program rather than the shell.

The kernel sandbox (``sandbox.py``) is the layer that does not depend on
knowing the list: whatever program runs, it cannot write or reach the network.
"""

from __future__ import annotations

import atexit
import functools
import os
import shlex
import shutil
import tempfile
from pathlib import Path

GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("pager.log", "false"),
    ("pager.diff", "false"),
    ("pager.show", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("log.showSignature", "false"),
)

# Inserted right after the subcommand by the shim.
SHIM_FLAGS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("diff", "log", "show", "whatchanged", "diff-tree", "diff-files", "diff-index"),
        ("--no-ext-diff", "--no-textconv"),
    ),
    "blame": ("--no-textconv",),
    "grep": ("--no-textconv",),
}

_SHIM = r"""#!{shell}
# planshell plan-mode git shim (generated; see planshell/plan/gitsafe.py).
real={git}
globals=()
while [ "$#" -gt 0 ]; do
  case $1 in
    --no-pager|-P) globals+=("$1"); shift ;;
    -C) [ "$#" -ge 2 ] || break; globals+=("$1" "$2"); shift 2 ;;
    *) break ;;
  esac
done
# Blank every content filter the configuration defines: status, diff and blame
# run clean filters, and their driver names are only known from the config.
n=${{GIT_CONFIG_COUNT:-0}}
case $n in ''|*[!0-9]*) n=0 ;; esac
while IFS= read -r -d '' key; do
  driver=${{key#filter.}}; driver=${{driver%.*}}
  export "GIT_CONFIG_KEY_$n=$key" "GIT_CONFIG_VALUE_$n="; n=$((n + 1))
  export "GIT_CONFIG_KEY_$n=filter.$driver.required" "GIT_CONFIG_VALUE_$n=false"; n=$((n + 1))
done < <("$real" "${{globals[@]}}" config --null --name-only --get-regexp '^filter\..+\.(clean|smudge|process)$' 2>/dev/null)
export GIT_CONFIG_COUNT=$n
if [ "$#" -gt 0 ]; then
  sub=$1; shift
  case $sub in
{cases}
    *) set -- "$sub" "$@" ;;
  esac
fi
exec "$real" "${{globals[@]}}" "$@"
"""


def git_safe_env() -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(GIT_OVERRIDES)), "GIT_PAGER": "cat", "PAGER": "cat"}
    for i, (key, value) in enumerate(GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_OPTIONAL_LOCKS"] = "0"  # `git status` must not refresh the index
    return env


def shim_script(real_git: str, shell: str) -> str:
    by_flags: dict[tuple[str, ...], list[str]] = {}
    for sub, flags in SHIM_FLAGS.items():
        by_flags.setdefault(flags, []).append(sub)
    cases = "\n".join(
        f'    {"|".join(subs)}) set -- "$sub" {" ".join(flags)} "$@" ;;'
        for flags, subs in by_flags.items()
    )
    shebang = shell if shell and not any(c.isspace() for c in shell) else "/usr/bin/env bash"
    return _SHIM.format(shell=shebang, git=shlex.quote(real_git), cases=cases)


@functools.cache
def git_shim_dir() -> Path | None:
    """The directory holding the ``git`` shim, made once per process; None without git/bash."""
    real_git, shell = shutil.which("git"), shutil.which("bash")
    if not real_git or not shell:
        return None
    real_git = os.path.realpath(real_git)
    try:
        directory = Path(tempfile.mkdtemp(prefix="planshell-git-"))  # private: mode 0700
        script = directory / "git"
        script.write_text(shim_script(real_git, shell), encoding="utf-8")
        script.chmod(0o755)
    except OSError:
        return None
    atexit.register(shutil.rmtree, directory, True)
    return directory


def plan_git_env(base_path: str | None = None) -> dict[str, str]:
    """Environment for plan-mode bash: the overrides plus ``PATH`` with the shim first."""
    env = git_safe_env()
    shim = git_shim_dir()
    if shim is not None:
        path = os.environ.get("PATH", os.defpath) if base_path is None else base_path
        env["PATH"] = f"{shim}{os.pathsep}{path}" if path else str(shim)
    return env


def git_command() -> str | None:
    """The git to run for planshell's own reads (the receipt): the shim when there is one."""
    shim = git_shim_dir()
    if shim is not None:
        return str(shim / "git")
    return shutil.which("git")
