"""Every setting as a pydantic model: ``Settings`` and its sections.

``planshell.config.sources.load_settings`` merges the layers into one table
and validates it here; built in code a ``Settings`` is its arguments over the
defaults (it never reads the environment itself).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    model_validator,
)

from planshell.config.mcp import McpSettings
from planshell.provider_names import PROVIDER_CHOICES, PROVIDER_NAMES

if TYPE_CHECKING:
    from planshell.config.untrusted import UntrustedProject


def _printable(text: str) -> str:
    """Shown on screen: one line with no control characters, escapes or bidi overrides."""
    from planshell.sanitize import strip_terminal_controls

    if "\n" in text or "\t" in text or strip_terminal_controls(text) != text:
        raise ValueError("must be one line of printable text (no control characters)")
    return text


_NAME_RE = re.compile(r"^[\w.+-]{1,64}$")


def _name(text: str) -> str:
    """A theme name: letters, digits, ``_ . + -`` (no markup, spaces or escapes)."""
    if not _NAME_RE.match(text):
        raise ValueError("must be a name of letters, digits, '_', '.', '+' or '-'")
    return text


PrintableText = Annotated[str, AfterValidator(_printable)]
Name = Annotated[str, AfterValidator(_name)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ToolsSettings(_Section):
    allow_outside_root: bool = Field(
        False, description="Let tools read/write outside the project root."
    )
    read_max_bytes: int = Field(256 * 1024, gt=0, description="Largest file `read` returns whole.")
    bash_timeout: float = Field(
        120.0, gt=0, le=3600, description="Default `bash` timeout in seconds."
    )
    bash_max_output: int = Field(30_000, gt=0, description="Characters of `bash` output kept.")
    result_max_chars: int = Field(
        40_000, ge=1000, description="Characters of any one tool result sent to the model."
    )


class PlanBashSettings(_Section):
    safe_patterns: list[str] | None = Field(
        None, description="Regexes of extra read-only commands; replaces the built-in list."
    )
    destructive_patterns: list[str] | None = Field(
        None, description="Regexes that always block; replaces the built-in list."
    )


NotifyType = Literal["information", "warning", "error"]


class PlanLabel(_Section):
    notify: PrintableText
    widget: PrintableText
    widget_with_title: PrintableText
    notify_type: NotifyType = "information"
    widget_color: PrintableText = "$primary"


def _default_labels() -> dict[str, PlanLabel]:
    return {
        "plan": PlanLabel(
            notify="Plan mode on: read-only until you approve a plan.",
            widget="PLAN",
            widget_with_title="PLAN · {title}",
            widget_color="$plan-chip",
        ),
        "execute": PlanLabel(
            notify="Plan approved: executing {title}.",
            widget="EXECUTE",
            widget_with_title="EXECUTE · {title}",
            widget_color="$execute-chip",
        ),
        "off": PlanLabel(
            notify="Plan mode off: all tools available.",
            widget="OFF",
            widget_with_title="OFF",
            widget_color="$off-chip",
        ),
    }


class PlanLabels(_Section):
    """Mode chip and toast texts; ``{title}`` is replaced by the plan title."""

    plan: PlanLabel = Field(default_factory=lambda: _default_labels()["plan"])
    execute: PlanLabel = Field(default_factory=lambda: _default_labels()["execute"])
    off: PlanLabel = Field(default_factory=lambda: _default_labels()["off"])

    @model_validator(mode="before")
    @classmethod
    def _over_defaults(cls, data: Any) -> Any:
        """A user sets one field of a label; the others keep their defaults."""
        if not isinstance(data, dict):
            return data
        defaults = _default_labels()
        merged = dict(data)
        for name, value in data.items():
            if name in defaults and isinstance(value, dict):
                merged[name] = {**defaults[name].model_dump(), **value}
        return merged


class PlanUISettings(_Section):
    hide_notify: bool = Field(False, description="Do not toast mode changes.")
    hide_widget: bool = Field(False, description="Hide the mode chip in the status bar.")


class PlanShortcuts(_Section):
    toggle_mode: str = Field(
        "ctrl+shift+l,ctrl+shift+L,ctrl+L,f2",
        description="Keys that toggle plan mode (comma-separated Textual key names).",
    )


def _critic_provider(text: str | None) -> str | None:
    """A named provider (not ``auto``): the critic's endpoint is chosen, never guessed."""
    if text is not None and text not in PROVIDER_NAMES:
        raise ValueError(f"must be one of {', '.join(PROVIDER_NAMES)}")
    return text


