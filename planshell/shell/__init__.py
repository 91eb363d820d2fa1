"""The bash guard: proves a shell command read-only (plan mode, and the permission rules).

``guard`` parses and walks a command, ``rules`` holds the per-command allowlist, ``forms``
rewrites the policy v2 forms bashlex cannot parse, ``bashlex_safe`` is the one way planshell
calls bashlex. Pure: no I/O, no settings; it imports only ``planshell.procfs``.
"""
