"""The project's own test command, from the files that say it (one rule for every caller).

The demo model's plans (their Verification) and its ``/init`` AGENTS.md both ask
here, so they cannot disagree. Only evidence counts: a README sentence that
names a test command, a Makefile ``test:`` target, ``scripts.test`` in
package.json, tox.ini, noxfile.py, pytest configured in pyproject.toml /
pytest.ini / setup.cfg / tox.ini, Cargo.toml, go.mod. Nothing is invented: no
evidence, no command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

# Files worth reading for it, in the order they are tried after the README.
TEST_EVIDENCE_FILES = (
    "Makefile",
    "makefile",
    "GNUmakefile",
    "package.json",
    "tox.ini",
    "noxfile.py",
    "pyproject.toml",
    "pytest.ini",
    "setup.cfg",
)
_README_RE = re.compile(r"^readme(\.\w+)?$", re.IGNORECASE)
_MAKE_TEST_RE = re.compile(r"^test\s*:(?!=)", re.MULTILINE)
_TICKED_RE = re.compile(r"`([^`\n]{2,120})`")
_FENCE_RE = re.compile(r"^(?:```|~~~)[^\n]*\n(.*?)^(?:```|~~~)", re.MULTILINE | re.DOTALL)
_TEST_WORD_RE = re.compile(r"\btests?\b|\btesting\b|\btest suite\b", re.IGNORECASE)
# First words of a command that runs tests (a README's `pip install .` is not one).
_RUNNERS = frozenset(
    "make npm yarn pnpm npx python python3 pytest uv poetry hatch tox nox cargo go just "
    "bundle rake gradle ./gradlew mvn dotnet bun deno".split()
)
_RUNNER_NEEDS_TEST = frozenset({"python", "python3", "uv", "poetry", "hatch", "npx", "bun", "deno"})


@dataclass(frozen=True)
class TestCommand:
    """A test command and where it was found (``README.md``, ``Makefile target `test```)."""

    command: str
    source: str

    __test__ = False  # not a pytest test class


def _readme_command(text: str) -> str | None:
    """A command the README gives for running the tests: a ticked span on a sentence about tests,
    or the first line of a code block right after one."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not _TEST_WORD_RE.search(line):
            continue
        for span in _TICKED_RE.findall(line):
            if _runs_tests(span):
                return span.strip()
        # "Run the tests:" followed by a fenced block.
        rest = "\n".join(lines[index + 1 : index + 6])
        fence = _FENCE_RE.match(rest.lstrip("\n"))
        if fence:
            first = next((ln.strip() for ln in fence.group(1).splitlines() if ln.strip()), "")
            first = first.removeprefix("$ ").strip()
            if _runs_tests(first):
                return first
    return None


def _runs_tests(command: str) -> bool:
    words = command.split()
    if not words or words[0] not in _RUNNERS:
        return False
    if words[0] in _RUNNER_NEEDS_TEST or words[0] in ("make", "npm", "yarn", "pnpm", "just"):
        return "test" in command.lower()
    return True


def _package_test(text: str) -> bool:
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        return False
    return isinstance(scripts, dict) and isinstance(scripts.get("test"), str)


def find_test_command(
    entries: Collection[str], read: Callable[[str], str | None]
) -> TestCommand | None:
    """The project's test command from the files listed in ``entries`` (top-level names).

    ``read(name)`` is the text of a file that was read (None when it was not):
    only what was read is evidence, beyond a file's mere presence for tox,
    nox, Cargo and Go, whose test command is fixed.
    """
    names = set(entries)
    readme = next((n for n in sorted(names) if _README_RE.match(n)), None)
    if readme:
        command = _readme_command(read(readme) or "")
        if command:
            return TestCommand(command, readme)
    for makefile in ("Makefile", "makefile", "GNUmakefile"):
        if makefile in names and _MAKE_TEST_RE.search(read(makefile) or ""):
            return TestCommand("make test", f"{makefile} target `test`")
    if "package.json" in names and _package_test(read("package.json") or ""):
        return TestCommand("npm test", "package.json script `test`")
    if "tox.ini" in names:
        return TestCommand("tox", "tox.ini")
    if "noxfile.py" in names:
        return TestCommand("nox", "noxfile.py")
    pyproject = read("pyproject.toml") if "pyproject.toml" in names else None
    if pyproject and ("[tool.pytest" in pyproject or "pytest" in pyproject):
        return TestCommand("python -m pytest", "pyproject.toml (pytest is configured)")
    if "pytest.ini" in names:
        return TestCommand("python -m pytest", "pytest.ini")
    if "setup.cfg" in names and "[tool:pytest]" in (read("setup.cfg") or ""):
        return TestCommand("python -m pytest", "setup.cfg (`[tool:pytest]`)")
    if "Cargo.toml" in names:
        return TestCommand("cargo test", "Cargo.toml")
    if "go.mod" in names:
        return TestCommand("go test ./...", "go.mod")
    return None