class PlanCriticSettings(_Section):
    """A second model that reads a plan and the files it cites before the review opens.

    Off by default. Only the user's own config may set it (``USER_ONLY_KEYS``):
    it sends the plan and the files it cites to an endpoint, which a repository
    must never choose.
    """

    provider: Annotated[str | None, AfterValidator(_critic_provider)] = Field(
        None, description="The critic's provider (demo, openai or anthropic); unset: no critic."
    )
    model: str | None = Field(None, description="The critic's model; the provider's default.")
    base_url: str | None = Field(None, description="The critic's API base URL.")
    timeout: float = Field(
        60.0, gt=0, le=600, description="Seconds the critic may take; the review then opens."
    )


class PlanSettings(_Section):
    approve_mode: Literal["accept-edits", "ask"] = Field(
        "ask",
        description="The approve dialog's focused choice (Enter): how an approved plan runs.",
    )
    approve_auto: bool = Field(
        False,
        description=(
            "Offer 'Auto: run everything without asking' when approving a plan. "
            "Only the user's own config can set it: a project file never can, trusted or not."
        ),
    )
    allowed_tools: list[str] | None = Field(
        None, description="Tools offered in plan mode; replaces the default read-only set."
    )
    cleanup_on_complete: bool = Field(False, description="Delete the plan file at plan_complete.")
    sandbox: Literal["auto", "required", "off"] = Field(
        "auto", description="Run plan-mode bash in a bubblewrap read-only sandbox."
    )
    env_deny: list[str] = Field(
        default_factory=list,
        description="Extra environment variable names or globs hidden from plan-mode bash.",
    )
    env_allow: list[str] = Field(
        default_factory=list,
        description=(
            "Environment variable names or globs bash keeps although the secret rules would "
            "drop them (env_deny still wins). Not settable by an untrusted project."
        ),
    )
    provider: Annotated[str | None, AfterValidator(_critic_provider)] = Field(
        None,
        description=(
            "The provider used while planning (demo, openai or anthropic); unset: the "
            "session's. Its own key variable and default URL apply, never the session's key."
        ),
    )
    model: str | None = Field(
        None, description="The model used while planning; unset: the session's model."
    )
    base_url: str | None = Field(None, description="The planning provider's API base URL.")
    context_window: int | None = Field(
        None, gt=0, description="The planning model's context window; else asked of the server."
    )
    bash: PlanBashSettings = Field(default_factory=PlanBashSettings)
    labels: PlanLabels = Field(default_factory=PlanLabels)
    ui: PlanUISettings = Field(default_factory=PlanUISettings)
    shortcuts: PlanShortcuts = Field(default_factory=PlanShortcuts)
    critic: PlanCriticSettings = Field(default_factory=PlanCriticSettings)


_RULE_RE = re.compile(r"^(?:[a-z_]+(?:\([^\x00-\x1f\x7f]+\))?|mcp__[A-Za-z0-9_*?-]+)$")


def _rule(text: str) -> str:
    """A permission rule, e.g. ``bash(pytest *)``, ``edit(src/**)`` (checked fully later)."""
    if not _RULE_RE.match(text.strip()):
        raise ValueError(
            "must look like tool(pattern), e.g. 'bash(pytest *)' or 'edit(src/**)', "
            "or an MCP tool name such as 'mcp__jira__*'"
        )
    return text.strip()


Rule = Annotated[str, AfterValidator(_rule)]
PermissionMode = Literal["ask", "accept-edits", "auto"]


