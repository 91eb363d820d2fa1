"""How plan-mode bash runs. This first version adds git's config overrides;
the kernel sandbox (bubblewrap) plugs in here."""

from __future__ import annotations

from pathlib import Path

from planshell.config import PlanSettings
from planshell.plan.gitsafe import git_safe_env
from planshell.tools.base import ExecPolicy


def plan_exec_policy(settings: PlanSettings, root: Path) -> ExecPolicy:
    return ExecPolicy(extra_env=git_safe_env(), label="guarded")
