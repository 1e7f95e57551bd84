"""A rerun over the migrated branch decides what the first run decided: the same file kinds,
the same runtime, the same sites per rule and the same readiness, with both TF 2.x packs on.
The TF 2.x adapter's calls the packs write (``npu.open().as_default()``,
``npu.distribute.all_reduce``...) are no signal of a file's own code: before, NPU068's
``all_reduce`` made a ``tf-neutral`` file ``tf2`` on the rerun (NPU067 then reported one more
site: MusicTransformer's model.py, whose ``tf`` comes through ``from custom.layers import *``),
NPU061's device init did so to a ``tf-neutral`` entry (train.py here), and ``all_reduce`` made
an undetermined repository TF 2.x (its "undetermined" finding went, its ``tf-neutral`` files
changed treatment). Through the CLI, on real git repositories."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support.cli import cli
from support.git import git, make_repo
from support.tf2_scripts import (
    CUSTOM_LOOP,
    KERAS_FIT,
    KERAS_WORKERS,
    MIRRORED_LOOP,
    MIXED_PRECISION_LOOP,
    OWN_TRAIN_STEP,
)

BRANCH = "npu-codemod/sess-run-to-npu"
RULES = ("--rules", "default,tf2-distributed")
LAYERS = '''"""The transformer's layers."""
import math

import numpy as np
import tensorflow as tf
from tensorflow.python import keras


def sinusoid(max_seq, embedding_dim):
    return np.array([[[math.sin(pos * math.exp(-math.log(10000) * i / embedding_dim))
                       for i in range(embedding_dim)] for pos in range(max_seq)]])


class Dense(keras.layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.inner = keras.layers.Dense(units)

    def call(self, x):
        return self.inner(x)
'''
MODEL = '''"""The model and its training step (MusicTransformer-shaped)."""
from custom.layers import *
import sys
from tensorflow.python import keras


class Transformer(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = Dense(4)

    def call(self, x):
        return self.dense(x)

    def train_on_batch(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.call(x) - y))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return loss


if __name__ == "__main__":
    model = Transformer()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3))
    for step in range(int(sys.argv[1])):
        model.train_on_batch(tf.random.uniform([8, 4]), tf.zeros([8, 4]))
'''
TRAIN = '''"""Trains the transformer on the preprocessed MIDI events."""
import argparse

from custom.layers import *
from model import Transformer
from tensorflow.python.keras.optimizer_v2.adam import Adam


def batches(path, batch_size):
    events = np.load(path)
    dataset = tf.data.Dataset.from_tensor_slices((events[:, :-1], events[:, 1:]))
    return dataset.shuffle(1000).batch(batch_size)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="events.npy")
    args = parser.parse_args()
    model = Transformer()
    model.compile(optimizer=Adam(1e-4))
    for x, y in batches(args.data, 2):
        model.train_on_batch(x, y)
