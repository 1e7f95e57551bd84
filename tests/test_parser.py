"""The engine's parser gives fissix's tree, node for node, and fissix's error on bad input.

``codemods/parser.py`` replaces fissix's driver for speed; everything downstream (Bowler's
patterns, the rules, the lossless write) reads its trees, so they must be fissix's exactly.
Compared: every source of this repository (its code, tests, corpora, examples, bench), the
sources of the installed fissix, Bowler, pluggy and GitPython and of a few standard library
packages, with the Python 3 grammar; Python 2 files and hand-written corners with both
grammars; and the exception, type and arguments, wherever fissix raises one.
"""

from __future__ import annotations

import importlib.util
import random
import sysconfig
from pathlib import Path
from typing import Any, Iterator

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver
from fissix.pgen2.parse import ParseError

from npu_codemod.codemods.parser import Parser

from support.trees import parse_outcome, shape

ROOT = Path(__file__).resolve().parents[1]
PY3 = pygram.python_grammar_no_print_and_exec_statement
PY2 = pygram.python_grammar
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    return Path(spec.origin).parent


SOURCE_GROUPS = {
    "repository": lambda: [ROOT / folder for folder in
                           ("codemods", "orchestrator", "plugins", "reports", "examples", "bench", "tools")],
    "tests": lambda: [ROOT / "tests"],
    "fissix-bowler-pluggy": lambda: [package_dir("fissix"), package_dir("bowler"), package_dir("pluggy")],
    "gitpython": lambda: [package_dir("git")],
    "stdlib": lambda: [STDLIB / name for name in ("asyncio", "email", "json", "concurrent", "importlib")],
}

CORNERS = {
    "empty": "",
    "newline": "\n",
    "comment only": "# nothing here\n",
    "no final newline": "import tensorflow as tf\nx = tf.constant(1)",
    "crlf": "import os\r\nif os:\r\n    x = 1\r\n",
    "tabs": "if x:\n\tif y:\n\t\tz = 1\n\telse:\n\t\tpass\n",
    "form feed": "x = 1\n\x0c\ndef f():\n    return x\n",
    "continuation": "x = 1 + \\\n    2\ny = (3,\n     4)  # trailing\n",
    "comments between": "def f():\n    # first\n\n    x = 1\n        # odd indent comment\n    return x\n",
    "decorators": "@a.b(c)\n@d\nclass K(object):\n    @property\n    def p(self): return 1\n",
    "async": "async def f():\n    async with a as b:\n        await b\n    async for x in y:\n        pass\n",
    "fstrings": "x = f'{a!r:>{w}}'\ny = rb'\\x00' u'z'\n",
    "walrus and star": "if (n := len(a)) > 1:\n    first, *rest = a\nprint(*a, **k)\n",
    "annotations": "def f(a: int = 1, *args: str, b, **kw) -> None:\n    x: int = 1\n",
    "lambda and comprehension": "f = lambda x, *y, z=1: [i for i in x if i]\ng = {k: v for k, v in d}\n",
    "python 2 print": "print 'hello'\nexec 'x = 1'\n",
    "python 2 except": "try:\n    pass\nexcept Exception, e:\n    raise E, 'x'\n",
    "backquotes": "x = `y`\n",
    "bad input": "x = = 1\n",
    "bad token": "x = 1 $ 2\n",
    "unterminated string": "x = '''abc\n",
    "unterminated bracket": "x = (1,\n",
    "dedent mismatch": "if x:\n        y = 1\n    z = 2\n",
    "unexpected indent": "x = 1\n    y = 2\n",
    "match statement": "match x:\n    case 1:\n        pass\n",
    "positional only": "def f(a, /, b):\n    pass\n",
}


def sources(group: str) -> Iterator[Path]:
    for folder in SOURCE_GROUPS[group]():
        yield from sorted(folder.rglob("*.py"))


