"""A snippet run in a new interpreter: the tests of what a start-up imports.

``sys.modules`` of the test process already holds whatever earlier tests loaded, so a
check that a path stays clear of a module (pydantic, the lint, the chat app) needs an
interpreter of its own.
"""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str) -> str:
    """Run ``code`` with ``python -c`` (this interpreter, nothing imported yet); what it
    printed, once it exited 0 (otherwise the test fails with its stderr)."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
