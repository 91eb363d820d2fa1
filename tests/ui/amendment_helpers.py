"""A host app for one decision screen (the amendment review, the approval prompt)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.screen import Screen

from planshell.config import Settings
from planshell.llm.scripted import Reply
from planshell.plan.decider import AmendmentRequest, ApprovalRequest
from planshell.ui.app import PlanshellApp
from planshell.ui.screens.results import push_answering
from planshell.ui.toasts import ToastLog
from tests.ui_helpers import snapshot_app

STEP = "Call the limiter from `src/app/server.py`"
NEW_STEP = "Call the limiter from `src/app/router.py` before each request"
AMEND = (
    "amend_plan",
    {"step": 2, "reason": "the handler moved to the router", "new_text": NEW_STEP},
)
PLAN = f"""# Plan: Rate limits

## Steps

- [ ] Create `src/app/limits.py` with a token bucket
- [ ] {STEP}

## Verification

```sh
make test
```
"""


def amendment_request(**kwargs: Any) -> AmendmentRequest:
    fields: dict[str, Any] = {
        "path": Path("/p/.planshell/plans/rate-limits.md"),
        "title": "Rate limits",
        "step": 2,
        "old_text": STEP,
        "new_text": NEW_STEP,
        "reason": "the handler moved to the router",
        "added_scope": ("src/app/router.py",),
    }
    fields.update(kwargs)
    return AmendmentRequest(**fields)


def unplanned_request(add_to_plan: bool = True) -> ApprovalRequest:
    return ApprovalRequest(
        "write",
        "write README.md",
        "write",
        "Unplanned file README.md — allow once / add to the plan / deny",
        path="README.md",
        diff="--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new\n",
        add_to_plan=add_to_plan,
    )


class ScreenHost(ToastLog[None]):
    """Pushes the screen ``make()`` builds and records what it answered."""

    def __init__(self, make: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self.make = make
        self.results: list[Any] = []
        self.pushed: Screen[Any] | None = None

    def on_mount(self) -> None:
        self.pushed = self.make()
        push_answering(self, self.pushed, self.results.append)


def executing_app(project: Path, replies: list[Reply], mode: str = "accept-edits") -> PlanshellApp:
    """The chat app (snapshot-stable) that will execute PLAN when ``start_plan`` is called."""
    settings = Settings.model_validate({"plan": {"sandbox": "off"}, "permissions": {"mode": mode}})
    return snapshot_app(project, replies, settings)


def start_plan(app: PlanshellApp) -> Path:
    """Save PLAN and execute it as a person would from the picker; the plan's path."""
    runtime = app.runtime
    assert runtime is not None
    path = runtime.store.write("rate-limits.md", PLAN)
    runtime.plan.execute_existing(path)
    return path
