"""Positions among siblings are found by identity: fissix nodes compare equal by structure."""

from __future__ import annotations

from fissix.pgen2 import token

from npu_codemod.codemods.edits import insert_before
from npu_codemod.codemods.scopes import classify

from support.rules import run_rules, sites
from support.trees import parse


def test_insert_before_the_second_of_two_equal_lines():
    tree = parse("sess.run(op)\nsess.run(op)\n")
    insert_before(tree.children[1], "config = 1", "\n")
    assert str(tree) == "sess.run(op)\nconfig = 1\nsess.run(op)\n"


def test_a_loop_iterable_equal_to_its_target_is_not_a_binding():
    tree = parse("for sess in sess:\n    pass\n")
    target, iterable = [leaf for leaf in tree.leaves() if leaf.type == token.NAME and leaf.value == "sess"]
    assert classify(target).kind == "bind"
    assert classify(iterable).kind != "bind"


def test_an_annotation_is_read_not_bound():
    """``config: Config = Config()``: the target binds, the annotation and the value read."""
    tree = parse("config: Config = Config()\n")
    target, annotation, value = [leaf for leaf in tree.leaves() if leaf.type == token.NAME]
    assert classify(target).kind == "bind"
    assert classify(annotation).kind != "bind" and classify(value).kind != "bind"


def test_a_second_equal_trailer_has_its_own_receiver():
    """``tf.train.batch(...).batch(4)``: the second ``.batch`` is called on a batch's result,
    not on ``tf.train`` (the first, equal ``.batch`` trailer's receiver)."""
    findings = run_rules("import tensorflow as tf\nx = tf.train.batch([a], 4).batch(4)\n", {"NPU002"})[1]
    assert sites(findings) == [("NPU002", 2, 27, "unmigrated")]
