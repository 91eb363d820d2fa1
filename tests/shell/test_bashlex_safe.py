"""A ``${`` that bashlex cannot close must not take planshell's memory.

bashlex 0.18 loops on it (``echo {'${x'`` is enough: a brace, then a quote),
appending until memory runs out, so one bash call from a hostile model could
kill planshell. Each check runs in a child process with a 1 GiB address-space
cap: a regression shows as a MemoryError there instead of taking the machine.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from bashlex.errors import ParsingError
    from planshell.shell import bashlex_safe
    from planshell.shell.guard import is_read_only
    from planshell.shell.segments import split_command
    from planshell.permissions.resolve import resolve
    command = sys.stdin.read()
    try:
        bashlex_safe.parse(command)
        print("parse parsed")
    except ParsingError:
        print("parse refused")
    except MemoryError:
        print("parse MemoryError")
    print("guard", is_read_only(command))
    print("split", split_command(command).plain)
    print("resolved", resolve(command).unresolved == "")
    """
)


@pytest.mark.parametrize(
    "command",
    ["echo {'${x'", "{'${x'", "x{'${'", "\n{'.${xargs eval <<EOF\nf\"~f*a[0]='"],
)
def test_an_unclosed_parameter_expansion_is_refused_not_looped(command: str) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=command,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard, not a measurement
    )
    assert child.returncode == 0, child.stderr[-2000:]
    said = dict(line.split(" ", 1) for line in child.stdout.splitlines())
    assert said == {"parse": "refused", "guard": "False", "split": "False", "resolved": "False"}


def test_closed_expansions_still_parse() -> None:
    from planshell.shell import bashlex_safe

    assert bashlex_safe.parse('echo "${HOME}" ${x:-a} {a,b}')
