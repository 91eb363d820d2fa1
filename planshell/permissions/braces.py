"""The words bash makes of one word: brace expansion, and globs as holes.

``{rm,-f,x}`` runs ``rm -f x``: a rule must see the expanded words, not the braces. A
word bash only knows when it runs (an expansion, a glob) becomes a
:class:`~planshell.permissions.args.Hole`.
"""

from __future__ import annotations

import re

from planshell.permissions.args import Arg, Hole
from planshell.shell.scanner import WordError
from planshell.shell.words import Word

MAX_BRACE_WORDS = 256
_SEQUENCE = re.compile(
    r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?"
)
Marked = list[tuple[str, bool]]  # (character, quoted)


def expand(word: Word) -> list[Arg]:
    """The words bash makes of ``word``: brace expansion, then globs become holes."""
    if word.value is None:
        return [Hole.MANY if word.split or word.brace else Hole.ONE]
    if not word.brace and not word.glob:
        return [word.value]
    marks = _marks(word.src)
    if "".join(c for c, _ in marks) != word.value:
        raise WordError(f"the word {word.src!r} could not be decoded twice alike")
    pieces = _braces(marks) if word.brace else [marks]
    if len(pieces) > MAX_BRACE_WORDS:
        raise WordError(f"the word {word.src!r} expands to too many words")
    return [Hole.MANY if _has_glob(p) else "".join(c for c, _ in p) for p in pieces]


def _marks(src: str) -> Marked:
    """Quote removal of a word without expansions, keeping which characters were quoted."""
    out: Marked = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            if i + 1 < n and src[i + 1] != "\n":
                out.append((src[i + 1], True))
            i += 2
        elif c == "'":
            end = src.index("'", i + 1)
            out.extend((ch, True) for ch in src[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while src[i] != '"':
                if src[i] == "\\" and src[i + 1] in '$`"\\\n':
                    if src[i + 1] != "\n":
                        out.append((src[i + 1], True))
                    i += 2
                else:
                    out.append((src[i], True))
                    i += 1
            i += 1
        else:
            out.append((c, False))
            i += 1
    return out


def _has_glob(marks: Marked) -> bool:
    for i, (c, quoted) in enumerate(marks):
        if quoted:
            continue
        if c in "*?":
            return True
        if c == "[" and any(ch == "]" and not q for ch, q in marks[i + 2 :]):
            return True
    return False


def _braces(marks: Marked) -> list[Marked]:
    """Bash brace expansion of one word (``{a,b}``, nested, ``{1..3}``, ``{a..c}``)."""
    i = 0
    while i < len(marks):
        c, quoted = marks[i]
        if c == "{" and not quoted and not (i and marks[i - 1] == ("$", False)):
            found = _brace_body(marks, i)
            if found is not None:
                end, parts = found
                alternatives = parts if len(parts) > 1 else _sequence(parts[0])
                if alternatives is not None:
                    tails = _braces(marks[end + 1 :])
                    out: list[Marked] = []
                    for alternative in alternatives:
                        for middle in _braces(alternative):
                            out.extend(marks[:i] + middle + tail for tail in tails)
                            if len(out) > MAX_BRACE_WORDS:
                                return out
                    return out
        i += 1
    return [marks]


def _brace_body(marks: Marked, start: int) -> tuple[int, list[Marked]] | None:
    depth, parts, current = 0, [], []  # type: ignore[var-annotated]
    for j in range(start + 1, len(marks)):
        c, quoted = marks[j]
        if not quoted and c == "{":
            depth += 1
        elif not quoted and c == "}":
            if depth == 0:
                parts.append(current)
                return j, parts
            depth -= 1
        elif not quoted and c == "," and depth == 0:
            parts.append(current)
            current = []
            continue
        current.append(marks[j])
    return None


def _sequence(marks: Marked) -> list[Marked] | None:
    if any(q for _, q in marks):
        return None
    m = _SEQUENCE.fullmatch("".join(c for c, _ in marks))
    if m is None:
        return None
    if m.group(1) is not None:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        width = max(len(m.group(1)), len(m.group(2)))
        padded = any(
            g.lstrip("-").startswith("0") and len(g.lstrip("-")) > 1
            for g in (m.group(1), m.group(2))
        )
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(values) > MAX_BRACE_WORDS:
            raise WordError("a brace sequence expands to too many words")
        texts = [str(v).zfill(width) if padded else str(v) for v in values]
    else:
        a, b = ord(m.group(4)), ord(m.group(5))
        step = abs(int(m.group(6) or 1)) or 1
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        texts = [chr(v) for v in values]
    return [[(ch, True) for ch in text] for text in texts]
