"""Issue 24's contract as one script, shared by the Pilot test and the tmux walk-through.

A plan that names one file; the model edits it, tries an unplanned file, ticks a
step it did nothing for, runs Verification and completes. Each test wraps the
turns in its own reply type (the in-process scripted provider, or SSE).
"""

from __future__ import annotations

from typing import Any

SERVER = "src/app/server.py"
UNPLANNED = "src/app/cache.py"
CHECK = "grep -q limiter src/app/server.py"
PLAN = f"""# Plan: Rate limit the handler

## Goal

Limit requests.

## Steps

- [ ] Call the limiter from `{SERVER}`
- [ ] Decide the bucket size
- [ ] Check the handler calls it

## Verification

```sh
{CHECK}
```
"""

Call = tuple[str, dict[str, Any]]


def _tick(step: int) -> list[Call]:
    return [("set_plan_steps", {"updates": [{"step": step, "status": "done"}]})]


# (text, calls) per model turn; the last is the closing words.
TURNS: list[tuple[str, list[Call]]] = [
    (
        "Writing the plan.",
        [("write_plan", {"title": "Rate limit", "content": PLAN, "plan_path": "rl.md"})],
    ),
    ("", [("exit_plan_mode", {"plan_path": "rl.md"})]),
    (
        "",
        [
            (
                "edit",
                {
                    "path": SERVER,
                    "old_string": "    # TODO: rate limiting\n",
                    "new_string": "    limiter.take()\n",
                },
            )
        ],
    ),
    ("", [("write", {"path": UNPLANNED, "content": "CACHE = {}\n"})]),
    ("", _tick(1)),
    ("", _tick(2)),  # nothing was done for step 2: ticked without evidence
    ("", [("bash", {"command": CHECK})]),
    ("", _tick(3)),
    ("", [("plan_complete", {})]),
    ("All three steps are done.", []),
]
