"""Every in-page link of the docs (``[x](#anchor)``, ``[x](file.md#anchor)``) names a heading that exists.

Sections get moved and renamed; a link that silently stops working is how a
newcomer gets lost. Anchors are GitHub's: the heading in lower case, without
punctuation except ``-`` and ``_``, spaces as ``-``, and ``-1``, ``-2``… for repeats.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.paths import DOCS, REPO

LINK = re.compile(r"\]\(([^)\s]*?)#([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match[1].strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


DOC_FILES = sorted([*DOCS.glob("*.md"), REPO / "README.md"])


@pytest.mark.parametrize("doc", DOC_FILES, ids=lambda p: p.name)
def test_every_anchor_link_names_a_heading(doc: Path) -> None:
    broken = []
    for target, anchor in LINK.findall(doc.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        file = doc if not target else (doc.parent / target)
        if file.suffix != ".md" or not file.exists():
            continue
        if anchor not in anchors(file):
            broken.append(f"{target}#{anchor}")
    assert broken == [], f"{doc.name}: links to headings that do not exist: {broken}"
