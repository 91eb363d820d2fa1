"""Permission rules: ``bash(pytest *)``, ``edit(src/**)``, ``write(docs/**)``.

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
"""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass
from re import Pattern

from planshell.plan.bash_guard import Segment
from planshell.tools.files import glob_to_regex

RULE_TOOLS = frozenset({"bash", "edit", "write"})
# Commands whose second word picks what they do: "s" allows the pair (git commit).
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "cargo", "go", "uv", "pip", "pip3", "poetry", "docker",
        "podman", "kubectl", "make", "just", "dotnet", "gradle", "mvn", "bundle", "rake",
        "hatch", "pdm", "bun", "deno", "npx", "gh", "systemctl", "brew", "apt", "apt-get",
    }
)  # fmt: skip


class RuleError(ValueError):
    """A rule that cannot be understood (the message names it)."""


@dataclass(frozen=True)
class Rule:
    text: str  # as written, for messages and the log
    tool: str
    words: tuple[str, ...] | None = None  # bash pattern words; None: any command
    glob: Pattern[str] | None = None  # edit/write path pattern; None: any path

    def matches_segment(self, segment: Segment) -> bool:
        if self.tool != "bash" or not segment.words:
            return False
        if self.words is None:
            return True
        pattern, words = self.words, segment.words
        if pattern and pattern[-1] == "*":
            fixed = pattern[:-1]
            if len(words) < len(fixed):
                return False
            words = words[: len(fixed)]
            pattern = fixed
        return len(words) == len(pattern) and all(
            fnmatch.fnmatchcase(w, p) for w, p in zip(words, pattern, strict=True)
        )

    def matches_path(self, tool: str, rel: str) -> bool:
        if self.tool != tool:
            return False
        return self.glob is None or self.glob.fullmatch(rel) is not None


def parse_rule(text: str) -> Rule:
    raw = text.strip()
    name, paren, rest = raw.partition("(")
    name = name.strip()
    if name not in RULE_TOOLS:
        raise RuleError(f"{raw!r}: rules name bash, edit or write (e.g. 'bash(pytest *)')")
    if not paren:
        return Rule(raw, name)
    if not rest.endswith(")"):
        raise RuleError(f"{raw!r}: the pattern must end with ')'")
    body = rest[:-1].strip()
    if not body:
        raise RuleError(f"{raw!r}: the pattern is empty (write {name} alone to cover every call)")
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
    words = segment.words
    prefix = [words[0]]
    if len(words) > 1 and words[0] in SUBCOMMAND_PROGRAMS and not words[1].startswith("-"):
        prefix.append(words[1])
    return f"bash({shlex.join(_literal(w) for w in prefix)} *)"


def _literal(word: str) -> str:
    """``word`` as an fnmatch pattern matching only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in word)
