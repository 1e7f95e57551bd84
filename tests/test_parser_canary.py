"""The start-up canary: the engine's parser checked against the installed fissix's driver."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from fissix import pytree
from fissix.pgen2 import grammar as pgen_grammar

from npu_codemod.codemods import parser_canary
from npu_codemod.codemods.parser import Parser
from npu_codemod.codemods.parser_canary import (
    CANARY,
    canary_problem,
    installation_key,
    remembered_canary_problem,
)

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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy.parent), os.environ.get("PYTHONPATH", "")])}
    assert cli("rules", cwd=tmp_path, env=env).returncode == 0  # the copy as it was passes: remembered
    with (copy / "pytree.py").open("a", encoding="utf-8") as module:
        module.write("\n_init = Leaf.__init__\n\n\ndef _init_marked(self, *args, **kwargs):\n"
                     "    _init(self, *args, **kwargs)\n    self.marked = True\n\n\n"
                     "Leaf.__init__ = _init_marked\n")
    drifted = cli("check", ".", cwd=tmp_path, env=env)
    assert drifted.returncode == 2, (drifted.stdout, drifted.stderr)
    assert drifted.stderr.count("\n") == 1 and "no longer matches the installed fissix" in drifted.stderr
    assert cli("rules", cwd=tmp_path).returncode == 0  # the same command on the real fissix


def counted_canary(monkeypatch, verdict=None) -> list[None]:
    """The canary's runs from here on (answering ``verdict`` when given, else for real)."""
    runs: list[None] = []
    real = parser_canary.canary_problem

    def counted(*args, **kwargs):
        runs.append(None)
        return verdict if verdict is not None else real(*args, **kwargs)

    monkeypatch.setattr(parser_canary, "canary_problem", counted)
    return runs


def test_a_pass_is_remembered_until_python_fissix_or_the_parser_changes(tmp_path: Path, monkeypatch) -> None:
    runs = counted_canary(monkeypatch)
    assert remembered_canary_problem(tmp_path / "checked") is None
    assert remembered_canary_problem(tmp_path / "checked") is None
    assert len(runs) == 1 and len(list((tmp_path / "checked").iterdir())) == 1


def test_a_failure_is_never_remembered(tmp_path: Path, monkeypatch) -> None:
    runs = counted_canary(monkeypatch, verdict="the engine's parser no longer matches")
    for _ in range(2):
        assert remembered_canary_problem(tmp_path / "checked") == "the engine's parser no longer matches"
    assert len(runs) == 2 and not (tmp_path / "checked").exists()


def test_a_folder_that_cannot_be_written_checks_every_time(tmp_path: Path, monkeypatch) -> None:
    runs = counted_canary(monkeypatch)
    (tmp_path / "file").write_text("in the way")
    for _ in range(2):
        assert remembered_canary_problem(tmp_path / "file" / "checked") is None
    assert len(runs) == 2


def test_the_key_changes_with_each_files_bytes_time_and_place(tmp_path: Path) -> None:
    files = [tmp_path / "parse.py", tmp_path / "pytree.py"]
    for path in files:
        path.write_text("x = 1\n")
    os.utime(files[1], ns=(10**18, 10**18))
    keys = [installation_key(files)]
    files[1].write_text("x = 2\n")  # the same size: the time tells
    os.utime(files[1], ns=(10**18 + 1, 10**18 + 1))
    keys.append(installation_key(files))
    with files[1].open("a") as module:
        module.write("y = 3\n")
    os.utime(files[1], ns=(10**18 + 1, 10**18 + 1))  # the same time: the size tells
    keys.append(installation_key(files))
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    os.replace(files[1], moved / "pytree.py")
    keys.append(installation_key([files[0], moved / "pytree.py"]))
    assert len(set(keys)) == 4 and installation_key([files[0], moved / "pytree.py"]) == keys[-1]


def test_the_key_covers_fissixs_parser_and_the_engines() -> None:
    names = {(path.parent.name, path.name) for path in parser_canary.parser_files()}
    assert {("fissix", "pytree.py"), ("fissix", "Grammar.txt"), ("pgen2", "parse.py"),
            ("pgen2", "tokenize.py"), ("pgen2", "driver.py"), ("codemods", "parser.py"),
            ("codemods", "parser_canary.py")} <= names
