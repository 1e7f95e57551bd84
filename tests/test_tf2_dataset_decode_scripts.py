"""NPU064 and a library's dataset factory whose only users are other files' decoding scripts:
``for batch in Spectrograms(files).build(n)`` in a script that trains nothing would silently
skip its last ``n % batch_size`` utterances with ``drop_remainder=True``. The library's package
is named like TensorFlow's (``tensorflow_vocoder``: a repository's all the same) and re-exports
the class. Spec rules-tf2.md
NPU064: only pipelines shown to train get the rewrite; those reaching only evaluation or
inference are reported. One known use that trains keeps the rewrite (docs/rules.md: a dataset
that feeds evaluation as well as training gets the flag)."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli, repo_record
from support.git import make_repo
from support.packs import repository_facts
from support.rules import messages

SPECTROGRAMS = '''\
"""Batches of stored spectrograms (a library class)."""
import numpy as np
import tensorflow as tf


class Spectrograms:
    def __init__(self, paths):
        self.paths = paths

    def build(self, batch_size):
        ds = tf.data.Dataset.from_tensor_slices(self.paths)
        ds = ds.map(lambda p: tf.numpy_function(np.load, [p], tf.float32))
        return ds.batch(batch_size)
'''

FRAMES = '''\
"""Batches of stored frames (a library function)."""
import numpy as np
import tensorflow as tf


def frame_batches(paths, batch_size):
    ds = tf.data.Dataset.from_tensor_slices(paths)
    ds = ds.map(lambda p: tf.numpy_function(np.load, [p], tf.float32))
    return ds.batch(batch_size)


def load_renderer(path):
    return tf.keras.models.load_model(path)
'''

SYNTHESIZE = '''\
"""Turn every stored spectrogram into audio."""
import sys

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_vocoder import Spectrograms


def run(folder, batch_size):
    vocoder = tf.keras.models.load_model(folder + "/vocoder")
    loader = Spectrograms(sorted(tf.io.gfile.glob(folder + "/*.npy")))
    loader = loader.build(batch_size)
    for index, batch in enumerate(tqdm(loader)):
        np.save(f"wave-{index}.npy", vocoder(batch).numpy())


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]))
'''

RENDER = '''\
"""Render every stored frame (the script imports no TensorFlow itself)."""
import glob
import sys

import numpy as np

from tensorflow_vocoder.frames import frame_batches, load_renderer


def run(folder, batch_size):
    renderer = load_renderer(folder + "/renderer")
    for index, batch in enumerate(frame_batches(glob.glob(folder + "/*.npy"), batch_size)):
        np.save(f"image-{index}.npy", renderer(batch).numpy())


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]))
'''

FINETUNE = '''\
"""Fine-tune the renderer on stored frames."""
import sys

import tensorflow as tf

from tensorflow_vocoder.frames import frame_batches
from tensorflow_vocoder.loop import custom_loop


def tune(folder):
    renderer = tf.keras.models.load_model(folder + "/renderer")
    custom_loop(renderer, frame_batches(tf.io.gfile.glob(folder + "/*.npy"), 16))


if __name__ == "__main__":
    tune(sys.argv[1])
'''

LOOP = '''\
"""A custom training loop."""
import tensorflow as tf


def custom_loop(model, batches):
    optimizer = tf.keras.optimizers.Adam()
    for batch in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(batch) - batch))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
'''

TRAIN_SPECTROGRAMS = '''\
"""Train the vocoder on stored spectrograms."""
import sys

import tensorflow as tf

from tensorflow_vocoder import Spectrograms


def train_step(model, optimizer, batch):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(model(batch) - batch))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


def main(folder):
    model = tf.keras.Sequential([tf.keras.layers.Dense(80)])
    optimizer = tf.keras.optimizers.Adam()
    for batch in Spectrograms(tf.io.gfile.glob(folder + "/*.npy")).build(16):
        train_step(model, optimizer, batch)


if __name__ == "__main__":
    main(sys.argv[1])
'''

LIBRARY = "tensorflow_vocoder"
DECODING = {f"{LIBRARY}/__init__.py": f"from {LIBRARY}.spectrograms import Spectrograms\n",
            f"{LIBRARY}/spectrograms.py": SPECTROGRAMS, f"{LIBRARY}/frames.py": FRAMES,
            "scripts/__init__.py": "", "scripts/synthesize.py": SYNTHESIZE, "scripts/render.py": RENDER}
FLAG = "return ds.batch(batch_size, drop_remainder=True)"


def _facts(files: dict[str, str]) -> frozenset[str]:
    return repository_facts({path: text for path, text in files.items() if path.endswith(".py")}) | {"tf-runtime:2"}


def test_a_method_s_dataset_only_decoding_scripts_loop_over_is_reported_with_where() -> None:
    findings = assert_reports({"NPU064"}, SPECTROGRAMS, facts=_facts(DECODING), path=f"{LIBRARY}/spectrograms.py",
                              findings=[("NPU064", 13, 18, "unmigrated")])
    assert messages(findings, "NPU064")[0].startswith(
        "dataset returned to files that train nothing and only look at it or evaluate it "
        "(scripts/synthesize.py:15): no training pipeline, left as is (drop_remainder=True would "
        "silently leave out its last samples there)")


def test_a_function_s_dataset_only_a_decoding_script_loops_over_is_reported_with_where() -> None:
    """The script imports no TensorFlow: its loop is read all the same."""
    findings = assert_reports({"NPU064"}, FRAMES, facts=_facts(DECODING), path="tensorflow_vocoder/frames.py",
                              findings=[("NPU064", 9, 14, "unmigrated")])
    assert "(scripts/render.py:12)" in messages(findings, "NPU064")[0]


def test_a_training_loop_over_the_method_s_dataset_keeps_the_rewrite() -> None:
    facts = _facts({**DECODING, "scripts/train.py": TRAIN_SPECTROGRAMS})
    assert_migrates({"NPU064"}, SPECTROGRAMS, SPECTROGRAMS.replace("return ds.batch(batch_size)", FLAG),
                    facts=facts, path=f"{LIBRARY}/spectrograms.py", findings=[("NPU064", 13, 18, "migrated")])


def test_a_training_file_passing_the_dataset_on_keeps_the_rewrite() -> None:
    """``custom_loop`` of another file trains with it: the script that trains passes it on."""
    facts = _facts({**DECODING, "tensorflow_vocoder/loop.py": LOOP, "scripts/finetune.py": FINETUNE})
    assert_migrates({"NPU064"}, FRAMES, FRAMES.replace("return ds.batch(batch_size)", FLAG),
                    facts=facts, path="tensorflow_vocoder/frames.py", findings=[("NPU064", 9, 14, "migrated")])


def test_a_decoding_repository_gets_no_rewrite_and_both_engines_agree(tmp_path: Path) -> None:
    """The command line on the real repository, with the selective and the full engine: the
    decoding scripts' pipelines are notes, nothing changes; a second run is the same."""
    make_repo(tmp_path / "vocoder", {**DECODING, "requirements.txt": "tensorflow>=2.4\n"})
    (tmp_path / "repos.txt").write_text("vocoder\n")
    found = []
    for engine, report in (("selective", "rep"), ("full", "full"), ("selective", "again")):
        cli("run", "--repos", "repos.txt", "--report-dir", report, "--jobs", "1", "--rules", "NPU064",
            "--engine", engine, "--no-cache", cwd=tmp_path, expect=0)
        record = repo_record(tmp_path / report)
        assert record["status"] == "unchanged"
        found.append(json.dumps(sorted((f["path"], f["line"], f["status"], f["message"])
                                       for f in record["findings"] if f["rule_id"] == "NPU064")))
    assert found[0] == found[1] == found[2]
    assert [[path, line, status] for path, line, status, _ in json.loads(found[0])] == [
        ["tensorflow_vocoder/frames.py", 9, "unmigrated"], ["tensorflow_vocoder/spectrograms.py", 13, "unmigrated"]]
