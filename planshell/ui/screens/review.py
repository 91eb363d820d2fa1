"""ReviewScreen: the user reads the plan full-screen and decides what happens next.

Decisions (``planshell.plan.decider.Decision``):

* ``a`` approve & run: a small dialog (``ApproveModeScreen``) asks how the plan
  runs, in words ("Ask me before each edit", focused; "Accept edits inside the
  plan's scope"; "Auto" only when the user's own config allows it); the choice
  returns ``Review(APPROVE, reviewed_text=request.text, permission_mode=...)``:
  the raw text the screen was given (what is displayed is that text sanitised),
  so the engine can check the file did not change while the user was reading.
  Esc in the dialog goes back to the review and approves nothing.
* ``r`` refine: an inline editor opens under the plan (the plan stays visible);
  Enter sends ``Review(REFINE, feedback)``, Ctrl+J adds a newline, an empty
  buffer does nothing, Esc goes back to the plan.
* ``c`` comment: a small dialog (``CommentScreen``) takes a comment on the
  section at the top of the view, or on the text selected in the plan view
  (mouse drag); it is written at once into the plan file as ``> [!REVIEW]``
  lines after the section's last block, or after the last block the selection
  touches (the browser review's format, :mod:`planshell.plan.review_comments`). ``C`` shows or hides the
  comments panel (it opens by itself when there are comments): this round's
  new comments and the last round's, each *addressed* (the model replied with
  a ``> [!RESOLVED]`` line) or *open*. With comments, ``r`` sends them all,
  and the open ones carried over, in one refinement (the typed text is
  optional then): ``Review(REFINE, feedback, comments=...)``. ``a`` with open
  comments asks "2 open comments: approve anyway?" first (*Back* focused).
* ``Esc`` keep planning -> ``Review(KEEP)``; ``x`` -> ``Review(EXIT)``;
  ``D`` asks "Delete this plan file?" first, then ``Review(DISCARD)``.
* ``d`` shows the plan as a word diff against the revision last reviewed
  (deleted words struck, inserted ones marked); ``]`` then ``c`` and ``[``
  then ``c`` jump to the next and previous changed place ("change 2/5" in the
  gauge). ``s`` shows the diffs of cited files that changed since the plan was
  written (the header's staleness chip says how many).
* ``e`` edits a temporary copy in ``$VISUAL``/``$EDITOR`` (or, when neither is
  set, ``nano`` or ``vi``, named in a toast). The edit is the user's own revision:
  the screen shows it with its changed sections marked, and from then on ``a``
  (relabelled "approve my edit") returns ``Review(APPROVE, reviewed_text=edit,
  edited=True)``: the engine saves the edit to the plan file through the plan
  store, atomically, before the approval holds, so what is approved is what is
  on disk. ``f`` sends the edit to the model as feedback instead
  (``Review(REFINE)`` with a unified diff), ``r`` adds a note to that diff, Esc
  returns ``Review(KEEP)`` with the diff. ``x``/``D`` drop the edit.

Plan lint (``planshell.plan.lint``): the header shows one chip per kind of
finding ("no Verification", "2 vague steps"); ``l`` lists them. While an
error remains, ``a`` first asks "approve anyway?" with *Back to the plan*
focused; n, Esc or any dismissal approves nothing. A person's own edit is
linted again (``ReviewRequest.relint``). The approve dialog shows the
blast-radius card (``ReviewRequest.blast``).

Dismissal never approves: ``dismiss()`` without a ``Review`` and any pop of the
screen by the app (``pop_screen``, switching away) resolve to ``Review(KEEP)``.
``read_only=True`` (``planshell review PATH``) offers only scrolling and q/Esc.

Key grace (``KeyGrace``): the decisions above (not Esc, not scrolling or n/p)
ignore keys typed before the screen appeared or in its first moments; their
letters show in the footer once they work.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult, SuspendNotSupported
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static, TextArea

from planshell.markdown import plain_inline
from planshell.plan.decider import Decision, Review, ReviewRequest
from planshell.plan.document import changed_sections, parse_plan
from planshell.plan.review_comments import (
    ReviewComment,
    add_comment,
    add_range_comment,
    carry_over,
    comments_message,
    new_comment_id,
    range_anchor,
)
from planshell.plan.review_coverage import unseen_question
from planshell.plan.review_format import FeedbackError
from planshell.plan.revision_diff import revision_diff
from planshell.plan.store import PlanStoreError
from planshell.sanitize import cut_at_word, plain_line, strip_terminal_controls
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.results import AnswersWhenRemoved
from planshell.ui.widgets.comments_panel import CommentsPanel
from planshell.ui.widgets.critic_panel import CriticPanel
from planshell.ui.widgets.feedback_area import FeedbackArea
from planshell.ui.widgets.gauge import GaugeState, PlanGauge
from planshell.ui.widgets.plan_view import PlanView
from planshell.ui.widgets.review_footer import (
    READ_ONLY_HINTS,
    ReviewFooter,
    decision_hints,
)

if TYPE_CHECKING:
    from planshell.plan.document import Section
    from planshell.plan.lint import LintFinding
    from planshell.plan.receipt import Receipt
    from planshell.plan.revision_diff import RevisionDiff
    from planshell.plan.store import PlanStore

__all__ = [
    "ConfirmDiscard",
    "ConfirmUnseen",
    "FeedbackArea",
    "ReviewScreen",
    "SearchInput",
    "edit_feedback",
]

EDIT_NOTICE = (
    "You edited the plan. a approves your edited plan (saved to the plan file first), "
    "f sends your edit to the model as feedback, r adds a note to it, Esc keeps planning."
)


def edit_notice(mode: str) -> str:
    """EDIT_NOTICE for the mode the review opened in (only PLAN keeps planning)."""
    if mode == "plan":
        return EDIT_NOTICE
    return EDIT_NOTICE.replace("Esc keeps planning.", "Esc closes and drops the edit.")


# Tried in order when neither $VISUAL nor $EDITOR is set.
FALLBACK_EDITORS = ("nano", "vi")


def pick_editor() -> tuple[str | None, str]:
    """The editor command to run and, for a fallback, a sentence naming it."""
    import shutil

    configured = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if configured:
        return configured, ""
    for name in FALLBACK_EDITORS:
        if shutil.which(name):
            return name, f"$EDITOR is not set: editing with {name}."
    return None, "Set $VISUAL or $EDITOR to edit the plan here (no nano or vi found)."


_EDIT_PREAMBLE = "The user edited the plan; unified diff:\n"


def edit_feedback(original: str, edited: str) -> str:
    """Feedback telling the model exactly what the user changed in its plan."""
    diff = difflib.unified_diff(
        original.splitlines(keepends=True),
        edited.splitlines(keepends=True),
        fromfile="plan (as you wrote it)",
        tofile="plan (as the user edited it)",
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in diff]
    return _EDIT_PREAMBLE + "".join(lines)


# Revisions up to this size are diffed before the first frame (milliseconds); larger
# ones in a thread (a 100k-line plan: seconds).
_SYNC_DIFF_CHARS = 64 * 1024


class ConfirmDiscard(ConfirmScreen):
    """Asks "Delete this plan file?" like every dialog: it starts on *Keep*.

    ``y`` deletes, ``n``/Esc keep, Enter presses the focused button (Keep at
    first), the same as the picker's discard question.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(
            "Delete this plan file?",
            detail=strip_terminal_controls(str(path)),
            yes="Delete",
            no="Keep",
            default=False,
        )

    def dismiss(self, result: bool | None = None) -> AwaitComplete:
        return super().dismiss(result is True)


