"""Approvals outside plan mode: an agent gate that may ask a person.

Plan mode's own gate (added first) decides every call in PLAN; this gate
stands aside there and never widens what PLAN allows. Elsewhere each call is
classified, in this order:

1. read-only tools, and plan tools (the plan store's own writes), run;
2. a ``permissions.deny`` rule that matches refuses it (deny wins over all).
   For bash, rules see what bash will run (``resolve.py``): every command
   anywhere in the line, braces expanded, quotes removed, wrappers such as
   ``env``, ``sudo``, ``xargs``, ``find -exec`` and ``bash -c`` unwrapped. When
   bash deny rules exist, a line that *might* run a denied command asks, in
   every mode: a command whose name is only known at run time (``$x``,
   ``$(…)``), a wrapper option that cannot be read, an unparseable line, or a
   word known only at run time where a deny pattern needs a word;
2b. an edit/write of a protected path (``workspace/protected.py``: ``.git``, ``.gitmodules``,
   ``.planshell/`` outside plans, the user's planshell folders) and a bash line that
   creates a repository (``git init``/``clone``/``submodule add|update``/``worktree add``)
   ask in every mode, ``auto`` included, with a warning, and no rule covers them;
3. bash the guard proves read-only runs;
4. ``auto`` runs everything else; ``accept-edits`` runs edits and writes inside
   the project. While an approved plan executes, its scope (``plan/scope.py``: the
   files its approved text names) is a fence: ``accept-edits`` asks for an edit or
   write outside it ("Unplanned file …", allow once or deny), ``auto`` runs it and
   flags it (a warning notice and the session log). Bash is left to the mode: its
   writes cannot be known before it runs;
5. an allow rule (config, ``--allow``, this session's answers) that covers it
   runs it: for bash, *every* command the line runs (wrappers unwrapped) must
   be covered by a rule or be read-only, and the line must be nothing but
   simple commands (no substitutions, redirections to files, loops);
5b. while an approved plan executes, a bash line that is exactly one of its approved
   Verification commands (``plan/verification.py``: whitespace aside) runs once per
   approved revision, unless it asks to leave the sandbox (``by="plan-verification"``
   in the log); the next identical run asks;
6. anything else asks the Decider (a prompt in the TUI; headless: denied and
   reported).

Every decision about a call that is not read-only is appended to the session
log. A denial is the tool's result for the model, never an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from planshell.agent import events as ev
from planshell.permissions.args import Arg, describe
from planshell.permissions.resolve import Command, Resolution, resolve
from planshell.permissions.rules import (
    RULE_TOOLS,
    Rule,
    RuleError,
    parse_rule,
    parse_rules,
    prefix_rule_words,
)
from planshell.permissions.visible_diff import visible_diff
from planshell.plan.decider import (
    ApprovalChoice,
    ApprovalDecision,
    ApprovalRequest,
    Decider,
)
from planshell.plan.scope import Scope, plan_scope
from planshell.sanitize import plain_line
from planshell.shell.guard import BashGuard
from planshell.shell.segments import CommandParts, split_command
from planshell.tools.base import Tool, ToolArgs, ToolError
from planshell.tools.edit import (
    EditArgs,
    FileChange,
    WriteArgs,
    approve_change,
    digest,
    plan_change,
    read_current,
)
from planshell.tools.net_guard import url_host
from planshell.workspace.gitwatch import ALL, PERSON, ProjectWatch
from planshell.workspace.protected import REPO_WARNING, creates_repository, protection

if TYPE_CHECKING:
    from planshell.agent.loop import Agent
    from planshell.config import PermissionsSettings

# Tools of plan mode itself: their writes go through the plan store, and the
# plan they touch was approved by a person (or is being written in PLAN).
PLAN_TOOLS = frozenset(
    {"enter_plan_mode", "write_plan", "exit_plan_mode", "cancel_plan_mode",
     "set_plan_steps", "amend_plan", "plan_complete"}
)  # fmt: skip
FILE_TOOLS = frozenset({"edit", "write"})
MAX_ASKS = 3  # the file changed under an open question: ask again, this often


class PermissionMode(StrEnum):
    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    AUTO = "auto"


Action = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Verdict:
    action: Action
    why: str
    by: str  # "read-only", "plan", "deny-rule", "rule", "mode", "plan-verification", "ask"
    rule: str = ""
    # A protected path or a new repository (workspace/protected.py): asked in every mode, shown
    # in red, never covered by a rule; a person's yes lets the project watch keep the change.
    warning: str = ""
    # An edit/write outside the executing plan's scope (the path): asked in accept-edits
    # (once or deny, no rule offered), flagged when auto mode runs it.
    unplanned: str = ""


@dataclass
class _Target:
    """What an edit/write touches, for rules and the diff."""

    rel: str
    inside: bool
    path: Path | None
    raw: str = ""  # as the model wrote it (protected paths are judged both ways)


@dataclass
class PermissionController:
    """The approval gate and the permission mode (one per runtime)."""

    agent: Agent
    settings: PermissionsSettings
    decider: Decider
    guard: BashGuard
    in_plan: Callable[[], bool]
    extra_allow: list[str] = field(default_factory=list)  # --allow flags
    # Where "always allow in this project" rules go and are read from: the user's own file
    # for this project, outside the repository (permissions/local_rules.py). None: not offered.
    local_file: Path | None = None
    warnings: list[str] = field(default_factory=list)
    sandboxed: Callable[[], bool] = lambda: False  # bash runs in the workspace sandbox
    # The executing plan's approved text (the controller's approval record, never the
    # file on disk), or None when no plan executes: its scope fences edits and writes.
    approved_plan: Callable[[], str | None] = lambda: None
    # The executing plan's approved Verification command a bash line is, if it may run
    # unasked now (once per approved revision), and the call that uses that once up.
    verification_ready: Callable[[str], str | None] = lambda command: None
    verification_used: Callable[[str], None] = lambda command: None
    # The "add to the plan" answer for an unplanned file (the controller's add_to_plan: an
    # amendment naming the path, approval rebound); returns why it failed, or None. Unset:
    # the answer is not offered.
    add_to_plan: Callable[[str], str | None] | None = None

    def __post_init__(self) -> None:
        self.mode = PermissionMode(self.settings.mode)
        self.allow = parse_rules([*self.settings.allow, *self.extra_allow], self.warnings, "allow")
        self.deny = parse_rules(list(self.settings.deny), self.warnings, "deny")
        self.allow += self._local_rules()
        self.session_allow: list[Rule] = []
        self.session_tools: set[str] = set()  # "s" for tools rules do not describe
        self._scope: tuple[str, Scope] | None = None  # (approved text, its scope)
        self.agent.gates.append(self.gate)

    # --- mode -----------------------------------------------------------------

    def set_mode(self, mode: str | PermissionMode) -> PermissionMode:
        new = PermissionMode(mode)
        previous, self.mode = self.mode, new
        self._log({"type": "permission_mode", "mode": new.value, "previous": previous.value})
        self.agent.emit(ev.PermissionModeChanged(new.value, previous.value))
        return new

    # --- the gate --------------------------------------------------------------

    async def gate(self, tool: Tool, args: ToolArgs) -> str | None:
        if self.in_plan():
            return None  # plan mode's gate is in charge (and already ran)
        verdict = self.evaluate(tool, args)
        if verdict.by in ("read-only", "plan") and tool.read_only:
            return None
        if verdict.action == "allow":
            reason = ""
            if verdict.unplanned:
                reason = f"outside the approved plan's scope: {verdict.unplanned}"
                self.agent.emit(
                    ev.Notice(
                        f"Unplanned file {plain_line(verdict.unplanned, 200)}: the approved plan "
                        f"does not name it; {self.mode.value} mode let the {tool.name} run.",
                        "warning",
                    )
                )
            if verdict.by == "plan-verification":
                command = str(getattr(args, "command", ""))
                self.verification_used(command)  # no await since evaluate: nothing in between
                reason = "a Verification command of the approved plan, once"
                self.agent.emit(
                    ev.Notice(
                        f"Running the approved plan's Verification command "
                        f"{plain_line(command, 200)} without asking (once; the next run asks).",
                        "information",
                    )
                )
            self._record(tool, args, "allow", verdict.by, verdict.rule, reason)
            return None
        if verdict.action == "deny":
            self._record(tool, args, "deny", verdict.by, verdict.rule)
            return (
                f"Denied by the rule {verdict.rule} (permissions.deny): "
                f"{plain_line(tool.headline(args), 200)} was not run. Do not retry it; "
                "find another way or ask the user."
            )
        return await self._ask(tool, args, verdict)

    def evaluate(self, tool: Tool, args: ToolArgs) -> Verdict:
        """What this call gets without asking anyone (pure: no prompt, no log)."""
        if tool.read_only:
            return Verdict("allow", "read-only tool", "read-only")
        if tool.name in PLAN_TOOLS:
            return Verdict("allow", "plan tool", "plan")
        if tool.name == "bash":
            return self._bash(str(getattr(args, "command", "")), _unsandboxed(args))
        if tool.name in FILE_TOOLS:
            return self._file(tool.name, self._target(args))
        if getattr(tool, "is_mcp", False):
            return self._mcp(tool)
        if tool.name == "fetch":
            return self._fetch(url_host(str(getattr(args, "url", ""))))
        if self.mode is PermissionMode.AUTO:
            return Verdict("allow", "auto mode", "mode")
        if tool.name in self.session_tools:
            return Verdict("allow", "allowed for this session", "rule", tool.name)
        effects = ", ".join(sorted(e.value for e in tool.effects))
        return Verdict("ask", f"{tool.name} can change things (effects: {effects})", "ask")

    def command_verdict(self, command: str, mode: str) -> tuple[str, str]:
        """What a bash ``command`` would get in permission ``mode`` (pure; the current mode stays).

        The approve dialog's blast-radius card lists the Verification commands that would ask.
        """
        verdict = self._bash(command, False, PermissionMode(mode))
        return verdict.action, verdict.why

    def _bash(self, command: str, unsandboxed: bool, mode: PermissionMode | None = None) -> Verdict:
        mode = self.mode if mode is None else mode
        resolved = resolve(command)
        denied = self._deny_bash(resolved)
        if denied is not None:
            return denied
        parts = split_command(command)
        # Asked in every mode, auto included: as typed, and as it will run (bash -c, braces, env).
        runs = [*(s.words for s in parts.segments), *(_known(c.words) for c in resolved.commands)]
        for words in runs:
            creating = creates_repository(words)
            if creating is not None:
                return Verdict(
                    "ask",
                    f"{creating} creates a git repository inside the project",
                    "ask",
                    warning=REPO_WARNING,
                )
        verdict = self.guard.check(command)
        if verdict.allowed and not unsandboxed:
            return Verdict("allow", "read-only command", "read-only")
        if mode is PermissionMode.AUTO:
            return Verdict("allow", "auto mode", "mode")
        if unsandboxed and self.sandboxed():
            return Verdict("ask", "it asks to run outside the sandbox", "ask")
        coverage = self._coverage(parts, resolved)
        if coverage is not None and not coverage[0] and coverage[1]:
            return Verdict("allow", "allow rule", "rule", ", ".join(coverage[1]))
        # Approved with the plan: its Verification command, exactly, once (never one that
        # asks to leave the sandbox: that question is its own).
        if not unsandboxed and self.verification_ready(command) is not None:
            return Verdict(
                "allow", "a Verification command of the approved plan", "plan-verification"
            )
        why = (
            _not_read_only(verdict.reason)
            if not verdict.allowed
            else ("it asks to run outside the sandbox")
        )
        if not parts.plain and parts.why:
            why += f" (no rule can cover it: {parts.why})"
        elif resolved.unresolved:
            why += f" (no rule can cover it: {resolved.unresolved})"
        return Verdict("ask", why, "ask")

    def _deny_bash(self, resolved: Resolution) -> Verdict | None:
        """Deny wins: a command the line runs matches; or asks: it might."""
        rules = [r for r in self.deny if r.tool == "bash"]
        maybe: tuple[Rule, Command] | None = None
        for cmd in resolved.commands:
            for rule in rules:
                found = rule.match_words(cmd.words, deny=True)
                if found == "yes":
                    return Verdict("deny", f"it runs {describe(cmd.words)}", "deny-rule", rule.text)
                if found == "maybe" and maybe is None:
                    maybe = (rule, cmd)
        if rules and resolved.unresolved:
            return Verdict(
                "ask",
                f"deny rules cannot be checked on this command: {resolved.unresolved}",
                "ask",
            )
        if maybe is not None:
            rule, cmd = maybe
            return Verdict(
                "ask",
                f"{plain_line(describe(cmd.words), 120)} might be what {rule.text} "
                "(permissions.deny) refuses: a word is only known when it runs",
                "ask",
            )
        return None

    def _coverage(
        self, parts: CommandParts, resolved: Resolution
    ) -> tuple[list[Command], list[str]] | None:
        """The commands no allow rule covers and the rules used; None: no rule can cover it.

        A segment the guard proves read-only needs no rule (nor do the commands it
        starts), and a wrapper that only runs the words after it (``nice``,
        ``timeout``) needs none of its own: the command it runs does.
        """
        if not parts.plain or not parts.segments or resolved.unresolved or not resolved.plain:
            return None
        read_only: dict[str, bool] = {}
        uncovered: list[Command] = []
        used: list[str] = []
        for cmd in resolved.commands:
            if cmd.origin not in read_only:
                read_only[cmd.origin] = bool(cmd.origin) and self.guard.check(cmd.origin).allowed
            if read_only[cmd.origin] or cmd.layer:
                continue
            rule = next(
                (r for r in self._allow_rules() if r.match_words(cmd.words, deny=False) == "yes"),
                None,
            )
            if rule is not None:
                used.append(rule.text)
            elif not (cmd.src and self.guard.check(cmd.src).allowed):
                uncovered.append(cmd)
        return uncovered, list(dict.fromkeys(used))

    def _file(self, tool: str, target: _Target | None) -> Verdict:
        if target is None:  # outside the project: the tool itself refuses it
            return Verdict("allow", "the tool refuses this path itself", "read-only")
        for rule in self.deny:
            if rule.matches_path(tool, target.rel):
                return Verdict("deny", "deny rule", "deny-rule", rule.text)
        if target.path is not None:
            guarded = protection(self.agent.ctx.root, target.path, target.raw)
            if guarded is not None:  # never by mode or rule: only a person, warned, says yes
                return Verdict(
                    "ask",
                    f"{tool} changes {target.rel}, a protected path",
                    "ask",
                    warning=guarded.warning,
                )
        unplanned = target.rel if target.inside and self._unplanned(target.rel) else ""
        if self.mode is PermissionMode.AUTO:
            return Verdict("allow", "auto mode", "mode", unplanned=unplanned)
        if self.mode is PermissionMode.ACCEPT_EDITS and target.inside and not unplanned:
            return Verdict("allow", "accept-edits mode", "mode")
        if target.inside:
            for rule in self._allow_rules():
                if rule.matches_path(tool, target.rel):
                    return Verdict("allow", "allow rule", "rule", rule.text)
        if unplanned and self.mode is PermissionMode.ACCEPT_EDITS:
            offered = self.add_to_plan is not None and not _own_file(unplanned)
            answers = "allow once / add to the plan / deny" if offered else "allow once / deny"
            return Verdict(
                "ask",
                f"Unplanned file {target.rel} — {answers} (the approved plan does not name it)",
                "ask",
                unplanned=unplanned,
            )
        where = "inside the project" if target.inside else "OUTSIDE the project"
        return Verdict("ask", f"{tool} changes {target.rel} ({where})", "ask")

    def _mcp(self, tool: Tool) -> Verdict:
        """An MCP tool: deny rules first (deny wins), then allow rules, then the mode; else ask.

        The server's hints are its own claims: they never allow anything, they
        are shown in the question (destructiveHint, openWorldHint).
        """
        for rule in self.deny:
            if rule.matches_tool(tool.name):
                return Verdict("deny", "deny rule", "deny-rule", rule.text)
        for rule in self._allow_rules():
            if rule.matches_tool(tool.name):
                return Verdict("allow", "allow rule", "rule", rule.text)
        if self.mode is PermissionMode.AUTO:
            return Verdict("allow", "auto mode", "mode")
        if tool.name in self.session_tools:
            return Verdict("allow", "allowed for this session", "rule", tool.name)
        hints = getattr(tool, "hints", None)
        warn = []
        if hints is not None and hints.destructive is not False and not hints.read_only:
            warn.append("the server says it may be destructive (destructiveHint)")
        if hints is not None and hints.open_world is not False:
            warn.append("it may reach outside systems (openWorldHint)")
        server = getattr(tool, "server", "?")
        claim = (
            "says it only reads" if hints is not None and hints.read_only else "may change things"
        )
        return Verdict(
            "ask",
            f"MCP server {server}: {tool.name} {claim}; the server runs it outside planshell",
            "ask",
            warning=f"MCP: {'; '.join(warn)}" if warn else "",
        )

    def _fetch(self, host: str) -> Verdict:
        """A fetch, by the host its URL names: deny rules, allow rules, the mode; else ask."""
        for rule in self.deny:
            if rule.matches_fetch(host, deny=True):
                return Verdict("deny", "deny rule", "deny-rule", rule.text)
        for rule in self._allow_rules():
            if rule.matches_fetch(host, deny=False):
                return Verdict("allow", "allow rule", "rule", rule.text)
        if self.mode is PermissionMode.AUTO:
            return Verdict("allow", "auto mode", "mode")
        where = plain_line(host, 100) if host else "the URL's server"
        return Verdict("ask", f"fetch sends a request to {where}", "ask")

    def fetch_redirect(self, url: str, first_url: str) -> str | None:
        """Outside PLAN: may a fetch allowed for ``first_url`` follow a redirect to ``url``?

        The same host: yes (that call was allowed). Another host: only when the
        rules or the mode allow it unasked; a deny rule refuses; otherwise the
        model is told to fetch that URL itself, which asks the person.
        """
        host, first = url_host(url), url_host(first_url)
        if host == first:
            return None
        verdict = self._fetch(host)
        shown = plain_line(url, 300)
        if verdict.action == "allow":
            return None
        if verdict.action == "deny":
            return f"Not followed: the redirect to {shown} is denied by the rule {verdict.rule}."
        return (
            f"Not followed: {plain_line(first, 100)} redirected to {shown}, another domain that "
            "no permission covers. If you need it, fetch that URL yourself (the user is asked)."
        )

    def _allow_rules(self) -> list[Rule]:
        return [*self.allow, *self.session_allow]

    def _unplanned(self, rel: str) -> bool:
        """Whether an executing plan's approved scope leaves ``rel`` out (no plan: False)."""
        text = self.approved_plan()
        if text is None:
            return False
        if self._scope is None or self._scope[0] != text:  # ticks change the text, rarely
            self._scope = (text, plan_scope(text))
        return not self._scope[1].covers(rel)

    def _target(self, args: ToolArgs) -> _Target | None:
        ctx = self.agent.ctx
        try:
            path = ctx.resolve(str(getattr(args, "path", "")))
        except ToolError:
            return None
        root = ctx.root.resolve()
        inside = path == root or root in path.parents
        rel = path.relative_to(root).as_posix() if inside else str(path)
        return _Target(rel, inside, path, str(getattr(args, "path", "")))

    # --- asking -----------------------------------------------------------------

    async def _ask(self, tool: Tool, args: ToolArgs, verdict: Verdict) -> str | None:
        for _ in range(MAX_ASKS):
            # Reading the file (up to the tool's cap) and diffing it stay off the event loop.
            change = await asyncio.to_thread(self._change, tool, args)
            if isinstance(change, ToolError):
                return self._will_fail(tool, args, change)
            request, fingerprint = await asyncio.to_thread(
                self.request, tool, args, verdict, change
            )
            answer = await self.decider.approve_tool(request)
            if answer.choice is ApprovalChoice.DENY:
                return self._denied(tool, args, answer, verdict.warning, verdict.why)
            if fingerprint != await asyncio.to_thread(self._fingerprint, tool, args):
                self.agent.emit(
                    ev.Notice(
                        f"{request.path} changed while you were asked; asking again.", "warning"
                    )
                )
                continue
            if change is not None:
                _bind(args, change)  # the tool writes exactly what was shown, or nothing
            if answer.choice is ApprovalChoice.ADD_TO_PLAN:
                self._add_to_plan(request)
            if answer.choice is ApprovalChoice.SESSION:
                self._allow_for_session(tool, request)
            elif answer.choice is ApprovalChoice.ALWAYS:
                self._allow_for_session(tool, request)
                self._save(request.project_rules)
            self._record(
                tool,
                args,
                "allow",
                f"user:{answer.choice.value}",
                ", ".join(
                    request.project_rules
                    if answer.choice is ApprovalChoice.ALWAYS
                    else request.session_rules
                    if answer.choice is ApprovalChoice.SESSION
                    else ()
                ),
            )
            watch = self.agent.ctx.watch
            if isinstance(watch, ProjectWatch):  # a person's yes: the watch keeps what they allowed
                watch.permit(args, ALL if verdict.warning else PERSON)
            return None
        return self._denied(
            tool,
            args,
            ApprovalDecision(ApprovalChoice.DENY, "the file kept changing", False),
            verdict.warning,
        )

    def _add_to_plan(self, request: ApprovalRequest) -> None:
        """The person's "add to the plan": this call runs and the plan's scope names the path.

        Only where it was offered (an unplanned file in accept-edits); anywhere
        else the answer counts as "once". A path the plan cannot name is a
        notice: the call the person allowed still runs.
        """
        if not request.add_to_plan or self.add_to_plan is None:
            return
        problem = self.add_to_plan(request.path)
        if problem:
            self.agent.emit(
                ev.Notice(
                    f"Allowed once; {plain_line(request.path, 200)} was not added to the plan: "
                    f"{plain_line(problem, 300)}",
                    "warning",
                )
            )

    def _will_fail(self, tool: Tool, args: ToolArgs, error: ToolError) -> str:
        """An edit/write the tool would refuse is refused here, unasked.

        A prompt saying "this will fail" invites a careless yes; there is no
        such prompt, so no yes can meet a file that changed in between. The
        model gets the tool's own error.
        """
        self._record(tool, args, "deny", "will-fail", "", str(error))
        return str(error)

    def _denied(
        self,
        tool: Tool,
        args: ToolArgs,
        answer: ApprovalDecision,
        warning: str = "",
        why: str = "",
    ) -> str:
        reason = " ".join(answer.reason.split())
        self._record(
            tool, args, "deny", "user" if answer.by_person else "no-one-to-ask", "", reason
        )
        headline = plain_line(tool.headline(args), 200)
        if not answer.by_person:
            because = f" ({plain_line(why, 300)})" if why else ""
            extra = f" {plain_line(warning, 400)}" if warning else ""
            said = f"{reason}.{extra}" if extra else reason
            said = said[:1].upper() + said[1:]  # its own sentence after the headline
            self.agent.emit(
                ev.Notice(f"Denied (needs approval): {headline}{because}. {said}", "warning")
            )
            return f"Not run: {headline} needs the user's approval{because}, and {reason}.{extra}"
        if reason:
            return f"The user denied this: {reason}"
        return "The user denied this. Do not retry the same call; ask the user what to do instead."

    def request(
        self, tool: Tool, args: ToolArgs, verdict: Verdict, change: FileChange | None = None
    ) -> tuple[ApprovalRequest, str]:
        """The question for the Decider, and a fingerprint of what it showed.

        For an edit/write, ``change`` is what the call writes (read now when not
        given); the diff and the fingerprint both come from its bytes.
        """
        headline = tool.headline(args)
        project_file = self._project_file_display()
        if tool.name == "bash":
            command = str(getattr(args, "command", ""))
            unsandboxed = _unsandboxed(args) and self.sandboxed()
            parts = split_command(command)
            rules: tuple[str, ...] = ()
            coverage = self._coverage(parts, resolve(command))
            if coverage is not None and not unsandboxed and not verdict.warning:
                rules = tuple(dict.fromkeys(prefix_rule_words(c.words) for c in coverage[0]))
            request = ApprovalRequest(
                tool.name,
                headline,
                "bash",
                verdict.why,
                command=command,
                segments=tuple(s.src for s in parts.segments),
                session_rules=rules,
                project_rules=rules,
                project_file=project_file if rules else "",
                unsandboxed=unsandboxed,
                warning=verdict.warning,
            )
            return request, ""
        if tool.name in FILE_TOOLS:
            target = self._target(args)
            rel = target.rel if target else str(getattr(args, "path", ""))
            planned = change if change is not None else self._change(tool, args)
            diff, new_file = _diff(tool.name, rel, planned)
            project = (f"{tool.name}({_glob_literal(rel)})",) if target and target.inside else ()
            session: tuple[str, ...] = (tool.name,)
            if verdict.warning or verdict.unplanned:  # protected or unplanned: no rule offered
                project, session = (), ()
            request = ApprovalRequest(
                tool.name,
                headline,
                tool.name,
                verdict.why,
                path=rel,
                diff=diff,
                new_file=new_file,
                session_rules=session,
                project_rules=project,
                project_file=project_file if project else "",
                warning=verdict.warning,
                add_to_plan=bool(
                    verdict.unplanned
                    and not verdict.warning
                    and not _own_file(verdict.unplanned)
                    and self.add_to_plan is not None
                    and self.mode is PermissionMode.ACCEPT_EDITS
                ),
            )
            fingerprint = planned.before_digest if isinstance(planned, FileChange) else ""
            return request, fingerprint
        offered: tuple[str, ...] = (tool.name,)
        if tool.name == "fetch":  # "s"/"always" cover the domain, not every URL there is
            offered = _domain_rule(url_host(str(getattr(args, "url", ""))))
        request = ApprovalRequest(
            tool.name,
            headline,
            "other",
            verdict.why,
            command=_describe_args(args),
            session_rules=offered,
            project_rules=offered if tool.name == "fetch" else (),
            project_file=project_file if tool.name == "fetch" and offered else "",
            warning=verdict.warning,
        )
        return request, ""

    def _change(self, tool: Tool, args: ToolArgs) -> FileChange | ToolError | None:
        """What an edit/write would write now, by the tool's own reading (None: not one)."""
        if tool.name not in FILE_TOOLS or not isinstance(args, EditArgs | WriteArgs):
            return None
        try:
            return plan_change(self.agent.ctx, args)[1]
        except ToolError as exc:
            return exc

    def _fingerprint(self, tool: Tool, args: ToolArgs) -> str:
        """The digest of the bytes an edit/write would work on now (a change re-asks)."""
        if tool.name not in FILE_TOOLS:
            return ""
        target = self._target(args)
        if target is None or target.path is None:
            return ""
        try:
            return digest(read_current(target.path, target.rel))
        except ToolError as exc:
            return f"unreadable: {exc}"

    def _allow_for_session(self, tool: Tool, request: ApprovalRequest) -> None:
        if request.kind == "other" and tool.name not in RULE_TOOLS:
            self.session_tools.add(tool.name)
            return
        self.session_allow += parse_rules(list(request.session_rules), self.warnings, "session")

    # --- "always allow in this project" ------------------------------------------

    def _local_rules(self) -> list[Rule]:
        """The user's saved "always" rules for this project (a broken file: a warning)."""
        if self.local_file is None:
            return []
        from planshell.config import ConfigError
        from planshell.permissions.local_rules import load_local_rules

        try:
            return parse_rules(load_local_rules(self.local_file), self.warnings, "always")
        except ConfigError as exc:
            self.warnings.append(f"{exc} Your saved rules for this project are not applied.")
            return []

    def _save(self, rules: tuple[str, ...]) -> None:
        if not rules or self.local_file is None:
            return
        from planshell.permissions.local_rules import save_local_rules

        self.allow += [parse_rule(r) for r in rules]  # a broken file must not lose the answer
        try:
            message = save_local_rules(self.local_file, list(rules))
        except Exception as exc:
            self.agent.emit(
                ev.Notice(f"Could not save the rule (it applies this session): {exc}", "error")
            )
            return
        self.agent.emit(ev.Notice(message, "information"))

    def _project_file_display(self) -> str:
        if self.local_file is None:
            return ""
        from planshell.permissions.local_rules import shown_path

        return shown_path(self.local_file)

    # --- the session log ---------------------------------------------------------

    def _record(
        self, tool: Tool, args: ToolArgs, decision: str, by: str, rule: str = "", reason: str = ""
    ) -> None:
        entry: dict[str, Any] = {
            "type": "permission",
            "tool": tool.name,
            "call": tool.headline(args)[:500],
            "decision": decision,
            "by": by,
            "mode": self.mode.value,
        }
        if rule:
            entry["rule"] = rule
        if reason:
            entry["reason"] = reason[:500]
        self._log(entry)

    def _log(self, entry: dict[str, Any]) -> None:
        if self.agent.session is not None:
            self.agent.session.append(entry)


