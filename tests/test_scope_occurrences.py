"""``scopes._occurrences`` (one loop) gives what the plain recursive walk gives: every
variable leaf of a name, in order, with whether it is nested, on the suite's sources."""

from __future__ import annotations

from typing import Iterator

from fissix import pytree
from fissix.pgen2 import token
from fissix.pygram import python_symbols as syms

from npu_codemod.codemods import scopes
from npu_codemod.codemods.engine import parse_module

from support.sources import python_sources


def _recursive(node: pytree.Base, name: str, nested: bool = False) -> Iterator[tuple[pytree.Leaf, bool]]:
    for child in node.children:
        if child.type == token.NAME:
            if child.value == name and scopes._is_variable(child):
                yield child, nested
        elif child.type in scopes.NESTED_SCOPES:
            if child.type == syms.funcdef and child.children[1].value == name:
                yield child.children[1], nested
            if not scopes._binds_locally(child, name):
                yield from _recursive(child, name, nested=True)
        elif child.children:
            yield from _recursive(child, name, nested)


NESTED = '''\
import tensorflow as tf


def train(sess, steps):
    def step(i, sess=sess):
        return sess.run(i)

    class Hook(tf.train.SessionRunHook):
        def after_run(self, context, values):
            sess.close()

    total = [lambda sess: sess.run(x) for x in range(steps)]
    for sess_index in range(steps):
        sess.run(step(sess_index))
    return lambda: sess, total, Hook
'''


def test_nested_scopes_and_shadowing_parameters() -> None:
    tree = parse_module(NESTED)
    assert tree is not None
    train = next(node for node in tree.pre_order() if node.type == syms.funcdef)
    found = [(leaf.lineno, leaf.column, nested) for leaf, nested in scopes._occurrences(train, "sess")]
    assert found == [(leaf.lineno, leaf.column, nested) for leaf, nested in _recursive(train, "sess")]
    # The parameter, the hook's and the returned lambda's reads (nested), the loop's call; not
    # step's nor the listed lambdas' own parameter.
    assert found == [(4, 10, False), (10, 12, True), (14, 8, False), (15, 19, True)]
    assert not any(line == 12 for line, _, _ in found)  # the lambda binds its own sess


def test_the_loop_walks_as_the_recursion_on_the_suites_sources() -> None:
    checked = 0
    for where, text in list(python_sources().items())[::3]:
        tree = parse_module(text if text.endswith("\n") else text + "\n")
        if tree is None:
            continue
        names = sorted({leaf.value for leaf in tree.leaves() if leaf.type == token.NAME})[:12]
        for name in names:
            expected = list(_recursive(tree, name))
            assert list(scopes._occurrences(tree, name)) == expected, (where, name)
            checked += bool(expected)
    assert checked > 500


DECORATED = '''\
from absl import flags
import tensorflow as tf

flags.DEFINE_integer("steps", 10, "steps")


@flags.validator("steps")
def _positive(value):
    return value > 0


@tf.function
def step(x):
    return x
'''


def test_a_decorators_dotted_name_is_a_use_not_an_import() -> None:
    """``@flags.validator(...)`` and ``@tf.function`` are dotted names outside any import:
    their heads are not bound (an escape: a decorator's dotted name is not read as an
    attribute, so a rule leaves such a name alone); this once walked up past the module."""
    tree = parse_module(DECORATED)
    assert tree is not None
    flags_uses = [(use.leaf.lineno, use.kind, use.detail) for use in scopes.uses(tree, "flags")]
    assert flags_uses == [(1, "bind", "imported"), (4, "attribute", ""), (7, "escape", "used as a value")]
    assert [use.leaf.lineno for use in scopes.uses(tree, "tf")] == [2, 12]
