"""Generated plans shared by the review tests and bench/review.py."""

from __future__ import annotations


def generated_plan(lines: int, *, title: str, intro: str, last_line: str | None = None) -> str:
    """A realistic plan of exactly ``lines`` lines: phases with prose, tasks, code, tables."""
    out = [f"# Plan: {title}", "", intro, ""]
    number = 0
    while len(out) < lines:
        number += 1
        out += [
            f"## Phase {number}: change module {number}",
            "",
            f"Paragraph about phase {number} with **bold** text, `code({number})`, *emphasis* "
            "and a [link](https://example.com) that wraps across the width of the screen.",
            "",
            "### Steps",
            "",
            f"- [ ] Edit `src/mod{number}.py`: add the function and its tests",
            f"- [x] Read `src/mod{number}.py` and note the callers",
            "  - nested detail",
            "",
            "```python",
            f"# phase {number}: a comment, not a heading",
            f"def f{number}(x):",
            "    return x * 2",
            "```",
            "",
            "| file | change |",
            "|------|--------|",
            f"| mod{number}.py | new |",
            "",
        ]
    out = out[:lines]
    if last_line is not None:
        out[-1] = last_line
    return "\n".join(out) + "\n"


# A plan that names two files (one to create) and runs `make test`: the scope fence's tests.
RATE_LIMITS_PLAN = """# Plan: Rate limits

## Context

The handler is `src/app/server.py`.

## Steps

- [ ] Create `src/app/limits.py` with a token bucket
- [ ] Call it from `src/app/server.py`

## Verification

```sh
make test
```
"""
