"""``planshell review PATH``: read any plan file in the review screen, read-only.

Nothing can be approved here (approval belongs to a running session), so the
screen offers scrolling and q/Esc only. The file may be anywhere, so the plan
store's rules are applied by hand: a regular file, not binary, UTF-8, and at
most 4 MiB (larger than the store's 256 KiB cap: viewing is cheap and safe).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App

from planshell.fsutil import ReadRefused, is_binary, read_user_file
from planshell.plan.decider import Review, ReviewRequest
from planshell.plan.document import parse_plan
from planshell.plan.store import find_project_root
from planshell.sanitize import count_hidden

if TYPE_CHECKING:
    from planshell.ui.screens.review import ReviewScreen

__all__ = [
    "MAX_VIEW_BYTES",
    "ReviewApp",
    "ReviewFileError",
    "read_plan_file",
    "review_app_for",
    "run_review",
]

MAX_VIEW_BYTES = 4 * 1024 * 1024


class ReviewFileError(Exception):
    """The file cannot be shown; the message says why, for the user."""


def read_plan_file(path: Path) -> str:
    """Read ``path`` for viewing, refusing what the review screen should not show."""
    try:
        data = read_user_file(path, MAX_VIEW_BYTES)  # the person named it on the command line
    except ReadRefused as refused:
        if refused.reason == "not-regular":
            raise ReviewFileError(f"{path}: not a regular file.") from None
        if refused.reason == "too-large":
            raise ReviewFileError(
                f"{path}: {refused.size:,} bytes is over the 4 MiB limit for viewing."
            ) from None
        raise ReviewFileError(f"{refused}.") from None
    except OSError as exc:
        raise ReviewFileError(f"{path}: cannot open it ({exc.strerror}).") from None
    if is_binary(data):
        raise ReviewFileError(f"{path}: looks like a binary file, not a markdown plan.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReviewFileError(f"{path}: not UTF-8 text.") from None


class ReviewApp(App[int]):
    """Hosts one read-only ReviewScreen; exits 0 when it closes."""

    def __init__(
        self,
        request: ReviewRequest,
        theme: str | None = None,
        *,
        lint_later: bool = False,
        project: Path | None = None,
    ) -> None:
        super().__init__()
        self.request = request
        self.lint_later = lint_later  # lint the plan after the first frame (run_review)
        self.project = project  # where the lint checks the plan's paths
        self.theme_warnings: list[str] = []
        self._use_themes(theme)

    def _use_themes(self, wanted: str | None) -> None:
        """Register planshell's theme files and pick ``wanted`` (else the default)."""
        try:
            from planshell.ui import themes
        except ImportError:  # pragma: no cover - themes ship with planshell
            return
        loaded = themes.load_themes()
        self.theme_warnings.extend(loaded.warnings)
        for theme in loaded.themes:
            self.register_theme(theme)
        names = set(self.available_themes)
        if wanted and wanted not in names:
            self.theme_warnings.append(f"unknown theme {wanted!r}; using the default.")
            wanted = None
        choice = wanted or themes.DEFAULT_THEME
        if choice in names:
            self.theme = choice

    def on_mount(self) -> None:
        from planshell.ui.screens.results import push_answering
        from planshell.ui.screens.review import ReviewScreen

        def closed(_: Review | None) -> None:
            self.exit(0)

        screen = ReviewScreen(self.request, read_only=True)
        push_answering(self, screen, closed)
        if self.lint_later:
            # Lint is O(plan), checks paths on disk (seconds on a 100k-line plan) and
            # imports what the first frame does not need (the report, scope and tool
            # modules, pydantic): its chips come after the first frame.
            self.call_after_refresh(self._lint_in_thread, screen)

    def _lint_in_thread(self, screen: ReviewScreen) -> None:
        text, project = self.request.text, self.project

        def work() -> None:
            from planshell.plan.lint import lint_plan

            findings = lint_plan(text, project)
            if findings and self.is_running:
                try:
                    self.call_from_thread(screen.set_lint, findings)
                except RuntimeError:
                    pass  # closed between the two lines

        self.run_worker(work, thread=True, group="review-lint", exit_on_error=False)


def plan_project(path: Path) -> Path | None:
    """The project a plan file belongs to: the folder holding ``.planshell/plans``, else its
    git work tree; None (no path checks) for a loose file outside any project."""
    folder = path.resolve().parent
    if folder.name == "plans" and folder.parent.name == ".planshell":
        return folder.parent.parent
    root = find_project_root(folder)
    return root if (root / ".git").exists() else None


def review_app_for(path: Path, theme: str | None = None) -> ReviewApp:
    """The read-only review of ``path``; ReviewFileError (for the user) if it cannot be shown.

    The first frame needs only the text and its title: the lint chips (the same as the
    live review's, with paths checked in the plan's project) come after it.
    """
    path = Path(path)
    text = read_plan_file(path)
    # Parsed once: the view's own parse of the same text is then a cache hit.
    title = parse_plan(text).title
    request = ReviewRequest(path=path, text=text, title=title, hidden=count_hidden(text))
    return ReviewApp(request, theme, lint_later=True, project=plan_project(path))


def run_review(path: Path, theme: str | None = None) -> int:
    """Show ``path`` read-only; 0 on close, 1 (with a message on stderr) if it cannot be shown."""
    try:
        app = review_app_for(path, theme)
    except ReviewFileError as exc:
        print(f"planshell: {exc}", file=sys.stderr)
        return 1
    for warning in app.theme_warnings:
        print(f"planshell: {warning}", file=sys.stderr)
    result = app.run()
    return 0 if result is None else int(result)


if __name__ == "__main__":  # ``python -m planshell.ui.review_app PATH`` (benchmarks, debugging)
    raise SystemExit(run_review(Path(sys.argv[1])))
