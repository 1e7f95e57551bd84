"""fissix's tokens as the parser takes them, read in one pass with no generator in between.

``fissix.pgen2.tokenize.generate_tokens`` yields a 5-tuple per token (type, text, start, end,
physical line), and fissix's driver then folds comments, blank lines and the whitespace between
tokens into the next token's prefix. Half of the engine's parse was those two steps.
:func:`token_lines` does both at once, line by line with fissix's own regular expressions in
fissix's order, and gives each token as the parser needs it: its grammar label (keyword or
token type, ``grammar.opmap`` for operators), type, text, prefix, line and column; a line's
tokens at a time, so that they never sit in memory beside the file's tree.

It reads the common shapes of real code only. Where a file has anything else, it raises
:class:`Unread` (None before the first line, for a text that does not end with a newline) and
the parser starts the file again with fissix's tokenizer, errors included: a tab or form feed
in an indentation, a mismatched dedent, an unclosed bracket, string or continuation at the
end, a string continued with a backslash, ``async``/``await``, an identifier or number that is
not ASCII, a character no token starts with, or a token the grammar has no label for. Every
token it gave before is fissix's, so a parse error met on the way is fissix's too.
``tests/test_tokens.py`` compares both readings token by token on every source the parser's
tests read (and their damaged copies); ``tests/test_parser.py`` compares the trees.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from fissix.pgen2 import grammar as pgen_grammar
from fissix.pgen2 import token, tokenize

#: A token as the parser takes it: label, type, text, prefix, line, column.
Token = tuple[int, int, str, str, int, int]


def uncaptured(pattern: str) -> str:
    """``pattern`` with each capturing group ``(...)`` made ``(?:...)``: the same matches (no
    back-reference or conditional refers to one), but ``re`` saves and restores no marks for
    them. fissix's token patterns nest about fifteen, and the tokenizer's match took twice as
    long with them (issue 32). ``tests/test_tokens.py`` compares the parsed expressions."""
    out: list[str] = []
    position, end = 0, len(pattern)
    while position < end:
        char = pattern[position]
        if char == "\\":
            out.append(pattern[position:position + 2])
            position += 2
        elif char == "[":  # a set: its "(" is a character; "]" first (or after "^") is one too
            close = position + 1 + (pattern[position + 1:position + 2] == "^")
            close += pattern[close:close + 1] == "]"
            while pattern[close] != "]":
                close += 2 if pattern[close] == "\\" else 1
            out.append(pattern[position:close + 1])
            position = close + 1
        else:
            out.append("(?:" if char == "(" and pattern[position + 1:position + 2] != "?" else char)
            position += 1
    return "".join(out)


#: fissix's ``pseudoprog`` with each alternative named, in fissix's order (the same matches),
#: and no other group (:func:`uncaptured`).
_PSEUDO = re.compile(tokenize.Whitespace + "(?:" + "|".join(f"(?P<{name}>{uncaptured(pattern)})" for name, pattern in (
    ("continuation", r"\\\r?\n"), ("comment", tokenize.Comment), ("triple", tokenize.Triple),
    ("number", tokenize.Number), ("operator", tokenize.Operator), ("bracket", tokenize.Bracket),
    ("newline", r"\r?\n"), ("special", r":=|[:;.,`@]"), ("string", tokenize.ContStr),
    ("name", tokenize.Name))) + ")")
_GROUP = _PSEUDO.groupindex
_TRIPLE, _NUMBER, _OPERATOR, _BRACKET = _GROUP["triple"], _GROUP["number"], _GROUP["operator"], _GROUP["bracket"]
_NEWLINE, _SPECIAL, _STRING, _NAME = _GROUP["newline"], _GROUP["special"], _GROUP["string"], _GROUP["name"]
_NOT_ASYNC = ("async", "await")
#: A one-line string's possible openings (fissix's ``single_quoted``): other text is no string.
_SINGLE = frozenset(tokenize.single_quoted)


class Tables:
    """One grammar's labels, as :func:`token_lines` gives them."""

    def __init__(self, grammar: pgen_grammar.Grammar) -> None:
        labels = grammar.tokens
        self.keywords: dict[str, int] = dict(grammar.keywords)
        self.name = labels[token.NAME]
        self.operators = {text: (labels[kind], kind) for text, kind in pgen_grammar.opmap.items()
                          if kind in labels}
        self.number, self.string = labels.get(token.NUMBER), labels.get(token.STRING)
        self.newline, self.endmarker = labels.get(token.NEWLINE), labels.get(token.ENDMARKER)
        self.indent, self.dedent = labels.get(token.INDENT), labels.get(token.DEDENT)


