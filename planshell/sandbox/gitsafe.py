"""Git hardening for plan mode: config overrides plus a ``git`` shim that every git passes through.

A cloned repository's configuration can name programs that "read-only" git
commands run: ``core.fsmonitor`` (status, diff), ``diff.external`` and
per-driver ``diff.<driver>.command`` (diff, log -p, show), textconv drivers
(``diff.<driver>.textconv``: diff, log -p, show, blame) and content filters
(``filter.<driver>.clean``/``process``: status, diff and blame run the clean
filter to compare the work tree with the index). Git also starts *other gits*:
``git status`` runs ``git status --porcelain=2`` inside each submodule, and
``diff.submodule=diff`` (or ``--submodule=diff``) makes ``git diff``/``log -p``/
``show`` run ``git diff`` inside the submodule, which reads the submodule's own
config, filters and external diff. Plan mode defends against all of them, with
or without the kernel sandbox:

1. **Config overrides** (:data:`GIT_OVERRIDES`), passed as ``GIT_CONFIG_COUNT``
   / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``: they beat every config file
   (and every ``include.path``), and git keeps them for the gits it starts in
   submodules. They pin ``core.fsmonitor``, ``core.hooksPath``, pagers, the ssh
   command, credential helpers, gpg programs and similar settings to harmless
   values, and keep git out of submodules where config can
   (``diff.ignoreSubmodules=all``, ``diff.submodule=short``, ...).
2. **The git shim** (:func:`git_shim_dir`): a ``git`` script first on ``PATH``
   *and* in ``GIT_EXEC_PATH``. Git starts its child gits through its exec path,
   so with ``GIT_EXEC_PATH`` pointing at a mirror of the real one (symlinks,
   with ``git`` replaced by the shim) every git process, at any submodule
   depth, passes through the shim. For each one the shim

   * re-applies the overrides (so they hold even if a caller dropped them);
   * blanks every ``filter.<driver>.clean/smudge/process`` that *this*
     repository's configuration defines (driver names are chosen by the
     repository, so they are read with ``git config --get-regexp``, which reads
     config and runs nothing), and sets ``filter.<driver>.required=false``;
   * inserts ``--no-ext-diff --no-textconv`` right after diff, log, show,
     whatchanged, diff-tree, diff-files and diff-index, and ``--no-textconv``
     after blame and grep (``diff.external`` cannot be switched off by config:
     an empty or ``false`` value makes ``git diff`` fail);
   * points ``GIT_INDEX_FILE`` at a private copy of the index in a temporary
     directory: ``git diff``, ``diff --stat`` and ``describe --dirty`` refresh
     the index's stat data and write it back even with ``GIT_OPTIONAL_LOCKS=0``,
     and ``.git`` must stay byte-for-byte unchanged in plan mode. The copy keeps
     the original's mtime, so git's racy-entry checks answer the same; it is
     removed when the command ends (a SIGKILLed shim can leave one behind in
     the temporary directory).

What this layer cannot cover on its own:

* textconv for a subcommand that has no ``--no-textconv`` and is not listed
  above (none of the subcommands the guard allows applies textconv unless
  asked with ``--textconv``, which the guard blocks);
* programs git starts for subcommands the guard never allows (hooks on
  commit, ``remote.*.uploadpack`` on fetch, merge drivers);
* a git that is called by absolute path (the guard refuses ``/usr/bin/git``)
  and started with its own ``--exec-path``.

The kernel sandbox (``bwrap.py``) is the layer that does not depend on
knowing the list: whatever program runs, it cannot write or reach the network.
"""

from __future__ import annotations

import atexit
import functools
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.splitIndex", "false"),  # the private index copy must not write shared index files
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
    # Keep git out of submodules where config decides (a submodule's own config
    # could name programs); what config cannot stop goes through the shim.
    ("diff.ignoreSubmodules", "all"),
    ("diff.submodule", "short"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("help.autoCorrect", "0"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

# Fixed environment for every git in plan mode (the shim sets it again for child gits).
GIT_ENV: tuple[tuple[str, str], ...] = (
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
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
# planshell plan-mode git shim (generated; see planshell/sandbox/gitsafe.py).
# Every plan-mode git passes through here: the shell finds it first on PATH and
# git starts its child gits (submodules) through GIT_EXEC_PATH, which is ours.
real={git}
here={here}
{exports}
globals=()
while [ "$#" -gt 0 ]; do
  case $1 in
    -C|-c|--git-dir|--work-tree|--namespace|--config-env)
      [ "$#" -ge 2 ] || break; globals+=("$1" "$2"); shift 2 ;;
    -*) globals+=("$1"); shift ;;
    *) break ;;
  esac
done
if [ "$#" -eq 0 ]; then
  exec "$real" "${{globals[@]}}"
