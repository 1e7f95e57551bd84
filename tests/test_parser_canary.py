"""The start-up canary: the engine's parser checked against the installed fissix's driver."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from fissix import pytree
from fissix.pgen2 import grammar as pgen_grammar

from npu_codemod.codemods.parser import Parser
from npu_codemod.codemods.parser_canary import CANARY, canary_problem

from support.cli import cli

ROOT = Path(__file__).resolve().parents[1]


class _DropsComments(Parser):
    """A parser that loses comments: the kind of drift a new fissix could cause."""

    def parse_string(self, text: str) -> pytree.Node:
        return super().parse_string(re.sub(r"  # .*", "", text))


class _ForgetsUsedNames(Parser):
    def parse_string(self, text: str) -> pytree.Node:
        tree = super().parse_string(text)
        tree.used_names = set()
        return tree


def test_the_engines_parser_passes_the_canary_with_the_installed_fissix() -> None:
    assert canary_problem() is None


def test_a_parser_that_drifts_from_fissix_fails_the_canary_with_one_line() -> None:
    for drifted in (_DropsComments, _ForgetsUsedNames):
        problem = canary_problem(drifted)
        assert problem is not None and "\n" not in problem
        assert "fissix" in problem and "pins" in problem


def test_a_parser_that_fails_where_fissix_parses_fails_the_canary() -> None:
    def rejecting(grammar: pgen_grammar.Grammar) -> Parser:
        parser = Parser(grammar)
        parser.parse_string = lambda text: parser.parse_tokens(iter([]))  # type: ignore[method-assign]
        return parser

    assert canary_problem(rejecting) is not None


def test_the_canary_holds_the_shapes_the_rules_read() -> None:
    for shape in ("**kwargs", "with tf.Session() as sess", "sess.run(", "async with", "f'",
                  "\r\n", "\\\n", "@tf.function", "if __name__ == '__main__':"):
        assert shape in CANARY


def test_fissix_is_pinned_to_the_version_the_parser_is_proven_on() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'"fissix==[0-9.]+"', pyproject), "fissix must be pinned exactly"


def test_the_cli_refuses_to_run_on_a_fissix_the_parser_does_not_match(tmp_path: Path) -> None:
    """A real other fissix (a copy whose ``Leaf`` carries one more attribute) first on the path:
    the command stops with one line and exit 2 before touching anything."""
    import fissix

    copy = tmp_path / "site" / "fissix"
    shutil.copytree(Path(fissix.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "pytree.py").open("a", encoding="utf-8") as module:
        module.write("\n_init = Leaf.__init__\n\n\ndef _init_marked(self, *args, **kwargs):\n"
                     "    _init(self, *args, **kwargs)\n    self.marked = True\n\n\n"
                     "Leaf.__init__ = _init_marked\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy.parent), os.environ.get("PYTHONPATH", "")])}
    drifted = cli("check", ".", cwd=tmp_path, env=env)
    assert drifted.returncode == 2, (drifted.stdout, drifted.stderr)
    assert drifted.stderr.count("\n") == 1 and "no longer matches the installed fissix" in drifted.stderr
    assert cli("rules", cwd=tmp_path).returncode == 0  # the same command on the real fissix