class Unread(Exception):
    """Raised by :func:`token_lines` where its reading stops applying (see the module): the
    parse starts again with fissix's tokenizer."""


def token_lines(text: str, tables: Tables, names: set[str]) -> Optional[Iterator[list[Token]]]:
    """The tokens of ``text`` as fissix's tokenizer and driver give them, a line's at a time
    (a file's tokens take more memory than its tree), ``names`` filled with its names as they
    come (the root's ``used_names``); :class:`Unread` raised from the line where the reading
    stops applying, None if it does not apply from the start."""
    if not text.endswith("\n") or None in (tables.number, tables.string, tables.newline,
                                            tables.endmarker, tables.indent, tables.dedent):
        return None
    return _read(_Lines(text), _Scanner(tables, names, "async" in text or "await" in text))


class _Lines:
    """A text's lines, each up to its ``\\n`` (as fissix reads them), one at a time: a list of
    them would hold another copy of the text while its tree is built."""

    __slots__ = ("_text", "_start", "number")

    def __init__(self, text: str) -> None:
        self._text, self._start, self.number = text, 0, 0

    def next(self) -> str:
        """The next line ("" after the last), :attr:`number` its number."""
        end = self._text.find("\n", self._start) + 1
        if not end:
            return ""
        line, self._start = self._text[self._start:end], end
        self.number += 1
        return line


def _read(lines: _Lines, scan: _Scanner) -> Iterator[list[Token]]:
    """:func:`token_lines`' lists: each line's tokens, then the closing DEDENTs and ENDMARKER."""
    state = (0, "", True)  # the depth of brackets, the prefix, at a statement's start
    while True:
        line = lines.next()
        if not line:
            break
        read = scan.line(line, lines, *state)
        if read is None:
            raise Unread()
        state = read
        if scan.out:
            yield scan.out
            scan.out = []
    if state[0] or not state[2]:
        raise Unread()  # fissix raises (EOF in a statement)
    number, prefix, tables = lines.number + 1, state[1], scan.tables
    for _ in scan.indents[1:]:
        scan.out.append((tables.dedent, token.DEDENT, "", prefix, number, 0))
        prefix = ""
    scan.out.append((tables.endmarker, token.ENDMARKER, "", prefix, number, 0))
    yield scan.out


