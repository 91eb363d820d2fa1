"""Every setting as a pydantic model, merged from files, environment and flags.

Order (later wins): defaults < user file < project file < ``PLANSHELL_*``
environment < command-line flags. A broken file or a bad value raises
``ConfigError`` with one sentence naming the file, the key and the problem.

A cloned repository's ``.planshell/config.toml`` is untrusted: only the keys in
``HARMLESS_PROJECT_KEYS`` apply from it until the user trusts the file
(``planshell trust``, see ``planshell.config.trust``). Every other key,
including any key added later, is security-relevant by default.

The modules, each with one job:

- ``schema``: the pydantic models (``Settings`` and its sections);
- ``files``: where the config files are, reading and parsing one;
- ``sources``: the file, environment and flag layers merged (``load_settings``);
- ``untrusted``: which keys an untrusted project may set (``HARMLESS_PROJECT_KEYS``);
- ``trust``: the user's trust records for project files;
- ``writeback``: setting one value in a TOML file, comments kept;
- ``errors``: ``ConfigError``.

The names below are re-exported so callers import them from ``planshell.config``.
"""

from __future__ import annotations

from planshell.config.environment import ENV_NESTED_DELIMITER, ENV_PREFIX
from planshell.config.errors import ConfigError
from planshell.config.files import (
    CONFIG_MAX_BYTES,
    ConfigFile,
    project_config_path,
    read_config_file,
    user_config_path,
)
from planshell.config.schema import (
    BUILTIN_PROFILES,
    RESERVED_BODY_FIELDS,
    AgentProfile,
    AgentSettings,
    CompactionSettings,
    FetchSettings,
    ModelPrice,
    Name,
    PermissionsSettings,
    PlanBashSettings,
    PlanCriticSettings,
    PlanLabel,
    PlanLabels,
    PlanSettings,
    PlanShortcuts,
    PlanUISettings,
    PrintableText,
    ProviderName,
    RequestSettings,
    Settings,
    ToolsSettings,
    UISettings,
)
from planshell.config.sources import load_settings
from planshell.config.untrusted import (
    HARMLESS_PROJECT_KEYS,
    UntrustedProject,
    describe_keys,
    format_key,
    is_security_relevant,
    settings_keys,
    split_project_data,
)
from planshell.config.writeback import remember_user_setting, toml_with_value
from planshell.locations import data_dir, user_data_dir

__all__ = [
    "BUILTIN_PROFILES",
    "CONFIG_MAX_BYTES",
    "ENV_NESTED_DELIMITER",
    "ENV_PREFIX",
    "HARMLESS_PROJECT_KEYS",
    "RESERVED_BODY_FIELDS",
    "AgentProfile",
    "AgentSettings",
    "CompactionSettings",
    "ConfigError",
    "ConfigFile",
    "FetchSettings",
    "ModelPrice",
    "Name",
    "PermissionsSettings",
    "PlanBashSettings",
    "PlanCriticSettings",
    "PlanLabel",
    "PlanLabels",
    "PlanSettings",
    "PlanShortcuts",
    "PlanUISettings",
    "PrintableText",
    "ProviderName",
    "RequestSettings",
    "Settings",
    "ToolsSettings",
    "UISettings",
    "UntrustedProject",
    "data_dir",
    "describe_keys",
    "format_key",
    "is_security_relevant",
    "load_settings",
    "project_config_path",
    "read_config_file",
    "remember_user_setting",
    "settings_keys",
    "split_project_data",
    "toml_with_value",
    "user_config_path",
    "user_data_dir",
]
