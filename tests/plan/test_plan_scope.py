"""The plan's declared scope (issue 24.4): which files an approved plan names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planshell.plan.scope import Scope, normalise_entry, plan_scope
from tests.engine_helpers import RATE_LIMIT_PLAN

PLAN = """# Plan: Cache lookups

## Goal

Do not touch `goal/only.py`: the Goal section declares nothing.

## Context

The lookups live in `./src/widgets.py` (see `src/widgets.py:42`); tests in `tests/`.
Run `pytest -q` and read `https://example.com/a.py`.

### Notes

Fixtures: `tests/fixtures/*.json`.

## Steps

- [ ] Add a cache to `src/widgets.py`
- [ ] Create `src/cache.py` with the LRU helper
- [ ] Update `docs/**/*.md` and `Makefile`
  - nested detail naming `src/nested.py` counts too
- [ ] Never `/etc/passwd`, `../outside.py`, `src/../../x.py` or `~/.bashrc`
- [ ] Not paths: `make test`, `x = 1`, `--force`, `https://evil.example/a.py`

## Risks

`risks/only.py` is not scope.

## Verification

```sh
touch fenced/only.py
```
"""


def test_paths_globs_and_directories_from_context_and_steps() -> None:
    scope = plan_scope(PLAN)
    assert scope.paths == {"src/widgets.py", "src/cache.py", "Makefile", "src/nested.py"}
    assert scope.directories == ("tests/",)
    assert scope.globs == ("tests/fixtures/*.json", "docs/**/*.md")


@pytest.mark.parametrize(
    ("path", "covered"),
    [
        ("src/widgets.py", True),
        ("./src/widgets.py", True),
        ("src/cache.py", True),  # a new file the plan says it creates
        ("tests/test_cache.py", True),  # under the tests/ directory
        ("tests/deep/er/x.py", True),
        ("docs/guide/a.md", True),
        ("docs/a.md", True),  # ** spans zero directories
        ("docs/a.txt", False),
        ("src/other.py", False),
        ("src/widgets.pyc", False),
        ("src", False),
        ("testsuite/x.py", False),  # "tests/" is a directory, not a prefix of names
        ("goal/only.py", False),  # Goal, Risks and fenced code declare nothing
        ("risks/only.py", False),
        ("fenced/only.py", False),
        ("make test", False),
        ("../outside.py", False),
        ("/etc/passwd", False),
        ("etc/passwd", False),
    ],
)
def test_covers(path: str, covered: bool) -> None:
    assert plan_scope(PLAN).covers(path) is covered


def test_the_template_style_plan_names_its_file() -> None:
    scope = plan_scope(RATE_LIMIT_PLAN)
    assert scope.covers("src/app/server.py")
    assert not scope.covers("README.md")


def test_a_plan_naming_no_files_has_an_empty_scope() -> None:
    scope = plan_scope("# Plan: x\n\n## Steps\n\n- [ ] do it\n")
    assert scope.empty and not scope.covers("anything.py")


def test_files_section_counts() -> None:
    text = "# Plan: x\n\n## Files to change\n\n- `a/b.py`\n\n## Goal\n\n`c.py`\n"
    assert plan_scope(text).entries() == ["a/b.py"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("./a/b.py", "a/b.py"),
        ("a//b/./c", "a/b/c"),
        ("dir/", "dir/"),
        ("./", None),
        ("", None),
        ("/abs", None),
        ("~/x", None),
        ("C:/x", None),
        ("a/../b", None),
        ("..", None),
    ],
)
def test_normalise_entry(text: str, expected: str | None) -> None:
    assert normalise_entry(text) == expected


_NAME = st.text(alphabet="abcXYZ019_-.", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..") and not s.startswith("-")
)
_REL = st.lists(_NAME, min_size=1, max_size=4).map("/".join)


@given(_REL)
def test_a_named_path_is_covered_however_it_is_written(rel: str) -> None:
    scope = plan_scope(f"## Steps\n\n- [ ] change `{rel}`\n")
    assert scope.covers(rel)
    assert scope.covers(f"./{rel}")
    assert not scope.covers(f"../{rel}")
    assert not scope.covers(f"/{rel}")


@given(_REL, _REL)
def test_a_directory_covers_exactly_what_is_under_it(directory: str, rel: str) -> None:
    scope = plan_scope(f"## Context\n\nAll of `{directory}/`.\n")
    assert scope.covers(f"{directory}/{rel}")
    assert not scope.covers(directory)


@given(st.text(max_size=200))
def test_any_text_gives_a_scope_and_escapes_are_never_covered(text: str) -> None:
    scope = plan_scope(text)
    assert isinstance(scope, Scope)
    assert not scope.covers("../x.py") and not scope.covers("/etc/passwd")


@given(st.lists(st.sampled_from(["/etc/x", "../up.py", "a/../../b", "~/.ssh/x"]), max_size=4))
def test_escaping_entries_cover_nothing(entries: list[str]) -> None:
    body = "\n".join(f"- [ ] touch `{e}`" for e in entries)
    assert plan_scope(f"## Steps\n\n{body}\n").empty
