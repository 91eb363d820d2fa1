"""The bash guard's rule for awk (gawk, mawk, nawk): its options, and a scanner that proves
an awk program only reads (no system(), pipes, output redirection or getline from a command).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planshell.shell.options import Opts, parse_options, word_set
from planshell.shell.words import Blocked, Word, require_static, shorten, skip_to_close

_AWK = Opts(
    short_flags="bcCghMnNOPrsStV",
    short_arg="Fve",
    long_flags=word_set(
        "characters-as-bytes traditional copyright gen-pot help usage bignum "
        "non-decimal-data use-lc-numeric optimize no-optimize posix re-interval sandbox "
        "lint-old version csv"
    ),
    long_arg=word_set("field-separator assign source"),
    long_optarg=word_set("lint"),
    blocked_short={
        "f": "reads its program from a file",
        "E": "reads its program from a file",
        "i": "includes an awk source file",
        "l": "loads an extension library",
        "W": "passes implementation options (mawk -W exec runs a file)",
        "o": "writes a pretty-printed program to a file",
        "p": "writes a profile to a file",
        "d": "writes a variable dump to a file",
        "D": "starts the debugger",
    },
    blocked_long={
        "file": "reads its program from a file",
        "exec": "reads its program from a file",
        "include": "includes an awk source file",
        "load": "loads an extension library",
        "dump-variables": "writes a variable dump to a file",
        "debug": "starts the debugger",
        "pretty-print": "writes a pretty-printed program to a file",
        "profile": "writes a profile to a file",
    },
    strict=True,
)


def rule_awk(cmd: str) -> Callable[[list[Word]], None]:
    """awk/gawk/mawk/nawk: no program file, and a program that cannot run or write."""

    def rule(args: list[Word]) -> None:
        parsed = parse_options(cmd, args, _AWK)
        sources = parsed.values("-e", "--source")
        programs = [v or "" for _, v in sources]
        first_src = min((i for i, _ in sources), default=None)
        files = parsed.operands
        if parsed.operands and (first_src is None or parsed.operands[0][0] < first_src):
            programs.append(require_static(cmd, parsed.operands[0][1], "program"))
            files = parsed.operands[1:]
        for _, word in files:
            # gawk opens a file operand named /inet/tcp/… as a network connection. A glob
            # only matches existing files (there is no /inet), but an expansion or a brace
            # ({/in,x}et/…) can spell the name, even after `--`.
            if word.value is None or word.brace:
                raise Blocked(
                    f"the file operand {shorten(word.src)} of {cmd} is not a literal, and gawk "
                    "opens /inet/… names as network connections",
                    "Name the input files literally.",
                )
            value = word.value
            if "/inet" in value:
                raise Blocked(f"{cmd} {shorten(value)} opens a network connection (gawk /inet)")
        # gawk joins its -e sources into one program, so a statement can start in one -e
        # and end in the next: check them joined, the way gawk reads them.
        problem = awk_program_problem("\n".join(programs)) if programs else None
        if problem:
            raise Blocked(f"the {cmd} program {problem}", "Print to stdout only.")

    return rule


_AWK_OPERAND_END = frozenset({")", "]"})
_AWK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_NUMBER = re.compile(r"[0-9.]+(?:[eE][-+]?[0-9]+)?")
_AWK_EXPR_KEYWORDS = word_set("return in case do else if while for delete exit printf print")


_AWK_BLOCKED_NAMES: dict[str, str] = {
    "system": "calls system(), which runs a shell command",
    "extension": "calls extension(), which loads a library",
    # gawk opens every ARGV entry as an input file, /inet/tcp/… included, and SYMTAB
    # reaches ARGV indirectly: a program that can change them can open the network.
    "ARGV": "uses ARGV, whose entries gawk opens as input files (/inet/… opens the network)",
    "SYMTAB": "uses SYMTAB, which reaches every variable (ARGV included) indirectly",
}
# After one of these a newline cannot end a statement (it ends only after an operand):
# awk continues a statement over a newline after , { && || do else, and gawk after ? :.
_AWK_TARGET_END = frozenset(");}\n#<>=!&|,")


class _AwkScan:
    """A small awk lexer: strings and regex literals are skipped, code is searched.

    A print/printf statement stays "open" (so a `>` at its paren depth is an output
    redirection) until a `;`, a brace, or a newline that can end a statement: a newline
    right after an operand. After anything else (`,`, `&&`, `||`, `?`, `:`, `{`, `do`,
    `else`, an operator) awk continues the statement on the next line, so the scanner
    does too. Likewise a getline stays open until its expression ends, and every `<` in
    it must be followed by one plain string literal (no escapes, no /inet, nothing
    concatenated to it).
    """

    def __init__(self, text: str) -> None:
        self.t = text
        self.p = 0
        self.depth = 0
        self.print_depth: int | None = None
        self.getline_depth: int | None = None
        self.operand = False  # was the previous token an operand (so / means division)?

    def string(self) -> str:
        start = self.p
        end = skip_to_close(self.t, start + 1, '"')
        if end is None:
            raise ValueError("has an unterminated string")
        self.p = end
        return self.t[start:end]

    def regex(self) -> None:
        end = skip_to_close(self.t, self.p + 1, "/")
        if end is None:
            raise ValueError("has an unterminated regular expression")
        self.p = end

    def division(self) -> None:
        """A / read as division: refuse when a regex reading would hide code differently."""
        end = self.t.find("/", self.p + 1)
        nl = self.t.find("\n", self.p + 1)
        if nl >= 0 and (end < 0 or nl < end):
            end = nl
        ahead = self.t[self.p + 1 : end if end >= 0 else len(self.t)]
        if '"' in ahead or "#" in ahead:
            raise ValueError("has a / that could start a regular expression")
        self.p += 1
        self.operand = False

    def word(self) -> str | None:
        m = _AWK_NAME.match(self.t, self.p)
        if m is None:
            raise ValueError("has a malformed name")
        self.p = m.end()
        name = m.group()
        if name in _AWK_BLOCKED_NAMES:
            return _AWK_BLOCKED_NAMES[name]
        if name in ("print", "printf"):
            self.print_depth = self.depth
        if name == "getline":
            self.getline_depth = self.depth
        self.operand = name not in _AWK_EXPR_KEYWORDS
        return None

    def punct(self, c: str) -> str | None:
        nxt = self.t[self.p + 1 : self.p + 2]
        if c == "|":
            if nxt == "|":
                self.p += 2
                self.operand = False
                return None
            return "uses a | pipe, which runs a command"
        if c == "@":
            return "uses @ (@load, @include or an indirect call)"
        if c == ">" and self.print_depth is not None and self.depth == self.print_depth:
            return "redirects print output with >, which writes a file"
        if c == "<" and self.getline_depth is not None and self.depth >= self.getline_depth:
            return self.getline_target()
        if c in "([":
            self.depth += 1
        elif c in ")]":
            self.depth -= 1
            if self.getline_depth is not None and self.depth < self.getline_depth:
                self.getline_depth = None
        elif c in "{};":
            self.end_statement()
        if c in "+-" and nxt == c:
            self.p += 2
            self.operand = True
            return None
        self.p += 1
        self.operand = c in _AWK_OPERAND_END
        return None

    def end_statement(self) -> None:
        self.print_depth = None
        self.getline_depth = None

    def getline_target(self) -> str | None:
        """Check `getline … < TARGET`: TARGET must be one plain string literal."""
        t = self.t
        j = self.p + 1
        while t[j : j + 1] in (" ", "\t"):
            j += 1
        if t[j : j + 1] != '"':
            return "reads with getline from a file name that is not a plain string literal"
        self.p = j
        lit = self.string()
        if "\\" in lit:
            return "reads with getline from a file name with escape sequences"
        if "/inet" in lit:
            return "names a /inet special file, which opens a network connection"
        k = self.p
        while t[k : k + 1] in (" ", "\t"):
            k += 1
        if k < len(t) and t[k] not in _AWK_TARGET_END:
            return "builds a getline file name from several parts (it could spell /inet/…)"
        self.operand = True
        return None

    def run(self) -> str | None:
        t = self.t
        while self.p < len(t):
            c = t[self.p]
            if c in " \t\r":
                self.p += 1
            elif c == "\\" and t[self.p + 1 : self.p + 2] == "\n":
                self.p += 2
            elif c == "\n":
                self.p += 1
                if self.operand:  # only a newline after an operand can end a statement
                    self.end_statement()
                self.operand = False
            elif c == "#":
                nl = t.find("\n", self.p)
                self.p = len(t) if nl < 0 else nl
            elif c == '"':
                lit = self.string()
                if "/inet" in lit:
                    return "names a /inet special file, which opens a network connection"
                self.operand = True
            elif c == "/":
                if self.operand:
                    self.division()
                else:
                    self.regex()
                    self.operand = True
            elif c.isalpha() or c == "_":
                problem = self.word()
                if problem:
                    return problem
            elif c.isdigit() or c == ".":
                m = _AWK_NUMBER.match(t, self.p)
                self.p = m.end() if m and m.end() > self.p else self.p + 1
                self.operand = True
            elif c == "$":
                self.p += 1
                self.operand = False
            elif c in "|@<>=!~+-*%^?:,&(){}[];":
                problem = self.punct(c)
                if problem:
                    return problem
            else:
                raise ValueError(f"has the unexpected character {c!r}")
        return None


def awk_program_problem(program: str) -> str | None:
    """Describe why an awk program could run, load or write something, or return None."""
    try:
        return _AwkScan(program).run()
    except (ValueError, IndexError) as exc:
        return f"{exc} and cannot be checked" if str(exc) else "cannot be checked"
