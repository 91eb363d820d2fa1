"""Binding ids and default keys shared by several UI modules (a leaf: imports nothing)."""

from __future__ import annotations

# The chat screen's plan-mode toggle; settings.plan.shortcuts.toggle_mode remaps it.
TOGGLE_PLAN_BINDING_ID = "toggle-plan-mode"
# Ctrl+Shift+L arrives as any of the first three names depending on the terminal;
# F2 works everywhere. Never plain ctrl+l (legacy terminals send it for Ctrl+Shift+L).
DEFAULT_TOGGLE_KEYS = "ctrl+shift+l,ctrl+shift+L,ctrl+L,f2"
