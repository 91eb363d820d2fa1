"""The project's test command comes from the file that says it, never a guess (issue 26 item 5)."""

from __future__ import annotations

import pytest

from planshell.project_tests import find_test_command


def _find(files: dict[str, str]) -> tuple[str, str] | None:
    found = find_test_command(files, files.get)
    return (found.command, found.source) if found else None


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"README.md": "# Calc\n\nRun the tests with `python -m pytest`.\n"}, "python -m pytest"),
        ({"README.md": "## Testing\n\n```sh\n$ uv run pytest -q\n```\n"}, "uv run pytest -q"),
        ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, "python -m pytest"),
        ({"Makefile": "all:\n\tcc x.c\ntest: all\n\t./check\n"}, "make test"),
        ({"package.json": '{"scripts": {"test": "vitest run"}}'}, "npm test"),
        ({"tox.ini": "[tox]\nenvlist = py311\n"}, "tox"),
        ({"noxfile.py": "import nox\n"}, "nox"),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"}, "python -m pytest"),
        ({"go.mod": "module x\n"}, "go test ./..."),
    ],
)
def test_each_kind_of_evidence_names_its_command(files: dict[str, str], command: str) -> None:
    found = _find(files)
    assert found is not None and found[0] == command


def test_the_readme_sentence_wins_and_names_its_source() -> None:
    files = {
        "README.md": "Install with `pip install .`.\n\nRun the tests with `python -m pytest`.\n",
        "Makefile": "test:\n\tpytest\n",
    }
    assert _find(files) == ("python -m pytest", "README.md")


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"README.md": "# Calc\n\nInstall with `pip install .`; see `docs/`.\n"},
        {"Makefile": "build:\n\tcc x.c\n"},  # no test target
        {"package.json": '{"scripts": {"build": "tsc"}}'},
        {"pyproject.toml": '[project]\nname = "calc"\n'},
    ],
)
def test_no_evidence_no_command(files: dict[str, str]) -> None:
    assert _find(files) is None


def test_a_file_that_was_not_read_is_no_evidence_of_its_contents() -> None:
    assert find_test_command({"Makefile", "package.json"}, lambda name: None) is None