fi
# Blank every content filter this repository's configuration defines: status,
# diff and blame run clean filters, and driver names are only known from config.
n=$GIT_CONFIG_COUNT
while IFS= read -r -d '' key; do
  driver=${{key#filter.}}; driver=${{driver%.*}}
  export "GIT_CONFIG_KEY_$n=$key" "GIT_CONFIG_VALUE_$n="; n=$((n + 1))
  export "GIT_CONFIG_KEY_$n=filter.$driver.required" "GIT_CONFIG_VALUE_$n=false"; n=$((n + 1))
done < <("$real" "${{globals[@]}}" config --null --name-only --get-regexp '^filter\..+\.(clean|smudge|process)$' 2>/dev/null)
export GIT_CONFIG_COUNT=$n
# A private copy of the index: reads that refresh stat data write it back.
private=
index=$("$real" "${{globals[@]}}" rev-parse --path-format=absolute --git-path index 2>/dev/null) || index=
case $index in
  /*)
    base=$here/tmp
    [ -d "$base" ] && [ -w "$base" ] || base=${{TMPDIR:-/tmp}}
    private=$(mktemp -d "$base/planshell-index.XXXXXX") || {{
      echo "planshell git shim: cannot make a private copy of the index in $base" >&2; exit 128; }}
    trap 'rm -rf -- "$private"' EXIT
    trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM
    if [ -e "$index" ]; then
      cp -p -- "$index" "$private/index" || exit 128
    fi
    export GIT_INDEX_FILE=$private/index ;;
esac
sub=$1; shift
case $sub in
{cases}
  *) set -- "$sub" "$@" ;;
esac
if [ -z "$private" ]; then
  exec "$real" "${{globals[@]}}" "$@"
fi
"$real" "${{globals[@]}}" "$@"
exit $?
"""


def git_safe_env() -> dict[str, str]:
    """The overrides as ``GIT_CONFIG_*`` variables, plus the fixed git environment."""
    env = {"GIT_CONFIG_COUNT": str(len(GIT_OVERRIDES)), **dict(GIT_ENV)}
    for i, (key, value) in enumerate(GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    shim = git_shim_dir()
    if shim is not None:
        env["GIT_EXEC_PATH"] = str(shim / "exec-path")
    return env


def shim_script(real_git: str, shell: str, here: Path) -> str:
    by_flags: dict[tuple[str, ...], list[str]] = {}
    for sub, flags in SHIM_FLAGS.items():
        by_flags.setdefault(flags, []).append(sub)
    cases = "\n".join(
        f'  {"|".join(subs)}) set -- "$sub" {" ".join(flags)} "$@" ;;'
        for flags, subs in by_flags.items()
    )
    env = {
        "GIT_EXEC_PATH": str(here / "exec-path"),
        **dict(GIT_ENV),
        "GIT_CONFIG_COUNT": str(len(GIT_OVERRIDES)),
    }
    for i, (key, value) in enumerate(GIT_OVERRIDES):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    exports = "\n".join(f"export {k}={shlex.quote(v)}" for k, v in env.items())
    shebang = shell if shell and not any(c.isspace() for c in shell) else "/usr/bin/env bash"
    return _SHIM.format(
        shell=shebang,
        git=shlex.quote(real_git),
        here=shlex.quote(str(here)),
        exports=exports,
        cases=cases,
    )


def _real_exec_path(real_git: str) -> Path | None:
    env = {k: v for k, v in os.environ.items() if k != "GIT_EXEC_PATH"}
    try:
        done = subprocess.run(
            [real_git, "--exec-path"],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    path = Path(done.stdout.strip())
    return path if done.returncode == 0 and path.is_absolute() and path.is_dir() else None


@functools.cache
def git_shim_dir() -> Path | None:
    """The directory holding the ``git`` shim, made once per process; None without git/bash.

    Layout: ``git`` (the shim), ``exec-path/`` (the real exec path mirrored as
    symlinks, its ``git`` pointing at the shim) and ``tmp/`` (private index copies).
    """
    real_git, shell = shutil.which("git"), shutil.which("bash")
    if not real_git or not shell:
        return None
    real_git = os.path.realpath(real_git)
    real_exec = _real_exec_path(real_git)
    if real_exec is None:
        return None
    try:
        directory = Path(tempfile.mkdtemp(prefix="planshell-git-"))  # private: mode 0700
    except OSError:
        return None
    atexit.register(shutil.rmtree, directory, True)
    try:
        script = directory / "git"
        script.write_text(shim_script(real_git, shell, directory), encoding="utf-8")
        script.chmod(0o755)
        mirror = directory / "exec-path"
        mirror.mkdir()
        for entry in os.scandir(real_exec):
            if entry.name != "git":
                (mirror / entry.name).symlink_to(entry.path)
        (mirror / "git").symlink_to(script)
        (directory / "tmp").mkdir()
    except OSError:
        return None
    return directory


def plan_git_env(base_path: str | None = None) -> dict[str, str]:
    """The git overrides plus ``PATH`` with the shim first (``base_path`` defaults to ``PATH``)."""
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
