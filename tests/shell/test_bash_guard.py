"""Tests for the plan-mode bash guard (planshell.shell.guard)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planshell.shell.guard import (
    DEFAULT_DESTRUCTIVE_PATTERNS,
    DEFAULT_SAFE_PATTERNS,
    BashGuard,
    is_read_only,
)
from planshell.shell.verdict import Verdict
from tests.paths import DATA, REPO, SHARED

CORPUS = Path(
    os.environ.get(
        "PLANSHELL_BASH_CORPUS",
        SHARED / "bash-corpus" / "public.jsonl",
    )
)
OWN_CASES = DATA / "bash_guard_cases.jsonl"


def _load(path: Path) -> list[Any]:
    """Load a JSONL corpus as pytest params (empty when the file is absent)."""
    if not path.is_file():
        return []
    params = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                case = json.loads(line)
                params.append(pytest.param(case, id=f"{path.stem}:{lineno}"))
    return params


def _assert_case(case: dict[str, str]) -> None:
    verdict = BashGuard().check(case["cmd"])
    want = case["expect"] == "allow"
    assert verdict.allowed is want, f"{case['cmd']!r}: {case['why']} -> {verdict.reason}"
    assert is_read_only(case["cmd"]) is want


_SHARED = _load(CORPUS)


@pytest.mark.skipif(not _SHARED, reason=f"shared bash corpus not found at {CORPUS}")
@pytest.mark.parametrize("case", _SHARED or [pytest.param({}, id="absent")])
def test_shared_corpus(case: dict[str, str]) -> None:
    _assert_case(case)


@pytest.mark.parametrize("case", _load(OWN_CASES))
def test_own_cases(case: dict[str, str]) -> None:
    _assert_case(case)


def test_own_cases_file_is_present_and_balanced() -> None:
    cases = [p.values[0] for p in _load(OWN_CASES)]
    assert len(cases) > 100
    assert {c["expect"] for c in cases} == {"allow", "block"}


def test_scorer_reports_no_failures() -> None:
    if not CORPUS.is_file():
        pytest.skip(f"shared bash corpus not found at {CORPUS}")
    score = CORPUS.parent / "score.py"
    if not score.is_file():
        pytest.skip(f"score.py not found next to {CORPUS}")
    proc = subprocess.run(
        [sys.executable, str(score), "planshell.shell.guard:is_read_only", str(CORPUS)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    last = proc.stdout.strip().splitlines()[-1]
    total = sum(1 for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip())
    assert last == f"{total} passed, 0 failed", proc.stdout


# ----------------------------------------------------------------- API and failure modes


def test_import_does_not_load_bashlex() -> None:
    code = "import planshell.shell.guard, sys; print('bashlex' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.strip() == "False", proc.stderr


def test_verdict_is_frozen() -> None:
    verdict = Verdict(True, "ok")
    assert verdict.segment is None
    with pytest.raises(AttributeError):
        verdict.allowed = False  # type: ignore[misc]


@pytest.mark.parametrize("bad", [None, 42, b"ls", ["ls"]])
def test_non_string_input_is_blocked_without_raising(bad: Any) -> None:
    assert BashGuard().check(bad).allowed is False
    assert is_read_only(bad) is False


def test_internal_error_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = BashGuard()

    def boom(command: str) -> Verdict:
        raise RuntimeError("bug")

    monkeypatch.setattr(guard, "_cached", boom)
    verdict = guard.check("ls")
    assert verdict.allowed is False
    assert "internal error" in verdict.reason


def test_deep_nesting_is_blocked_not_raised() -> None:
    command = "echo " + "$(echo " * 400 + "x" + ")" * 400
    assert is_read_only(command) is False


def test_results_are_cached() -> None:
    guard = BashGuard()
    assert guard.check("ls -la") is guard.check("ls -la")


# ------------------------------------------------------------------------- messages


def test_message_names_the_offending_segment() -> None:
    verdict = BashGuard().check("cd /x && rm f")
    assert verdict.allowed is False
    assert verdict.segment == "rm f"
    assert verdict.reason == (
        'blocked: "rm f" — rm is not a read-only command; plan mode may only read. '
        "Describe the change in the plan instead."
    )


@pytest.mark.parametrize(
    ("command", "segment", "fragment"),
    [
        ("ls && sort -o out.txt data.txt", "sort -o out.txt data.txt", "sort -o"),
        ("echo $(touch pwned)", "touch pwned", "touch is not a read-only command"),
        ("git log > history.txt", "git log > history.txt", "writes to a file"),
        ("find . -delete", "find . -delete", "find -delete"),
        ("FOO=1 ls", "FOO=1 ls", "assignments"),
        ("sed -i s/a/b/ f", "sed -i s/a/b/ f", "in place"),
    ],
)
def test_block_messages_explain(command: str, segment: str, fragment: str) -> None:
    verdict = BashGuard().check(command)
    assert verdict.allowed is False
    assert verdict.segment == segment
    assert f'"{segment}"' in verdict.reason
    assert fragment in verdict.reason
    assert "plan mode may only read" in verdict.reason


def test_unparseable_message_suggests_tools() -> None:
    verdict = BashGuard().check("select x in a b; do ls; done")
    assert verdict.allowed is False
    assert verdict.segment is None
    assert "could not parse" in verdict.reason
    assert "read/grep/find" in verdict.reason


def test_cd_hint_when_cd_itself_is_refused() -> None:
    verdict = BashGuard().check("cd /tmp > out.txt")
    assert verdict.allowed is False
    assert "working directory is already the project root" in verdict.reason
    unparsed = BashGuard().check("cd src && select x in a; do ls; done")
    assert "working directory is already the project root" in unparsed.reason


def test_allowed_verdict() -> None:
    verdict = BashGuard().check("git status && ls")
    assert verdict.allowed is True
    assert verdict.segment is None
    assert verdict.reason.startswith("allowed")


# ------------------------------------------------------------------------- patterns


def test_defaults_are_used_when_patterns_are_none() -> None:
    guard = BashGuard()
    assert guard.uses_custom_safe is False
    assert guard.uses_custom_destructive is False
    assert guard.warnings == []
    assert DEFAULT_SAFE_PATTERNS and DEFAULT_DESTRUCTIVE_PATTERNS


def test_default_patterns_do_not_change_corpus_verdicts() -> None:
    bare = BashGuard(safe_patterns=[], destructive_patterns=[])
    default = BashGuard()
    cases = [p.values[0] for p in _SHARED + _load(OWN_CASES)]
    changed = [
        c["cmd"]
        for c in cases
        if bare.check(c["cmd"]).allowed != default.check(c["cmd"]).allowed
        and c["cmd"] not in ("gcc --version",)
    ]
    assert changed == []


def test_safe_patterns_are_replace_only() -> None:
    guard = BashGuard(safe_patterns=[r"make\s+-n(\s+\w+)?"])
    assert guard.uses_custom_safe is True
    assert guard.check("make -n build").allowed is True
    assert guard.check("gcc --version").allowed is False  # the built-in list was replaced


def test_safe_pattern_is_case_insensitive_fullmatch() -> None:
    guard = BashGuard(safe_patterns=[r"make -n"])
    assert guard.check("MAKE -n").allowed is True
    assert guard.check("make -n && make install").allowed is False
    assert guard.check("make -n install").allowed is False


@pytest.mark.parametrize(
    "command",
    [
        "make -n > out.txt",  # disallowed redirection
        "make -n $(rm f)",  # substitution is still checked (and the match is a fullmatch)
        "FOO=1 make -n",  # assignment
        "select x in a; do make -n; done",  # unparseable
        "make -n &",  # background
        "./make -n",  # not a bare name
        "$'make' -n",  # bashlex mis-decodes $'…'
    ],
)
def test_safe_pattern_cannot_rescue_structural_problems(command: str) -> None:
    guard = BashGuard(safe_patterns=[r".*make.*"])
    assert guard.check(command).allowed is False


def test_safe_pattern_ignores_allowlisted_commands() -> None:
    guard = BashGuard(safe_patterns=[r"sort.*"])
    assert guard.check("sort -o out.txt in.txt").allowed is False


def test_destructive_pattern_blocks_an_allowed_command() -> None:
    guard = BashGuard(destructive_patterns=[r"\bsecrets?\b"])
    assert guard.uses_custom_destructive is True
    assert guard.check("ls").allowed is True
    verdict = guard.check("ls && cat secrets.txt")
    assert verdict.allowed is False
    assert verdict.segment == "cat secrets.txt"
    assert "destructive pattern" in verdict.reason


def test_destructive_patterns_are_replace_only() -> None:
    guard = BashGuard(destructive_patterns=[r"^ls\b"])
    assert guard.check("ls").allowed is False
    assert guard.check("pwd").allowed is True


def test_destructive_pattern_reaches_inside_substitutions() -> None:
    guard = BashGuard(destructive_patterns=[r"^pwd$"])
    assert guard.check("echo $(pwd)").allowed is False


def test_invalid_regex_is_skipped_with_warning() -> None:
    guard = BashGuard(safe_patterns=["make -n", "("], destructive_patterns=["[unclosed"])
    assert any("'('" in w for w in guard.warnings)
    assert guard.check("make -n").allowed is True
    # every destructive pattern was invalid -> built-in list, with a warning
    assert guard.uses_custom_destructive is False
    assert any("built-in" in w for w in guard.warnings)


def test_all_invalid_safe_patterns_fall_back_to_defaults() -> None:
    guard = BashGuard(safe_patterns=["(", "[", "*"])
    assert guard.uses_custom_safe is False
    assert guard.check("gcc --version").allowed is True
    assert len(guard.warnings) == 4  # three skipped patterns and the fall-back notice


def test_empty_pattern_list_means_no_patterns() -> None:
    guard = BashGuard(safe_patterns=[], destructive_patterns=[])
    assert guard.uses_custom_safe is True
    assert guard.warnings == []
    assert guard.check("gcc --version").allowed is False


# ------------------------------------------------- real bash: blocked runs, allowed does not


def _run_bash(command: str, cwd: Path) -> bool:
    """Run ``command`` with real bash in ``cwd``; True when it created the PWNED marker
    (or wrote into the empty file ``data``)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "LC_ALL": "C"}
    subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    data = cwd / "data"
    return (cwd / "PWNED").exists() or (data.exists() and data.stat().st_size > 0)