'''
MUSIC = {"requirements.txt": "tensorflow-gpu==2.0.0b1\n", "custom/__init__.py": "", "custom/layers.py": LAYERS,
         "model.py": MODEL, "train.py": TRAIN, "tests/test_layers.py": "from custom.layers import *\n"}
#: The tf2 scripts of the golden tests, each alone in a repository, without and with a pin.
SCRIPTS = {"loop": CUSTOM_LOOP, "fit": KERAS_FIT, "mirrored": MIRRORED_LOOP, "workers": KERAS_WORKERS,
           "own-step": OWN_TRAIN_STEP, "scaled": MIXED_PRECISION_LOOP}
PINS = {"": {}, "-pinned": {"requirements.txt": "tensorflow==2.6.0\n"}}


def _runs(root: Path, repos: dict[str, dict[str, str]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """run.json's records by repository: the first run, and a rerun over its branch."""
    for name, files in repos.items():
        make_repo(root / name, files)
    (root / "repos.txt").write_text("".join(f"{name}\n" for name in repos))
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *RULES, cwd=root, expect=0)
    (root / "again.txt").write_text("".join(f"{name} {BRANCH}\n" for name in repos))
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *RULES,
        cwd=root, expect=0)
    first, rerun = ({record["repo"]: record for record in json.loads((root / report / "run.json").read_text())["repos"]}
                    for report in ("one", "two"))
    return first, rerun


def _figures(record: dict[str, Any]) -> dict[str, Any]:
    """What a rerun must report as the first run did: kinds, sites per rule, readiness."""
    done = {"migrated": "done", "compliant": "done"}
    return {"kinds": record["file_kinds"], "readiness": record["api_readiness"], "verdict": record["verdict"],
            "sites": Counter((f["rule_id"], done.get(f["status"], f["status"])) for f in record["findings"])}


def test_a_neutral_files_custom_loop_is_all_reduced_once_and_keeps_its_kind(tmp_path: Path) -> None:
    first, rerun = _runs(tmp_path, {"music": MUSIC})
    before, after = first["music"], rerun["music"]
    # model.py: tf through the star; train.py trains model.py's Keras model (E)
    assert before["file_kinds"] == {"tf2": 2, "tf-neutral": 1, "non-tf": 1}
    model = git(tmp_path / "music", "show", f"{BRANCH}:model.py")
    assert 'gradients = npu.distribute.all_reduce(gradients, "mean")' in model
    assert after["status"] == "unchanged" and after["files_changed"] == []
    assert _figures(after) == _figures(before)
    assert _figures(before)["sites"][("NPU068", "done")] == 1


@pytest.fixture(scope="module")
def single_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    repos = {name + pinned: {f"{name.replace('-', '_')}.py": script, **pin}
             for name, script in SCRIPTS.items() for pinned, pin in PINS.items()}
    return _runs(tmp_path_factory.mktemp("single"), repos)


@pytest.mark.parametrize("name", [name + pinned for name in SCRIPTS for pinned in PINS])
def test_a_single_tf2_script_reports_the_same_figures_on_a_rerun(
        single_files: tuple[dict[str, Any], dict[str, Any]], name: str) -> None:
    first, rerun = single_files
    assert rerun[name]["files_changed"] == []
    assert _figures(rerun[name]) == _figures(first[name])


COMPAT_EVALUATION = '''"""Evaluates a checkpoint with compat.v1 sessions; callers may leave the config out."""
import tensorflow as tf


def evaluate_once(checkpoint, eval_ops, config=None):
    creator = tf.compat.v1.train.ChiefSessionCreator(checkpoint_filename_with_path=checkpoint, config=config)
    with tf.compat.v1.train.MonitoredSession(session_creator=creator) as session:
        return session.run(eval_ops)


def run_plain(fetches):
    with tf.compat.v1.Session() as sess:
        return sess.run(fetches)
'''


def test_a_compat_files_none_guard_is_compat_v1_code_the_rerun_accepts(tmp_path: Path) -> None:
    """The copy NPU007 makes of ``config=None`` is a ``tf.compat.v1.ConfigProto()`` in a ``tf2-compat``
    file that imports ``tensorflow as tf``: ``tf.ConfigProto()`` raised on TF 2.x, and the rerun
    called the file a conflict ("TF 1.x-only API tf.ConfigProto"), its findings gone."""
    first, rerun = _runs(tmp_path, {"evaluation": {"requirements.txt": "tensorflow==2.6.0\n",
                                                   "evaluate.py": COMPAT_EVALUATION}})
    before, after = first["evaluation"], rerun["evaluation"]
    written = git(tmp_path / "evaluation", "show", f"{BRANCH}:evaluate.py")
    assert ("    npu_config = copy.deepcopy(config) if config is not None else tf.compat.v1.ConfigProto()\n"
            in written)
    assert "tf.ConfigProto" not in written
    assert before["file_kinds"] == {"tf2-compat": 1}
    assert "conflict" not in after["file_kinds"]
    assert after["status"] == "unchanged" and after["files_changed"] == []
    assert _figures(after) == _figures(before)
    assert _figures(before)["sites"] == Counter({("NPU007", "done"): 3, ("NPU062", "done"): 1})
