"""Positions among siblings are found by identity: fissix nodes compare equal by structure."""

from __future__ import annotations

from fissix import pygram, pytree
from fissix.pgen2 import driver, token

from npu_codemod.codemods.scopes import classify
from npu_codemod.codemods.statements import insert_before


def parse(source: str) -> pytree.Node:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)
    return parser.parse_string(source)


def test_insert_before_the_second_of_two_equal_lines():
    tree = parse("sess.run(op)\nsess.run(op)\n")
    insert_before(tree.children[1], "config = 1", "\n")
    assert str(tree) == "sess.run(op)\nconfig = 1\nsess.run(op)\n"


def test_a_loop_iterable_equal_to_its_target_is_not_a_binding():
    tree = parse("for sess in sess:\n    pass\n")
    target, iterable = [leaf for leaf in tree.leaves() if leaf.type == token.NAME and leaf.value == "sess"]
    assert classify(target).kind == "bind"
    assert classify(iterable).kind != "bind"
