"""The TUI side of the ``Decider`` protocol: human decisions as modal screens.

The engine awaits these from inside a running request; the screens are
pushed on the app and their result comes back through a future, so this
works from any task on the app's loop (no worker context needed).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from planshell.plan.decider import Decision, Review, ReviewRequest

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

ENTER_PLAN_QUESTION = "The agent asks to plan first: read-only until you approve a plan"


class TuiDecider:
    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def confirm_enter_plan(self, reason: str) -> bool:
        from planshell.ui.screens.confirm import ConfirmScreen

        screen = ConfirmScreen(
            ENTER_PLAN_QUESTION,
            detail=f"Reason: {reason}" if reason else "",
            yes="Plan first",
            no="Not now",
            default=True,
        )
        return bool(await self.ask(screen))

    async def review_plan(self, request: ReviewRequest) -> Review:
        return await self.show_review(request)

    async def show_review(self, request: ReviewRequest) -> Review:
        """Placeholder until the review screen is wired in: always keeps planning."""
        from planshell.ui.screens.confirm import ConfirmScreen

        await self.ask(
            ConfirmScreen(
                f"Plan ready for review: {request.title or request.path.name}",
                detail=f"{request.path}\nThe review screen is not available yet: planning continues.",
                yes="Keep planning",
                no=None,
                default=True,
            )
        )
        return Review(Decision.KEEP)

    async def ask(self, screen: Screen[Any]) -> Any:
        """Push ``screen`` and wait for its result (None when it goes away unanswered)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(result: Any) -> None:
            if not future.done():
                future.set_result(result)

        self.app.push_screen(screen, callback=done)
        return await future
