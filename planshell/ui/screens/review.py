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
* ``Esc`` keep planning -> ``Review(KEEP)``; ``x`` -> ``Review(EXIT)``;
  ``D`` asks "Delete this plan file?" first, then ``Review(DISCARD)``.
* ``e`` edits a temporary copy in ``$VISUAL``/``$EDITOR`` (or, when neither is
  set, ``nano`` or ``vi``, named in a toast). The edit is the user's own revision:
  the screen shows it with its changed sections marked, and from then on ``a``
  (relabelled "approve my edit") returns ``Review(APPROVE, reviewed_text=edit,
  edited=True)``: the engine saves the edit to the plan file through the plan
  store, atomically, before the approval holds, so what is approved is what is
  on disk. ``f`` sends the edit to the model as feedback instead
  (``Review(REFINE)`` with a unified diff), ``r`` adds a note to that diff, Esc
  returns ``Review(KEEP)`` with the diff. ``x``/``D`` drop the edit.

Dismissal never approves: ``dismiss()`` without a ``Review`` and any pop of the
screen by the app (``pop_screen``, switching away) resolve to ``Review(KEEP)``.
``read_only=True`` (``planshell review PATH``) offers only scrolling and q/Esc.

Key grace (``KeyGrace``): the decisions above (not Esc, not scrolling or n/p)
ignore keys typed before the screen appeared or in its first moments; their
letters show in the footer once they work.
"""

from __future__ import annotations

import difflib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

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
from planshell.sanitize import strip_terminal_controls
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.confirm import ConfirmScreen
from planshell.ui.screens.results import AnswersWhenRemoved
from planshell.ui.widgets.critic_panel import CriticPanel
from planshell.ui.widgets.gauge import GaugeState, PlanGauge
from planshell.ui.widgets.plan_view import PlanView
from planshell.ui.widgets.review_footer import (
    READ_ONLY_HINTS,
    ReviewFooter,
    decision_hints,
)

if TYPE_CHECKING:
    from planshell.plan.receipt import Receipt

__all__ = ["ConfirmDiscard", "FeedbackArea", "ReviewScreen", "edit_feedback"]

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


class FeedbackArea(TextArea):
    """The refine editor: Enter submits, Ctrl+J (or Shift+Enter) inserts a newline, Esc goes back.

    Enter and the newline keys are handled in ``on_key``, not as bindings:
    bindings run after the key has bubbled up the DOM, so with fast typing (or
    a paste) the newline could land after the characters typed next.
    """

    NEWLINE_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"ctrl+j", "newline", "shift+enter", "alt+enter"}
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Back to the plan", show=False),
    ]

    class Submitted(Message):
        def __init__(self, area: FeedbackArea, text: str) -> None:
            super().__init__()
            self.area = area
            self.text = text

        @property
        def control(self) -> FeedbackArea:
            return self.area

    class Cancelled(Message):
        def __init__(self, area: FeedbackArea) -> None:
            super().__init__()
            self.area = area

        @property
        def control(self) -> FeedbackArea:
            return self.area

    def on_key(self, event: events.Key) -> None:
        # Runs before TextArea's own key handler; prevent_default stops that one.
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in self.NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            if not self.read_only:
                start, end = self.selection
                self.replace("\n", start, end, maintain_selection_offset=False)

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled(self))


class ReviewScreen(KeyGrace, AnswersWhenRemoved[Review], Screen[Review]):
    """Full-screen plan review; see the module docstring for the decisions."""

    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "PlanView"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Approve & run: asks how the plan runs, in words (ApproveModeScreen).
        Binding("a", "approve", "Approve & run", show=False),
        Binding("r", "refine", "Refine", show=False),
        Binding("escape", "keep", "Keep planning", show=False),
        Binding("x", "exit_plan", "Exit plan mode, keep the file", show=False),
        Binding("D", "discard", "Discard", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("f", "send_edit", "Send my edit as feedback", show=False),
        Binding("q", "close", "Close", show=False),
        Binding("w", "browser", "Review in browser", show=False),
        Binding("question_mark", "more_keys", "Every key of this screen", show=False),
        Binding("h", "show_unshown", "Show the plan lines the review does not show", show=False),
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

    _DECISION_ACTIONS = frozenset({"approve", "refine", "exit_plan", "discard", "edit", "browser"})
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = _DECISION_ACTIONS | {"send_edit"}

    def __init__(self, request: ReviewRequest, *, read_only: bool = False) -> None:
        super().__init__()
        self.request = request
        self.read_only = read_only
        self._edited: str | None = None  # the user's edit of the plan, when there is one
        self._refining = False  # the feedback editor is open
        self._unshown_shown_for: str | None = None  # the text the unshown-lines notice is about
        self._critic_comments = 0  # critic points the person made their comments (k, c)
        from planshell.ui.browser_review import BrowserLink

        self.browser = BrowserLink(self)  # w: the same review in a browser, for anchored comments

    # -- layout

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="review-header"):
            with Horizontal(id="review-titlebar"):
                yield Static(self._title_text(), id="review-title")
                yield Static("", id="receipt")
            yield Static("", id="review-changes")
            yield Static("", id="review-notice")
            yield Static("", id="review-unshown")  # lines the plan holds but the view does not show
        yield PlanView(request.text, changed=request.changed_sections, id="plan-view")
        # The critic's points (never parsed from the plan): planshell/ui/widgets/critic_panel.py.
        yield CriticPanel(request.critic, request.critic_label, id="critic")
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
        self.query_one("#gauge").display = False
        self._show_changes(len(self.request.changed_sections), "since your last review")
        self._show_notice(_with_hidden(self.request.notice, self.request.hidden))
        self._show_receipt(self.request.receipt)
        self._show_unshown()
        if self.browser.open_at_start:
            self.action_browser()

    def action_browser(self) -> None:
        self.browser.open()

    def on_unmount(self) -> None:
        self.browser.close()

    def _title_text(self) -> Text:
        title = strip_terminal_controls(self.request.title) or "Untitled plan"
        label = "Plan (read-only)" if self.read_only else "Review plan"
        text = Text.assemble((label, "bold reverse"), " ", (title, "bold"), no_wrap=True)
        name = strip_terminal_controls(self.request.path.name)
        if name:
            text.append(f"  {name}", "dim")
        text.overflow = "ellipsis"
        return text

    def _show_changes(self, count: int, why: str) -> None:
        widget = self.query_one("#review-changes", Static)
        if count:
            noun = "section" if count == 1 else "sections"
            widget.update(f"▎ {count} {noun} changed {why}")
        widget.display = bool(count)

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
            widget.display = False
            return
        clean = receipt.clean
        partial = clean and bool(receipt.not_covered)
        mark = "⚠" if partial else "✓" if clean else "✗"
        text = strip_terminal_controls(receipt.summary)
        widget.update(f"{mark} {text}")
        scope = receipt.scope
        widget.tooltip = f"{text}\n\nThe check {strip_terminal_controls(scope)}." if scope else None
        widget.set_class(clean and not partial, "-clean")
        widget.set_class(partial, "-partial")
        widget.set_class(not clean, "-dirty")
        widget.display = True

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
        gauge = self.query_one(PlanGauge)
        gauge.display = view.overflowing
        first, last, total = view.visible_range()
        index = view.current_section()
        sections = view.sections
        title = plain_inline(sections[index].title) if sections else ""
        gauge.update_state(
            GaugeState(first, last, total, title, bool(sections) and index in view.changed)
        )

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
        if action in ("more_keys", "show_unshown"):
            return not self._refining
        if action == "send_edit":
            return not self.read_only and not self._refining and self._edited is not None
        return True

    def action_approve(self) -> None:
        """Ask how the plan runs (ApproveModeScreen); Esc there approves nothing."""
        if not self._unshown_checked():
            return
        from planshell.ui.screens.approve_mode import ApproveModeScreen

        dialog = ApproveModeScreen(
            allow_auto=self.request.allow_auto, default=self.request.approve_mode
        )
        self.app.push_screen(dialog, self.approve_in)

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

    def action_send_edit(self) -> None:
        if self._edited is None:
            return
        self.dismiss(
            Review(Decision.REFINE, feedback=edit_feedback(self.request.text, self._edited))
        )

    def action_refine(self) -> None:
        self._refining = True
        self.query_one("#refine").display = True
        self.query_one(FeedbackArea).focus()

    def _close_refine(self) -> None:
        self._refining = False
        self.query_one("#refine").display = False
        self.plan_view.focus()

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
        self.dismiss(Review(Decision.KEEP))

    def action_exit_plan(self) -> None:
        self.dismiss(Review(Decision.EXIT))

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
        """Write the point as the person's ``> [!REVIEW]`` comment, by the browser's writer.

        After the section the point names (else the one on screen); the plan on
        screen becomes the file's new text, so approving still approves what is
        on disk. Nothing is written while the person's own edit is pending.
        """
        event.stop()
        problem = self._write_critic_comment(event.point)
        if problem:
            self.notify(problem, severity="warning", markup=False)
            return
        event.panel.drop(event.index)

    def _write_critic_comment(self, point: str) -> str:
        """ "" when written, else why not (one sentence)."""
        from dataclasses import replace

        from planshell.plan.store import PlanStoreError
        from planshell.review_web.feedback import (
            LEDGER,
            FeedbackError,
            comment_on_section,
            review_lines,
        )

        store = getattr(getattr(self.app, "runtime", None), "store", None)
        if store is None or self.read_only:
            return "Comments need the plan's project; not available here."
        if self._edited is not None:
            return "You have an unsaved edit of the plan: approve or send it first."
        path = self.request.path
        authored = LEDGER.authored(path)
        try:
            current = store.read(path)
            if current != self.request.text:
                return "The plan file changed since the review opened; nothing was written."
            section = _section_named(self.plan_view, point)
            new_text, comment = comment_on_section(current, section, point, authored)
            store.write(path, new_text)
        except (PlanStoreError, FeedbackError) as exc:
            return f"The comment was not written: {exc}"
        LEDGER.record(path, review_lines([comment]))
        self.request = replace(self.request, text=new_text)
        self._critic_comments += 1
        self.plan_view.load(new_text, self.request.changed_sections)
        self.notify(
            "Added as your comment (> [!REVIEW] in the plan file); r sends it.", markup=False
        )
        return ""

    def _with_comments(self, text: str) -> str:
        """Refine feedback plus the comments the person adopted from the critic, if any."""
        if not self._critic_comments:
            return text
        from planshell.review_web.feedback import LEDGER, split_reviews
        from planshell.review_web.render import render_plan_html
        from planshell.review_web.server import feedback_message

        base, comments = split_reviews(self.request.text, LEDGER.authored(self.request.path))
        if not comments:
            return text
        message = feedback_message(render_plan_html(base), base.split("\n"), comments)
        return f"{text}\n\n{message}" if text else message

    @on(FeedbackArea.Submitted)
    def _submit_feedback(self, event: FeedbackArea.Submitted) -> None:
        event.stop()
        text = self._with_comments(event.text.strip())
        if not text:
            return  # an empty buffer does nothing
        if self._edited is not None:
            text = f"{text}\n\n{edit_feedback(self.request.text, self._edited)}"
        self.dismiss(Review(Decision.REFINE, feedback=text))

    @on(FeedbackArea.Cancelled)
    def _close_feedback(self, event: FeedbackArea.Cancelled) -> None:
        event.stop()
        self._close_refine()

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
            self.plan_view.load(self.request.text, self.request.changed_sections)
            self._show_changes(len(self.request.changed_sections), "since your last review")
            self._show_notice(self.request.notice)
            self.query_one(ReviewFooter).set_hints(decision_hints(self.request.mode))
            return
        self._edited = edited
        changed = frozenset(changed_sections(parse_plan(self.request.text), parse_plan(edited)))
        self.plan_view.load(edited, changed)
        self._show_changes(len(changed), "by your edit")
        self._show_notice(edit_notice(self.request.mode))
        self.query_one(ReviewFooter).set_hints(decision_hints(self.request.mode, edited=True))
        self.plan_view.focus()

    # -- dismissal never approves

    def dismiss(self, result: Review | None = None) -> AwaitComplete:
        if not isinstance(result, Review):
            result = Review(Decision.KEEP)
        return super().dismiss(result)

    def unanswered_result(self) -> Review:
        """Removed without ``dismiss`` (app.pop_screen etc.): KEEP, never hang."""
        return Review(Decision.KEEP)


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
