"""Plan-mode bash guard: decide whether a shell command is provably read-only.

The spec is ``POLICY.md`` (v2) of the shared bash corpus. In short: rewrite the forms
bashlex cannot parse (``[[ ]]``, ``$(( ))``, ``case``, ``time``, quoted here-docs; see
``forms``), parse with bashlex, walk the tree, and allow only simple commands on the
allowlist (see ``allowlist``) joined by pipes, lists, subshells, groups and
``if``/``for``/``while``/``until``/``case`` blocks, with no assignments (but a literal
locale or time zone prefix) and no writing redirections. Every word a reading command gets
is also checked against ``planshell.procfs`` (other processes' environments). Anything the
guard cannot parse, or cannot classify, is blocked ("fail closed").

bashlex mis-parses some inputs, so the guard never trusts ``node.word``: every word is
decoded again from its source span by :func:`~planshell.shell.scanner.scan_word`, and every ``$``, backtick and
``<(`` found there must line up with an expansion node that bashlex reported.

Patterns (config ``plan.bash.safe_patterns`` / ``plan.bash.destructive_patterns``) are
case-insensitive regexes and replace the built-in lists when given:

* a destructive pattern is ``re.search``-ed in the source text of every simple command,
  and a match blocks it even when the rules would allow it;
* a safe pattern must ``re.fullmatch`` the words of a simple command whose name is not on
  the allowlist (the source text of its words joined by single spaces, redirections left
  out); a match allows that command only if every structural check still passes.

bashlex is imported lazily: it costs ~100 ms, and the app must start fast.
"""

from __future__ import annotations

import functools
import re

from planshell.shell import bashlex_safe
from planshell.shell.forms import Refused, Rewrite, Unsupported, rewrite
from planshell.shell.parsing import precheck, strip_time, uncovered_text
from planshell.shell.verdict import FIX_PARSE, Refusal, Verdict, quote, refuse, unparseable
from planshell.shell.walker import Walker

__all__ = [
    "DEFAULT_DESTRUCTIVE_PATTERNS",
    "DEFAULT_SAFE_PATTERNS",
    "BashGuard",
    "is_read_only",
]

_P = r"^[\s\"'\\]*"  # the start of a segment, allowing a quoted or escaped name
_END = r"(?![\w.-])"  # the name ends here (so merge does not match merge-base)
DEFAULT_DESTRUCTIVE_PATTERNS: list[str] = [
    _P + r"(?:sudo|doas|su|pkexec)" + _END,
    _P + r"(?:rm|rmdir|shred|unlink|dd|truncate|mkfs(?:\.\w+)?|chmod|chown|chgrp|mv)" + _END,
    _P + r"(?:curl|wget|nc|ncat|ssh|scp|rsync)" + _END,
    _P + r"(?:kill|killall|pkill|shutdown|reboot|halt|poweroff|systemctl)" + _END,
    _P + r"git(?:\s+(?:-C\s+\S+|--no-pager|-P))*\s+"
    r"(?:push|commit|reset|rebase|merge|checkout|switch|restore|clean|rm|mv|cherry-pick|"
    r"revert|am|apply|pull|fetch|clone|gc|prune|update-ref|filter-branch)" + _END,
]
DEFAULT_SAFE_PATTERNS: list[str] = [
    r"(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)\s+--version",
]


def _compile(
    patterns: list[str] | None, defaults: list[str], label: str, warnings: list[str]
) -> tuple[list[re.Pattern[str]], bool]:
    """Compile a replace-only pattern list; fall back to the defaults if none compiles."""
    if patterns is None:
        return [re.compile(p, re.IGNORECASE) for p in defaults], False
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except (re.error, TypeError) as exc:
            warnings.append(f"plan.bash.{label}: skipped invalid regex {pattern!r} ({exc})")
    if patterns and not compiled:
        warnings.append(f"plan.bash.{label}: every pattern is invalid; using the built-in list")
        return [re.compile(p, re.IGNORECASE) for p in defaults], False
    return compiled, True


class BashGuard:
    """Decides whether a bash command is provably read-only (plan mode)."""

    def __init__(
        self,
        safe_patterns: list[str] | None = None,
        destructive_patterns: list[str] | None = None,
    ) -> None:
        self.warnings: list[str] = []
        self._safe, self.uses_custom_safe = _compile(
            safe_patterns, DEFAULT_SAFE_PATTERNS, "safe_patterns", self.warnings
        )
        self._destructive, self.uses_custom_destructive = _compile(
            destructive_patterns,
            DEFAULT_DESTRUCTIVE_PATTERNS,
            "destructive_patterns",
            self.warnings,
        )
        self._cached = functools.lru_cache(maxsize=1024)(self._evaluate)

    def check(self, command: str) -> Verdict:
        """Return the verdict for ``command``; never raises (any error blocks)."""
        if not isinstance(command, str):
            return Verdict(False, "blocked: the command is not a string.", None)
        try:
            return self._cached(command)
        except Exception as exc:  # fail closed on any bug
            return Verdict(
                False,
                f"blocked: the guard hit an internal error ({type(exc).__name__}); {FIX_PARSE}",
                None,
            )

    def safe_match(self, words_text: str) -> bool:
        return any(p.fullmatch(words_text) for p in self._safe)

    def destructive_match(self, segment: str) -> str | None:
        for p in self._destructive:
            if p.search(segment):
                return p.pattern
        return None

    def _evaluate(self, command: str) -> Verdict:
        early = precheck(command)
        if early is not None:
            return early
        try:
            forms = rewrite(command)
        except Refused as exc:
            return refuse(command, exc.why, exc.fix).verdict
        except Unsupported:
            forms = Rewrite(strip_time(command))
        text = forms.text
        if not text.strip():
            return unparseable("`time` has no command after it", command)
        try:
            trees = bashlex_safe.parse(text)
        except Exception as exc:
            return unparseable(f"{type(exc).__name__}: {quote(str(exc), 80)}", command)
        if not trees:
            return unparseable("nothing to run", command)
        stray = uncovered_text(text, trees)
        if stray is not None:
            return unparseable(f"bashlex skipped {quote(stray, 40)!r}", command)
        walker = Walker(self, command, forms)
        try:
            for tree in trees:
                walker.node(tree)
            walker.finish()
        except Refusal as refusal:
            return refusal.verdict
        except RecursionError:
            return unparseable("the command is nested too deeply", command)
        return Verdict(True, "allowed: every part of the command only reads.", None)


@functools.cache
def _default_guard() -> BashGuard:
    return BashGuard()


def is_read_only(command: str) -> bool:
    """True when the default guard allows ``command``; never raises."""
    try:
        return _default_guard().check(command).allowed
    except Exception:
        return False
