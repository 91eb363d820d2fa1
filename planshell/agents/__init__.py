"""Sub-agents: the ``task`` tool, offered in every mode.

A child is built from plan mode's pieces when it starts in PLAN (``PlanPolicy``, the plan
exec policy, the controller it follows), so this package sits above ``planshell.plan``;
``planshell.agent`` (the one loop every agent runs) stays below it and knows no mode.
"""
