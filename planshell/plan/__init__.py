"""Plan mode: the controller, its policy and tools, the plan document, store, review and receipt.

What plan mode shares with the rest of planshell lives beside it: the bash guard in
``planshell.shell``, the sandbox in ``planshell.sandbox``, the protected paths in
``planshell.workspace``, the ``task`` tool in ``planshell.agents``.
"""
