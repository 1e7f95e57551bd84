"""The named helpers for the shapes rules used to index by hand (issue 30): a dotted name
read one way, a call's callee, an attribute trailer's name, a definition's name, a plain
assignment, a line's first small statement, and whether a node is inside another."""

from __future__ import annotations

from fissix import pytree
from fissix.pygram import python_symbols as syms

from npu_codemod.api._toolkit import (
    assignment,
    attribute_name,
    callee_name,
    definition_name,
    is_inside,
    leading_name,
    small_statement,
    spelled_name,
)

from support.trees import parse

SOURCE = '''"""Input pipeline and a model of a small trainer."""
import tensorflow as tf


class Trainer(object):
    def input_fn(self, files):
        dataset = tf.data.TFRecordDataset(files).map(parse_example).batch(32)
        steps += 1; self.model = tpu_lib().TPUEstimator(model_fn=model_fn)
        return dataset
'''


def powers(tree: pytree.Node) -> dict[str, pytree.Node]:
    return {str(node).strip(): node for node in tree.pre_order() if node.type == syms.power}


def test_dotted_names_of_power_children() -> None:
    found = powers(parse(SOURCE))
    pipeline = found["tf.data.TFRecordDataset(files).map(parse_example).batch(32)"]
    assert spelled_name(pipeline.children[:3]) == "tf.data.TFRecordDataset"
    assert spelled_name(pipeline.children[:5]) is None  # through a call
    assert leading_name(pipeline.children) == "tf.data.TFRecordDataset"
    assert callee_name(pipeline) is None  # ends with a call, but not of a dotted name
    estimator = found["tpu_lib().TPUEstimator(model_fn=model_fn)"]
    assert spelled_name(estimator.children[:3]) is None
    assert spelled_name(estimator.children[:3], through_calls=True) == "tpu_lib().TPUEstimator"
    assert callee_name(found["self.model"]) is None  # no call


def test_attribute_and_definition_names() -> None:
    tree = parse(SOURCE)
    trailers = [node for node in tree.pre_order() if node.type == syms.trailer]
    assert [attribute_name(trailer) for trailer in trailers[:4]] == ["data", "TFRecordDataset", None, "map"]
    definitions = [node for node in tree.pre_order() if node.type in (syms.classdef, syms.funcdef)]
    assert [definition_name(node) for node in definitions] == ["Trainer", "input_fn"]


def test_plain_assignments_and_first_small_statements() -> None:
    tree = parse(SOURCE)
    lines = [node for node in tree.pre_order() if node.type == syms.simple_stmt]
    smalls = [small_statement(line) for line in lines]
    assert [str(small).strip() for small in smalls[2:4]] == [
        "dataset = tf.data.TFRecordDataset(files).map(parse_example).batch(32)", "steps += 1"]
    pairs = [assignment(small) for small in smalls]
    assert [(str(target).strip(), str(value).strip()) for target, value in filter(None, pairs)] == [
        ("dataset", "tf.data.TFRecordDataset(files).map(parse_example).batch(32)")]
    assert assignment(lines[3].children[2]) is not None  # ``self.model = ...`` after the ``;``
    compound = tree.children[2]
    assert small_statement(compound) is compound


def test_inside_is_by_identity() -> None:
    tree = parse("x = f(a)\nx = f(a)\n")
    first, second = tree.children[0], tree.children[1]
    leaf = second.children[0].children[2].children[1].children[1]
    assert str(first) == str(second)
    assert is_inside(leaf, second) and is_inside(second, second)
    assert not is_inside(leaf, first)