class _Scanner:
    """The state of one file's reading that outlives a line: its indentation levels."""

    def __init__(self, tables: Tables, names: set[str], spells_async: bool) -> None:
        self.tables, self.names, self.spells_async = tables, names, spells_async
        self.indents = [0]
        self.out: list[Token] = []  # the tokens of the line being read

    def line(self, line: str, lines: _Lines, depth: int, prefix: str, at_start: bool
             ) -> Optional[tuple[int, str, bool]]:
        """Read ``line``, the line :attr:`_Lines.number` of ``lines`` (and the later lines a
        string goes on to): the state after it."""
        mark = 0
        if at_start:
            started = self._indentation(line, lines.number, prefix)
            if started is None:
                return None
            mark, prefix = started
            if mark < 0:  # a blank or comment-only line: all of it goes to the next prefix
                return depth, prefix + line, True
        while True:
            scanned = self._tokens(line, lines.number, mark, prefix, depth)
            if scanned is None:
                return None
            depth, prefix, at_start, start, opening = scanned
            if not opening:
                return depth, prefix, at_start
            rest = _string_end(lines, line, start, opening)
            if rest is None:
                return None
            value, line, mark = rest
            self.out.append((self.tables.string, token.STRING, value, prefix, lines.number - value.count("\n"), start))
            prefix = ""

    def _indentation(self, line: str, number: int, prefix: str) -> Optional[tuple[int, str]]:
        """Where the code of a statement's first line starts, and the prefix its first token
        takes, after the INDENT or DEDENT tokens it opens with; ``(-1, prefix)`` for a blank or
        comment-only line; None for a tab or form feed in an indentation, or a bad dedent."""
        rest = line.lstrip(" \t\f")
        if rest[0] in "#\r\n":
            return -1, prefix
        column = len(line) - len(rest)
        indents, tables = self.indents, self.tables
        if column == indents[-1]:
            return (0, prefix) if "\t" not in line[:column] and "\f" not in line[:column] else None
        if "\t" in line[:column] or "\f" in line[:column] or (column < indents[-1] and column not in indents):
            return None
        if column > indents[-1]:
            indents.append(column)
            self.out.append((tables.indent, token.INDENT, line[:column], prefix, number, 0))
            return column, ""
        prefix += line[:column]
        while column < indents[-1]:
            indents.pop()
            self.out.append((tables.dedent, token.DEDENT, "", prefix, number, column))
            prefix = ""
        return column, ""

    def _tokens(self, line: str, number: int, mark: int, prefix: str, depth: int
                ) -> Optional[tuple[int, str, bool, int, str]]:
        """The tokens of ``line`` from ``mark`` on, up to its end or a triple-quoted string:
        ``(depth, prefix, at a statement's start, the string's column, its opening quotes)``
        (no quotes at the line's end); None where this reading does not apply."""
        tables, append, match, end = self.tables, self.out.append, _PSEUDO.match, len(line)
        keywords, name, operators, spells_async = tables.keywords, tables.name, tables.operators, self.spells_async
        position = mark
        while position < end:
            found = match(line, position)
            if found is None:
                return None
            group = found.lastindex or 0  # a match always has one of the named groups
            start, position = found.span(group)
            if group == _NAME:
                value = line[start:position]
                if not value.isascii() or (spells_async and value in _NOT_ASYNC):
                    return None
                self.names.add(value)
                append((keywords.get(value, name), token.NAME, value, prefix + line[mark:start], number, start))
            elif group == _OPERATOR or group == _SPECIAL or group == _BRACKET:
                value = line[start:position]
                label = operators.get(value)
                if label is None:
                    return None
                if group == _BRACKET:
                    depth += 1 if value in "([{" else -1
                    if depth < 0:
                        return None  # fissix's NEWLINE and next line differ from the rule
                append((label[0], label[1], value, prefix + line[mark:start], number, start))
            elif group == _NEWLINE:
                if depth:
                    continue  # a line break inside brackets: the next token's prefix
                append((tables.newline, token.NEWLINE, line[start:position], prefix + line[mark:start], number, start))
                return depth, "", True, 0, ""
            elif group == _NUMBER or group == _STRING:
                value = line[start:position]
                if group == _NUMBER and not value.isascii() or group == _STRING and (
                        value[-1] == "\n" or value[0] not in _SINGLE and value[:2] not in _SINGLE and value[:3] not in _SINGLE):
                    return None  # a string continued by a backslash, or a token fissix reads otherwise
                append((tables.number if group == _NUMBER else tables.string,
                        token.NUMBER if group == _NUMBER else token.STRING, value, prefix + line[mark:start],
                        number, start))
            elif group == _TRIPLE:
                return depth, prefix + line[mark:start], False, start, line[start:position]
            else:
                continue  # a comment or a backslash continuation: the next token's prefix
            mark, prefix = position, ""
        return depth, prefix + line[mark:], False, 0, ""


def _string_end(lines: _Lines, line: str, start: int, opening: str) -> Optional[tuple[str, str, int]]:
    """The triple-quoted string that opens with ``opening`` at column ``start`` of ``line``,
    read as fissix reads it (each later line of ``lines`` matched from its start): its text,
    the line it ends on, and the column after it; None at the end of the text (fissix raises)
    or for quotes fissix reads otherwise."""
    ending = tokenize.endprogs.get(opening) if opening in tokenize.triple_quoted else None
    if ending is None:
        return None
    found = ending.match(line, start + len(opening))
    if found is not None:
        return line[start:found.end()], line, found.end()
    parts = [line[start:]]
    while True:
        line = lines.next()
        if not line:
            return None
        found = ending.match(line)
        if found is not None:
            parts.append(line[:found.end()])
            return "".join(parts), line, found.end()
        parts.append(line)
