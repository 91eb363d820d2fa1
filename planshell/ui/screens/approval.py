"""The approval prompt: may this tool call run? (Outside plan mode; docs/permissions.md.)

It covers the prompt area and the status bar; the transcript above stays
visible. Edits and writes show a coloured unified diff of exactly the bytes
that will be written (a new file: its whole content), with carriage returns
and invisible characters marked (``␍``, ``⟨U+200B⟩``, highlighted; see
planshell.permissions.visible_diff); bash the whole command, the simple
commands it runs as parsed, and the guard's reason.

Everything shown came from the model: control characters, escape sequences
and invisible or bidi characters are shown *as escapes* (``\\x1b``,
``\\u202e``), never stripped silently, so what the user reads is what will
run; a long command is shown whole (the body scrolls) with its size stated.

Keys: ``y`` once, ``s`` this session, ``a`` always in this project (the rule
and file are shown), ``p`` add to the plan (only for an unplanned file while a
plan executes in accept-edits: allowed, and the path joins the plan's scope),
``n`` deny with an optional reason, ``Esc`` deny. Keys
typed before the prompt appeared or in its first moments are ignored
(``KeyGrace``: a key typed for the chat is not the answer); Esc acts at once.
Any dismissal denies.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from planshell.permissions.visible_diff import MARK
from planshell.plan.decider import ApprovalChoice, ApprovalDecision, ApprovalRequest
from planshell.text import plural
from planshell.ui.keygrace import KeyGrace
from planshell.ui.screens.results import AnswersWhenRemoved

LONG_COMMAND = 300  # characters: above this the size is stated up front


def visible(text: str) -> str:
    """``text`` with every non-printable character written as an escape (``\\x1b``).

    Newlines and tabs stay (they are part of the command and show as such).
    """
    out = []
    for char in text:
        if char in "\n\t" or char.isprintable():
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


def one_line(text: str, limit: int = 200) -> str:
    line = " ".join(visible(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def diff_text(diff: str) -> Text:
    """A unified diff coloured by line kind (the text itself is made visible first).

    The ``␍`` and ``⟨U+…⟩`` marks of a visible diff are highlighted: they stand
    for bytes that will be written, so they must not pass for ordinary text.
    """
    out = Text()
    for line in visible(diff).splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(line + "\n", style=style)
    out.rstrip()
    out.highlight_regex(MARK, "bold reverse")
    return out


class ApprovalScreen(KeyGrace, AnswersWhenRemoved[ApprovalDecision], ModalScreen[ApprovalDecision]):
    DEFAULT_CSS = """
    ApprovalScreen {
        align: center bottom;
        background: transparent;
    }
    ApprovalScreen #approval {
        width: 100%;
        height: auto;
        max-height: 75%;
        padding: 0 1;
        border-top: thick $warning;
        background: $surface;
    }
    ApprovalScreen #approval-title { text-style: bold; }
    ApprovalScreen #approval-why { color: $text-muted; }
    ApprovalScreen #approval-warning { color: $error; text-style: bold; }
    ApprovalScreen #approval-body {
        height: auto;
        max-height: 1fr;
        margin: 1 0 0 0;
        scrollbar-size-vertical: 1;
    }
    ApprovalScreen #approval-keys { margin-top: 1; }
    ApprovalScreen #approval-reason { display: none; margin-top: 1; }
    ApprovalScreen.-reason #approval-reason { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "Yes, once"),
        Binding("s", "answer('session')", "Yes, this session"),
        Binding("a", "answer('always')", "Always in this project"),
        Binding("p", "answer('add_to_plan')", "Add to the plan"),
        Binding("n", "deny_with_reason", "No"),
        Binding("escape", "deny", "Deny", show=False),
    ]
    GUARDED_ACTIONS: ClassVar[frozenset[str]] = frozenset({"answer", "deny_with_reason"})

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__()
        self.request = request

    def unanswered_result(self) -> ApprovalDecision:
        return ApprovalDecision(ApprovalChoice.DENY)

    # -- layout

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="approval"):
            yield Static(Text(self._title()), id="approval-title")
            yield Static(Text(one_line(request.why, 400)), id="approval-why")
            if request.warning:
                yield Static(Text("⚠ " + one_line(request.warning, 600)), id="approval-warning")
            with VerticalScroll(id="approval-body"):
                yield Static(self._body(), id="approval-content")
            yield Static(self._keys(), id="approval-keys")
            yield Input(
                placeholder="Why not? (optional, sent to the model) Enter to deny",
                id="approval-reason",
            )

    def _title(self) -> str:
        request = self.request
        if request.kind == "bash":
            where = " OUTSIDE the sandbox" if request.unsandboxed else ""
            return f"Allow this command to run{where}?"
        if request.kind in ("edit", "write"):
            path = one_line(request.path, 120)
            if request.new_file:
                return f"Allow creating {path}?"
            return f"Allow this {'edit to' if request.kind == 'edit' else 'overwrite of'} {path}?"
        return f"Allow {one_line(request.headline, 120)}?"

    def _body(self) -> Text:
        request = self.request
        if request.kind == "bash":
            command = request.command
            out = Text()
            lines = command.count("\n") + 1
            if len(command) > LONG_COMMAND or lines > 1:
                out.append(
                    f"{plural(lines, 'line')}, {plural(len(command), 'character')}; "
                    "all of it is shown.\n",
                    style="bold yellow",
                )
            out.append(visible(command) + "\n", style="bold")
            if len(request.segments) > 1:
                out.append(f"\nIt runs {len(request.segments)} commands:\n", style="dim")
                for segment in request.segments:
                    out.append(f"  • {one_line(segment, 500)}\n")
            out.rstrip()
            return out
        if request.kind in ("edit", "write"):
            if not request.diff:
                return Text("(nothing to show)")
            return diff_text(request.diff)
        return Text(visible(request.command))

    def _keys(self) -> Text:
        request = self.request
        keys = Text()
        keys.append(self.key_hint("y"), style="bold")
        keys.append(" yes once   ")
        if request.session_rules:
            keys.append(self.key_hint("s"), style="bold")
            what = ", ".join(one_line(r, 80) for r in request.session_rules)
            keys.append(f" yes for this session ({what})   ")
        if request.add_to_plan:
            keys.append(self.key_hint("p"), style="bold")
            keys.append(" add to the plan (allow, and the plan names this file)   ")
        keys.append(self.key_hint("n"), style="bold")
        keys.append(" no (say why)   ")
        keys.append("esc", style="bold")
        keys.append(" deny")
        if request.project_rules and request.project_file:
            keys.append("\n")
            keys.append(self.key_hint("a"), style="bold")
            rules = ", ".join(one_line(r, 80) for r in request.project_rules)
            # The user's own file in planshell's data folder (the whole path is in the
            # notice after saving and in `planshell doctor`): never the repository's config.
            name = one_line(request.project_file.rsplit("/", 1)[-1], 40)
            keys.append(
                f" always in this project: saves {rules} to {name} in your planshell data "
                "folder (not the repository)"
            )
        return keys

    # -- behaviour

    def keys_ready_changed(self) -> None:
        super().keys_ready_changed()
        self.query_one("#approval-keys", Static).update(self._keys())

    @property
    def asking_reason(self) -> bool:
        return self.has_class("-reason")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("answer", "deny_with_reason") and self.asking_reason:
            return False  # the keys are typed into the reason
        if action == "answer" and parameters:
            choice = parameters[0]
            if choice == "session" and not self.request.session_rules:
                return False
            if choice == "add_to_plan" and not self.request.add_to_plan:
                return False
            if choice == "always" and not (
                self.request.project_rules and self.request.project_file
            ):
                return False
        return True

    def action_answer(self, choice: str) -> None:
        self.dismiss(ApprovalDecision(ApprovalChoice(choice)))

    def action_deny(self) -> None:
        # Esc denies at once, grace or not: denying is always safe.
        reason = self.query_one("#approval-reason", Input).value if self.asking_reason else ""
        self.dismiss(ApprovalDecision(ApprovalChoice.DENY, reason.strip()))

    def action_deny_with_reason(self) -> None:
        self.add_class("-reason")
        self.query_one("#approval-reason", Input).focus()

    @on(Input.Submitted, "#approval-reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(ApprovalDecision(ApprovalChoice.DENY, event.value.strip()))
