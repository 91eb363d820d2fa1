"""Plan lint: checks that run when a plan is written, before anyone reads a word.

The findings go back to the model in ``write_plan``'s result (so it can fix
them before asking for review) and to the review screen's chips and ``l`` list;
approving while an *error* remains asks first. Every check is a small, explicit
rule, tuned to miss rather than to cry wolf:

* ``missing-path`` (error): a file the plan cites does not exist and is not
  marked as new. Cited files are the exact paths and directories of the plan's
  declared scope (``scope.py``: code spans in Context, Steps and "Files…"
  sections) that look like files: the span holds a ``/`` or ends in a known
  file extension (``README.md``, ``app.py``), so ``parse_plan`` or
  ``self.store`` are not taken for files. A path is *marked as new* when a line
  citing it has one of the words new, create, add, generate, write, rename,
  move (any form: "creates", "added", "renamed to"), or sits under a heading
  with "new" in it ("## New files").
* ``outside-project`` (error): a cited path leads out of the project through a
  symlink. The check is lexical plus ``realpath``/``lstat``: no file is opened,
  nothing outside the project is ever sized or read.
* ``no-verification`` (error): no Verification section; ``no-command``
  (error): one without a runnable command (``report.verification_commands``:
  the lines of its code blocks, else its inline code; comments are not commands).
* ``placeholder`` (error): ``TODO``, ``TBD`` or ``FIXME`` outside code, or a
  line whose whole content is an ellipsis (``...``, ``…``, ``- [ ] …``) or that
  ends in ``: …``.
* ``vague-step`` (warning): a step of at most five words starting with a vague
  verb (improve, refactor, clean up, fix, handle, update, optimise, tidy,
  polish, enhance, tweak, adjust, rework, address) that names no path or code
  span, has no digits, and has no nested detail lines.
* ``open-questions`` (warning): the list items of an "Open questions" section
  (items saying "none" or "n/a" do not count).
* ``too-many-steps`` (error): more steps than ``MAX_STEPS``.

Findings hold plan- and repository-authored text: front ends sanitise them.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from planshell.plan.document import MAX_STEPS, PlanDocument, Section, parse_plan
from planshell.plan.report import verification_commands
from planshell.plan.scope import path_like, plan_scope, scope_sections

__all__ = [
    "LintFinding",
    "PathProbe",
    "chips",
    "errors",
    "file_like",
    "lint_plan",
    "probe_path",
    "summary",
]

Severity = Literal["error", "warning"]
MAX_CHECKED_PATHS = 200  # a hostile plan citing 10,000 paths costs at most this many lstat calls

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"`([^`\n]+)`")
_NEW_WORDS = re.compile(
    r"\b(new|create[sd]?|creating|add(?:s|ed|ing)?|generate[sd]?|generating|"
    r"writes?|writing|written|rename[sd]?|renaming|move[sd]?|moving)\b",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"\b(TODO|TBD|FIXME)\b")
_ELLIPSIS = re.compile(r"\.{3,}|…")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)(?:\[[ xX]\](?:\s+|$))?")
_FILE_EXTENSIONS = frozenset(
    "py pyi pyx js jsx mjs cjs ts tsx vue svelte rs go c h cc cpp hpp cs java kt kts scala "
    "swift m rb php pl lua r jl ex exs erl hs ml clj dart sh bash zsh fish ps1 bat sql "
    "md rst txt adoc json jsonl yaml yml toml ini cfg conf env lock xml html htm css scss "
    "sass less tcss csv tsv proto graphql gradle mk cmake dockerfile tf hcl nix ipynb "
    "svg png jpg gif".split()
)
_FILE_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Procfile", "Gemfile", "Rakefile"})
_VAGUE_VERBS = (
    "improve",
    "refactor",
    "clean up",
    "cleanup",
    "fix",
    "handle",
    "update",
    "optimise",
    "optimize",
    "tidy",
    "tidy up",
    "polish",
    "enhance",
    "tweak",
    "adjust",
    "rework",
    "address",
)
_VAGUE_MAX_WORDS = 5
_NONE_ITEMS = frozenset({"none", "none.", "n/a", "na", "no", "nothing", "none yet", "-"})
_QUESTION_TITLES = ("open questions", "questions", "unresolved questions", "open issues")


@dataclass(frozen=True)
class LintFinding:
    """One problem: its severity, a stable code, a sentence, and the section it is in."""

    severity: Severity
    code: str
    message: str
    section: str = ""

    def line(self) -> str:
        """One line for the model and the list: ``error [no-verification] …``."""
        where = f" (in {self.section})" if self.section else ""
        return f"{self.severity} [{self.code}] {self.message}{where}"


@dataclass(frozen=True)
class PathProbe:
    """What a project-relative path is on disk, found without following links out.

    ``status``: "file", "directory", "missing", "outside" (a symlink leads out of
    the project: never sized), "special" (fifo, socket, device, a link loop) or
    "unknown" (the lstat failed for another reason). ``size`` only for a file.
    """

    status: str
    size: int | None = None


# ------------------------------------------------------------------ paths on disk


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def probe_path(root: Path, rel: str) -> PathProbe:
    """Probe ``rel`` (already normalised: no ``..``, not absolute) under ``root``.

    ``realpath`` resolves every symlink on the way; a result outside the project
    is "outside" and is not stat-ed. Inside, one ``lstat`` (no file is opened).
    """
    root_real = os.path.realpath(root)
    lexical = os.path.join(root_real, rel.rstrip("/"))
    try:
        real = os.path.realpath(lexical)
    except (OSError, ValueError):
        return PathProbe("unknown")
    if not _within(real, root_real):
        return PathProbe("outside")
    try:
        info = os.lstat(real)
    except (FileNotFoundError, NotADirectoryError):
        return PathProbe("missing")
    except (OSError, ValueError):
        return PathProbe("unknown")
    if stat.S_ISREG(info.st_mode):
        return PathProbe("file", info.st_size)
    if stat.S_ISDIR(info.st_mode):
        return PathProbe("directory")
    return PathProbe("special")  # fifo, socket, device, or a link realpath could not resolve


def file_like(entry: str) -> bool:
    """Whether a scope entry names a file or folder (not a symbol such as ``self.store``)."""
    if "/" in entry.rstrip("/") or entry.endswith("/"):
        return True
    if entry in _FILE_NAMES:
        return True
    stem, dot, extension = entry.rpartition(".")
    return bool(dot and stem and extension.casefold() in _FILE_EXTENSIONS)


# ---------------------------------------------------------------------- helpers


def _body_lines(section: Section) -> list[tuple[str, bool]]:
    """(line, inside a fence) for each body line of ``section`` (its heading dropped)."""
    out: list[tuple[str, bool]] = []
    fence: str | None = None
    lines = section.text.split("\n")[1 if section.level else 0 :]
    for line in lines:
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            out.append((line, True))
            continue
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.lstrip(fence[0]).strip():
                fence = None
            out.append((line, True))
            continue
        out.append((line, False))
    return out


def _normal_title(title: str) -> str:
    return title.strip().strip("*_`").strip().rstrip(":").strip().casefold()


def _title(section: Section) -> str:
    return " ".join(section.title.split())[:80]


# ----------------------------------------------------------------------- checks


def _cited_paths(doc: PlanDocument, root: Path | None) -> list[LintFinding]:
    if root is None:
        return []
    scope = plan_scope(doc.text)
    declared = set(scope.paths) | set(scope.directories)
    cited: dict[str, tuple[bool, str]] = {}  # entry -> (marked new, first section)
    for section in scope_sections(doc):
        heading_new = bool(re.search(r"\bnew\b", section.title, re.IGNORECASE))
        for line, fenced in _body_lines(section):
            if fenced:
                continue
            marked = heading_new or _NEW_WORDS.search(_SPAN.sub(" ", line)) is not None
            for match in _SPAN.finditer(line):
                entry = path_like(match.group(1))
                if entry is None or entry not in declared or not file_like(entry):
                    continue
                was_new, where = cited.get(entry, (False, _title(section)))
                cited[entry] = (was_new or marked, where)
    findings: list[LintFinding] = []
    for entry, (marked_new, where) in list(cited.items())[:MAX_CHECKED_PATHS]:
        found = probe_path(root, entry)
        if found.status == "outside":
            findings.append(
                LintFinding(
                    "error",
                    "outside-project",
                    f"`{entry}` leads outside the project (a symlink): it is not a project file",
                    where,
                )
            )
        elif found.status == "missing" and not marked_new:
            findings.append(
                LintFinding(
                    "error",
                    "missing-path",
                    f"`{entry}` does not exist; if the plan creates it, say so "
                    '(e.g. "create `' + entry + '`" or "new")',
                    where,
                )
            )
    return findings


def _verification(doc: PlanDocument) -> list[LintFinding]:
    titles = [_normal_title(s.title) for s in doc.sections if s.level]
    if not any(t.startswith("verification") or t.endswith(" verification") for t in titles):
        return [
            LintFinding(
                "error",
                "no-verification",
                "no Verification section: add one with the commands that prove the change works",
            )
        ]
    if not verification_commands(doc.text):
        return [
            LintFinding(
                "error",
                "no-command",
                "the Verification section has no runnable command (put commands in a code block)",
                "Verification",
            )
        ]
    return []


def _placeholders(doc: PlanDocument) -> list[LintFinding]:
    findings: list[LintFinding] = []
    for section in doc.sections:
        count = 0
        first = ""
        for line, fenced in _body_lines(section):
            if fenced:
                continue
            prose = _SPAN.sub(" ", line)
            hit = _PLACEHOLDER.search(prose)
            word = hit.group(1) if hit else ""
            if not word:
                content = _LIST_MARKER.sub("", prose).strip()
                bare = _ELLIPSIS.sub("", content).strip(" \t[]()<>{}.:;,-*_")
                ends = re.search(r":\s*(\.{3,}|…)\s*$", content)
                if _ELLIPSIS.search(content) and (not bare or ends):
                    word = "…"
            if word:
                count += 1
                first = first or word
        if count:
            noun = "placeholder" if count == 1 else "placeholders"
            findings.append(
                LintFinding(
                    "error",
                    "placeholder",
                    f"{count} {noun} ({first}) left in the plan: fill them in",
                    _title(section),
                )
            )
    return findings


def _step_words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*", text)


def _is_vague(text: str, detailed: bool) -> bool:
    if detailed or "`" in text or "/" in text or re.search(r"\d", text):
        return False
    words = _step_words(text)
    if not words or len(words) > _VAGUE_MAX_WORDS:
        return False
    if any(file_like(token.strip(".,;:()")) for token in text.split()):
        return False
    lowered = " ".join(word.casefold() for word in words)
    return any(lowered == verb or lowered.startswith(verb + " ") for verb in _VAGUE_VERBS)


def _vague_steps(doc: PlanDocument) -> list[LintFinding]:
    lines = doc.text.split("\n")
    steps = doc.steps
    findings: list[LintFinding] = []
    for number, step in enumerate(steps):
        if number + 1 < len(steps):
            end = steps[number + 1].line
        else:  # the last step: its detail is the indented lines right under it
            end = step.line + 1
            while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].strip():
                end += 1
        detailed = any(line.strip() for line in lines[step.line + 1 : end])
        if _is_vague(step.text, detailed):
            findings.append(
                LintFinding(
                    "warning",
                    "vague-step",
                    f"step {step.index} is too vague to check: {step.text!r} "
                    "(say which file or function, and what changes)",
                    "Steps",
                )
            )
    return findings


def _open_questions(doc: PlanDocument) -> list[LintFinding]:
    count = 0
    where = ""
    for section in doc.sections:
        title = _normal_title(section.title)
        if not section.level or not any(
            title == t or title.endswith(" " + t) for t in _QUESTION_TITLES
        ):
            continue
        for line, fenced in _body_lines(section):
            if fenced or line[:1] in (" ", "\t") or not _LIST_MARKER.match(line):
                continue
            item = _LIST_MARKER.sub("", line).strip().casefold()
            if item and item not in _NONE_ITEMS and not item.startswith(("none ", "none.")):
                count += 1
                where = where or _title(section)
    if not count:
        return []
    noun = "open question" if count == 1 else "open questions"
    return [
        LintFinding(
            "warning",
            "open-questions",
            f"{count} {noun}: answer them (ask the user) or settle them before approval",
            where,
        )
    ]


def _step_cap(doc: PlanDocument) -> list[LintFinding]:
    if doc.total_steps <= MAX_STEPS:
        return []
    return [
        LintFinding(
            "error",
            "too-many-steps",
            f"{doc.total_steps} steps, over the cap of {MAX_STEPS}: split it into phases",
            "Steps",
        )
    ]


# ----------------------------------------------------------------------- public


def lint_plan(text: str, root: Path | None = None) -> tuple[LintFinding, ...]:
    """Every finding for the plan ``text``; errors first. ``root`` enables the path checks."""
    doc = parse_plan(text)
    findings = [
        *_verification(doc),
        *_placeholders(doc),
        *_step_cap(doc),
        *_cited_paths(doc, root),
        *_vague_steps(doc),
        *_open_questions(doc),
    ]
    findings.sort(key=lambda f: f.severity != "error")
    return tuple(findings)


def errors(findings: tuple[LintFinding, ...] | list[LintFinding]) -> list[LintFinding]:
    """The findings that make approval ask first."""
    return [f for f in findings if f.severity == "error"]


def summary(findings: tuple[LintFinding, ...] | list[LintFinding]) -> str:
    """ "2 errors · 1 warning", "" when there is nothing."""
    bad = len(errors(findings))
    warn = len(findings) - bad
    parts = []
    if bad:
        parts.append(f"{bad} error" + ("" if bad == 1 else "s"))
    if warn:
        parts.append(f"{warn} warning" + ("" if warn == 1 else "s"))
    return " · ".join(parts)


_CHIP_LABELS: dict[str, tuple[str, str]] = {
    # code -> (one, many: "{n}" is the count)
    "no-verification": ("no Verification", "no Verification"),
    "no-command": ("no runnable check", "no runnable check"),
    "placeholder": ("placeholder", "{n} placeholders"),
    "too-many-steps": ("too many steps", "too many steps"),
    "missing-path": ("missing file", "{n} missing files"),
    "outside-project": ("path outside project", "{n} paths outside project"),
    "vague-step": ("vague step", "{n} vague steps"),
}


def chips(findings: tuple[LintFinding, ...] | list[LintFinding]) -> list[tuple[Severity, str]]:
    """One (severity, label) chip per kind of finding, errors first: "no Verification"."""
    out: list[tuple[Severity, str]] = []
    counts: dict[str, tuple[Severity, int, LintFinding]] = {}
    for finding in findings:
        severity, count, first = counts.get(finding.code, (finding.severity, 0, finding))
        counts[finding.code] = (severity, count + 1, first)
    for code, (severity, count, first) in counts.items():
        if code == "open-questions":
            out.append((severity, first.message.split(":", 1)[0]))
            continue
        if code == "placeholder":
            count = sum(int(f.message.split()[0]) for f in findings if f.code == code)
        one, many = _CHIP_LABELS.get(code, (code, code))
        out.append((severity, one if count == 1 else many.format(n=count)))
    return out
