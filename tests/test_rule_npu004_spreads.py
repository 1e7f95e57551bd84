"""NPU004 and ``*args``/``**kwargs`` it cannot see into (issue 25, item 3).

``tf.nn.dropout(x, keep_prob, **kwargs)`` may get ``noise_shape`` (or ``rate``) through
``kwargs``: such a call is reported like one that spells ``noise_shape=``, unless the
function provably never puts either there (a dict display or ``dict(...)`` with literal keys,
bound once, changed only through literal keys).
"""

from __future__ import annotations

from support.rules import assert_migrates, run_rules

RULES = {"NPU004"}
INIT = "from npu_bridge.npu_init import *\n"
GUIDE = (" (guide: Model building, loss computation and gradient update: tf.nn.dropout, "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu004-nn-dropout)")
SPREAD = ("{} may hold noise_shape= (or rate=, which npu_ops.dropout takes as keep_prob=1 - "
          "rate), and the tool cannot see what it holds: check it, then replace tf.nn.dropout "
          "with npu_ops.dropout by hand")

LAYERS = '''# coding=utf-8
"""Layers shared by the sequence models: dropout variants, normalisation, feed-forward."""
from __future__ import absolute_import, division, print_function

import functools

import tensorflow as tf

from seqlib.layers import layer_utils


def shape_list(x):
    """Static dimensions where known, dynamic ones elsewhere."""
    static = x.get_shape().as_list()
    dynamic = tf.shape(x)
    return [dynamic[i] if dim is None else dim for i, dim in enumerate(static)]


def dropout_with_broadcast_dims(x, keep_prob, broadcast_dims=None, **kwargs):
    """Like tf.nn.dropout, but the mask is shared along ``broadcast_dims``."""
    if broadcast_dims:
        shape = shape_list(x)
        ndims = len(shape)
        dims = [dim + ndims if dim < 0 else dim for dim in broadcast_dims]
        kwargs["noise_shape"] = [1 if i in dims else shape[i] for i in range(ndims)]
    return tf.nn.dropout(x, keep_prob, **kwargs)


def dropout_positional(x, *args):
    """tf.nn.dropout with whatever the caller passes: keep_prob, maybe noise_shape."""
    return tf.nn.dropout(x, *args)


def seeded_dropout(x, keep_prob, seed, scope_name="dropout"):
    """Dropout with a fixed seed, so that two towers drop the same units."""
    dropout_args = {"seed": seed}
    dropout_args["name"] = scope_name
    tf.logging.info("dropout %s", dropout_args.get("name"))
    return tf.nn.dropout(x, keep_prob, **dropout_args)


def configured_dropout(x, hparams):
    """Dropout as the hyper-parameters say, through the helper of layer_utils."""
    return tf.nn.dropout(x, hparams.keep_prob, **layer_utils.dropout_kwargs(hparams))


def layer_norm(x, epsilon=1e-6, name=None):
    with tf.variable_scope(name, default_name="layer_norm"):
        filters = shape_list(x)[-1]
        scale = tf.get_variable("scale", [filters], initializer=tf.ones_initializer())
        bias = tf.get_variable("bias", [filters], initializer=tf.zeros_initializer())
        mean = tf.reduce_mean(x, axis=[-1], keepdims=True)
        variance = tf.reduce_mean(tf.square(x - mean), axis=[-1], keepdims=True)
        return (x - mean) * tf.rsqrt(variance + epsilon) * scale + bias


def dense_relu_dense(x, filter_size, output_size, keep_prob, seed=None):
    hidden = tf.layers.dense(x, filter_size, activation=tf.nn.relu, name="conv1")
    kwargs = dict(seed=seed, name="relu_dropout")
    hidden = tf.nn.dropout(hidden, keep_prob, **kwargs)
    return tf.layers.dense(hidden, output_size, name="conv2")


def residual(x, y, hparams):
    options = dict(seed=hparams.seed)
    options.update(hparams.dropout_options)
    y = tf.nn.dropout(y, 1.0 - hparams.residual_dropout, **options)
    return layer_norm(x + y)


attention_dropout = functools.partial(dropout_with_broadcast_dims, broadcast_dims=[-2])
'''


def test_spreads_that_may_hold_noise_shape_are_reported_the_others_rewritten() -> None:
    after = LAYERS.replace(
        "print_function\n", "print_function\n" + INIT, 1
    ).replace(
        "    return tf.nn.dropout(x, keep_prob, **dropout_args)\n",
        "    return npu_ops.dropout(x, keep_prob, **dropout_args)\n",
    ).replace(
        "    hidden = tf.nn.dropout(hidden, keep_prob, **kwargs)\n",
        "    hidden = npu_ops.dropout(hidden, keep_prob, **kwargs)\n",
    )
    findings = assert_migrates(LAYERS, after, RULES)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (26, 11, "unmigrated", SPREAD.format("**kwargs") + GUIDE),
        (31, 11, "unmigrated", SPREAD.format("*args") + GUIDE),
        (39, 11, "migrated", "replaced tf.nn.dropout with npu_ops.dropout; check the model's "
                             "accuracy: the guide notes the NPU dropout may affect it"),
        (44, 11, "unmigrated", SPREAD.format("**layer_utils.dropout_kwargs(hparams)") + GUIDE),
        (60, 13, "migrated", "replaced tf.nn.dropout with npu_ops.dropout; check the model's "
                             "accuracy: the guide notes the NPU dropout may affect it"),
        (67, 8, "unmigrated", SPREAD.format("**options") + GUIDE),
    ]


def test_a_literal_key_may_still_be_noise_shape_or_rate() -> None:
    source = LAYERS.replace('    dropout_args["name"] = scope_name\n',
                            '    dropout_args["noise_shape"] = [1, 1, 512]\n'
                            ).replace('dict(seed=seed, name="relu_dropout")', 'dict(rate=0.1)')
    _, findings = run_rules(source, RULES)
    assert [(f.line, f.status, f.message) for f in findings if f.line in (39, 60)] == [
        (39, "unmigrated", "**dropout_args holds noise_shape= (keys: noise_shape, seed): check that "
                           "npu_ops.dropout supports it, then replace tf.nn.dropout with "
                           "npu_ops.dropout by hand" + GUIDE),
        (60, "unmigrated", "**kwargs holds rate= (keys: rate), which npu_ops.dropout takes as "
                           "keep_prob=1 - rate: write that, then replace tf.nn.dropout with "
                           "npu_ops.dropout by hand" + GUIDE),
    ]


def test_positional_spreads_past_keep_prob_are_reported() -> None:
    source = ("import tensorflow as tf\n\n\n"
              "def towers(inputs, keep_prob, shape):\n"
              "    first = (inputs[0], keep_prob)\n"
              "    second = [inputs[1], keep_prob, shape]\n"
              "    return tf.nn.dropout(*first), tf.nn.dropout(*second)\n")
    after = INIT + source.replace("tf.nn.dropout(*first)", "npu_ops.dropout(*first)")
    findings = assert_migrates(source, after, RULES)
    assert [(f.column, f.status) for f in findings] == [(11, "migrated"), (34, "unmigrated")]
