"""The guard's old address, kept for scorers outside this repository.

The shared corpus's hooks score ``planshell.plan.bash_guard:is_read_only``;
the guard itself lives in :mod:`planshell.shell.guard`. Nothing in planshell
imports this module.
"""

from planshell.shell.guard import is_read_only

__all__ = ["is_read_only"]