class PermissionsSettings(_Section):
    """Approvals outside plan mode (docs/permissions.md). Security-relevant: trust needed."""

    mode: PermissionMode = Field(
        "ask", description="ask, accept-edits (file changes unasked) or auto (nothing asks)."
    )
    allow: list[Rule] = Field(
        default_factory=list, description="Calls that run unasked, e.g. 'bash(pytest *)'."
    )
    deny: list[Rule] = Field(
        default_factory=list, description="Calls that are always refused; deny wins over allow."
    )
    sandbox: Literal["workspace-write", "off"] = Field(
        "workspace-write",
        description=(
            "Outside plan mode, run bash in a bubblewrap sandbox: project writable, rest "
            "read-only (off, with a notice, when bubblewrap is missing)."
        ),
    )
    network: bool = Field(
        False, description="Let sandboxed bash outside plan mode use the network."
    )


def _domain(text: str) -> str:
    """A host name for fetch.allow_domains: ``docs.python.org``, or ``*.python.org`` for its
    subdomains; lower case, no scheme, path, port or wildcard elsewhere."""
    name = text.strip().rstrip(".").lower()
    bare = name.removeprefix("*.")
    if not re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*", bare):
        raise ValueError(
            f"{text!r} is not a host name (write docs.python.org, or *.python.org for subdomains)"
        )
    return name


class FetchSettings(_Section):
    """The fetch tool (docs/fetch.md). allow_domains counts only from the user's own config."""

    allow_domains: list[Annotated[str, AfterValidator(_domain)]] = Field(
        default_factory=list,
        description="Domains plan mode fetches without asking (your own config only).",
    )
    timeout: float = Field(20.0, gt=0, le=300, description="Seconds one fetch may take in all.")
    max_bytes: int = Field(
        2 * 1024 * 1024, gt=0, le=50 * 1024 * 1024, description="Bytes of a page read at most."
    )


StartMode = Literal["plan", "off"]


class UISettings(_Section):
    theme: Name = Field("planshell-dark", description="Theme name (see themes/).")
    start_mode: StartMode = Field(
        "off",
        description=(
            "The mode a new session starts in: plan or off. Only narrows what can happen, "
            "so a project may set it without trust; --continue keeps the resumed mode."
        ),
    )


class AgentSettings(_Section):
    max_steps: int = Field(100, gt=0, description="Model calls per request before stopping.")
    parallel_tasks: int = Field(
        3, ge=1, le=16, description="Sub-agents (task calls in one reply) run at the same time."
    )


# Profiles planshell defines itself (planshell/agents/subagents.py); config adds others.
BUILTIN_PROFILES = frozenset({"explore", "general"})


class AgentProfile(_Section):
    """A sub-agent profile (``[agents.NAME]``) the ``task`` tool can start.

    Security-relevant (not settable by an untrusted project): a profile decides
    which tools a sub-agent gets. In plan mode every profile is read-only anyway.
    """

    description: PrintableText = Field("", description="What it is for (shown to the model).")
    system_prompt: str = Field("", description="Its instructions (replaces the default identity).")
    tools: list[str] | None = Field(
        None, description="Tool names it gets (default: all built-in tools)."
    )
    read_only: bool = Field(
        True,
        description="Plan-mode rules (read-only tools, guarded and sandboxed bash) in every mode.",
    )


def _profiles(value: dict[str, AgentProfile]) -> dict[str, AgentProfile]:
    for name in value:
        _name(name)
        if name in BUILTIN_PROFILES:
            raise ValueError(f"{name!r} is a built-in profile; give yours another name")
    return value


class CompactionSettings(_Section):
    auto: bool = Field(True, description="Compact automatically when the context is nearly full.")
    threshold: float = Field(
        0.85, ge=0.2, le=1.0, description="Fraction of the context window that triggers it."
    )
    keep_fraction: float = Field(
        0.3, ge=0.05, le=0.8, description="Fraction of the window kept verbatim (recent turns)."
    )


