"""NPU010: sessions that escape without being returned or stored (issue 25, items 5 and 6).

A session made the default outside a ``with`` (``sess.__enter__()``,
``sess.as_default().__enter__()``, an ``as_default()`` context entered by hand) stays reachable
through ``tf.get_default_session()``: helpers of other modules (``U.initialize()``,
``U.save_variables(path)``) run on it after its last use by name. A session captured by a
closure, lambda or ``functools.partial`` that is returned keeps running after the function
ends. Both are reported, never closed. And no close is ever inserted after a statement whose
every path ends in a ``return``: it could never run.
"""

from __future__ import annotations

from npu_codemod.codemods.rule import guide_note
from npu_codemod.plugins.rules.sess_run.npu010_session_close import SessionClose

from support.rules import assert_migrates, assert_unchanged, run_rules, sites

RULES = {"NPU010"}
CLOSE = "call close() on this session when training ends"
GUIDE = guide_note(SessionClose())
DEFAULT = ("is made the default session outside a 'with', so code anywhere may still fetch it "
           "through tf.get_default_session()")

DQN_SCRIPT = '''"""Train a deep Q-network on an Atari game.

The graph helpers (``U.initialize``, ``U.save_variables``) run on the default session, which
``learn`` enters once and never leaves.
"""
import argparse
import os
import time

import numpy as np
import tensorflow as tf

from rl.common import tf_util as U
from rl.common.atari_wrappers import make_atari, wrap_deepmind
from rl.deepq import models
from rl.deepq.replay_buffer import ReplayBuffer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="BreakoutNoFrameskip-v4")
    parser.add_argument("--steps", type=int, default=int(1e7))
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--save-dir", default="/tmp/dqn")
    return parser.parse_args()


def epsilon_at(step, total):
    """Linear decay from 1.0 to 0.01 over the first tenth of training."""
    fraction = min(float(step) / (0.1 * total), 1.0)
    return 1.0 + fraction * (0.01 - 1.0)


def learn(env, args):
    sess = tf.Session(config=U.make_config(args.threads))
    sess.__enter__()

    act, train, update_target = models.build_train(
        q_func=models.cnn_to_mlp(convs=[(32, 8, 4), (64, 4, 2), (64, 3, 1)], hiddens=[256]),
        num_actions=env.action_space.n,
        optimizer=tf.train.AdamOptimizer(learning_rate=1e-4),
    )
    replay = ReplayBuffer(50000)
    saver = U.CheckpointSaver(sess, args.save_dir)
    U.initialize()
    update_target()

    obs = env.reset()
    started = time.time()
    for step in range(args.steps):
        action = act(np.array(obs)[None], update_eps=epsilon_at(step, args.steps))[0]
        new_obs, reward, done, _ = env.step(action)
        replay.add(obs, action, reward, new_obs, float(done))
        obs = env.reset() if done else new_obs
        if step > 10000 and step % 4 == 0:
            train(*replay.sample(32))
        if step % 1000 == 0:
            update_target()
            print("step %d, %.1f steps/s" % (step, step / (time.time() - started + 1e-8)))
            saver.save(step)
    U.save_variables(os.path.join(args.save_dir, "model.pkl"))
    return act


if __name__ == "__main__":
    arguments = parse_args()
    learn(wrap_deepmind(make_atari(arguments.env)), arguments)
'''


def test_a_session_entered_by_hand_is_reported_not_closed() -> None:
    """``U.save_variables`` and ``act`` run on the default session after its last use by name
    (and ``saver``, built with it): a close after the block would break them."""
    findings = assert_unchanged(DQN_SCRIPT, RULES)
    assert [(f.line, f.column, f.status, f.message) for f in findings] == [
        (35, 11, "unmigrated", f"{CLOSE} (sess {DEFAULT} (sess.__enter__())){GUIDE}"),
    ]


