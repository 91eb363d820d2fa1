"""How ``bash`` runs, in every mode: contained, scrubbed and with git hardened.

``bwrap`` builds the bubblewrap command and the exec policies (the read-only plan sandbox,
the workspace-write sandbox outside plan mode), ``seccomp`` the filter it loads, ``env`` the
environment commands get (secrets dropped), ``gitsafe`` the git config overrides and the
``git`` shim. What a command may *be* is the bash guard's question (``planshell.shell``).
"""