class ConfirmDropEdit(ConfirmScreen):
    """ "Exit and drop your edit?" before ``x`` leaves a review holding an edit.

    The edit lives only in this screen until it is approved (``a``) or sent (``f``),
    so leaving drops it: the safe choice (focused; ``n``, Esc, any dismissal) goes
    back to the plan with the edit kept; only ``y`` leaves.
    """

    def __init__(self) -> None:
        super().__init__(
            "Exit and drop your edit?",
            detail="Your edit of the plan is neither approved nor sent: a approves it, "
            "f sends it to the model as feedback, Esc keeps planning with it.",
            yes="Drop my edit",
            no="Back to the plan",
            default=False,
        )

    def dismiss(self, result: bool | None = None) -> AwaitComplete:
        return super().dismiss(result is True)


class ConfirmUnseen(ConfirmScreen):
    """ "Not viewed: Risks, Verification — approve anyway?", starting on the safe choice.

    The safe choice (focused; ``n``, Esc, any dismissal) shows the first unseen
    section; only *Approve anyway* (``y``, once the dialog is ready) goes on to
    the approval dialog.
    """

    def __init__(self, titles: list[str]) -> None:
        first = strip_terminal_controls(titles[0]) if titles else ""
        super().__init__(
            unseen_question([strip_terminal_controls(title) for title in titles]),
            detail="Every section must have been on screen to count as viewed.",
            yes="Approve anyway",
            no=f"Show {_short(first)}" if first else "Back",
            default=False,
        )

    def dismiss(self, result: bool | None = None) -> AwaitComplete:
        return super().dismiss(result is True)


def _short(title: str, limit: int = 24) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


