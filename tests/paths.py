"""Where the repository, its docs and the test data are, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PACKAGE = REPO / "planshell"
DATA = REPO / "tests" / "data"
SHARED = REPO.parent / "shared"  # the shared material beside the checkout, when present
