"""``dead_lines``: the bodies of ``if params["use_tpu"]:`` found wherever the ``if`` nests, and
files that cannot hold one never parsed."""

from __future__ import annotations

import ast
import textwrap

import pytest

from npu_codemod.codemods import dead_sites
from npu_codemod.codemods.dead_sites import dead_lines
from npu_codemod.codemods.modules import ModuleIndex, module_ast

from support.sources import python_sources

NESTED = textwrap.dedent('''\
    import tensorflow as tf


    class Builder(object):
        def model_fn(self, features, labels, mode, params):
            optimizer = tf.train.AdamOptimizer(0.1)
            for step in range(2):
                try:
                    with tf.variable_scope("tower"):
                        if params["use_tpu"]:
                            optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
                except ValueError:
                    while self.params.get("use_tpu") and step:
                        pass
                    if self.params.get("use_tpu") and step:
                        resolver = tf.contrib.cluster_resolver.TPUClusterResolver()
                finally:
                    match step:
                        case 1:
                            if params["use_tpu"]:
                                tf.logging.info("tpu")
                        case _:
                            pass
            else:
                if params["other"]:
                    pass
            return optimizer
''')


def _reference(source: str) -> frozenset[int]:
    """What ``dead_lines`` gives, by the plain walk of every node."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and dead_sites._reads_switch(node.test):
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return frozenset(lines)


def test_ifs_nested_in_every_kind_of_block_are_found() -> None:
    source = NESTED
    assert dead_lines(source) == {11, 16, 21}
    assert dead_lines(source) == _reference(source)


def test_the_index_gives_the_same_lines() -> None:
    """The hand-over's record reads the ``if`` statements from the analysis's index."""
    for source in (NESTED, *python_sources().values()):
        module = module_ast(source)
        if module is not None:
            assert dead_sites.tree_dead_lines(module, ModuleIndex(module)) == _reference(source)
    module = module_ast(NESTED)
    assert module is not None and dead_sites.tree_dead_lines(module, ModuleIndex(module)) == {11, 16, 21}


def test_a_file_without_params_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(dead_sites.ast, "parse", no_parse)
    assert dead_lines("import tensorflow as tf\nif FLAGS.use_tpu:\n    x = 1\n") == frozenset()


def test_a_non_ascii_file_is_parsed_whatever_it_spells() -> None:
    # NFKC: the fullwidth letters are the name params for ast.
    source = 'if \uff50arams["use_tpu"]:\n    x = 1\n'
    assert "params" not in source
    assert dead_lines(source) == {2}


def test_the_walk_agrees_with_a_full_walk_on_the_suites_sources() -> None:
    checked = 0
    for where, text in python_sources().items():
        source = text
        try:
            expected = _reference(source)
        except (SyntaxError, ValueError):
            continue
        assert dead_lines(source) == expected, where
        checked += bool(expected)
    assert checked  # the corpus's TPU model function


def test_the_engine_settles_from_the_analysis_record_without_parsing_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis handed the file over (``ast_handover``): the dead lines come from its
    record, and the outcome is the one the engine gives without a record (which parses)."""
    from npu_codemod.codemods import ast_handover
    from npu_codemod.codemods.engine import SELECTIVE, Engine
    from npu_codemod.plugins.manager import load_plugins

    from support.tpu_towers import FILES

    text = FILES["model.py"]
    engine = Engine(load_plugins().rules(), SELECTIVE)
    ast_handover.clear()
    without = engine.process(text.encode(), "model.py", "repo")
    assert [f.status for f in without.findings if f.rule_id == "NPU012" and f.line == 10] == ["not-needed"]
    engine.hand_over("model.py", text)
    parsed: list[str] = []
    real_parse = ast.parse

    def counted(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted)
    with_record = engine.process(text.encode(), "model.py", "repo")
    monkeypatch.undo()
    assert with_record == without
    assert text not in parsed  # the file is not parsed whole again