@pytest.mark.parametrize(
    "command",
    [
        "test -v 'x[$(touch PWNED)]'",
        "[ -v 'x[$(touch PWNED)]' ]",
        "test ! -v 'x[$(touch PWNED)]'",
        "test -v x -o -v 'y[$(touch PWNED)]'",
        "test -v 'BASH_ALIASES[$(touch PWNED)]'",
        'test -v "$(cat name.txt)"',
        "test -v x*",
        "ls 1<data >/dev/stdout",  # fd 1 is the file opened for reading: ls writes into it
        # policy v2 counter-cases: bash evaluates the value as arithmetic or a subscript
        "echo $(( $(cat name.txt) ))",
        "(( $(cat name.txt) ))",
        "[[ $(cat name.txt) -eq 1 ]]",
        '[[ 1 -lt "$(<name.txt)" ]]',
        "[[ -v $(cat name.txt) ]]",
        "cat <<EOF\n$(touch PWNED)\nEOF",  # an unquoted here-doc runs its $(…)
        'awk \'BEGIN{print "a",\n"b" > "PWNED"}\'',
        "awk 'BEGIN{print 1 &&\n1 > \"PWNED\"}'",
    ],
)
def test_blocked_forms_really_run_code(command: str, tmp_path: Path) -> None:
    (tmp_path / "name.txt").write_text("x[$(touch PWNED)]\n")
    (tmp_path / "x[$(touch PWNED)]").write_text("")
    (tmp_path / "data").write_text("")
    assert is_read_only(command) is False
    assert _run_bash(command, tmp_path) is True