def test_as_default_entered_by_hand_in_the_main_block() -> None:
    source = DQN_SCRIPT.replace(
        '    sess = tf.Session(config=U.make_config(args.threads))\n    sess.__enter__()\n\n', ''
    ).replace(
        "U.CheckpointSaver(sess, ", "U.CheckpointSaver(tf.get_default_session(), "
    ).replace(
        '    arguments = parse_args()\n',
        '    arguments = parse_args()\n'
        '    sess = tf.Session(config=U.make_config(arguments.threads))\n'
        '    sess.as_default().__enter__()\n',
    )
    findings = assert_unchanged(source, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (64, "unmigrated", f"{CLOSE} (sess {DEFAULT} (sess.as_default().__enter__()); close it at "
                           f"the end of the 'if __name__ == \"__main__\":' block (line 66)){GUIDE}"),
    ]


EVALUATOR = '''"""Evaluate checkpoints as they appear, on one long-lived default session."""
import contextlib

import tensorflow as tf

from rl.common import tf_util as U
from rl.evaluation import episodes


def evaluate_forever(env, policy_fn, checkpoint_dir):
    sess = tf.Session()
    default = sess.as_default()
    default.__enter__()
    policy = policy_fn(env.observation_space, env.action_space)
    sess.run(tf.global_variables_initializer())
    for checkpoint in tf.train.checkpoints_iterator(checkpoint_dir):
        U.load_variables(checkpoint)
        print(checkpoint, episodes.mean_return(env, policy, n=10))


def evaluate_once(env, policy_fn, checkpoint):
    with contextlib.ExitStack() as stack:
        sess = tf.Session()
        stack.enter_context(sess.as_default())
        policy = policy_fn(env.observation_space, env.action_space)
        sess.run(tf.global_variables_initializer())
        U.load_variables(checkpoint)
        score = episodes.mean_return(env, policy, n=10)
    return score
'''


def test_a_default_context_entered_by_hand_or_by_an_exit_stack() -> None:
    findings = assert_unchanged(EVALUATOR, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (11, "unmigrated", f"{CLOSE} (sess {DEFAULT} (default.__enter__())){GUIDE}"),
        (23, "unmigrated", f"{CLOSE} (sess {DEFAULT} (stack.enter_context(sess.as_default()))){GUIDE}"),
    ]


def test_a_with_as_default_block_is_still_closed_after() -> None:
    """The contrast: ``with sess.as_default():`` leaves the default session at its end."""
    before = EVALUATOR.replace(
        "    default = sess.as_default()\n    default.__enter__()\n    policy = policy_fn(",
        "    with sess.as_default():\n        policy = policy_fn(",
    ).replace(
        "    sess.run(tf.global_variables_initializer())\n    for checkpoint",
        "        sess.run(tf.global_variables_initializer())\n        for checkpoint",
    ).replace(
        "        U.load_variables(checkpoint)\n        print(",
        "            U.load_variables(checkpoint)\n            print(",
    )
    after = before.replace("policy, n=10))\n", "policy, n=10))\n    sess.close()\n", 1)
    findings = assert_migrates(before, after, RULES)
    assert sites(findings)[0] == ("NPU010", 11, 11, "migrated")


DECODER = '''"""Interactive decoding with a trained sequence-to-sequence model."""
import functools

import tensorflow as tf

from seq2seq import model_helper, vocab


def make_decode_fn(sess, model, vocab_table):
    """A function mapping a sentence to its translation, on ``sess``."""
    def decode(sentence):
        ids = sess.run(model.sample_ids, {model.source: [vocab_table.encode(sentence)]})
        return vocab_table.decode(ids[0])
    return decode


def restore(sess, checkpoint):
    saver = tf.train.Saver()
    saver.restore(sess, checkpoint)
    print("restored", checkpoint)


def load_decoder(hparams, checkpoint):
    vocab_table = vocab.load(hparams.vocab_file)
    model = model_helper.build_infer_model(hparams, vocab_table.size)
    sess = tf.Session()
    with sess.as_default():
        restore(sess, checkpoint)
        return make_decode_fn(sess, model, vocab_table)


def load_scorer(hparams, checkpoint):
    graph = tf.Graph()
    with graph.as_default():
        model = model_helper.build_eval_model(hparams)
        sess = tf.Session(graph=graph)
        restore(sess, checkpoint)
        score = functools.partial(sess.run, model.loss)
    return score


def load_sampler(hparams, checkpoint, temperature):
    model = model_helper.build_infer_model(hparams, None)
    sess = tf.Session()
    restore(sess, checkpoint)
    sample = functools.partial(model_helper.sample, sess, model, temperature=temperature)
    return sample


def load_beam_search(hparams, checkpoint):
    model = model_helper.build_infer_model(hparams, None)
    sess = tf.Session()
    with sess.as_default():
        restore(sess, checkpoint)
        return lambda sentence: model_helper.beam_search(sess, model, sentence)
'''