class SearchInput(Input):
    """The one-line search of the plan: typing searches, Enter goes back to the plan, Esc ends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "End the search", show=False),
    ]

    class Cancelled(Message):
        """Esc in the search input: the search ends."""

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled())


class ReviewScreen(KeyGrace, AnswersWhenRemoved[Review], Screen[Review]):
    """Full-screen plan review; see the module docstring for the decisions."""

    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "PlanView"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Approve & run: asks how the plan runs, in words (ApproveModeScreen).
        Binding("a", "approve", "Approve & run", show=False),
        Binding("r", "refine", "Refine", show=False),
        Binding("c", "comment", "Comment on this section", show=False),
        Binding("C", "toggle_comments", "Show or hide the comments", show=False),
        Binding("escape", "keep", "Keep planning", show=False),
        Binding("x", "exit_plan", "Exit plan mode, keep the file", show=False),
        Binding("D", "discard", "Discard", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("f", "send_edit", "Send my edit as feedback", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("w", "browser", "Review in browser", show=False),
        Binding("question_mark", "more_keys", "Every key of this screen", show=False),
        Binding("h", "show_unshown", "Show the plan lines the review does not show", show=False),
        Binding("d", "toggle_diff", "Show what changed since your last review", show=False),
        Binding("right_square_bracket", "place_prefix(1)", "Then c: next change", show=False),
        Binding("left_square_bracket", "place_prefix(-1)", "Then c: previous change", show=False),
        Binding("s", "stale_files", "Cited files changed since the plan was written", show=False),
        Binding("l", "lint", "List the plan lint findings", show=False),
        # Priority: over the plan view's k (line up), but only while there are critic points
        # and no text field has focus (check_action); otherwise k reaches the focused widget.
        Binding(
            "k",
            "critic",
            "The critic's points (c makes one your comment)",
            show=False,
            priority=True,
        ),
    ]
    HELP_EXTRA_KEYS: ClassVar[list[tuple[str, str]]] = [
        ("ctrl+p", "Command palette"),
        ("mouse drag", "Select plan text (ctrl+c copies it)"),
    ]

    _DECISION_ACTIONS = frozenset(
        {"approve", "refine", "exit_plan", "discard", "edit", "browser", "comment"}
    )
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = _DECISION_ACTIONS | {"send_edit"}

    def __init__(self, request: ReviewRequest, *, read_only: bool = False) -> None:
        super().__init__()
        self.request = request
        self.read_only = read_only
        self._edited: str | None = None  # the user's edit of the plan, when there is one
        self._refining = False  # the feedback editor is open
        self._unshown_shown_for: str | None = None  # the text the unshown-lines notice is about
        self._new_comments: list[ReviewComment] = []  # written in this review (c)
        self._panel_toggled = False  # C hid or showed the panel by hand
        self._place_prefix = 0  # "]" or "[" was pressed: a "c" next jumps (1 or -1)
        self._receipt_forms = ("", "")  # the receipt chip's full and short text
        self._diff: RevisionDiff | None = None  # the revision diff, once computed
        self._diff_pending = False  # the revision diff is being computed (a thread)
        self._lint = request.lint  # findings for the text on screen (the request's, or the edit's)
        from planshell.ui.browser_review import BrowserLink

        self.browser = BrowserLink(self)  # w: the same review in a browser, for anchored comments

    # -- layout

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="review-header"):
            with Horizontal(id="review-titlebar"):
                yield Static(self._title_text(), id="review-title")
                yield Static("", id="receipt")
            # A row of its own: beside a dirty receipt it squeezed the plan's title to nothing.
            yield Static("", id="stale")
            with Horizontal(id="lint-chips"):
                yield from self._lint_chips()
            yield Static("", id="review-changes")
            yield Static("", id="review-unrequested")
            yield Static("", id="review-mcp")  # MCP tools that ran while planning
            yield Static("", id="review-notice")
            yield Static("", id="review-unshown")  # lines the plan holds but the view does not show
        with Horizontal(id="review-body"):
            yield PlanView(request.text, changed=request.changed_sections, id="plan-view")
            yield CommentsPanel(id="comments-panel")
        # The critic's points (never parsed from the plan): planshell/ui/widgets/critic_panel.py.
        yield CriticPanel(request.critic, request.critic_label, id="critic")
        with Horizontal(id="search-bar"):
            yield Static("/", id="search-label")
            yield SearchInput(placeholder="search the plan", id="search-input", compact=True)
            yield Static("", id="search-status")
        with Vertical(id="refine"):
            yield Static(
                Text.assemble(
                    ("Tell the model what to change", "bold"),
                    ("   Enter send · Ctrl+J new line · Esc back", "dim"),
                ),
                id="refine-label",
            )
            yield FeedbackArea(id="refine-input", soft_wrap=True, show_line_numbers=False)
        yield PlanGauge(id="gauge")
        yield ReviewFooter(
            READ_ONLY_HINTS if self.read_only else decision_hints(self.request.mode),
            id="review-footer",
        )

    def on_mount(self) -> None:
        self.set_class(self.read_only, "-read-only")
        self.query_one("#refine").display = False
        self.query_one("#search-bar").display = False
        self._show_comments()
        self._show_changes(len(self.request.changed_sections), "since your last review")
        self._show_notice(_with_hidden(self.request.notice, self.request.hidden))
        self._show_receipt(self.request.receipt)
        self._show_unrequested(self.request.unrequested)
        self._show_mcp()
        self._show_stale()
        self._start_diff()
        self._show_unshown()
        self.query_one("#lint-chips").display = bool(self._lint)
        if self.browser.open_at_start:
            self.action_browser()

    def _start_diff(self) -> None:
        """The revision diff (``d``) in a thread: it is O(plan), seconds on a 100k-line plan,
        so the first frame does not wait for it; ``d`` says so until it is ready."""
        previous, text = self.request.previous_text, self.request.text
        if previous is None:
            return  # nothing to compare with: the view's empty diff is the answer
        if self._diff is not None:  # back from an edit: the same text as before
            self.plan_view.set_diff(self._diff)
            return
        if len(previous) + len(text) <= _SYNC_DIFF_CHARS:  # a few ms: ready with the frame
            self._diff_ready(revision_diff(previous, text))
            return
        self._diff_pending = True
        app = self.app

        def work() -> None:
            diff = revision_diff(previous, text)
            if app.is_running:
                try:
                    app.call_from_thread(self._diff_ready, diff)
                except RuntimeError:
                    pass  # the app closed between the two lines

        self.run_worker(work, thread=True, group="review-diff", exit_on_error=False)

    def _diff_ready(self, diff: RevisionDiff) -> None:
        self._diff, self._diff_pending = diff, False
        if self._edited is None:  # an edit on screen has no revision diff
            self.plan_view.set_diff(diff)

    def set_lint(self, findings: tuple[LintFinding, ...]) -> None:
        """Lint findings computed after the first frame (``planshell review`` of a big file)."""
        if self._edited is None:
            self._lint = findings
            self._show_lint()

    def action_browser(self) -> None:
        self.browser.open()

    def on_unmount(self) -> None:
        self.browser.close("the review screen closed")

    def _title_text(self, *, with_name: bool = True, title_room: int | None = None) -> Text:
        """The title bar's text; ``title_room`` cuts the plan's title at a word to fit."""
        title = strip_terminal_controls(self.request.title) or "Untitled plan"
        if title_room is not None:
            title = cut_at_word(title, max(title_room, 1))
        label = "Plan (read-only)" if self.read_only else "Review plan"
        text = Text.assemble((label, "bold reverse"), " ", (title, "bold"), no_wrap=True)
        name = strip_terminal_controls(self.request.path.name)
        if name and with_name:
            text.append(f"  {name}", "dim")
        text.overflow = "ellipsis"
        return text

    def on_resize(self) -> None:
        self._fit_titlebar()

    def _fit_titlebar(self) -> None:
        """Title and receipt in one row by whole words (issue 26 item 17).

        At 80 columns Textual cut both mid-word (``✓ no changes outside the pl…``,
        ``2026-12-02-0452…``). Narrowing: the receipt says ``✓ no changes``, then the
        plan's file name goes, then the title is cut at a word; the receipt stays.
        """
        bar = self.query_one("#review-titlebar")
        width = bar.size.width
        if width <= 0:
            return
        chip = self.query_one("#receipt", Static)
        full, short = self._receipt_forms
        cap = int(width * (0.6 if chip.has_class("-partial") else 0.4))  # its max-width

        def cells(text: str) -> int:  # with the chip's padding (2) and margin (1)
            return min(cell_len(text) + 2, cap) + 1 if text else 0

        choices = [(True, full), (True, short), (False, short)]
        with_name, shown = next(
            (
                (n, t)
                for n, t in choices
                if self._title_text(with_name=n).cell_len + cells(t) <= width
            ),
            (False, short),
        )
        title = self._title_text(with_name=with_name)
        if title.cell_len + cells(shown) > width:
            room = width - cells(shown) - (title.cell_len - len(self._title_body()))
            title = self._title_text(with_name=False, title_room=room)
        self.query_one("#review-title", Static).update(title)
        if shown:
            chip.update(shown)

    def _title_body(self) -> str:
        return strip_terminal_controls(self.request.title) or "Untitled plan"

    def _show_changes(self, count: int, why: str) -> None:
        widget = self.query_one("#review-changes", Static)
        if count:
            noun = "section" if count == 1 else "sections"
            widget.update(f"▎ {count} {noun} changed {why}")
        widget.display = bool(count)

    def _show_unrequested(self, titles: tuple[str, ...]) -> None:
        """ "changed without request: Risks": sections the last feedback did not name."""
        widget = self.query_one("#review-unrequested", Static)
        names = ", ".join(strip_terminal_controls(title) for title in titles)
        widget.update(Text(f"⚠ changed without request: {names}") if titles else "")
        widget.display = bool(titles)

    def _show_mcp(self) -> None:
        """ "MCP tools ran while planning: mcp__jira__get_issue (2×) — …" (the engine's line).

        The receipt sees only the project's files; this says which server tools could
        have changed something elsewhere. The names are sanitised by ``mcp_line``.
        """
        widget = self.query_one("#review-mcp", Static)
        line = self.request.mcp_line()
        widget.update(Text(f"⚠ {line}") if line else "")
        widget.display = bool(line)

    def _show_stale(self) -> None:
        """The staleness chip: "written at abc1234; 2 cited files changed since · s"."""
        widget = self.query_one("#stale", Static)
        staleness = self.request.staleness
        if staleness is None or not staleness.stale:
            widget.display = False
            return
        summary = strip_terminal_controls(staleness.summary)
        widget.update(Text(f"⚠ {summary} · s"))
        widget.tooltip = f"Plan {summary}.\n\ns shows what changed in those files."
        widget.display = True

    def _show_notice(self, notice: str) -> None:
        widget = self.query_one("#review-notice", Static)
        notice = strip_terminal_controls(notice)
        if notice:
            widget.update(f"⚠ {notice}")
        widget.display = bool(notice)

    def _show_receipt(self, receipt: Receipt | None) -> None:
        """The write-barrier receipt as a chip: green, red, or amber when a cap left parts out.

        The summary names what was not covered; the tooltip adds the receipt's scope.
        """
        widget = self.query_one("#receipt", Static)
        if receipt is None:
            self._receipt_forms = ("", "")
            widget.display = False
            return
        clean = receipt.clean
        partial = clean and bool(receipt.not_covered)
        mark = "⚠" if partial else "✓" if clean else "✗"
        text = strip_terminal_controls(receipt.summary)
        widget.update(f"{mark} {text}")
        # Short of room, a clean receipt says only that (whole words, never "outside the pl…").
        short = f"{mark} no changes" if clean and not partial and not receipt.changed else ""
        self._receipt_forms = (f"{mark} {text}", short or f"{mark} {text}")
        scope = receipt.scope
        widget.tooltip = f"{text}\n\nThe check {strip_terminal_controls(scope)}." if scope else None
        widget.set_class(clean and not partial, "-clean")
        widget.set_class(partial, "-partial")
        widget.set_class(not clean, "-dirty")
        widget.display = True
        self._fit_titlebar()

    # -- plan lint

    def _lint_chips(self) -> list[Static]:
        """One chip per kind of finding, errors first, then the key that lists them."""
        if not self._lint:
            return []  # and no lint module to load before the first frame
        from planshell.plan.lint import chips
        from planshell.ui.screens.plan_lint import chip_text

        widgets = [
            Static(chip_text(label), classes=f"lint-chip -{severity}")
            for severity, label in chips(self._lint)
        ]
        if widgets:
            widgets.append(Static("l lists them", classes="lint-chip -hint"))
        return widgets

    def _show_lint(self) -> None:
        """Redraw the chips (after an edit); the row hides when there is nothing."""
        row = self.query_one("#lint-chips", Horizontal)
        row.remove_children()
        row.mount_all(self._lint_chips())
        row.display = bool(self._lint)

    def action_lint(self) -> None:
        from planshell.ui.screens.plan_lint import PlanLintScreen

        self.app.push_screen(PlanLintScreen(self._lint))

    def _lint_errors_checked(self, then: Callable[[], None]) -> None:
        """Run ``then`` at once, or after "approve anyway?" while lint errors remain."""
        from planshell.plan.lint import errors

        bad = errors(self._lint)
        if not bad:
            then()
            return
        noun = "error" if len(bad) == 1 else "errors"
        detail = "\n".join(f"✗ {plain_line(f.message, 160)}" for f in bad[:6]) + (
            f"\n… and {len(bad) - 6} more (l lists them)" if len(bad) > 6 else ""
        )

        def answered(yes: bool | None) -> None:
            if yes is True and self.is_current:
                then()

        self.app.push_screen(
            ConfirmScreen(
                f"The plan has {len(bad)} lint {noun}. Approve anyway?",
                detail=detail,
                yes="Approve anyway",
                no="Back to the plan",
                default=False,
            ),
            answered,
        )

    # -- lines the review does not show: the executor reads them, so the person must see them

    @on(PlanView.Checked)
    def _show_unshown(self) -> None:
        """The notice, in the header before any decision: "This plan holds 3 lines … press h"."""
        from planshell.ui.screens.unshown import unshown_notice

        unshown = self.plan_view.unshown
        widget = self.query_one("#review-unshown", Static)
        notice = unshown_notice(unshown)
        widget.update(Text(f"⚠ {notice}") if notice else "")
        widget.display = bool(notice)
        self._unshown_shown_for = self.plan_view.text if unshown is not None else None

    def action_show_unshown(self) -> None:
        from planshell.ui.screens.unshown import UnshownLinesScreen

        unshown = self.plan_view.unshown
        if not unshown:
            self.notify(
                "The review shows every line of this plan."
                if unshown is not None
                else "Still checking the plan; try again."
            )
            return
        self.app.push_screen(UnshownLinesScreen(unshown))

    # -- gauge

    @on(PlanView.Scrolled)
    def _update_gauge(self, event: PlanView.Scrolled) -> None:
        view = event.plan_view
        gauge = self.query_one(PlanGauge)  # always shown: a short plan has sections too
        first, last, total = view.visible_range()
        index = view.current_section()
        sections = view.sections
        title = plain_inline(sections[index].title) if sections else ""
        places = ""
        if view.diff_shown:
            landed, count = view.place_position
            noun = "change" if count == 1 else "changes"
            places = f"change {landed}/{count}" if landed else f"{count} {noun}"
        gauge.update_state(
            GaugeState(
                first,
                last,
                total,
                title,
                bool(sections) and index in view.changed,
                view.coverage.seen_flags,
                places,
            )
        )
        self._show_search_status()

    # -- search (the plan view owns the keys; the input lives here)

    @on(PlanView.SearchRequested)
    def _open_search(self, event: PlanView.SearchRequested) -> None:
        event.stop()
        if self._refining:
            return
        bar = self.query_one("#search-bar")
        bar.display = True
        field = self.query_one(SearchInput)
        field.value = self.plan_view.search_query
        field.focus()

    @on(Input.Changed, "#search-input")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.plan_view.search(event.value)
        self._show_search_status()

    @on(Input.Submitted, "#search-input")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Enter: back to the plan with the search active (n/N move between matches)."""
        event.stop()
        if not self.plan_view.search_active:
            self._close_search()
            return
        self.plan_view.focus()

    @on(SearchInput.Cancelled)
    @on(PlanView.SearchEnded)
    def _search_ended(self, event: Message) -> None:
        event.stop()
        self._close_search()

    def _close_search(self) -> None:
        self.plan_view.end_search()
        self.query_one("#search-bar").display = False
        self.plan_view.focus()

    def _show_search_status(self) -> None:
        view = self.plan_view
        status = self.query_one("#search-status", Static)
        if not view.search_active:
            status.update("")
            return
        total = len(view.matches)
        if not total:
            status.update("no match")
            return
        status.update(f"{view.current_match + 1}/{total} · n/N · Esc ends")

    # -- decisions

    @property
    def plan_view(self) -> PlanView:
        return self.query_one(PlanView)

    @property
    def edited_text(self) -> str | None:
        """The user's edited plan (None when they have not edited it)."""
        return self._edited

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "exit_plan" and self.request.mode == "off":
            return False  # nothing to leave: x does nothing from OFF
        if action in self._DECISION_ACTIONS:
            # While the refine editor is open a stray key that reached the screen
            # (typed before focus moved) must not decide anything.
            return not self.read_only and not self._refining
        if action == "close":
            return self.read_only
        if action == "critic":
            return (
                not self._refining
                and bool(self.query_one(CriticPanel).points)
                and not isinstance(self.focused, (Input, TextArea))
            )
        if action in (
            "more_keys",
            "show_unshown",
            "stale_files",
            "place_prefix",
            "toggle_comments",
            "lint",
        ):
            return not self._refining
        if action == "toggle_diff":
            # Only with the plan focused (otherwise "d" is the focused widget's: a typed d);
            # with nothing to compare, the action says so.
            return not self._refining and self.focused is self.plan_view
        if action == "send_edit":
            return not self.read_only and not self._refining and self._edited is not None
        return True

    def action_approve(self) -> None:
        """Ask how the plan runs (ApproveModeScreen); Esc there approves nothing.

        With sections never on screen, first ask "Not viewed: … — approve
        anyway?" (ConfirmUnseen): its safe choice shows the first of them. Then,
        with open comments, "N open comments: approve anyway?"; its focused
        choice, Esc and any dismissal go back to the plan.
        """
        if not self._unshown_checked():
            return
        self._unseen_checked(self._ask_comments)

    def _unseen_checked(self, then: Callable[[], None]) -> None:
        """Run ``then`` at once, or after "Not viewed: … — approve anyway?" (ConfirmUnseen).

        The record is the screen's coverage, with the sections the browser review
        showed whole counted in (``BrowserLink``). The safe answer shows the first
        unseen section and approves nothing.
        """
        unseen = self.plan_view.coverage.unseen()
        if unseen:

            def answered(anyway: bool | None) -> None:
                if anyway is True and self.is_current:
                    then()
                elif self.is_current:
                    view = self.plan_view
                    if unseen[0] in view.folded:
                        view.toggle_fold(unseen[0])
                    view.jump_to_section(unseen[0])

            titles = [self.plan_view.section_title(index) for index in unseen]
            self.app.push_screen(ConfirmUnseen(titles), answered)
            return
        then()

    def _ask_comments(self) -> None:
        count = len(self.open_comments)
        if count:
            noun = "comment" if count == 1 else "comments"

            def answered(yes: bool | None) -> None:
                if yes is True and self.is_current:
                    self._lint_errors_checked(self._ask_mode)

            self.app.push_screen(
                ConfirmScreen(
                    f"{count} open {noun}: approve anyway?",
                    detail="The model has not replied to them; the plan keeps them as "
                    "> [!REVIEW] lines. r sends them instead.",
                    yes="Approve anyway",
                    no="Back to the plan",
                    default=False,
                ),
                answered,
            )
            return
        self._lint_errors_checked(self._ask_mode)

    def _ask_mode(self) -> None:
        from planshell.ui.screens.approve_mode import ApproveModeScreen

        dialog = ApproveModeScreen(
            allow_auto=self.request.allow_auto,
            default=self.request.approve_mode,
            blast=self.request.blast,
            runner=self.request.runner or None,
        )
        self.app.push_screen(dialog, self.approve_in)

    def approve_checked(self, mode: str) -> None:
        """Approve in ``mode`` once unseen sections and lint errors, if any, were answered
        (the browser's Approve): the same questions as ``a``, in the terminal.

        Called from the browser review's thread hand-off: the questions are pushed from the
        screen's own message loop (``call_later``), where the app is active. Sections the
        page reported seen were counted before (they crossed over first).
        """
        if self._unshown_checked():
            self.call_later(
                self._unseen_checked,
                lambda: self._lint_errors_checked(lambda: self.approve_in(mode)),
            )

    def approve_in(self, mode: str | None) -> None:
        """Approve the plan to run in permission mode ``mode``; None approves nothing."""
        if mode is None or not self.is_current or not self._unshown_checked():
            return
        if mode == "auto" and not self.request.allow_auto:
            return  # only the user's own config offers auto
        if self._edited is not None:
            # The user's own revision: the engine writes it to the file, then approves it.
            self.dismiss(
                Review(
                    Decision.APPROVE, reviewed_text=self._edited, edited=True, permission_mode=mode
                )
            )
            return
        self.dismiss(
            Review(Decision.APPROVE, reviewed_text=self.request.text, permission_mode=mode)
        )

    def _unshown_checked(self) -> bool:
        if self._unshown_shown_for != self.plan_view.text:
            # No approval before the review has said what it does not show.
            self.notify("Still checking the plan for lines the review does not show; try again.")
            return False
        return True

    def help_text(self, action: str) -> str | None:
        """The help's wording for ``action`` in the mode this review opened in."""
        if action == "keep" and self.request.mode != "plan" and not self.read_only:
            return "Close the review; nothing changes"
        if action == "keep" and self.read_only:
            return "Close"
        return None

    def action_more_keys(self) -> None:
        self.app.action_show_help()  # type: ignore[attr-defined]

    # -- what changed since the last review (d, ]c, [c) and staleness (s)

    def action_toggle_diff(self) -> None:
        view = self.plan_view
        if self._edited is not None:
            self.notify("The diff is against your last review; your edit is shown instead.")
            return
        if self._diff_pending:
            self.notify("Still comparing with your last review; press d again in a moment.")
            return
        if view.diff.empty:
            self.notify(
                "Nothing changed since your last review."
                if self.request.previous_text is not None
                else "No earlier review of this plan to compare with."
            )
            return
        view.show_diff(not view.diff_shown)

    def action_place_prefix(self, direction: int) -> None:
        self._place_prefix = direction

    def on_key(self, event: events.Key) -> None:
        """``]c`` / ``[c``: both keys here; any key but ``c`` after a bracket ends the sequence.

        The bracket is taken here, not by its binding: a terminal delivers ``]c`` back to
        back, and a binding's action runs only after the next key has reached this
        handler, so the ``c`` would have gone to the comment key instead of jumping.
        """
        bracket = _BRACKETS.get(event.key)
        if bracket is not None and self._brackets_work():
            event.stop()
            event.prevent_default()  # the binding (there for the help screen) must not run too
            self._place_prefix = bracket
            return
        direction, self._place_prefix = self._place_prefix, 0
        if not direction or event.key != "c":
            return
        event.stop()
        event.prevent_default()  # the c binding (comments) must not see this c
        view = self.plan_view
        if not view.diff_shown:
            self.notify("Press d first to show what changed since your last review.")
            return
        if not view.next_place(direction):
            self.notify("No later change." if direction > 0 else "No earlier change.")

    def _brackets_work(self) -> bool:
        """``]``/``[`` start a jump: not while the refine editor or a text field has the key."""
        return not self._refining and not isinstance(self.focused, (Input, TextArea))

    def action_stale_files(self) -> None:
        staleness = self.request.staleness
        if staleness is None or not staleness.stale:
            self.notify(
                "No cited file changed since the plan was written."
                if staleness is not None
                else "This plan has no record of its cited files (written before they were recorded)."
            )
            return
        from planshell.ui.screens.stale_files import StaleFilesScreen

        self.app.push_screen(StaleFilesScreen(staleness, self.request.stale_diff))

    def action_send_edit(self) -> None:
        if self._edited is None:
            return
        self.dismiss(
            Review(Decision.REFINE, feedback=edit_feedback(self.request.text, self._edited))
        )

    def action_refine(self) -> None:
        self._refining = True
        count = len(self.open_comments)
        label = Text.assemble(("Tell the model what to change", "bold"))
        if count:
            noun = "comment" if count == 1 else "comments"
            label = Text.assemble(
                (f"Sends {count} {noun}", "bold"), " and what you add here (optional)"
            )
        label.append("   Enter send · Ctrl+J new line · Esc back", "dim")
        self.query_one("#refine-label", Static).update(label)
        self.query_one("#refine").display = True
        self.query_one(FeedbackArea).focus()

    def _close_refine(self) -> None:
        self._refining = False
        self.query_one("#refine").display = False
        self.plan_view.focus()

    def show_hints(self) -> None:
        """The footer's decision keys for the state the review is in (edited, browser)."""
        if self.read_only:
            return
        hints = decision_hints(
            self.request.mode, edited=self._edited is not None, browser=self.browser.active
        )
        for footer in self.query(ReviewFooter):  # none left while the screen is unmounting
            footer.set_hints(hints)

    def action_keep(self) -> None:
        if self.browser.active:
            self.browser.close()  # Esc first closes the browser review
            return
        if self._refining:
            self._close_refine()  # Esc with the plan focused still means "back to the plan"
            return
        if self.read_only:
            self.dismiss(Review(Decision.KEEP))
            return
        feedback = (
            edit_feedback(self.request.text, self._edited) if self._edited is not None else ""
        )
        self.dismiss(Review(Decision.KEEP, feedback=feedback))

    def action_close(self) -> None:
        self.dismiss(Review(Decision.KEEP))  # q: the read-only review, which has no edit

    def action_exit_plan(self) -> None:
        """x: exit plan mode; an edit (never approved nor sent) is dropped only on a yes."""
        if self._edited is None:
            self.dismiss(Review(Decision.EXIT))
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(Review(Decision.EXIT))

        self.app.push_screen(ConfirmDropEdit(), answered)

    def action_discard(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(Review(Decision.DISCARD))

        self.app.push_screen(ConfirmDiscard(self.request.path), answered)

    # -- the critic's points (k): a second model's, shown apart; c makes one the person's

    def action_critic(self) -> None:
        """Focus the critic's points; from there, back to the plan."""
        panel = self.query_one(CriticPanel)
        if self.focused is panel.point_list:
            self.plan_view.focus()
            return
        panel.point_list.focus()

    @on(CriticPanel.Back)
    def _critic_back(self, event: CriticPanel.Back) -> None:
        event.stop()
        self.plan_view.focus()

    @on(CriticPanel.Adopt)
    def _critic_adopt(self, event: CriticPanel.Adopt) -> None:
        """Make the point the person's comment, exactly as ``c`` would write it.

        On the section the point names (else the one on screen), tracked with the
        person's other comments; nothing is written while their own edit is pending.
        """
        event.stop()
        if self._edited is not None:
            self.notify(
                "You have an unsaved edit of the plan: approve or send it first.",
                severity="warning",
            )
            return
        if self._write_comment(_section_named(self.plan_view, event.point), event.point):
            event.panel.drop(event.index)
            self.notify("Added as your comment (> [!REVIEW] in the plan file); r sends it.")

    @on(FeedbackArea.Submitted)
    def _submit_feedback(self, event: FeedbackArea.Submitted) -> None:
        event.stop()
        text = event.text.strip()
        comments = self.open_comments
        if not text and not comments:
            return  # an empty buffer does nothing
        if self._edited is not None:
            text = f"{text}\n\n{edit_feedback(self.request.text, self._edited)}"
        if not comments:
            self.dismiss(Review(Decision.REFINE, feedback=text))
            return
        if not self._carry_over():
            return
        self.dismiss(
            Review(
                Decision.REFINE,
                feedback=comments_message(comments, text),
                comments=tuple(comments),
            )
        )

    @on(FeedbackArea.Cancelled)
    def _close_feedback(self, event: FeedbackArea.Cancelled) -> None:
        event.stop()
        self._close_refine()

    # -- comments

    @property
    def open_comments(self) -> list[ReviewComment]:
        """The earlier rounds' open comments, then this round's: what ``r`` sends."""
        return [c for c in self.request.comments if c.open] + self._new_comments

    def _store(self) -> PlanStore | None:
        """The project's plan store (every plan write goes through it); None without a project."""
        return getattr(getattr(self.app, "runtime", None), "store", None)

    def action_comment(self) -> None:
        """Comment on the selected lines, or on a section (the one at the top of the view).

        With text selected in the plan view the dialog quotes the selection and
        the comment goes after the last block it touches
        (:func:`~planshell.plan.review_comments.add_range_comment`); Ctrl+N/B
        there turn it into a comment on a whole section.
        """
        if self._edited is not None:
            self.notify(
                "Comments go on the plan file: approve or send your edit first.",
                severity="warning",
            )
            return
        if self._store() is None:
            self.notify("Comments need a project; not available here.", severity="warning")
            return
        view = self.plan_view
        sections = view.sections
        if not sections:
            return
        from planshell.ui.screens.comment import CommentAnswer, CommentScreen

        def body(section: Section) -> str:
            return "\n".join(section.text.split("\n")[1 if section.level else 0 :]).strip()

        index, lines, quote = view.current_section(), view.selected_source_lines(), ""
        if lines is not None:
            try:
                anchor_section, _ = range_anchor(self.request.text, *lines)
            except FeedbackError:
                lines = None  # nothing to anchor to: a comment on the section, as without one
            else:
                starts = [s.start for s in sections]  # the view's sections: the same lines
                if anchor_section.start in starts:
                    index = starts.index(anchor_section.start)
                quote = view.selection_text()

        def answered(answer: CommentAnswer | None) -> None:
            if answer is None or not self.is_current:
                return
            if answer.on_selection and lines is not None:
                self._write_comment(answer.section, answer.text, lines=lines, quote=quote)
            else:
                self._write_comment(answer.section, answer.text)

        choices = [(plain_inline(s.title), body(s)) for s in sections]
        self.app.push_screen(CommentScreen(choices, index, quote if lines else ""), answered)

    def _write_comment(
        self, index: int, text: str, *, lines: tuple[int, int] | None = None, quote: str = ""
    ) -> bool:
        """Write the person's comment on section ``index``, or on source ``lines`` quoting
        ``quote`` (a selection); False (and a toast) when not."""
        store = self._store()
        if store is None:
            self.notify("Comments need a project; not available here.", severity="warning")
            return False
        comment_id = new_comment_id([*self.request.comments, *self._new_comments])
        path, shown = self.request.path, self.request.text
        try:
            if lines is not None:
                new_text, comment = add_range_comment(
                    store, path, shown, lines, quote, text, comment_id=comment_id
                )
            else:
                new_text, comment = add_comment(
                    store, path, shown, index, text, comment_id=comment_id
                )
        except (FeedbackError, PlanStoreError) as exc:
            self.notify(f"The comment was not written: {exc}", severity="error", markup=False)
            return False
        self.clear_selection()  # its rows are the old text's
        self._new_comments.append(comment)
        self._plan_text_now(new_text)
        self._show_comments()
        return True

    def _plan_text_now(self, text: str) -> None:
        """The plan file now holds ``text`` (planshell wrote the person's comments into it)."""
        offset = self.plan_view.scroll_y
        self.request = dataclasses.replace(self.request, text=text)
        self.plan_view.load(text, self.request.changed_sections)
        self.plan_view.call_after_refresh(self.plan_view.scroll_to, y=offset, animate=False)

    def _carry_over(self) -> bool:
        """Write back open comments the revision removed, so the model can reply to them."""
        carried = [c for c in self.request.comments if c.open]
        store = self._store()
        if not carried or store is None:
            return True
        try:
            text = carry_over(store, self.request.path, self.request.text, carried)
        except (FeedbackError, PlanStoreError) as exc:
            self.notify(f"The comments were not sent: {exc}", severity="error")
            return False
        if text != self.request.text:
            self._plan_text_now(text)
        return True

    def _show_comments(self) -> None:
        panel = self.query_one(CommentsPanel)
        panel.show(self.request.comments, self._new_comments)
        if not self._panel_toggled:
            panel.display = bool(self.request.comments or self._new_comments)

    def action_toggle_comments(self) -> None:
        panel = self.query_one(CommentsPanel)
        self._panel_toggled = True
        panel.display = not panel.display

    # -- editing

    def action_edit(self) -> None:
        editor, note = pick_editor()
        if editor is None:
            self.notify(note, severity="warning")
            return
        if note:
            self.notify(note, timeout=4)
        current = self._edited if self._edited is not None else self.request.text
        with tempfile.TemporaryDirectory(prefix="planshell-edit-") as folder:
            copy = Path(folder) / (self.request.path.name or "plan.md")
            copy.write_text(current, encoding="utf-8")
            if not self._run_editor(editor, copy):
                return
            try:
                edited = copy.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.notify(f"Could not read the edited plan: {exc}", severity="error")
                return
        self.apply_edit(edited)

    def _run_editor(self, editor: str, path: Path) -> bool:
        """Run the editor on ``path`` with the terminal handed over; False on failure."""
        try:
            with self.app.suspend():
                completed = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to an editor.", severity="error")
            return False
        except (OSError, ValueError) as exc:
            self.notify(f"Could not start {editor!r}: {exc}", severity="error")
            return False
        if completed.returncode != 0:
            self.notify(
                f"The editor exited with status {completed.returncode}; edit ignored.",
                severity="warning",
            )
            return False
        return True

    def apply_edit(self, edited: str) -> None:
        """Show the user's edit with its changed sections marked (it is not approved)."""
        if edited == (self._edited if self._edited is not None else self.request.text):
            self.notify("The plan was not changed.")
            return
        if edited == self.request.text:
            self._edited = None
            self._lint = self.request.lint
            self._show_lint()
            self.plan_view.load(self.request.text, self.request.changed_sections)
            self._start_diff()
            self._show_changes(len(self.request.changed_sections), "since your last review")
            self._show_notice(self.request.notice)
            self.show_hints()
            return
        self._edited = edited
        if self.request.relint is not None:
            self._lint = self.request.relint(edited)
            self._show_lint()
        changed = frozenset(changed_sections(parse_plan(self.request.text), parse_plan(edited)))
        self.plan_view.load(edited, changed)
        self._show_changes(len(changed), "by your edit")
        self._show_notice(edit_notice(self.request.mode))
        self.show_hints()
        self.plan_view.focus()

    # -- dismissal never approves

    def dismiss(self, result: Review | None = None) -> AwaitComplete:
        if not isinstance(result, Review):
            result = Review(Decision.KEEP)
        return super().dismiss(result)

    def unanswered_result(self) -> Review:
        """Removed without ``dismiss`` (app.pop_screen etc.): KEEP, never hang."""
        return Review(Decision.KEEP)


_BRACKETS = {"right_square_bracket": 1, "left_square_bracket": -1}  # ]c next, [c previous


def _section_named(view: PlanView, point: str) -> int:
    """The section a critic point names ("Verification names no command"), else the one on screen."""
    lowered = point.casefold()
    best, best_len = view.current_section(), 0
    for index, section in enumerate(view.sections):
        title = plain_inline(section.title).strip().casefold()
        if section.level >= 2 and title and title in lowered and len(title) > best_len:
            best, best_len = index, len(title)
    return best


def _with_hidden(notice: str, hidden: int) -> str:
    """Add a warning when the plan holds characters the screen cannot show."""
    if not hidden:
        return notice
    noun = "character" if hidden == 1 else "characters"
    warning = (
        f"This plan contains {hidden} invisible or bidi {noun} (not shown here): "
        "the model may read text you cannot see."
    )
    return f"{notice} · {warning}" if notice else warning
