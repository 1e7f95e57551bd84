"""small_statements finds exactly the statements a whole-tree walk finds, in the same order."""

from __future__ import annotations

from pathlib import Path

from fissix import pygram, pytree
from fissix.pgen2 import driver, token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods.nodes import used_names
from npu_codemod.codemods.walk import (
    node_pre_order,
    post_order,
    pre_order,
    scope_nodes,
    scope_statements,
    small_statements,
    tree_text,
)

SAMPLES = sorted((Path(__file__).parent / "sample_projects").glob("*/*.py"))
NESTED = '''\
import os; import tensorflow as tf
try:
    from tensorflow.compat import v1 as tf1
except ImportError:
    tf1 = None
if True: keras = tf.keras
@decorator
class Model(object):
    layers = tf.layers
    async def run(self):
        with ctx() as c:
            async with other():
                x = [y for y in range(3)]
    def build(self, x=lambda: 1):
        for i in range(3):
            while False:
                import tensorflow.contrib.data as tcd
        else:
            return x
'''
STATEMENTS = (syms.import_name, syms.import_from, syms.expr_stmt, syms.return_stmt)


def _statements_by_full_walk(tree: pytree.Node) -> list[pytree.Base]:
    return [node for node in tree.pre_order() if node.type in STATEMENTS]


def test_small_statements_match_a_full_walk() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    for text in [NESTED] + [path.read_text(encoding="utf-8") for path in SAMPLES]:
        tree = parser.parse_string(text)
        found = [node for node in small_statements(tree) if node.type in STATEMENTS]
        assert found == _statements_by_full_walk(tree)
    assert len(_statements_by_full_walk(parser.parse_string(NESTED))) == 9


def test_pre_order_is_fissix_pre_order() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    for text in [NESTED] + [path.read_text(encoding="utf-8") for path in SAMPLES]:
        tree = parser.parse_string(text)
        assert list(pre_order(tree)) == list(tree.pre_order())


def test_post_order_is_fissix_post_order_even_when_a_node_is_replaced() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    assert list(post_order(parser.parse_string(NESTED))) == list(parser.parse_string(NESTED).post_order())
    seen = {}
    for name, walk in (("fissix", lambda tree: tree.post_order()), ("ours", post_order)):
        tree = parser.parse_string("a = f(x) + g(y)\n")
        seen[name] = []
        for node in walk(tree):
            seen[name].append(str(node))
            if node.type == syms.power and str(node) == "f(x)":  # replace the next sibling's child
                node.next_sibling.next_sibling.replace(pytree.Leaf(1, "z", prefix=" "))
    assert seen["ours"] == seen["fissix"]


def test_post_order_yields_only_the_leaves_asked_for() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    tree = parser.parse_string(NESTED)
    wanted = {token.NAME: frozenset({"tf", "x"}), token.DOT: None}
    expected = [node for node in tree.post_order() if node.type >= 256 or node.type == token.DOT
                or (node.type == token.NAME and node.value in ("tf", "x"))]
    assert list(post_order(tree, wanted)) == expected
    assert any(node.type == token.NAME for node in expected)


def test_post_order_yields_only_the_nodes_asked_for() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    tree = parser.parse_string(NESTED)
    kinds = frozenset({syms.power, syms.trailer})
    expected = [node for node in tree.post_order() if node.type in kinds or node.type == token.DOT]
    assert list(post_order(tree, {token.DOT: None}, kinds)) == expected


def test_scope_statements_are_the_statements_of_scope_nodes_in_the_same_order() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    wanted = (*STATEMENTS, syms.funcdef, syms.classdef, syms.simple_stmt, syms.for_stmt)
    for text in [NESTED] + [path.read_text(encoding="utf-8") for path in SAMPLES]:
        tree = parser.parse_string(text)
        scopes = [tree] + [node for node in tree.pre_order() if node.type in (syms.funcdef, syms.classdef)]
        for scope in scopes:
            for nested in (False, True):
                found = [node for node in scope_statements(scope, nested) if node.type in wanted]
                assert found == [node for node in scope_nodes(scope, nested) if node.type in wanted]
    model = next(node for node in parser.parse_string(NESTED).pre_order() if node.type == syms.classdef)
    assert [node.type for node in scope_statements(model) if node.type in STATEMENTS] == [syms.expr_stmt]
    assert len([node for node in scope_statements(model, nested=True) if node.type in STATEMENTS]) == 4


def test_used_names_are_names_but_attributes_and_keywords_of_calls() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    tree = parser.parse_string("config = tf.ConfigProto(log=x.y)\ndef f(a, b=c):\n    return g(k=v)\n")
    names = {"config", "tf", "x", "f", "a", "b", "c", "g", "v"}
    assert used_names(tree) == names | {"def", "return"}  # keywords are NAME tokens: never free


def test_node_pre_order_is_pre_order_without_leaves() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    tree = parser.parse_string(NESTED)
    assert list(node_pre_order(tree)) == [node for node in tree.pre_order() if node.type >= 256]


def test_tree_text_is_str_of_the_tree_after_edits_too() -> None:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    for text in [NESTED, "", "x = 1"] + [path.read_text(encoding="utf-8") for path in SAMPLES]:
        tree = parser.parse_string(text + "\n")
        assert tree_text(tree) == str(tree) == text + "\n"
    tree = parser.parse_string(NESTED)
    leaf = next(leaf for leaf in tree.leaves() if leaf.value == "keras")
    leaf.replace(pytree.Node(syms.power, [pytree.Leaf(token.NAME, "a", prefix=" "),
                                          pytree.Node(syms.trailer, [])]))
    tree.children[0].remove()
    assert tree_text(tree) == str(tree)
    assert tree_text(leaf) == str(leaf)
