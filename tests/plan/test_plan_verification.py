"""Which bash lines *are* an approved Verification command (issue 24.4): whitespace aside, nothing else."""

from __future__ import annotations

import pytest

from planshell.plan.verification import approved_check, normalise_command

PLAN = """# Plan: Checks

## Context

Run `touch context-made` by hand if you like.

## Steps

- [ ] Run `sh steps.sh` after the change

## Verification

```sh
sh check.sh
echo "a  b"
```
"""


@pytest.mark.parametrize(
    "command",
    ["sh check.sh", "  sh   check.sh  ", "sh\tcheck.sh", "\tsh check.sh\t"],
)
def test_whitespace_between_words_does_not_matter(command: str) -> None:
    assert approved_check(PLAN, command) == "sh check.sh"


@pytest.mark.parametrize(
    "command",
    [
        "sh check.sh; touch pwned",
        "sh check.sh && touch pwned",
        "sh check.sh || touch pwned",
        "sh check.sh | sh",
        "sh check.sh & touch pwned",
        "sh check.sh > out",
        "sh check.sh extra",
        "sh check.shx",
        "sh check.sh\ntouch pwned",  # a newline is a second command
        "sh check.sh\rtouch pwned",
        "sh check.sh\x00",
        "sh\u00a0check.sh",  # a no-break space is a different word
        "sh check.sh\u202e",  # a bidi override hides what runs
        "sh check.sh\u200b",  # a zero-width space
        "sh 'check.sh'",  # quoting is not whitespace
        'echo "a b"',  # whitespace inside quotes is part of the word
        'echo "a   b"',
        "sh steps.sh",  # inline code of Steps is not a Verification command
        "touch context-made",  # nor of Context
        "",
        "   ",
    ],
)
def test_anything_more_or_different_is_not_the_command(command: str) -> None:
    assert approved_check(PLAN, command) is None


def test_quoted_whitespace_must_match_exactly() -> None:
    assert approved_check(PLAN, 'echo  "a  b" ') == 'echo "a  b"'


def test_a_plan_without_verification_approves_nothing() -> None:
    text = PLAN.split("## Verification")[0]
    assert approved_check(text, "sh check.sh") is None


def test_an_approved_command_a_person_cannot_read_plainly_is_never_matched() -> None:
    hidden = PLAN.replace("sh check.sh\n", "sh check.sh\u202e; touch x\n")
    assert approved_check(hidden, "sh check.sh\u202e; touch x") is None
    long = PLAN.replace("sh check.sh\n", "sh check.sh " + "x" * 400 + "\n")
    assert approved_check(long, "sh check.sh " + "x" * 400) is None


def test_normalising_keeps_escapes_and_quotes() -> None:
    assert normalise_command(r"a\  b") == r"a\  b"
    assert normalise_command('a  \'x  y\'   "p\\"  q"  z') == 'a \'x  y\' "p\\"  q" z'
