"""The bash guard's rule for sed: its options, and a scanner that proves a sed script only
prints (no w/W/e/s///w/s///e, no file reads the guard cannot see).
"""

from __future__ import annotations

from planshell.shell.options import Opts, parse_options, word_set
from planshell.shell.words import Blocked, Word, require_static, skip_to_close

_SED = Opts(
    short_flags="nrsuzEb",
    short_arg="el",
    long_flags=word_set(
        "quiet silent regexp-extended separate unbuffered null-data zero-terminated binary "
        "follow-symlinks posix debug sandbox help version"
    ),
    long_arg=word_set("expression line-length"),
    blocked_short={"i": "edits files in place", "f": "reads its script from a file"},
    blocked_long={"in-place": "edits files in place", "file": "reads its script from a file"},
    strict=True,
)


def rule_sed(args: list[Word]) -> None:
    """sed: no in-place edit, no script file, and no w/W/e in the script."""
    parsed = parse_options("sed", args, _SED)
    exprs = parsed.values("-e", "--expression")
    scripts: list[str] = []
    if exprs:
        scripts.append("\n".join(v or "" for _, v in exprs))
    first_expr = min((i for i, _ in exprs), default=None)
    if parsed.operands and (first_expr is None or parsed.operands[0][0] < first_expr):
        # Without -e the first operand is the script. Under POSIXLY_CORRECT an operand
        # before the first -e is one too, so check it as well.
        scripts.append(require_static("sed", parsed.operands[0][1], "script"))
    for script in scripts:
        problem = sed_script_problem(script)
        if problem:
            raise Blocked(f"the sed script {problem}", "Print to stdout with p or s///.")


class _SedScan:
    """A small GNU sed script reader that finds w, W and e commands and flags."""

    def __init__(self, text: str) -> None:
        self.t = text
        self.p = 0

    def peek(self) -> str:
        return self.t[self.p] if self.p < len(self.t) else ""

    def skip_blank(self) -> None:
        while self.peek() in (" ", "\t"):
            self.p += 1

    def delimited(self) -> None:
        """Skip one delimited part (regex or replacement) after its opening delimiter."""
        end = skip_to_close(self.t, self.p, self.t[self.p - 1])
        if end is None:
            raise ValueError("has an unterminated expression")
        self.p = end

    def ascii_delimiter(self) -> None:
        """Refuse a non-ASCII delimiter: GNU sed reads bytes in the C locale.

        There sed takes the first byte of a multibyte character as the delimiter, so it
        splits the script at other places than this reader does (`sé…` ends at any byte
        0xC3, the start of è as well), and the flags it then reads are not the ones checked
        here. In a UTF-8 locale sed refuses such a delimiter outright. Non-ASCII text inside
        a pattern or replacement is fine: with an ASCII delimiter every byte of it is
        plain text to sed in any locale.
        """
        if not self.peek().isascii():
            raise ValueError(f"uses the non-ASCII delimiter {self.peek()!r}")

    def address(self, second: bool) -> None:
        c = self.peek()
        if c.isdigit():
            while self.peek().isdigit():
                self.p += 1
            if self.peek() == "~":
                self.p += 1
                while self.peek().isdigit():
                    self.p += 1
        elif c == "$":
            self.p += 1
        elif second and c in ("+", "~"):
            self.p += 1
            while self.peek().isdigit():
                self.p += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.p += 1
                if not self.peek() or self.peek() in "\n\\":
                    raise ValueError("has a bad address")
                self.ascii_delimiter()
            self.p += 1
            self.delimited()
            while self.peek() in ("I", "M"):
                self.p += 1

    def to_eol(self) -> str:
        end = self.t.find("\n", self.p)
        end = len(self.t) if end < 0 else end
        text = self.t[self.p : end]
        self.p = end
        return text

    def text_arg(self) -> None:
        """Skip the text of a, i or c (to the end of line, with backslash continuation)."""
        self.skip_blank()
        if self.peek() == "\\":
            self.p += 1
            if self.peek() == "\n":
                self.p += 1
        while self.p < len(self.t):
            c = self.t[self.p]
            if c == "\\":
                self.p += 2
                continue
            if c == "\n":
                return
            self.p += 1

    def label(self) -> None:
        self.skip_blank()
        while self.peek() and self.peek() not in " \t\n;}#":
            self.p += 1

    def s_flags(self) -> str | None:
        while True:
            c = self.peek()
            if c in ("", "\n", ";", "}", "#"):
                return None
            if c == "e":
                return "uses the e flag of s, which runs the pattern space as a command"
            if c == "w":
                return "uses the w flag of s, which writes to a file"
            if c not in "gpiImM0123456789 \t":
                raise ValueError(f"has an unknown s flag {c!r}")
            self.p += 1

    def command(self) -> str | None:
        cmd = self.peek()
        self.p += 1
        if cmd in ("w", "W"):
            return f"uses the {cmd} command, which writes to a file"
        if cmd == "e":
            return "uses the e command, which runs a shell command"
        if cmd in ("s", "y"):
            if not self.peek() or self.peek() in "\n\\":
                raise ValueError(f"has a bad {cmd} command")
            self.ascii_delimiter()
            self.p += 1
            self.delimited()
            self.delimited()
            return self.s_flags() if cmd == "s" else None
        if cmd in ("a", "i", "c"):
            self.text_arg()
        elif cmd in ("r", "R"):
            if any(ch in self.to_eol() for ch in ";}"):
                raise ValueError("has a file name that holds ; or }")
        elif cmd in (":", "b", "t", "T"):
            self.label()
        elif cmd in ("l", "L", "q", "Q"):
            self.skip_blank()
            while self.peek().isdigit():
                self.p += 1
        elif cmd == "v":
            self.label()
        elif cmd not in "{}=dDgGhHnNpPxzF":
            raise ValueError(f"has the unknown command {cmd!r}")
        return None

    def run(self) -> str | None:
        while True:
            while self.peek() and self.peek() in " \t\n;":
                self.p += 1
            if not self.peek():
                return None
            if self.peek() == "#":
                self.to_eol()
                continue
            self.address(second=False)
            self.skip_blank()
            if self.peek() == ",":
                self.p += 1
                self.skip_blank()
                self.address(second=True)
            self.skip_blank()
            while self.peek() == "!":
                self.p += 1
                self.skip_blank()
            if not self.peek():
                raise ValueError("is missing a command")
            opens_block = self.peek() == "{"
            problem = self.command()
            if problem:
                return problem
            if opens_block:
                continue
            self.skip_blank()
            if self.peek() and self.peek() not in "\n;}#":
                raise ValueError(f"has unexpected text after a command near {self.peek()!r}")


def sed_script_problem(script: str) -> str | None:
    """Describe why a sed script could write or run something, or return None."""
    try:
        return _SedScan(script).run()
    except (ValueError, IndexError) as exc:
        return f"{exc} and cannot be checked" if str(exc) else "cannot be checked"