def differences(grammar: Any, texts: dict[str, str]) -> list[str]:
    fissix, ours = driver.Driver(grammar, convert=pytree.convert), Parser(grammar)
    return [name for name, text in texts.items()
            if parse_outcome(fissix.parse_string, text) != parse_outcome(ours.parse_string, text)]


@pytest.mark.parametrize("group", sorted(SOURCE_GROUPS))
def test_every_source_parses_to_fissixs_tree(group: str) -> None:
    texts = {}
    for path in sources(group):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        texts[str(path)] = text if text.endswith("\n") or not text else text + "\n"
    assert len(texts) >= 10, group
    assert differences(PY3, texts) == []


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_corners_parse_or_fail_as_fissix_does(grammar: Any) -> None:
    assert differences(grammar, CORNERS) == []


def test_the_corners_cover_trees_and_every_kind_of_error() -> None:
    kinds = set()
    for text in CORNERS.values():
        result, detail = parse_outcome(Parser(PY3).parse_string, text)
        kinds.add("tree" if result == "tree" else detail[0].__name__)
    assert {"tree", "ParseError", "TokenError", "IndentationError"} <= kinds


def test_python_2_files_of_the_suite_parse_alike_with_the_python_2_grammar() -> None:
    texts = {str(path): path.read_text(encoding="utf-8", errors="surrogateescape")
             for path in sources("tests") if "print " in path.read_text(encoding="utf-8", errors="replace")}
    assert differences(PY2, texts) == []


def test_the_comparison_can_fail() -> None:
    tree = Parser(PY3).parse_string("x = 1  # one\n")
    other = Parser(PY3).parse_string("x = 1  # two\n")
    assert shape(tree) != shape(other)
    leaf = next(tree.leaves())
    leaf.lineno = 2
    assert shape(tree) != shape(Parser(PY3).parse_string("x = 1  # one\n"))


def test_a_reused_parser_keeps_no_state_between_files() -> None:
    parser = Parser(PY3)
    with pytest.raises(ParseError):
        parser.parse_string("x = = 1\n")
    first = parser.parse_string("import a\n")
    again = parser.parse_string("import a\n")
    assert shape(first) == shape(again) and first.used_names == {"import", "a"}  # as fissix: every NAME token


def mutants(text: str, count: int, seed: int) -> dict[str, str]:
    """``count`` damaged copies of ``text``: a span cut out, a line doubled or dedented, a
    bracket, quote, colon or backslash dropped in: the inputs where error paths are taken."""
    rng = random.Random(seed)
    lines = text.splitlines(keepends=True)
    out = {}
    for number in range(count):
        at = rng.randrange(len(text))
        line = rng.randrange(len(lines))
        kind = number % 4
        if kind == 0:
            mutant = text[:at] + text[at + rng.randint(1, 12):]
        elif kind == 1:
            mutant = "".join(lines[:line] + [lines[line]] + lines[line:])
        elif kind == 2:
            mutant = "".join(lines[:line] + [lines[line].lstrip(" ")] + lines[line + 1:])
        else:
            mutant = text[:at] + rng.choice(["(", ")", "'", '"""', ":", "\\", "\t", "\n ", " = ", "@"]) + text[at:]
        out[f"{seed}:{number}:{kind}"] = mutant
    return out


@pytest.mark.parametrize("grammar", [PY3, PY2], ids=["python3", "python2"])
def test_damaged_sources_fail_or_parse_exactly_as_with_fissix(grammar: Any) -> None:
    texts: dict[str, str] = {}
    for seed, path in enumerate(sorted((ROOT / "tests" / "corpus").rglob("*.py"))[:12]):
        texts.update(mutants(path.read_text(encoding="utf-8"), 25, seed))
    results = {parse_outcome(Parser(grammar).parse_string, text)[0] for text in texts.values()}
    assert results == {"tree", "error"}  # both paths were taken
    assert differences(grammar, texts) == []