@pytest.mark.parametrize(
    "command",
    [
        "test -v HOME",
        "test 'a[$(touch PWNED)]' -eq 1",
        "test -t 'a[$(touch PWNED)]'",
        "test -R 'x[$(touch PWNED)]'",  # bash 5.2 does not evaluate it; the guard blocks anyway
        '[ "$(cat name.txt)" = x ]',
        "echo 'it'\\''s $(touch PWNED)'",
        "awk '{print $1,\n$2}' name.txt",
        "ls >/dev/stdout",
        "echo $(<name.txt)",
        "time ls",
        # policy v2: allowed, and bash runs nothing of name.txt's text
        "cat <<'EOF'\n$(touch PWNED)\nEOF",
        'cat <<"EOF"\n`touch PWNED`\nEOF',
        "cat <<\\EOF\n$(touch PWNED)\nEOF",
        '[[ -f "$(cat name.txt)" || "$(cat name.txt)" == x* ]]',
        "[[ 1 -eq 1 ]] && echo $(( (1 + 2) * 3 ))",
        'case "$(cat name.txt)" in x*) echo hi ;; *) ;; esac',
        'for f in a b; do echo "$(cat name.txt)$f"; done',
        "ls && time echo hi",
    ],
)
def test_allowed_or_harmless_forms_run_no_code(command: str, tmp_path: Path) -> None:
    (tmp_path / "name.txt").write_text("x[$(touch PWNED)]\n")
    assert _run_bash(command, tmp_path) is False
    if "-R" not in command:
        assert is_read_only(command) is True


