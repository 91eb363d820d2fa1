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


def test_make_install_links_the_command_into_local_bin(tmp_path: Path) -> None:
    """`make install` (issue 26, item 7) links .venv/bin/planshell into ~/.local/bin."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "bin" / "planshell").write_text("#!/bin/sh\n")
    (venv / ".installed").write_text("")  # newer than pyproject.toml: nothing to reinstall
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    result = subprocess.run(
        ["make", "install", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    link = home / ".local" / "bin" / "planshell"
    assert link.is_symlink()
    assert Path(link.readlink()) == venv / "bin" / "planshell"
    assert "pip install" not in result.stdout
    assert "not on your PATH" in result.stdout
    assert "planshell -C DIR" in result.stdout


def test_readme_shows_install_after_the_first_two_commands() -> None:
    """The README keeps `make run`/`make test` first, then shows how to use it anywhere."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [line for line in readme.splitlines() if line.startswith("make ")]
    assert lines[0].startswith("make run") and lines[1].startswith("make test")
    assert lines[2].startswith("make install")
    head = readme[: readme.index("## A short tour")]
    assert "planshell -C" in head and "cd " in head and "planshell" in head
