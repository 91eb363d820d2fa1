"""Approvals outside plan mode: modes, rules and the approval gate (docs/permissions.md)."""

from planshell.permissions.engine import (
    PermissionController,
    PermissionMode,
    Verdict,
)
from planshell.permissions.rules import Rule, RuleError, parse_rule, prefix_rule

__all__ = [
    "PermissionController",
    "PermissionMode",
    "Rule",
    "RuleError",
    "Verdict",
    "parse_rule",
    "prefix_rule",
]