def test_sessions_captured_by_returned_closures_and_partials_are_reported() -> None:
    """Each function hands out something that runs the session after it returns: no close,
    neither after the ``with`` whose body returns nor before the returns."""
    findings = assert_unchanged(DECODER, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (26, "unmigrated", f"{CLOSE} (sess is captured by make_decode_fn() (a closure or partial "
                           f"that runs it later), whose result is returned){GUIDE}"),
        (36, "unmigrated", f"{CLOSE} (sess is kept by its bound method run){GUIDE}"),
        (44, "unmigrated", f"{CLOSE} (sample (built with sess) is a closure or partial that runs "
                           f"the session later, and it is returned){GUIDE}"),
        (52, "unmigrated", f"{CLOSE} (sess is used in a nested function){GUIDE}"),
    ]


def test_a_closure_factory_of_another_module_gets_no_close_after_the_return() -> None:
    """``make_decode_fn`` imported: what it keeps is not seen, so its result holds the session
    and the return is a use of it; nothing can follow the ``with`` that returns."""
    source = DECODER.replace("from seq2seq import model_helper, vocab\n",
                             "from seq2seq import model_helper, vocab\n"
                             "from seq2seq.inference import make_decode_fn\n")
    start = source.index("def make_decode_fn(")
    source = source[:start] + source[source.index("def restore("):]
    findings = assert_unchanged(source, RULES)
    assert [(f.line, f.status, f.message) for f in findings if f.line < 25] == [
        (19, "unmigrated", f"{CLOSE} (sess is used up to line 20, a statement whose every path "
                           "ends in a return/raise/break/continue, so no close can follow it; "
                           f"close it before each of those by hand){GUIDE}"),
    ]


EXPORTER = '''"""Export a trained classifier: freeze its graph and write the labels beside it."""
import os

import tensorflow as tf

from classifier import model


def freeze(checkpoint, output_dir, labels):
    graph = tf.Graph()
    with graph.as_default():
        logits = model.inference(tf.placeholder(tf.float32, [None, 224, 224, 3], name="input"))
        tf.identity(tf.nn.softmax(logits), name="probabilities")
        saver = tf.train.Saver()
    sess = tf.Session(graph=graph)
    saver.restore(sess, checkpoint)
    with tf.gfile.GFile(os.path.join(output_dir, "labels.txt"), "w") as handle:
        handle.write("\\n".join(labels))
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), ["probabilities"])
        path = os.path.join(output_dir, "frozen.pb")
        tf.train.write_graph(frozen, output_dir, "frozen.pb", as_text=False)
        return path
'''


def test_the_close_goes_before_the_return_never_after_the_block_that_returns() -> None:
    after = EXPORTER.replace('        return path\n', '        sess.close()\n        return path\n')
    findings = assert_migrates(EXPORTER, after, RULES)
    assert [(f.line, f.status, f.message) for f in findings] == [
        (15, "migrated", "inserted 'sess.close()' before the return on line 23 (Session.close() "
                         "releases the NPU graph executor)"),
    ]
    _, again = run_rules(after, RULES)
    assert sites(again) == [("NPU010", 15, 11, "migrated")]