# ------------------------------------------- process environments (guard-only mode, issue 21)

# Without the sandbox, these printed planshell's own API key from its environment.
PROCESS_SECRET_FORMS = [
    "ps axeww | grep KEY",
    "ps aux e",
    "ps auxe",
    "ps -ef e",
    "ps -A e",
    "ps -aex",  # procps re-reads a dash cluster with a non-UNIX letter as BSD `aex`
    "ps -auxe",
    "ps -eo pid,environ",
    "ps --format=pid,ENVIRON",
    "ps axo environ",
    "cat /proc/*/environ",
    "strings /proc/1/environ",
    "grep -a KEY /proc/[0-9]*/env*",
    "head -c 4096 /proc/$PPID/environ",
    "tail /proc/self/environ",
    "xxd /proc/thread-self/environ",
    "od -c /proc/self/task/1/environ",
    "sort < /proc/1/environ",
    "echo $(<'/proc/1/environ')",
    "cat /pr?c/s*/environ",
    "cat //proc//self/./environ",
    "cat /proc/../proc/self/environ",
    "cat /tmp/../../proc/1/environ",
    "cd /proc && cat 1/environ",
    "cd /proc/self; cat environ",
    "cd / && grep -r KEY proc",
    "grep -r KEY /proc",
    "grep -r KEY /",
    "rg -a KEY /proc/self",
    "cat /proc/1/cmdline /proc/1/mem /proc/1/maps",
    "cat /proc/self/fd/3",
    "cat /*/*/environ",
    "grep --file=/proc/1/environ x",
    "sed -n 'r /proc/self/environ' f",
    "awk 'BEGIN { while ((getline l < \"/proc/1/environ\") > 0) print l }'",
    "cat $(ls -d /proc/[0-9]* | head -1)/environ",
    "cat $(printf '/pr%sc/%s/environ' o 1)",
    'for f in /proc/*/environ; do cat "$f"; done',
    'for d in /proc/1; do cat "$d/environ"; done',
    "ls /proc/1/environ >/dev/null; cat $_",
    "cat ${x:-/proc/1/environ}",
    "printf '/proc/1/environ\\0' | sort --files0-from=-",
    "git diff --no-index /proc/1/environ /dev/null",
    "git grep --no-index KEY /proc/$PPID",
    "cat /dev/fd/../../$PPID/environ",  # /dev/fd is a link to /proc/self/fd
    "cat /proc/net/../environ",  # /proc/net is a link to /proc/self/net
    "cd /dev/fd && cat ../../1/environ",
]


@pytest.mark.parametrize("command", PROCESS_SECRET_FORMS)
def test_process_environment_forms_are_blocked(command: str) -> None:
    assert len(PROCESS_SECRET_FORMS) >= 21
    verdict = BashGuard().check(command)
    assert verdict.allowed is False, command


@pytest.mark.parametrize(
    "command",
    [
        "ps aux",
        "ps -ef",
        "ps -eF",
        "ps -eo pid,ppid,args",
        "ps axjf",
        "ps -u root",
        "pgrep -a python",
        "cat /proc/cpuinfo",
        "cat /proc/meminfo",
        "head /proc/loadavg /proc/version",
        "grep MemTotal /proc/meminfo",
        "cat /proc/self/status",
        "ls /proc/self/",
        "grep -rn '/proc/' src",
        "cat proc/1/environ",  # the project's own proc/ directory
        'cat "$(git rev-parse --show-toplevel)/README.md"',
        'for f in *.py; do grep -n main "$f"; done',
    ],
)
def test_ordinary_process_and_proc_reads_pass(command: str) -> None:
    verdict = BashGuard().check(command)
    assert verdict.allowed is True, verdict.reason


