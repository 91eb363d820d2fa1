"""`planshell --help` and `--version` answer without importing Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from planshell.cli import main
try:
    main([{arg!r}])
except SystemExit:
    pass
print("TEXTUAL-LOADED" if "textual" in sys.modules else "TEXTUAL-NOT-LOADED")
"""


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_help_and_version_do_not_import_textual(arg: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(arg=arg)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "TEXTUAL-NOT-LOADED" in result.stdout
    assert "planshell" in result.stdout


def test_the_cli_entry_points_exist() -> None:
    from planshell.ui import app, review_app

    assert callable(app.run_tui)
    assert callable(review_app.run_review)
