"""Is the engine's parser still fissix's? A start-up canary, and the one comparison of two parsers.

:class:`~npu_codemod.codemods.parser.Parser` rebuilds fissix's trees from fissix's own grammar
tables and node classes (``pytree.Node``/``Leaf`` attributes set directly), so it is proven
on the fissix versions ``pyproject.toml`` pins, not on whatever fissix a user's environment
holds. :func:`canary_problem` parses a small source that touches every shape the rules read
(decorators, comprehensions, calls with keywords and ``**kwargs``, ``with``, ``async``,
f-strings, comments, continuation lines, CRLF) with both parsers and both grammars and says,
in one line, where they disagree; the CLI refuses to run when they do. A pass is remembered
(:func:`remembered_canary_problem`) until Python, fissix's parser or the engine's changes.

:func:`parse_outcome` and :func:`shape` are how two parsers' answers compare: the tests
(``tests/test_parser.py``), the bench's tree check and this canary use them.
"""

from __future__ import annotations

import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Iterable

from fissix import pygram, pytree
from fissix.pgen2 import driver
from fissix.pgen2 import grammar as pgen_grammar

from .parser import Parser

#: A source holding every statement and expression shape the built-in rules read.
CANARY = (
    "# -*- coding: utf-8 -*-\n"
    '"""A training script."""\n'
    "from __future__ import print_function\n"
    "import os, sys  # two\n"
    "import tensorflow as tf\n"
    "from tensorflow.contrib import slim as contrib_slim\n"
    "\n"
    "FLAGS = tf.app.flags.FLAGS\n"
    "\n"
    "\n"
    "@tf.function(experimental_relax_shapes=True)\n"
    "def step(x, *args, keep_prob=0.9, **kwargs):\n"
    "    y = tf.nn.dropout(x, keep_prob, **kwargs)  # a site\n"
    "    return [v * 2 for v in (y, x) if v is not None], {k: v for k, v in kwargs.items()}\n"
    "\n"
    "\n"
    "class Model(object):\n"
    "    def __init__(self, sess=None):\n"
    "        self.sess = sess or tf.Session(config=tf.ConfigProto(\n"
    "            allow_soft_placement=True,\r\n"
    "            log_device_placement=False))\r\n"
    "\n"
    "    async def fetch(self):\n"
    "        async with self.lock as held:\n"
    "            await held\n"
    "        return f'{self.sess!r:>10} {1 + 2}'\n"
    "\n"
    "\n"
    "def main(_):\n"
    "    with tf.Session() as sess, open(os.devnull) as sink:\n"
    "        while True:\n"
    "            try:\n"
    "                loss, _ = sess.run([total, train_op], feed_dict={x: 1.0 \\\n"
    "                                                                  + 2})\n"
    "            except tf.errors.OutOfRangeError:\n"
    "                break\n"
    "            finally:\n"
    "                print(loss, file=sink)\n"
    "    lambda *a, **k: (yield)\n"
    "    x = y if z else (w := 3)\n"
    "\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    tf.app.run()\n"
)

#: The grammars the engine parses with: Python 3's, then Python 2's for files 3's rejects.
GRAMMARS = (pygram.python_grammar_no_print_and_exec_statement, pygram.python_grammar_no_print_statement)


def parse_outcome(parse: Callable[[str], pytree.Node], text: str) -> tuple[str, Any]:
    """What ``parse`` makes of ``text``, comparable with another parser's: ("tree", its
    :func:`shape` and the root's ``used_names``) or ("error", the exception's type and
    arguments)."""
    try:
        tree = parse(text)
    except Exception as error:  # fissix raises ParseError, TokenError, IndentationError
        return "error", (type(error), error.args)
    return "tree", (shape(tree), sorted(tree.used_names))


def shape(node: pytree.Base, parent: pytree.Base | None = None) -> tuple[Any, ...]:
    """Everything a node holds that the engine or Bowler could read (its class and every
    attribute), children included; a wrong parent link raises ``AssertionError``."""
    assert node.parent is parent, f"parent link of {node!r}"
    attributes = dict(vars(node))
    attributes.pop("parent", None)
    children = attributes.pop("children", [])
    attributes.pop("used_names", None)  # compared on the root by parse_outcome()
    return (type(node).__name__, sorted(attributes.items(), key=lambda item: item[0]),
            tuple(shape(child, node) for child in children))


def canary_problem(make_parser: Callable[[pgen_grammar.Grammar], Parser] = Parser,
                   text: str = CANARY) -> str | None:
    """One line when the engine's parser and fissix's driver disagree on :data:`CANARY`
    (with either grammar), else ``None``."""
    for grammar in GRAMMARS:
        fissix = driver.Driver(grammar, convert=pytree.convert)
        try:
            ours = parse_outcome(make_parser(grammar).parse_string, text)
        except AssertionError as error:  # a broken parent link
            ours = ("error", (AssertionError, error.args))
        if ours != parse_outcome(fissix.parse_string, text):
            return (f"the engine's parser no longer matches the installed fissix {_fissix_version()} "
                    "(its start-up check failed); install the fissix version pyproject.toml pins "
                    "(python3 -m pip install 'npu-codemod' reinstalls it)")
    return None


def remembered_canary_problem(folder: Path) -> str | None:
    """:func:`canary_problem`, asked once per installation: a pass is remembered as an empty
    file in ``folder`` named by :func:`installation_key` (four parses spared, about 13 ms of
    every command); a failure is never remembered, nor is anything when ``folder`` cannot be
    written."""
    marker = folder / installation_key(parser_files())
    if marker.is_file():
        return None
    problem = canary_problem()
    if problem is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:  # a read-only cache: the next command checks again
            pass
    return problem


def parser_files() -> list[Path]:
    """The files the canary's verdict depends on: fissix's and ``fissix.pgen2``'s own (the
    grammar, tokenizer, driver, node classes), the engine's parser and this module."""
    folders = [Path(pygram.__file__).parent, Path(driver.__file__).parent]
    files = [path for folder in folders for path in sorted(folder.iterdir()) if path.is_file()]
    return files + [Path(__file__).with_name("parser.py"), Path(__file__)]


def installation_key(files: Iterable[Path]) -> str:
    """Python's version and each file's path, size and modification time, hashed: a changed,
    reinstalled or moved file is a new key (as Python's own bytecode cache decides)."""
    digest = hashlib.sha256(f"{sys.version}\0{sys.implementation.cache_tag}".encode())
    for path in files:
        stat = os.stat(path)
        digest.update(f"\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _fissix_version() -> str:
    try:
        return metadata.version("fissix")
    except metadata.PackageNotFoundError:
        return "(version unknown)"
