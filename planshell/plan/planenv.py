"""The environment plan-mode ``bash`` runs with, sandboxed or not.

Plan-mode commands are chosen by the model and may read anything they print
back to it, so their environment is rebuilt from planshell's own:

* **Secrets are dropped.** A variable goes when its name looks like a
  credential (:func:`is_secret_name`: ``*_API_KEY``, ``*TOKEN*``,
  ``*SECRET*``, ``*PASSWORD*``, ``*_KEY``, an ``AUTH``/``PASS``/``PWD``/
  ``COOKIE`` word, ...), when it is one of the key variables planshell's
  providers read, when it matches a ``plan.env_deny`` glob, or when its value
  is a URL carrying a password (``https://user:pass@host``, typical of proxy
  settings). Dropping a harmless variable costs little in a read-only mode;
  leaking a key sends it to the model provider.
* **A fixed locale**, ``LC_ALL=C.UTF-8`` (``C`` when this libc has no
  ``C.UTF-8``), so output does not depend on the user's language settings.
* **A clean ``PATH``**: the git shim first, then the inherited entries that are
  absolute and outside the project. An empty or relative entry means "the
  current directory" (the project), and an entry inside the project lets the
  repository supply its own ``ls``; both are dropped.
* The git hardening variables of ``gitsafe.py``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from planshell.plan.gitsafe import git_safe_env, git_shim_dir

# A name containing one of these (case-insensitively) is a secret.
SECRET_SUBSTRINGS: tuple[str, ...] = (
    "API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
    "CREDENTIAL", "PRIVATE_KEY", "ACCESS_KEY", "SIGNING_KEY",
)  # fmt: skip
# A name with one of these as a whole ``_``-separated word (and more than one
# word, so ``PWD`` itself stays) is a secret: ``DB_PASS``, ``MYSQL_PWD``,
# ``SSH_AUTH_SOCK``, ``NPM_CONFIG__AUTH``, ``GPG_KEY``, ``SESSION_COOKIE``.
SECRET_WORDS: frozenset[str] = frozenset({"KEY", "AUTH", "PASS", "PWD", "COOKIE"})
# Sockets and caches that let a command act with the user's credentials.
CREDENTIAL_HANDLES: frozenset[str] = frozenset({"GPG_AGENT_INFO", "KRB5CCNAME"})
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]*@")


def provider_key_vars() -> frozenset[str]:
    """The environment variables planshell's providers read their keys from."""
    from planshell.llm.factory import KEY_VARS

    return frozenset(KEY_VARS.values())


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    if any(part in upper for part in SECRET_SUBSTRINGS):
        return True
    words = upper.split("_")
    return len(words) > 1 and any(word in SECRET_WORDS for word in words)


def denied(name: str, value: str, extra: Iterable[str] = ()) -> bool:
    """Whether plan-mode bash must not see ``name=value``."""
    upper = name.upper()
    if is_secret_name(name) or upper in CREDENTIAL_HANDLES or name in provider_key_vars():
        return True
    if any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in extra):
        return True
    return bool(_URL_PASSWORD.search(value))


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


def scrub_environment(base: Mapping[str, str], deny: Iterable[str] = ()) -> PlanEnv:
    """``base`` without its secrets (see :func:`denied`): all the workspace sandbox changes."""
    extra = list(deny)
    env: dict[str, str] = {}
    dropped: list[str] = []
    for name, value in base.items():
        if denied(name, value, extra):
            dropped.append(name)
        else:
            env[name] = value
    return PlanEnv(env, tuple(sorted(dropped)))


def plan_environment(base: Mapping[str, str], root: Path, deny: Iterable[str] = ()) -> PlanEnv:
    """``base`` (normally ``os.environ``) made fit for plan-mode bash."""
    scrubbed = scrub_environment(base, deny)
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
