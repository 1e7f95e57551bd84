"""The sources the parser's and the tokenizer's tests read: every source of this repository,
of the installed fissix, Bowler, pluggy and GitPython and of a few standard library packages;
hand-written corners; and damaged copies of the corpus files, where error paths are taken."""

from __future__ import annotations

import importlib.util
import random
import sysconfig
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
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
    "multi-line strings": ('def f():\n    """Doc\n    more\\\n    """; x = r\'\'\'a\n\'\'\' + b"""c"""  # end\n'
                           "    return x\n"),
    "string openings": "x = (u'a' rb'b' Rb'c' f\"{d}\" br'''e''' U\"\"\"f\"\"\")\n",
    "dedents and comments": ("class A:\n    def f(self):\n        if x:\n            y = 1\n  # low comment\n\n"
                             "        # mid\n    z = 2\nw = 3\n"),
    "brackets across lines": "x = [\n    1,  # one\n\n  2, (3,\n4)]\nif x: y = {\n}\n",
    "crlf strings": "def f():\r\n    '''a\r\n    b'''\r\n    return (1,\r\n            2)\r\n",
    "closing bracket first": "x = 1)\ny = 2\n",
    "closing bracket first, balanced later": "x = 1)\ny = (2\nz = 3\n",
    "lone carriage return": "x = 1\ry = 2\n",
    "form feed inside": "x = 1 \x0c+ 2\n",
    "unicode names": "\u00e9t\u00e9 = 1\nx = \u00e9t\u00e9  # caf\u00e9\ns = 'na\u00efve'\n",
    "eof in string": "x = '''abc\ndef\n",
    "eof in statement": "x = 1 + \\\n",
    "continued string": "x = 'abc\\\ndef'\ny = 2\n",
    "async as a name": "async = 1\nawait = async\n",
    "operators": "a //= b ** c @ d; e <<= f >> g; h -> i; j := k; l != m <> n\nx = a[1:2, ...]\n",
}


def sources(group: str) -> Iterator[Path]:
    for folder in SOURCE_GROUPS[group]():
        yield from sorted(folder.rglob("*.py"))




def source_texts(group: str) -> dict[str, str]:
    """The text of each source of ``group`` (:data:`SOURCE_GROUPS`), ending with a newline as
    the engine parses it, by path."""
    texts = {}
    for path in sources(group):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        texts[str(path)] = text if text.endswith("\n") or not text else text + "\n"
    return texts


def damaged_corpus() -> dict[str, str]:
    """Damaged copies (:func:`mutants`) of the first twelve files of ``tests/corpus``."""
    texts: dict[str, str] = {}
    for seed, path in enumerate(sorted((ROOT / "tests" / "corpus").rglob("*.py"))[:12]):
        texts.update(mutants(path.read_text(encoding="utf-8"), 25, seed))
    return texts


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
