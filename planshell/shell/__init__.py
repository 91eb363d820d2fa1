"""The bash guard: proves a shell command read-only (plan mode, and the permission rules).

``guard`` is the entry point (BashGuard, is_read_only): it parses a command (``parsing``
checks around the bashlex parse), ``walker`` walks the tree, ``scanner`` decodes each word
from its source as bash will, ``verdict`` words the answer. ``segments`` splits a line
into simple commands for the permission rules. ``allowlist`` maps each allowed command to
its rule: ``commands`` (the simple ones), ``sed``, ``awk``, ``git`` and ``conditions``
(test, [ and [[ ]]), built on ``words`` (the Word a rule sees, Blocked) and ``options``
(getopt emulation). ``proc_paths`` keeps other processes' secrets under /proc unread,
``assignments`` checks prefix assignments, ``forms`` rewrites the policy v2 forms bashlex
cannot parse, ``bashlex_safe`` is the one way planshell calls bashlex. Pure: no I/O, no
settings; it imports only ``planshell.procfs``.
"""
