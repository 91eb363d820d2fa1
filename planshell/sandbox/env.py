"""The environment plan-mode ``bash`` runs with, sandboxed or not.

Plan-mode commands are chosen by the model and may read anything they print
back to it, so their environment is rebuilt from planshell's own:

* **Secrets are dropped.** A variable goes when its name looks like a
  credential (:func:`is_secret_name`: ``*TOKEN*``, ``*SECRET*``,
  ``*PASSWORD*``, ``*AUTH*``, ``*COOKIE*``, ``*SESSION*``, ``*_KEY``,
  ``*_PAT``, ``*_DSN``, a ``PASS``/``PWD`` word, ...), when it is one of the
  key variables planshell's providers read, when it matches a
  ``plan.env_deny`` glob, or when its value is a URL carrying credentials
  (``https://user:pass@host`` or ``https://key@host``: proxy settings, a
  Sentry DSN). ``plan.env_allow`` keeps a variable the built-in rules drop
  (``env_deny`` still wins). Dropping a harmless variable costs little in a
  read-only mode; leaking a key sends it to the model provider.
* **A fixed locale**, ``LC_ALL=C.UTF-8`` (``C`` when this libc has no
  ``C.UTF-8``), so output does not depend on the user's language settings.
* **A clean ``PATH``**: the git shim first, then the inherited entries that are
  absolute and outside the project. An empty or relative entry means "the
  current directory" (the project), and an entry inside the project lets the
  repository supply its own ``ls``; both are dropped.
* The git hardening variables of ``gitsafe.py``.

Scrubbing the child's environment is not enough without the sandbox: the
child could read planshell's own, unscrubbed one from
``/proc/<planshell's pid>/environ`` (same user, and the bash guard rightly
lets ``cat`` read). :func:`hide_own_environment` makes planshell's process
non-dumpable, which makes those files root's; with the sandbox a new PID
namespace and a fresh ``/proc`` hide every process anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from planshell.sandbox.gitsafe import git_safe_env, git_shim_dir

# A name containing one of these (case-insensitively) is a secret.
SECRET_SUBSTRINGS: tuple[str, ...] = (
    "API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
    "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY", "SIGNING_KEY", "COOKIE", "SESSION",
)  # fmt: skip
# ``AUTH`` anywhere (``HTTP_AUTHORIZATION``, ``OAUTH_CLIENT``, ``XAUTHORITY``,
# ``SSH_AUTH_SOCK``) except inside the word ``AUTHOR`` (``GIT_AUTHOR_NAME`` is
# no credential and a commit needs it).
_AUTH = re.compile(r"AUTH(?!OR(?:_|$))")
# A name with one of these as a whole ``_``-separated word (and more than one
# word, so ``PWD`` itself stays) is a secret: ``DB_PASS``, ``MYSQL_PWD``,
# ``GPG_KEY``, ``GITHUB_PAT``, ``SENTRY_DSN``.
SECRET_WORDS: frozenset[str] = frozenset({"KEY", "PASS", "PWD", "PAT", "DSN"})
# Sockets and caches that let a command act with the user's credentials.
CREDENTIAL_HANDLES: frozenset[str] = frozenset({"GPG_AGENT_INFO", "KRB5CCNAME"})
# A URL with userinfo: ``user:pass@`` or a bare ``key@`` (a Sentry DSN, a token in a git URL).
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]+@")


def provider_key_vars() -> frozenset[str]:
    """The environment variables planshell's providers read their keys from."""
    from planshell.llm.factory import KEY_VARS

    return frozenset(KEY_VARS.values())


def is_secret_name(name: str) -> bool:
    """Whether ``name`` looks like a credential's (case-insensitive; see the module doc)."""
    upper = name.upper()
    if any(part in upper for part in SECRET_SUBSTRINGS) or _AUTH.search(upper):
        return True
    words = upper.split("_")
    return len(words) > 1 and any(word in SECRET_WORDS for word in words)


def has_url_credentials(value: str) -> bool:
    """Whether ``value`` holds a URL with userinfo (``user:pass@``, ``key@``)."""
    return bool(_URL_CREDENTIALS.search(value))