def _domain_rule(host: str) -> tuple[str, ...]:
    """The rule "s"/"always" saves for a fetch of ``host`` (none for a host a rule cannot name)."""
    rule = f"fetch(domain:{host})"
    try:
        parse_rule(rule)
    except RuleError:
        return ()
    return (rule,)


def _own_file(rel: str) -> bool:
    """planshell's own files (plans, run records, config): never added to a plan's scope."""
    return rel.split("/", 1)[0] == ".planshell"


def _not_read_only(reason: str) -> str:
    """The guard's reason without its plan-mode advice: why this is not proven read-only."""
    text = reason.removeprefix("blocked: ")
    text = text.split("; plan mode may only read.")[0]
    return f"Not proven read-only: {text}"


def _unsandboxed(args: ToolArgs) -> bool:
    return getattr(args, "sandbox", True) is False


def _diff(tool: str, rel: str, change: FileChange | ToolError | None) -> tuple[str, bool]:
    """The prompt's diff of exactly the bytes ``change`` writes, and whether it creates the file."""
    if change is None:
        return "", False
    if isinstance(change, ToolError):
        return f"(the {tool} cannot apply and will fail: {change})", False
    diff = visible_diff(rel, change.before, change.after)
    return diff or "(no change: same content)", change.before is None


def _bind(args: ToolArgs, change: FileChange) -> None:
    if isinstance(args, EditArgs | WriteArgs):
        approve_change(args, change)


def _glob_literal(rel: str) -> str:
    """``rel`` as a path pattern matching only itself."""
    return "".join(f"\\{c}" if c in "*?[]{},\\" else c for c in rel)


def _describe_args(args: ToolArgs) -> str:
    import json

    return json.dumps(args.model_dump(), ensure_ascii=True, indent=1, default=str)[:4000]


def _known(words: tuple[Arg, ...]) -> tuple[str, ...]:
    """A resolved command's words, with what is only known at run time as an empty word."""
    return tuple(w if isinstance(w, str) else "" for w in words)
