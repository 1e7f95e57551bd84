"""``npu-codemod check`` reads a repository the same wherever it runs from: ``check DIR`` from
outside DIR, ``check /abs/DIR`` and ``check ..`` from a subfolder give the sites ``check .``
gives at the top, spelled with the paths the user named. Module names come from paths relative
to the repository's top (``from nets import build_model`` is ``nets/__init__.py``): keyed by the
path as named (``proj/nets/...``), the package's builder was not found and NPU067 asked the
caller for a second broadcast. A pre-commit hook names only files: the repository's pins are
read from its work tree, as ``run`` reads them."""

from __future__ import annotations

from pathlib import Path

from support.cli import check_lines as check
from support.git import make_repo

ZOO = '''\
import tensorflow as tf


def resnet(num_classes):
    inputs = tf.keras.Input(shape=(32, 32, 3))
    x = tf.keras.layers.GlobalAveragePooling2D()(tf.keras.layers.Conv2D(16, 3)(inputs))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(num_classes)(x))
'''
FACTORY = '''\
"""Build the model the config names."""
import tensorflow as tf


def build_model(cfg):
    inputs = tf.keras.Input(shape=(4,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(cfg.classes)(inputs))
    return model
'''
TRAIN = '''\
"""Train the configured model."""
import argparse

import tensorflow as tf

from nets import build_model


def main(args):
    ds = tf.data.Dataset.from_tensor_slices((tf.zeros([8, 4]), tf.zeros([8])))
    model = build_model(args)
    model.compile(optimizer="adam", loss="mse")
    model.fit(ds.batch(4), epochs=args.epochs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    main(parser.parse_args())
'''
FILES = {"nets/__init__.py": "from nets.factory import build_model\n", "nets/zoo.py": ZOO,
         "nets/factory.py": FACTORY, "train.py": TRAIN, "requirements.txt": "tensorflow==2.12.0\n"}
AT_TOP = [
    "nets/factory.py:7:5: NPU067 [fixable] add npu.distribute.broadcast(model.trainable_variables) after "
    "the model is built",
]


def _ours(lines: list[str]) -> list[str]:
    """NPU067's lines (the one rule whose answer depends on reading the package's builder)."""
    return [line for line in lines if " NPU067 " in line]


def test_the_top_of_the_repository_is_the_reference(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", FILES)
    assert _ours(check(repo, "--rules", "tf2,tf2-distributed", ".", expect=1)) == AT_TOP


def test_a_folder_named_from_outside_reads_its_imports_from_its_top(tmp_path: Path) -> None:
    make_repo(tmp_path / "proj", FILES)
    lines = check(tmp_path, "--rules", "tf2,tf2-distributed", "proj", expect=1)
    assert _ours(lines) == ["proj/" + line for line in AT_TOP]


def test_an_absolute_folder_and_a_parent_folder_are_spelled_as_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", FILES)
    absolute = check(tmp_path, "--rules", "tf2,tf2-distributed", str(repo), expect=1)
    assert _ours(absolute) == [f"{repo}/{line}" for line in AT_TOP]
    parent = check(repo / "nets", "--rules", "tf2,tf2-distributed", "..", expect=1)
    assert _ours(parent) == ["../" + line for line in AT_TOP]


def test_a_folder_that_is_no_git_work_tree_is_its_own_top(tmp_path: Path) -> None:
    for name, text in FILES.items():
        (tmp_path / "proj" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / name).write_text(text)
    lines = check(tmp_path, "--rules", "tf2,tf2-distributed", "proj", expect=1)
    assert _ours(lines) == ["proj/" + line for line in AT_TOP]


def test_files_of_a_subfolder_named_from_outside_are_keyed_from_the_work_tree(tmp_path: Path) -> None:
    make_repo(tmp_path / "proj", FILES)
    lines = check(tmp_path, "--rules", "tf2,tf2-distributed", "proj/train.py", "proj/nets", expect=1)
    assert _ours(lines) == ["proj/" + line for line in AT_TOP]


def test_files_alone_read_the_pins_of_their_work_tree(tmp_path: Path) -> None:
    """``check train.py nets/...`` (a pre-commit hook's changed files) knows the repository
    pins TF 2.x: no "version undetermined" line, the same NPU067 site as ``check .``."""
    repo = make_repo(tmp_path / "proj", FILES)
    files = ["train.py", "nets/__init__.py", "nets/zoo.py", "nets/factory.py"]
    lines = check(repo, "--rules", "tf2,tf2-distributed", *files, expect=1)
    assert not [line for line in lines if "undetermined" in line]
    assert _ours(lines) == AT_TOP
