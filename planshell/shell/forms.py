"""Rewrite the bash forms bashlex cannot parse into same-length forms it can (policy v2).

bashlex 0.18 cannot parse ``[[ ]]``, ``$(( ))``, ``(( ))``, ``case``, ``time`` after the
first command, nor here-docs with a quoted delimiter. Developers type them all day while
planning, so :func:`rewrite` finds them with a small bash lexer and replaces each one,
character for character, with text bashlex parses and the guard then proves like any other
command:

* ``$(( 1 + 2 ))`` whose body is only integer literals and operators becomes ``${_______}``,
  an expansion the guard treats as an unknown value; any name, ``$``, ``[``, quote or
  assignment in the body refuses the command (bash evaluates a name's value as arithmetic
  again, and an array subscript there runs ``$(…)``);
* ``(( 1 < 2 ))`` at a command's start becomes ``true`` (same rule for its body);
* ``[[ … ]]`` becomes a command named by a marker, its operators ``&& || ( ) < >`` marker
  words, so bashlex keeps it one simple command and the guard checks its words (see
  :data:`COND`);
* ``case W in P|Q) LIST ;; esac`` becomes ``{ M W in P Q; LIST ;M …; }``: a group whose
  marker commands ``M`` carry the word and patterns (checked as words) and whose lists are
  checked as commands;
* ``time [-p]`` before a command becomes blanks (it only reports how long the command took);
* ``<<'EOF'`` (any quoting) becomes ``<<EOF``, and the guard is told the body is plain text.

Markers are control characters, which the guard refuses in its input, so they can only come
from here. Every rewrite is an *anchor*: the guard must meet each one in the role it was
made for (an expansion, a command name, a here-doc), or it refuses the command. If this
lexer ever read the text differently from bash, the rewritten text would not line up with
bashlex's tree and the command is refused. Anything the lexer does not handle raises
:class:`Unsupported`, and the guard then parses the original text (which stays blocked for
these forms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "CASE",
    "COND",
    "COND_END",
    "COND_OPS",
    "MARKER_CHARS",
    "Refused",
    "Rewrite",
    "Unsupported",
    "rewrite",
]

COND = "\x01\x01"  # replaces [[
COND_END = "\x02\x02"  # replaces ]]
COND_OPS: dict[str, str] = {
    "\x03\x03": "&&",
    "\x04\x04": "||",
    "\x05": "(",
    "\x06": ")",
    "\x0e": "<",
    "\x0f": ">",
}
CASE = "\x10"  # the command that carries a case word and the patterns of one clause
MARKER_CHARS = frozenset("".join([COND, COND_END, CASE, *COND_OPS]))
_COND_MARK = {v: k for k, v in COND_OPS.items()}

# Integer literals, blanks, parentheses and the operators POLICY.md section 2 names.
_ARITH_CHARS = re.compile(r"[0-9 \t()+\-*/%<>=!&|^~?:]*")
_ARITH_BAD = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)|[-+*/%&|^]=|<<=|>>=")
_HEREDOC_DELIM = re.compile(r"[A-Za-z0-9_.-]+")
_META = " \t\n;&|<>()"
_PREFIX_KEYWORDS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "{"})


class Unsupported(Exception):
    """The lexer cannot follow this text; the guard falls back to the original."""


class Refused(Exception):
    """A policy v2 form whose rules the text breaks (for example a name in arithmetic)."""

    def __init__(self, why: str, fix: str) -> None:
        super().__init__(why)
        self.why = why
        self.fix = fix


@dataclass
class Rewrite:
    """The rewritten text and what the guard must find in it."""

    text: str
    anchors: dict[int, str] = field(default_factory=dict)  # offset -> kind the guard must meet
    heredoc_ends: dict[int, int] = field(default_factory=dict)  # quoted delimiter -> body end


@dataclass
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    quoted_at: int | None  # offset of the delimiter word when it was quoted


_FIX_ARITH = "Use only integer literals in $(( )), or compute the value in the plan."


class _Lexer:
    """A small bash lexer over the whole input, tracking quotes, nesting and here-docs."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.out = list(src)
        self.n = len(src)
        self.pending: list[_Heredoc] = []
        self.result = Rewrite(src)

    # ------------------------------------------------------------------ helpers

    def put(self, i: int, text: str) -> None:
        self.out[i : i + len(text)] = list(text)

    def blank(self, i: int, j: int) -> None:
        for k in range(i, j):
            if self.out[k] != "\n":
                self.out[k] = " "

    def at(self, i: int, text: str) -> bool:
        return self.src.startswith(text, i)

    def skip_blanks(self, i: int) -> int:
        while i < self.n and self.src[i] in " \t":
            i += 1
        return i

    # ------------------------------------------------------------------ lists

    def parse_list(self, i: int, closer: str) -> int:
        """Lex commands from ``i`` until ``closer`` (")" , "case" or "" for the end)."""
        cmd_start = True
        src = self.src
        while i < self.n:
            c = src[i]
            if c in " \t":
                i += 1
            elif c == "\n":
                i = self.newline(i)
                cmd_start = True
            elif c == "#":
                while i < self.n and src[i] != "\n":
                    i += 1
            elif c == ")":
                if closer == ")":
                    return i + 1
                raise Unsupported("an unmatched )")
            elif closer == "case" and (self.at(i, ";;") or self.at(i, ";&")):
                return i
            elif self.at(i, "&&") or self.at(i, "||") or self.at(i, "|&"):
                i += 2
                cmd_start = True
            elif c in ";|" or (c == "&" and not self.at(i, "&>")):
                i += 1
                cmd_start = True
            elif c == "(":
                if cmd_start and self.at(i, "(("):
                    i = self.arith_command(i)
                    cmd_start = False
                else:
                    i = self.parse_list(i + 1, ")")
                    cmd_start = False
            elif c in "<>" or self.at(i, "&>"):
                # After a redirection no word is a keyword: `>f [[ x ]]` runs a program `[[`.
                i = self.redirection(i)
                cmd_start = False
            else:
                start = i
                i = self.word(i)
                text = src[start:i]
                if not cmd_start:
                    continue
                if text == "[[":
                    i = self.cond(start, i)
                    cmd_start = False
                elif text == "case":
                    i = self.case(start, i)
                    cmd_start = False
                elif text == "esac" and closer == "case":
                    return start
                elif text == "time":
                    i = self.time(start, i)
                elif text in _PREFIX_KEYWORDS:
                    pass
                else:
                    cmd_start = False
        if closer:
            raise Unsupported(f"an unterminated {closer}")
        return i

    def newline(self, i: int) -> int:
        """Consume a newline and the bodies of the here-docs started on its line."""
        i += 1
        pending, self.pending = self.pending, []
        for doc in pending:
            while True:
                if i >= self.n:
                    raise Unsupported("a here-document without its end line")
                end = self.src.find("\n", i)
                end = self.n if end < 0 else end
                line = self.src[i:end]
                if doc.strip_tabs:
                    line = line.lstrip("\t")
                i = min(end + 1, self.n)
                if line == doc.delimiter:
                    if doc.quoted_at is not None:
                        self.result.heredoc_ends[doc.quoted_at] = end
                    break
        return i

    def redirection(self, i: int) -> int:
        src = self.src
        if self.at(i, "<(") or self.at(i, ">("):
            return self.parse_list(i + 2, ")")
        if self.at(i, "<<<"):
            return i + 3
        if self.at(i, "<<"):
            j = i + 2
            strip = src[j : j + 1] == "-"
            j = self.skip_blanks(j + (1 if strip else 0))
            return self.heredoc_word(j, strip)
        j = i + 1
        while j < self.n and src[j] in "<>&|-":
            j += 1
        return j

    def heredoc_word(self, j: int, strip: bool) -> int:
        start = j
        end = self.word(j)
        text = self.src[start:end]
        if not text:
            raise Unsupported("a here-document without a delimiter")
        quoted = any(q in text for q in "'\"\\")
        value = re.sub(r"\\(.)|['\"]", lambda m: m.group(1) or "", text)
        if not _HEREDOC_DELIM.fullmatch(value):
            raise Unsupported("an unusual here-document delimiter")
        self.pending.append(_Heredoc(value, strip, start if quoted else None))
        if quoted:
            self.put(start, value.ljust(end - start))
            self.result.anchors[start] = "heredoc"
        return end

    # ------------------------------------------------------------------ words

    def word(self, i: int) -> int:
        """Return the end of the word at ``i`` (quotes and expansions included)."""
        src = self.src
        if i >= self.n:
            raise Unsupported("a missing word at the end")
        start = i
        while i < self.n:
            c = src[i]
            if c in _META:
                break
            if c == "\\":
                i += 2
            elif c == "'":
                close = src.find("'", i + 1)
                if close < 0:
                    raise Unsupported("an unterminated single quote")
                i = close + 1
            elif c == '"':
                i = self.double_quoted(i + 1)
            elif c == "$":
                i = self.dollar(i)
            elif c == "`":
                i = self.backtick(i)
            else:
                i += 1
        if i > self.n:
            raise Unsupported("a lone backslash at the end")
        if i == start:
            raise Unsupported(f"an unexpected {src[i]!r}")
        return i

    def double_quoted(self, i: int) -> int:
        src = self.src
        while i < self.n:
            c = src[i]
            if c == '"':
                return i + 1
            if c == "\\":
                i += 2
            elif c == "$":
                i = self.dollar(i)
            elif c == "`":
                i = self.backtick(i)
            else:
                if c == "\n" and self.pending:
                    raise Unsupported("a quoted newline on a here-document line")
                i += 1
        raise Unsupported("an unterminated double quote")

    def backtick(self, i: int) -> int:
        """Skip `…` (opaque: bashlex parses what is inside)."""
        j = i + 1
        while j < self.n:
            if self.src[j] == "\\":
                j += 2
                continue
            if self.src[j] == "`":
                return j + 1
            j += 1
        raise Unsupported("an unterminated backtick")

    def dollar(self, i: int) -> int:
        src = self.src
        if self.at(i, "$(("):
            return self.arith_expansion(i)
        if self.at(i, "$("):
            return self.parse_list(i + 2, ")")
        if self.at(i, "${"):
            j = i + 2
            depth = 1
            while j < self.n:
                c = src[j]
                if c in "'\"`$\\\n":
                    raise Unsupported("a ${…} with quotes or expansions inside")
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        return j + 1
                j += 1
            raise Unsupported("an unterminated ${")
        if self.at(i, "$'") or self.at(i, '$"') or self.at(i, "$["):
            raise Unsupported("$'…', $\"…\" or $[…]")
        return i + 1

    # ------------------------------------------------------------------ arithmetic

    def arith_body(self, i: int) -> tuple[str, int]:
        """Read an arithmetic body from ``i`` up to its ``))``; return it and the end."""
        depth, j = 0, i
        while j < self.n:
            c = self.src[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    if self.at(j, "))"):
                        body = self.src[i:j]
                        self.check_arith(body)
                        return body, j + 2
                    raise Unsupported("$(( that is not arithmetic")
                depth -= 1
            j += 1
        raise Unsupported("an unterminated arithmetic expression")

    def check_arith(self, body: str) -> None:
        if not _ARITH_CHARS.fullmatch(body) or _ARITH_BAD.search(body):
            raise Refused(
                f"the arithmetic (( {' '.join(body.split())} )) holds a name, $, quote, "
                "subscript or assignment, and bash evaluates names as arithmetic again "
                "(an array subscript there runs $(…))",
                _FIX_ARITH,
            )

    def arith_expansion(self, i: int) -> int:
        _, end = self.arith_body(i + 3)
        self.put(i, "${" + "_" * (end - i - 3) + "}")
        self.result.anchors[i] = "arith"
        return end

    def arith_command(self, i: int) -> int:
        _, end = self.arith_body(i + 2)
        self.put(i, "true".ljust(end - i))
        self.result.anchors[i] = "arithcmd"
        return end

    # ------------------------------------------------------------------ [[ ]]

    def cond(self, start: int, i: int) -> int:
        """``[[ … ]]``: every token blank-separated, no newline inside."""
        self.put(start, COND)
        self.result.anchors[start] = "cond"
        src = self.src
        while True:
            if i >= self.n or src[i] not in " \t":
                raise Unsupported("[[ ]] tokens must be separated by blanks")
            i = self.skip_blanks(i)
            if i >= self.n or src[i] == "\n":
                raise Unsupported("an unterminated or multi-line [[")
            op = next((o for o in ("&&", "||", "(", ")", "<", ">") if self.at(i, o)), None)
            if op is not None:
                end = i + len(op)
                self.put(i, _COND_MARK[op])
                self.result.anchors[i] = "condop"
                i = end
                continue
            if src[i] in _META:
                raise Unsupported(f"{src[i]!r} inside [[ ]]")
            end = self.word(i)
            if src[i:end] == "]]":
                self.put(i, COND_END)
                self.result.anchors[i] = "condend"
                return end
            i = end

    # ------------------------------------------------------------------ case

    def case(self, start: int, i: int) -> int:
        """``case WORD in [(]P[|P]…) LIST ;; … esac`` (see the module docstring)."""
        src = self.src
        self.put(start, "{ " + CASE + " ")
        self.result.anchors[start + 2] = "case"
        i = self.skip_blanks(i)
        i = self.word(i)  # the case word
        i = self.skip_blanks(i)
        if not (self.at(i, "in") and (i + 2 >= self.n or src[i + 2] in " \t\n")):
            raise Unsupported("case without `in` on its line")
        i += 2
        first = True
        while True:
            i = self.clause_gap(i)
            if self.esac_at(i):
                if first:
                    raise Unsupported("a case without clauses")
                self.put(i, "}   ")
                return i + 4
            first = False
            if src[i : i + 1] == "(":
                self.put(i, " ")
                i = self.skip_blanks(i + 1)
            while True:
                if i >= self.n or src[i] in _META:
                    raise Unsupported("an empty case pattern")
                i = self.skip_blanks(self.word(i))
                if src[i : i + 1] == "|":
                    self.put(i, " ")
                    i = self.skip_blanks(i + 1)
                    continue
                if src[i : i + 1] == ")":
                    close = i
                    break
                raise Unsupported("a case pattern with unusual characters")
            i = self.parse_list(close + 1, "case")
            body = src[close + 1 : i]
            self.put(close, ";" if body.strip(" \t\n") else " ")
            if self.esac_at(i):
                self.put(i, "}   ")
                return i + 4
            term = 3 if self.at(i, ";;&") else 2
            after = i + term
            gap_end = self.clause_gap(after, convert=False)
            if self.esac_at(gap_end):
                self.put(i, ";".ljust(term))
                i = after
                continue
            if after >= self.n or src[after] not in " \t\n":
                raise Unsupported("a case clause must start after a blank")
            self.put(i, ";".ljust(term - 1) + CASE)
            self.result.anchors[after - 1] = "case"
            i = self.clause_gap(after)

    def esac_at(self, i: int) -> bool:
        return self.at(i, "esac") and (i + 4 >= self.n or self.src[i + 4] in _META)

    def clause_gap(self, i: int, convert: bool = True) -> int:
        """Skip blanks and newlines between clauses; newlines become blanks there."""
        while i < self.n and self.src[i] in " \t\n":
            if self.src[i] == "\n":
                if self.pending:
                    raise Unsupported("a here-document across case clauses")
                if convert:
                    self.out[i] = " "
            i += 1
        if i < self.n and self.src[i] == "#":
            raise Unsupported("a comment between case clauses")
        return i

    # ------------------------------------------------------------------ time

    def time(self, start: int, i: int) -> int:
        end = i
        j = self.skip_blanks(i)
        if self.at(j, "-p") and (j + 2 >= self.n or self.src[j + 2] in " \t"):
            end = j + 2
        self.blank(start, end)
        return end


def rewrite(src: str) -> Rewrite:
    """Rewrite ``src`` (see the module docstring); raise :class:`Refused` or
    :class:`Unsupported`."""
    lexer = _Lexer(src)
    end = lexer.parse_list(0, "")
    if lexer.pending or end != lexer.n:
        raise Unsupported("a here-document without its body")
    result = lexer.result
    result.text = "".join(lexer.out)
    return result
