"""Permission rules: ``bash(pytest *)``, ``edit(src/**)``, ``write(docs/**)``,
``fetch(domain:docs.python.org)``, ``mcp__jira__*``.

A rule names a tool and, in parentheses, what it covers. Without parentheses
it covers every call of that tool. Bash rules are matched on the *parsed*
command, one simple command at a time (``split_command`` uses the bash
guard's parser and word decoder), never on the raw string: ``pytest && rm -rf
x`` has two segments, and ``bash(pytest *)`` covers only the first.

Bash patterns are words (split like a shell line): each pattern word must
match the segment's word at that place (``fnmatch``: ``*``, ``?``, ``[..]``
inside a word), and a final lone ``*`` matches any number of remaining words,
none included. Path patterns are globs over the project-relative path: ``*``
stays inside one directory, ``**`` spans any depth.

The engine matches rules on what bash will run (``resolve.py``: braces
expanded, wrappers unwrapped). Allow and deny read a pattern differently,
because a wrong allow runs something and a wrong deny only asks:

* allow: a word with ``/`` is matched one path component at a time (``*``
  never crosses ``/``, ``**`` spans components), and a ``..`` component only
  matches a literal ``..``; a word known only at run time never matches,
  except under the final lone ``*``;
* deny: ``*`` matches anything, a path-named command is also compared by its
  basename (``/bin/rm`` is ``rm``), and a word known only at run time *might*
  match: the answer is "maybe", and the engine asks.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from re import Pattern
from typing import Literal

from planshell.permissions.args import Arg, Hole, basename
from planshell.shell.segments import Segment
from planshell.tools.net_guard import domain_matches
from planshell.tools.walk import glob_to_regex

RULE_TOOLS = frozenset({"bash", "edit", "write", "fetch"})
# Commands whose second word picks what they do: "s" allows the pair (git commit).
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "pip", "pip3", "poetry", "docker",
        "podman", "kubectl", "make", "just", "dotnet", "gradle", "mvn", "bundle", "rake",
        "hatch", "pdm", "bun", "deno", "npx", "gh", "systemctl", "brew", "apt", "apt-get",
    }
)  # fmt: skip


Match = Literal["yes", "maybe", "no"]
_MCP_RULE = re.compile(r"^mcp__[A-Za-z0-9_*?-]+$")
_DOMAIN = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
_MATCH: tuple[Match, Match, Match] = ("no", "maybe", "yes")


class RuleError(ValueError):
    """A rule that cannot be understood (the message names it)."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written, for messages and the log
    tool: str
    words: tuple[str, ...] | None = None  # bash pattern words; None: any command
    glob: Pattern[str] | None = None  # edit/write path pattern; None: any path
    name_glob: str | None = None  # an MCP tool rule: fnmatch over the tool's name
    domain: str | None = None  # a fetch rule's host (``*.example.org``); None: any host

    def matches_tool(self, name: str) -> bool:
        """As an MCP rule (``mcp__jira__*``): does it name this tool? (case-sensitive)"""
        return self.name_glob is not None and fnmatch.fnmatchcase(name, self.name_glob)

    def matches_fetch(self, host: str, *, deny: bool) -> bool:
        """As a fetch rule, on the host a URL names. A deny's ``*.x.org`` covers ``x.org`` too."""
        if self.tool != "fetch":
            return False
        return self.domain is None or domain_matches(host, self.domain, apex=deny)

    def matches_segment(self, segment: Segment) -> bool:
        """As an allow rule, on a segment's words as typed (tests, prompts)."""
        return self.match_words(segment.words, deny=False) == "yes"

    def match_words(self, words: Sequence[Arg], *, deny: bool) -> Match:
        """Does this rule cover the command ``words`` (see the module docstring)?"""
        if self.tool != "bash" or not words:
            return "no"
        if self.words is None:
            return "yes"
        candidates = [tuple(words)]
        head = words[0]
        if deny and isinstance(head, str) and "/" in head and "/" not in self.words[0]:
            candidates.append((basename(head), *words[1:]))
        try:
            best = max(_match(self.words, c, deny) for c in candidates)
        except RecursionError:  # a path with thousands of components
            best = 1 if deny else 0
        return _MATCH[best]

    def matches_path(self, tool: str, rel: str) -> bool:
        if self.tool != tool:
            return False
        return self.glob is None or self.glob.fullmatch(rel) is not None


