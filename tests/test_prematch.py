"""The engine's quick checks never reject a node the full pattern matches (so no finding is lost)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
from fissix import pygram, pytree
from fissix.patcomp import PatternCompiler
from fissix.pgen2 import driver

from npu_codemod.codemods.prematch import SELF, leaf_key, quick_check
from npu_codemod.plugins.manager import load_plugins

SAMPLES = sorted((Path(__file__).parent / "sample_projects").rglob("*.py"))
EXTRA = '''
import tensorflow as tf
from tensorflow.keras.layers import Dropout
from tensorflow.contrib.data import map_and_batch
ds = tf.data.TFRecordDataset(f).map(g).batch(32).prefetch(1)
ds = ds.apply(map_and_batch(parse, 32))
y = tf.nn.dropout(x, rate=0.1); z = Dropout(0.5)(y)
config = tf.ConfigProto(allow_soft_placement=False)
config.graph_options.rewrite_options.remapping = RewriterConfig.ON
config.graph_options.rewrite_options.auto_mixed_precision = RewriterConfig.ON
config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
with tf.Session(config=config) as sess, tf.train.MonitoredTrainingSession() as mon:
    assert num_written_lines == num_actual_predict_examples
model.compile(optimizer=opt, loss="mse"); model.fit(x, y); estimator.train(input_fn)
session_config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
session_config.device_filters += ["/job:ps"]
session_config.device_filters.extend(["/job:ps"])
'''
PATTERNS = sorted({rule.pattern for rule in load_plugins().rules() if rule.pattern})
EXTRA_PATTERNS = [
    "power< NAME trailer< '(' [any] ')' > any* >",
    "( trailer< '.' ('a' | 'b') > | atom< '(' any ')' > | expr_stmt< any '=' any > )",
    "power< any* trailer< '.' 'x' > >",
    "power< any* trailer< '.' ('a' | 'b') > (trailer< '(' any ')' >) >",
    "power< [any] ('x' any) trailer< '[' any ']' > >",
    "import_from< 'from' any 'import' ['('] any [')'] >",
]


@lru_cache(maxsize=1)
def _trees() -> list[pytree.Node]:
    parser = driver.Driver(pygram.python_grammar_no_print_and_exec_statement,
                           convert=pytree.convert)
    texts = [EXTRA] + [path.read_text(encoding="utf-8") for path in SAMPLES]
    return [parser.parse_string(text) for text in texts]


@pytest.mark.parametrize("source", PATTERNS + EXTRA_PATTERNS)
def test_quick_check_accepts_every_match(source: str) -> None:
    pattern = PatternCompiler().compile_pattern(source)
    check = quick_check(pattern)
    matched = 0
    for tree in _trees():
        for node in tree.pre_order():
            if pattern.match(node, {}):
                matched += 1
                assert check is None or check(node), f"{source!r} check rejects {str(node)!r}"
    assert matched or source in EXTRA_PATTERNS


def test_quick_check_rejects_cheaply_what_cannot_match() -> None:
    pattern = PatternCompiler().compile_pattern("power< NAME trailer< '(' [any] ')' > any* >")
    check = quick_check(pattern)
    tree = _trees()[0]
    powers = [node for node in tree.pre_order() if node.type == pygram.python_symbols.power]
    assert check is not None
    assert {str(node).strip() for node in powers if check(node)} >= {"Dropout(0.5)(y)"}
    assert not check(next(p for p in powers if str(p).strip() == "tf.data.TFRecordDataset(f).map(g).batch(32).prefetch(1)"))


def test_quick_check_pins_down_the_children_after_an_open_part() -> None:
    pattern = PatternCompiler().compile_pattern(
        "power< any* trailer< '.' ('setdefault' | 'putenv') > trailer< '(' arglist ')' > >")
    check = quick_check(pattern)
    tree = _trees()[0]
    powers = {str(node).strip(): node for node in tree.pre_order() if node.type == pygram.python_symbols.power}
    assert check is not None
    assert not check(powers["tf.data.TFRecordDataset(f).map(g).batch(32).prefetch(1)"])  # .prefetch
    assert not check(powers["session_config.device_filters.extend([\"/job:ps\"])"])  # one argument
    assert check(parse_power("os.environ.setdefault(name, value)"))


def parse_power(source: str) -> pytree.Base:
    """The expression ``source``, parsed."""
    tree = driver.Driver(pygram.python_grammar_no_print_and_exec_statement,
                         convert=pytree.convert).parse_string(source + "\n")
    return tree.children[0].children[0]


@pytest.mark.parametrize("source", PATTERNS + EXTRA_PATTERNS)
def test_leaf_key_holds_for_every_match(source: str) -> None:
    """A node a pattern matches has, where its key says, a leaf with one of the key's names."""
    pattern = PatternCompiler().compile_pattern(source)
    for tree in _trees():
        for node in tree.pre_order():
            key = leaf_key(pattern, node.type)
            if key is None or not pattern.match(node, {}):
                continue
            index, names = key
            leaf = node if index == SELF else node.children[index]
            assert getattr(leaf, "value", None) in names, f"{source!r} key {key} misses {str(node)!r}"


def test_leaf_key_names_only_what_a_pattern_pins_down() -> None:
    compile_pattern = PatternCompiler().compile_pattern
    symbols, tokens = pygram.python_symbols, pygram.token
    either = compile_pattern("( trailer< '.' 'a' > | trailer< '.' ('b' | 'c') > | power< NAME any* > )")
    assert leaf_key(either, symbols.trailer) == (1, frozenset("abc"))
    assert leaf_key(either, symbols.power) is None  # NAME: any name
    assert leaf_key(compile_pattern("name=('x' | 'y')"), tokens.NAME) == (SELF, frozenset("xy"))
    assert leaf_key(compile_pattern("trailer< '.' NAME >"), symbols.trailer) is None  # '.' is no name
    assert leaf_key(compile_pattern("( trailer< '.' 'a' > | any )"), symbols.trailer) is None