def _leaks(command: str, tmp_path: Path) -> bool:
    """Run ``command`` with real bash, a secret in its environment; True when it printed it."""
    secret = "planshell-test-secret-" + os.urandom(6).hex()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LC_ALL": "C",
        "PLANSHELL_TEST_KEY": secret,
    }
    proc = subprocess.run(
        ["bash", "-c", f"sleep 2 & {command}; kill %1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return secret.encode() in proc.stdout


@pytest.mark.parametrize(
    "command",
    [
        "ps axeww",
        "ps -aex",
        "ps -ef e",
        "cat /proc/self/environ",
        "strings /proc/$$/environ",
        "cat /proc/*/environ",
        "cd /proc/self && cat environ",
        "cat /dev/fd/../environ",
        "cat /proc/net/../environ",
    ],
)
def test_blocked_process_forms_really_print_the_secret(command: str, tmp_path: Path) -> None:
    assert is_read_only(command) is False
    assert _leaks(command, tmp_path) is True


@pytest.mark.parametrize(
    "command", ["ps aux", "ps -ef", "ps -eo pid,args", "cat /proc/self/status"]
)
def test_allowed_process_forms_do_not_print_the_secret(command: str, tmp_path: Path) -> None:
    assert is_read_only(command) is True
    assert _leaks(command, tmp_path) is False


# ---------------------------------------------- issue 21: new read-only commands, real bash


def _workspace(tmp_path: Path) -> Path:
    """A directory with an archive, a zip, a git repository and a trap `ls` in it."""
    import tarfile
    import zipfile

    (tmp_path / "name.txt").write_text("hello\n")
    with tarfile.open(tmp_path / "a.tar", "w") as tar:
        tar.add(tmp_path / "name.txt", arcname="name.txt")
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("PWNED", "extracted\n")
    trap = tmp_path / "ls"
    trap.write_text("#!/bin/sh\n: > PWNED\n")
    trap.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    return tmp_path


def _git_name(repo: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), "config", "--local", "--get", "user.name"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip()


@pytest.mark.parametrize(
    "command",
    [
        "xxd name.txt PWNED",  # the second operand is an output file
        "jobs -x touch PWNED",  # jobs -x runs a command
        "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec='touch PWNED'",
        "unzip -o a.zip",  # extracts PWNED
        "PATH=. ls",  # runs ./ls
        "git config user.name Eve && touch PWNED",
    ],
)
def test_new_counter_cases_really_write_or_run(command: str, tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    assert is_read_only(command) is False
    assert _run_bash(command, repo) is True


@pytest.mark.parametrize(
    "command",
    [
        "xxd name.txt",
        "tar -tf a.tar",
        "tar tvf a.tar",
        "unzip -l a.zip",
        "git config --get user.name; git config --list --show-origin",
        "LC_ALL=C ls; TZ=UTC date",
        "set; declare -p HOME; jobs -l; ulimit -a; uptime",
        "echo ~+",
    ],
)
def test_new_read_commands_run_nothing(command: str, tmp_path: Path) -> None:
    repo = _workspace(tmp_path)
    assert is_read_only(command) is True, BashGuard().check(command).reason
    assert _run_bash(command, repo) is False
    assert _git_name(repo) == ""


def test_git_config_write_form_really_writes(tmp_path: Path) -> None:
    """`git config a.b c` writes, which is why only explicit read modes are allowed."""
    repo = _workspace(tmp_path)
    assert is_read_only("git config user.name Eve") is False
    _run_bash("git config user.name Eve", repo)
    assert _git_name(repo) == "Eve"


def test_policy_v2_rewrite_keeps_every_offset() -> None:
    """Refusals quote the user's text by offset, so a rewrite never moves a character."""
    from planshell.shell.forms import Refused, Unsupported, rewrite

    cases = [p.values[0]["cmd"] for p in _SHARED + _load(OWN_CASES)]
    rewritten = 0
    for command in cases:
        try:
            forms = rewrite(command)
        except (Refused, Unsupported):
            continue
        assert len(forms.text) == len(command), command
        assert [i for i, c in enumerate(command) if c == "\n"] == [
            i for i, c in enumerate(forms.text) if c == "\n"
        ] or "case" in command, command
        rewritten += forms.text != command
    assert rewritten > 50


def test_unconfirmed_rewrite_is_refused() -> None:
    """bash reads `# ]]` as a comment, so the [[ never ends: the anchor is not met."""
    verdict = BashGuard().check("[[ -n # ]]")
    assert verdict.allowed is False
    assert "cannot be checked" in verdict.reason