def parse_rule(text: str) -> Rule:
    raw = text.strip()
    name, paren, rest = raw.partition("(")
    name = name.strip()
    if name.startswith("mcp__") and not paren:
        # MCP tools by name: mcp__jira__* (every tool of server jira), mcp__jira__get_issue.
        if not _MCP_RULE.match(name):
            raise RuleError(f"{raw!r}: an MCP rule is mcp__SERVER__TOOL (with * and ?)")
        return Rule(raw, "mcp", name_glob=name)
    if name not in RULE_TOOLS:
        raise RuleError(
            f"{raw!r}: rules name bash, edit, write, fetch or mcp__SERVER__TOOL "
            "(e.g. 'bash(pytest *)', 'fetch(domain:docs.python.org)')"
        )
    if not paren:
        return Rule(raw, name)
    if not rest.endswith(")"):
        raise RuleError(f"{raw!r}: the pattern must end with ')'")
    body = rest[:-1].strip()
    if not body:
        raise RuleError(f"{raw!r}: the pattern is empty (write {name} alone to cover every call)")
    if name == "fetch":
        return Rule(raw, name, domain=_fetch_domain(raw, body))
    if name == "bash":
        try:
            words = tuple(shlex.split(body))
        except ValueError as exc:
            raise RuleError(f"{raw!r}: {exc}") from None
        if words == ("*",):
            return Rule(raw, name)
        if not words or words[0] == "*":
            raise RuleError(f"{raw!r}: a bash pattern starts with the command's name")
        return Rule(raw, name, words=words)
    if body in ("**", "**/*"):
        return Rule(raw, name)
    try:
        return Rule(raw, name, glob=glob_to_regex(body.removeprefix("./")))
    except Exception as exc:
        raise RuleError(f"{raw!r}: {exc}") from None


def _fetch_domain(raw: str, body: str) -> str | None:
    """``domain:HOST`` or ``domain:*.HOST`` (a host name, lower-cased); ``*`` is any host."""
    if body == "*":
        return None
    kind, _, host = body.partition(":")
    host = host.strip().rstrip(".").lower()
    if kind.strip() != "domain" or not _DOMAIN.match(host):
        raise RuleError(
            f"{raw!r}: a fetch rule is fetch(domain:docs.python.org) or fetch(domain:*.python.org)"
        )
    return host


def parse_rules(texts: list[str], warnings: list[str], label: str) -> list[Rule]:
    """Parse ``texts``; a bad rule is skipped with a warning (never widened)."""
    rules: list[Rule] = []
    for text in texts:
        try:
            rules.append(parse_rule(text))
        except RuleError as exc:
            warnings.append(f"permissions.{label}: {exc}; ignored")
    return rules


def prefix_rule(segment: Segment) -> str:
    """The session/project rule for one segment: its command prefix, e.g. ``bash(git commit *)``."""
    return prefix_rule_words(segment.words)


def prefix_rule_words(words: Sequence[Arg]) -> str:
    """The rule for a command's words: its name, and the subcommand of git, npm, …"""
    head = words[0]
    assert isinstance(head, str)
    prefix = [head]
    second = words[1] if len(words) > 1 else None
    if isinstance(second, str) and head in SUBCOMMAND_PROGRAMS and not second.startswith("-"):
        prefix.append(second)
    return f"bash({shlex.join(_literal(w) for w in prefix)} *)"


def _match(pattern: tuple[str, ...], words: tuple[Arg, ...], deny: bool) -> int:
    """2: matches; 1: might match (deny only, a hole in the way); 0: does not.

    A table over (pattern position, word position), not recursion: a line may
    hold thousands of words.
    """
    m, n = len(pattern), len(words)
    only_many = [False] * (n + 1)  # words[j:] are all Hole.MANY (they may be no words)
    only_many[n] = True
    for j in range(n - 1, -1, -1):
        only_many[j] = only_many[j + 1] and words[j] is Hole.MANY
    below = [2 if j == n else (1 if deny and only_many[j] else 0) for j in range(n + 1)]
    for i in range(m - 1, -1, -1):
        p = pattern[i]
        row = [0] * (n + 1)
        for j in range(n, -1, -1):
            if p == "*" and i == m - 1:
                row[j] = 2  # the final lone *: any remaining words, holes included
            elif j == n:
                row[j] = 0
            elif isinstance(words[j], Hole):
                if deny:
                    options = [below[j + 1]]
                    if words[j] is Hole.MANY:  # none, or it swallows this pattern word and more
                        options += [row[j + 1], below[j]]
                    row[j] = min(1, max(options))
            else:
                word = str(words[j])
                ok = fnmatch.fnmatchcase(word, p) if deny else _allow_word(word, p)
                row[j] = below[j + 1] if ok else 0
        below = row
    return below[0]


def _allow_word(word: str, pattern: str) -> bool:
    """An allow pattern word: path components one at a time, ``..`` only literally."""
    if "/" not in word and "/" not in pattern and word not in (".", ".."):
        return fnmatch.fnmatchcase(word, pattern)
    return _components(tuple(word.split("/")), tuple(pattern.split("/")))


def _components(word: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if not pattern:
        return not word
    if pattern[0] == "**":
        return any(
            _components(word[k:], pattern[1:]) for k in range(len(word) + 1) if ".." not in word[:k]
        )
    if not word:
        return False
    w, p = word[0], pattern[0]
    ok = w == p if w in (".", "..") else fnmatch.fnmatchcase(w, p)
    return ok and _components(word[1:], pattern[1:])


def _literal(word: str) -> str:
    """``word`` as an fnmatch pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in word)
