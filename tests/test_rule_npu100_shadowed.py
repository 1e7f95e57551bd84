"""NPU100 api-support: a name a function binds itself is not the module's import. A CTR model
class imports ``batch_norm`` from ``tf.contrib`` and takes a ``batch_norm=0`` switch in its
constructor: only the calls of the imported function are uses."""

from __future__ import annotations

import ast
from typing import Optional

import pytest

from npu_codemod.codemods import ast_handover
from npu_codemod.codemods.engine import SELECTIVE, Engine
from npu_codemod.codemods.local_names import module_known_reads, moved_reads, shadowed_reads
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.testing import assert_reports

from support.audit import AUDIT, audit_messages, counted, deprecated

ALL_RULES = load_plugins().rules()
BATCH_NORM = "tf.contrib.layers.python.layers.batch_norm"

CTR_MODEL = '''\
import tensorflow as tf
from tensorflow.contrib.layers.python.layers import batch_norm as batch_norm


class CtrModel(object):
    def __init__(self, field_size, batch_norm=0, batch_norm_decay=0.995):
        self.field_size = field_size
        self.batch_norm = batch_norm
        self.batch_norm_decay = batch_norm_decay

    def batch_norm_layer(self, x, train_phase, scope_bn):
        bn_train = batch_norm(x, decay=self.batch_norm_decay, is_training=True, scope=scope_bn)
        bn_inference = batch_norm(x, decay=self.batch_norm_decay, is_training=False,
                                  reuse=True, scope=scope_bn)
        return tf.cond(train_phase, lambda: bn_train, lambda: bn_inference)
'''


def test_a_constructor_parameter_named_like_the_import_is_no_use() -> None:
    findings = assert_reports(AUDIT, CTR_MODEL, findings=[
        ("NPU100", 12, 19, "unmigrated"), ("NPU100", 13, 23, "unmigrated")])
    assert audit_messages(findings) == [(12, deprecated(BATCH_NORM)), (13, deprecated(BATCH_NORM))]


SCOPES = '''\
import tensorflow as tf
from tensorflow.contrib.layers import batch_norm


def make_norm(batch_norm=batch_norm):
    def norm(x):
        return batch_norm(x)
    return norm


def global_norm(x):
    global batch_norm
    return batch_norm(x)


def assigned_later(x):
    y = batch_norm(x)
    batch_norm = None
    return y


class Net(object):
    batch_norm = batch_norm

    def build(self, x):
        return batch_norm(x)


norms = [batch_norm(v) for batch_norm in [batch_norm] for v in (1,)]
pick = lambda x, bn=batch_norm: (lambda batch_norm: batch_norm(x))(bn)
'''


def test_a_name_is_the_import_wherever_python_reads_it_from_the_module() -> None:
    """A default, a ``global`` name, a class body that has not bound it yet, a method (which
    does not see its class's bindings), a comprehension's first iterable: the import; a name
    the function assigns (it may be an alias of an API there: left as found). An enclosing
    function's parameter, a comprehension's target, a lambda's parameter: not."""
    assert_reports(AUDIT, SCOPES, findings=[
        ("NPU100", 5, 25, "unmigrated"), ("NPU100", 13, 11, "unmigrated"),
        ("NPU100", 17, 8, "unmigrated"), ("NPU100", 23, 17, "unmigrated"), ("NPU100", 26, 15, "unmigrated"),
        ("NPU100", 29, 42, "unmigrated"), ("NPU100", 30, 20, "unmigrated")])


REGULARIZERS = '''\
import tensorflow as tf


def regularizers(weight_decay, bias_decay):
    weights_regularizer = tf.contrib.layers.l2_regularizer(weight_decay)
    if bias_decay:
        biases_regularizer = weights_regularizer
    else:
        biases_regularizer = tf.no_regularizer
    return dict(weights_regularizer=weights_regularizer, biases_regularizer=biases_regularizer)


def model_fn(features, labels, mode):
    def computation():
        mode = tf.estimator.ModeKeys.PREDICT
        return build(features, labels, mode)
    return computation() if mode == "infer" else build(features, labels, mode)
'''


def test_a_name_a_function_binds_to_an_api_value_is_still_its_alias() -> None:
    """``biases_regularizer = tf.no_regularizer`` in a function, then read there: the read is
    the alias's, a use; ``mode`` read in ``computation``, which binds it to
    ``ModeKeys.PREDICT``, too; ``mode`` read in ``model_fn``, whose parameter it is, not."""
    assert shadowed_reads(REGULARIZERS, ast.parse(REGULARIZERS), frozenset({"biases_regularizer", "mode"})) == {(17, 28), (17, 73)}


def test_a_rewritten_file_counts_no_shadowed_read_either() -> None:
    """The counts of a file a rule rewrote come from its text as written: the constructor's
    ``batch_norm`` is no site there either (before: 3 deprecated sites, 2 findings)."""
    source = CTR_MODEL + "\n\ndef deep(x, keep_prob):\n    return tf.nn.dropout(x, keep_prob)\n"
    sites = counted(AUDIT | {"NPU001", "NPU004"}, source)
    assert sites[("tf.contrib.layers", "deprecated", False)] == 2


def test_a_handed_over_file_is_not_parsed_again_for_its_shadowed_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The repository analysis's ``ast`` said which reads are the constructor's parameter
    (``Handover.known_reads``): the engine drops them without parsing the file, nor its
    rewrite (whose rewritten lines spell no parameter), and reports as without a record."""
    source = CTR_MODEL + "\n\ndef deep(x, keep_prob):\n    return tf.nn.dropout(x, keep_prob)\n"
    engine = Engine(ALL_RULES, SELECTIVE)
    ast_handover.clear()
    without = engine.process(source.encode("utf-8"), "model.py", "repo")
    engine.hand_over("model.py", source)
    parsed: list[str] = []
    real_parse = ast.parse

    def counted(text, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(text)
        return real_parse(text, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted)
    with_it = engine.process(source.encode("utf-8"), "model.py", "repo")
    monkeypatch.undo()
    assert with_it == without and without.new_data is not None
    assert not any("batch_norm=0" in text for text in parsed)


def test_a_rewrite_that_spells_a_parameter_name_is_read_again() -> None:
    """The reads the original's ``ast`` found move with the lines a rewrite kept, unless a line
    it wrote or replaced spells a name the module takes as a parameter (or ``def``...)."""
    known = module_known_reads(CTR_MODEL, ast.parse(CTR_MODEL), {"tf", "batch_norm"})
    assert known.taken == {"batch_norm"} and known.reads == {(8, 26)}
    lines = CTR_MODEL.split("\n")
    origin: list[Optional[int]] = [None, None, *range(1, len(lines) + 1)]
    moved = moved_reads(known, CTR_MODEL, "# header\n" + CTR_MODEL, origin)
    assert moved is not None and moved.reads == {(9, 26)}
    for written in ("x = batch_norm\n", "f = lambda y: y\n"):
        assert moved_reads(known, CTR_MODEL, written + CTR_MODEL, origin) is None
    # a parameter a rewrite wrote on a line of its own, under a ``def`` line it kept
    original = "import tensorflow as tf\n\n\ndef add(a,\n        b):\n    return tf.add(a, b)\n"
    known = module_known_reads(original, ast.parse(original), {"tf"})
    assert known.taken == set() and known.reads == set()
    written = original.replace("        b)", "        tf)")
    assert moved_reads(known, original, written, [None, 1, 2, 3, 4, None, 6, 7]) is None
    assert moved_reads(known, original, original, [None, 1, 2, 3, 4, 5, 6, 7]) == known
