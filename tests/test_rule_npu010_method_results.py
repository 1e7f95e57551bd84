"""NPU010 and the result of a method that is given the session (review round 27, c).

SeqGAN's ``generate_samples(sess, trainable_model, ...)`` does
``generated_samples.extend(trainable_model.generate(sess))``, where ``Generator.generate`` (in
``generator.py``) is ``return sess.run(self.gen_x)``: the result is numbers, not something that
holds the session. It was taken for a holder stored in a container, so the session of
``main()`` escaped and was reported instead of closed. A method whose session parameter is
only run (the repository facts ``npu010-runs-session:``) now gives a value; any method of
that name that may keep a session (``npu010-keeps-session:``) keeps the old answer.
"""

from __future__ import annotations

from typing import Optional

import pytest

from npu_codemod.codemods.findings import Finding
from npu_codemod.plugins.rules.sess_run._method_results import method_result_facts

from support.rules import run_repository

GENERATOR = '''import tensorflow as tf


class Generator(object):
    def __init__(self, num_emb, batch_size):
        self.gen_x = tf.zeros([batch_size, 20], tf.int32)

    def generate(self, sess):
        outputs = sess.run(self.gen_x)
        return outputs

    def pretrain_step(self, sess, x):
        outputs = sess.run([self.pretrain_updates, self.pretrain_loss], feed_dict={self.x: x})
        return outputs
'''
SEQUENCE_GAN = '''import tensorflow as tf
from generator import Generator


def generate_samples(sess, trainable_model, batch_size, generated_num, output_file):
    generated_samples = []
    for _ in range(int(generated_num / batch_size)):
        generated_samples.extend(trainable_model.generate(sess))
    with open(output_file, 'w') as fout:
        for poem in generated_samples:
            fout.write(' '.join([str(x) for x in poem]) + '\\n')


def main():
    generator = Generator(5000, 64)
    config = tf.ConfigProto()
    sess = tf.Session(config=config)
    sess.run(tf.global_variables_initializer())
    for epoch in range(120):
        generate_samples(sess, generator, 64, 10000, 'save/eval_file.txt')
    log.close()


if __name__ == '__main__':
    main()
'''
#: A method of the same name elsewhere that keeps what it is given: unsure, still reported.
KEEPER = '''import tensorflow as tf


class Sampler(object):
    def generate(self, session):
        self.session = session
        return self
'''


def run(files: dict[str, str]) -> dict[str, tuple[Optional[str], list[Finding]]]:
    return run_repository(files, "NPU010")


def test_the_facts_name_methods_that_only_run_their_session() -> None:
    assert method_result_facts("generator.py", GENERATOR) == {
        "npu010-runs-session:generate#0:sess", "npu010-runs-session:pretrain_step#0:sess"}
    assert method_result_facts("sampler.py", KEEPER) == {"npu010-keeps-session:generate"}


def test_seqgans_session_is_closed_after_the_training_loop() -> None:
    new, findings = run({"generator.py": GENERATOR, "sequence_gan.py": SEQUENCE_GAN})["sequence_gan.py"]
    assert [(f.line, f.status) for f in findings] == [(17, "migrated")]
    assert new == "from npu_bridge.npu_init import *\n" + SEQUENCE_GAN.replace(
        "    log.close()\n", "    sess.close()\n    log.close()\n")


@pytest.mark.parametrize("files", [
    {"generator.py": GENERATOR, "sampler.py": KEEPER},  # another generate() keeps it
    {"other.py": "x = 1\n"},  # generate() is nowhere in the repository
    {"generator.py": GENERATOR.replace("return outputs", "return sess", 1)},
    {"generator.py": GENERATOR.replace("outputs = sess.run(self.gen_x)",
                                       "outputs = lambda: sess.run(self.gen_x)")},
], ids=["another-keeps", "unknown", "returned", "closure"])
def test_a_method_that_may_keep_the_session_still_holds_it(files: dict[str, str]) -> None:
    new, findings = run({**files, "sequence_gan.py": SEQUENCE_GAN})["sequence_gan.py"]
    assert new is None
    assert [(f.line, f.status) for f in findings] == [(17, "unmigrated")]
    assert "trainable_model.generate()" in findings[0].message
