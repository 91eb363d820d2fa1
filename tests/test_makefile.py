"""`make run` / `make test` on a fresh clone say what they do (issue 12, item 15).

A dry run (``make -n``) against a venv that does not exist lists every step a
fresh clone runs: each pip install is announced, and none is silenced.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("target", ["run", "test"])
def test_fresh_clone_steps_are_announced(tmp_path: Path, target: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    out = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    pip = [i for i, line in enumerate(out) if " -m pip install" in line]
    assert len(pip) >= 2  # pip itself, then planshell
    for index in pip:
        assert "--quiet" not in out[index] and " -q " not in out[index], out[index]
    venv_step = next(i for i, line in enumerate(out) if " -m venv " in line)
    # A line saying what happens comes before the venv and before planshell's install.
    assert out[venv_step - 1].startswith("echo ")
    assert out[pip[-1] - 1].startswith("echo ")
