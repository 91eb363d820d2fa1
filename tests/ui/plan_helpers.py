"""The chat app in plan mode: a scripted app, a saved plan, and what the app shows of the plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planshell.config import Settings
from planshell.llm.scripted import ScriptedProvider
from planshell.ui.app import PlanshellApp
from planshell.ui.widgets.mode_chip import ModeChip

SIZE = (100, 30)

PLAN = """# Plan: Add caching

## Goal

Cache widgets.

## Steps

- [ ] Read the server
- [ ] Add the cache
- [ ] Test it

## Verification

```sh
make test
```
"""


def make_app(
    project: Path, replies: list[Any], settings: Settings | None = None, **kwargs: Any
) -> PlanshellApp:
    kwargs.setdefault("persist", False)
    return PlanshellApp(
        settings or Settings(),
        project,
        provider=ScriptedProvider(replies),
        project_label="~/proj",
        **kwargs,
    )


def runtime(app: PlanshellApp) -> Any:
    assert app.runtime is not None
    return app.runtime


def mode(app: PlanshellApp) -> str:
    return str(runtime(app).plan.mode.value)


def plans_dir(project: Path) -> Path:
    return project / ".planshell" / "plans"


def save_plan(project: Path, name: str = "2026-01-01-1200-caching.md", text: str = PLAN) -> Path:
    folder = plans_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def chip_text(app: PlanshellApp) -> str:
    return str(app.screen_stack[0].query_one(ModeChip).render()).strip()


def toasts(app: PlanshellApp) -> list[str]:
    return [str(n.message) for n in app.toasts]