def _matches(upper: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def denied(name: str, value: str, extra: Iterable[str] = (), allow: Iterable[str] = ()) -> bool:
    """Whether bash must not see ``name=value``.

    ``extra`` (``plan.env_deny``) always drops; ``allow`` (``plan.env_allow``)
    keeps what the built-in rules would drop. Both are globs, case-insensitive.
    """
    upper = name.upper()
    if _matches(upper, extra):
        return True
    if _matches(upper, allow):
        return False
    if is_secret_name(name) or upper in CREDENTIAL_HANDLES or name in provider_key_vars():
        return True
    return has_url_credentials(value)


def clean_path(path: str, root: Path) -> list[str]:
    """The absolute ``PATH`` entries outside ``root``, in order, without repeats."""
    root = root.resolve()
    kept: list[str] = []
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or entry in kept:
            continue
        resolved = Path(entry).resolve()
        if resolved == root or root in resolved.parents:
            continue
        kept.append(entry)
    return kept


@functools.cache
def utf8_locale() -> str:
    """``C.UTF-8`` when the C library has it (checked without touching our own locale), else ``C``."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or None, use_errno=True)
        newlocale, freelocale = libc.newlocale, libc.freelocale
    except (OSError, AttributeError):
        return "C"
    newlocale.restype = ctypes.c_void_p
    newlocale.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
    freelocale.argtypes = [ctypes.c_void_p]
    lc_all_mask = 0x1FBF  # glibc: every LC_*_MASK bit; musl accepts it too
    for candidate in ("C.UTF-8", "C.utf8"):
        handle = newlocale(lc_all_mask, candidate.encode(), None)
        if handle:
            freelocale(handle)
            return candidate
    return "C"


@dataclass(frozen=True)
class PlanEnv:
    """The plan-mode environment and the names that were removed (for ``/plan why``)."""

    env: dict[str, str]
    dropped: tuple[str, ...]


def scrub_environment(
    base: Mapping[str, str], deny: Iterable[str] = (), allow: Iterable[str] = ()
) -> PlanEnv:
    """``base`` without its secrets (see :func:`denied`): all the workspace sandbox changes."""
    extra, kept = list(deny), list(allow)
    env: dict[str, str] = {}
    dropped: list[str] = []
    for name, value in base.items():
        if denied(name, value, extra, kept):
            dropped.append(name)
        else:
            env[name] = value
    return PlanEnv(env, tuple(sorted(dropped)))


def plan_environment(
    base: Mapping[str, str], root: Path, deny: Iterable[str] = (), allow: Iterable[str] = ()
) -> PlanEnv:
    """``base`` (normally ``os.environ``) made fit for plan-mode bash."""
    scrubbed = scrub_environment(base, deny, allow)
    env, dropped = scrubbed.env, scrubbed.dropped
    env.pop("LANGUAGE", None)
    env["LC_ALL"] = utf8_locale()
    env.update(git_safe_env())
    path = clean_path(base.get("PATH", os.defpath), root)
    shim = git_shim_dir()
    if shim is not None:
        path.insert(0, str(shim))
    env["PATH"] = os.pathsep.join(path)
    return PlanEnv(env, dropped)


_PR_SET_DUMPABLE = 4


def hide_own_environment() -> bool:
    """Make ``/proc/<this pid>/environ`` (and ``mem``, ``fd/``) unreadable to our own commands.

    ``prctl(PR_SET_DUMPABLE, 0)``: the kernel then gives this process's
    ``/proc`` entries to root, so a command planshell runs as the same user
    (plan-mode bash with the sandbox off, ``cat /proc/$PPID/environ``) cannot
    read the provider keys planshell itself needs. The cost: no core dumps,
    and attaching a debugger needs root. It does not stop root (planshell run
    as root keeps ``CAP_SYS_PTRACE`` in unsandboxed commands) nor other
    processes' environments (``ps e``): the sandbox's PID namespace does.
    Linux only; False when it could not be set.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
