"""The project tree planshell guards in every mode, whatever tool writes.

``protected`` is the one rule for the paths never written without a person's yes (every
``.git``, ``.gitmodules``, ``.planshell/`` outside ``plans/``, planshell's own folders);
``gitwatch`` undoes a new ``.git`` or a changed guarded file after any call that may write.
The permission engine, the plan receipt, the workspace sandbox's read-only binds and the
runtime's call watch all ask here, so they cannot disagree.
"""