class ModelPrice(_Section):
    """US dollars per million tokens."""

    input: float = Field(ge=0, description="Per million input (prompt) tokens.")
    output: float = Field(ge=0, description="Per million output tokens.")


# Body fields planshell itself builds: extra_body may not replace them.
RESERVED_BODY_FIELDS = frozenset({"model", "messages", "system", "tools", "stream"})


def _extra_body(value: dict[str, Any]) -> dict[str, Any]:
    taken = sorted(RESERVED_BODY_FIELDS & set(value))
    if taken:
        raise ValueError(f"may not set {', '.join(taken)} (planshell builds those fields)")
    return value


class RequestSettings(_Section):
    """Extra request fields for the provider in use (see docs/providers.md presets).

    Security-relevant (not settable by an untrusted project): they change what
    is sent to the server and what it does with it (e.g. ``store``).
    """

    tool_choice: str | dict[str, Any] | None = Field(
        None,
        description='Sent with tools: "auto", "required", "none" or an object. '
        "llama-cpp-python ignores tools without it.",
    )
    extra_body: Annotated[dict[str, Any], AfterValidator(_extra_body)] = Field(
        default_factory=dict,
        description="Extra top-level JSON body fields, e.g. {cache_prompt = true}.",
    )
    stream_options: dict[str, Any] = Field(
        default_factory=lambda: {"include_usage": True},
        description="OpenAI-compatible stream_options; an empty table {} leaves the field out.",
    )


def _provider_name(text: str) -> str:
    """One of ``PROVIDER_CHOICES`` (the registry in ``llm/factory.py`` has one entry per name)."""
    if text not in PROVIDER_CHOICES:
        raise ValueError(f"must be one of {', '.join(PROVIDER_CHOICES)}")
    return text


ProviderName = Annotated[str, AfterValidator(_provider_name)]


class Settings(BaseModel):
    """Every setting. ``Settings(...)`` in code is its arguments over the defaults;
    ``load_settings`` merges the files, the environment and the flags into one."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, validate_default=True)

    provider: ProviderName = Field("auto", description="auto picks from API keys, else demo.")
    model: str | None = Field(None, description="Model name; each provider has a default.")
    base_url: str | None = Field(None, description="API base URL (OpenAI-compatible: …/v1).")
    api_key: str | None = Field(None, description="API key; prefer the provider's env var.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    max_tokens: int | None = Field(None, gt=0, description="Reply token cap.")
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to connect.")
    idle_timeout: float = Field(120.0, gt=0, description="Seconds allowed between stream chunks.")
    max_attempts: int = Field(4, ge=1, le=20, description="Tries per request (retries + 1).")
    request: RequestSettings = Field(default_factory=RequestSettings)
    context_window: int | None = Field(
        None, gt=0, description="The model's context window in tokens; else asked of the server."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="Per-model prices (USD per million tokens) for the cost."
    )
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    plan: PlanSettings = Field(default_factory=PlanSettings)
    ui: UISettings = Field(default_factory=UISettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    agents: Annotated[dict[str, AgentProfile], AfterValidator(_profiles)] = Field(
        default_factory=dict, description="Sub-agent profiles for the task tool, by name."
    )

    # Set by load_settings when an untrusted project file's security keys were ignored.
    _untrusted: UntrustedProject | None = PrivateAttr(None)
    # Set by load_settings when a project file set keys only the user's own config may set.
    _user_only_warning: str = PrivateAttr("")

    # Set by load_settings when the project file was left out because it is broken.
    _project_error: str = PrivateAttr("")

    @property
    def project_config_error(self) -> str:
        """Why the project file was ignored (one sentence for TUI, ``-p`` and doctor), or ""."""
        return self._project_error

    @property
    def user_only_warning(self) -> str:
        """ "Ignoring plan.critic from the project config …", or "" (see ``USER_ONLY_KEYS``)."""
        return self._user_only_warning

    @property
    def untrusted_project(self) -> UntrustedProject | None:
        """The project file whose security-relevant keys were ignored, if any."""
        return self._untrusted
