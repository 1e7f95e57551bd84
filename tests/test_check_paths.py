"""``npu-codemod check`` reads a repository the same wherever it runs from: ``check DIR`` from
outside DIR, ``check /abs/DIR`` and ``check ..`` from a subfolder give the sites ``check .``
gives at the top, spelled with the paths the user named: the site's path, the paths its message
names (a pin's manifest) and a finding about the repository (at the folder named). Module
names come from paths relative to the repository's top (``from nets import build_model`` is
``nets/__init__.py``): keyed by the path as named (``proj/nets/...``), the package's builder was
not found and NPU067 asked the caller for a second broadcast. A pre-commit hook names only
files, and a sub-folder of a repository is part of it: the repository's pins are read from its
work tree, as ``run`` reads them."""

from __future__ import annotations

import os
from pathlib import Path

from npu_codemod.codemods.file_kinds import SYMLINK
from npu_codemod.orchestrator.check_paths import CheckPaths

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


#: A TF 1.x tool beside the TF 2.x code, pinned to TF 2.x by its own folder's manifest.
LEGACY = "import tensorflow as tf\nslim = tf.contrib.slim\n"
TOOL_PIN = "jax\ntensorflow-cpu==2.9.3\n"
#: No pin at the top (the repository's version is a finding about the repository), and a tool
#: folder with its own pin (a conflict whose message names that pin's manifest).
UNPINNED = {**{name: text for name, text in FILES.items() if name != "requirements.txt"},
            "tools/jaxtool/legacy.py": LEGACY, "tools/jaxtool/requirements.txt": TOOL_PIN}
RULES = ("--rules", "tf2,tf2-distributed")


def _named(top: str, line: str) -> str:
    """A line of ``check .`` at the top as ``check`` prints it when the top is named ``top``:
    its path, and the manifest its message names, under ``top``; the repository's finding at
    ``top``."""
    path, rest = line.split(":", 1)
    return (top if path == "." else f"{top}/{path}") + ":" + rest.replace("(tools/", f"({top}/tools/")


def test_a_repository_named_from_anywhere_prints_what_check_dot_prints_under_its_name(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", UNPINNED)
    inside = check(repo, *RULES, ".", expect=1)
    assert inside[0].startswith(".:1:1: NPU000 TensorFlow major version undetermined")
    assert AT_TOP[0] in inside
    assert "tools/jaxtool/legacy.py:2:8: NPU000 TF 1.x-only API tf.contrib in a repository pinned to TF 2.x " \
        "(tools/jaxtool/requirements.txt: tensorflow-cpu==2.9.3): move it to tf.compat.v1 or to the TF 2.x " \
        "API first; nothing was rewritten" in inside
    assert check(tmp_path, *RULES, "proj", expect=1) == [_named("proj", line) for line in inside]
    assert check(tmp_path, *RULES, str(repo), expect=1) == [_named(str(repo), line) for line in inside]
    assert check(repo / "tools", *RULES, "..", expect=1) == [_named("..", line) for line in inside]


def test_a_sub_folder_of_a_repository_is_read_from_the_repository_s_top(tmp_path: Path) -> None:
    """``check app`` is the package ``app`` of the repository wherever it runs: its modules are
    ``app.*`` (as its own imports say) and the repository's pins, at the work tree's top, decide
    its runtime."""
    files = {"app/" + name: text.replace("from nets", "from app.nets") for name, text in FILES.items()
             if name != "requirements.txt"}
    repo = make_repo(tmp_path / "proj", {**files, "requirements.txt": FILES["requirements.txt"]})
    at_top = check(repo, *RULES, "app", expect=1)
    assert not [line for line in at_top if "undetermined" in line]
    assert "app/" + AT_TOP[0] in at_top
    assert check(tmp_path, *RULES, "proj/app", expect=1) == ["proj/" + line for line in at_top]
    assert check(repo / "app", *RULES, ".", expect=1) == [line.replace("app/", "", 1) for line in at_top]


def test_files_named_from_outside_spell_the_pins_their_messages_name(tmp_path: Path) -> None:
    """A hook's files-only run from outside the work tree: the tool folder's pin is read from
    the work tree and named as the user reads it."""
    make_repo(tmp_path / "proj", UNPINNED)
    lines = check(tmp_path, *RULES, "proj/tools/jaxtool/legacy.py", expect=1)
    assert lines == [
        "proj/tools/jaxtool/legacy.py:2:8: NPU000 TF 1.x-only API tf.contrib in a repository pinned to TF 2.x "
        "(proj/tools/jaxtool/requirements.txt: tensorflow-cpu==2.9.3): move it to tf.compat.v1 or to the TF 2.x "
        "API first; nothing was rewritten"]


def test_files_named_from_deep_inside_are_spelled_from_there(tmp_path: Path) -> None:
    """From ``tools/jaxtool`` the tool's pin is ``requirements.txt`` and the repository, whose
    version no pin decides, is ``../..``."""
    repo = make_repo(tmp_path / "proj", UNPINNED)
    lines = check(repo / "tools" / "jaxtool", *RULES, "legacy.py", "../../train.py", expect=1)
    assert len(lines) == 2 and lines[0].startswith("../..:1:1: NPU000 TensorFlow major version undetermined")
    assert lines[1] == (
        "legacy.py:2:8: NPU000 TF 1.x-only API tf.contrib in a repository pinned to TF 2.x "
        "(requirements.txt: tensorflow-cpu==2.9.3): move it to tf.compat.v1 or to the TF 2.x "
        "API first; nothing was rewritten")


def test_paths_through_symlinks_are_keyed_from_the_top_and_spelled_as_named(tmp_path: Path) -> None:
    """``alias/proj`` (``alias`` a link to the folder holding ``proj``) is ``proj``; a link in
    the repository is one site, spelled as found."""
    repo = make_repo(tmp_path / "real" / "proj", FILES)
    (repo / "model.py").symlink_to("nets/factory.py")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    inside = check(repo, *RULES, ".", expect=1)
    assert f"model.py:1:1: NPU000 {SYMLINK}" in inside and AT_TOP[0] in inside
    assert check(tmp_path, *RULES, "alias/proj", expect=1) == ["alias/proj/" + line for line in inside]
    assert check(tmp_path / "alias", *RULES, "proj", expect=1) == ["proj/" + line for line in inside]
    assert check(tmp_path / "alias" / "proj", *RULES, "model.py", "train.py", "nets", expect=1) == inside
    assert os.path.islink(tmp_path / "alias")


def test_a_message_s_paths_are_mapped_whole_and_only_paths_read(tmp_path: Path) -> None:
    (tmp_path / "proj" / "nets").mkdir(parents=True)
    where = CheckPaths.of([str(tmp_path / "proj")]).reading(
        [str(tmp_path / "proj" / "train.py")], ["tools/requirements.txt"])
    assert where.shown("") == str(tmp_path / "proj")
    text = "(entry train.py) train.pyc tools/requirements.txt: pinned; see tools/other.txt. nets/ train.py. tools"
    assert where.shown_text(text).replace(str(tmp_path / "proj"), "P") == (
        "(entry P/train.py) train.pyc P/tools/requirements.txt: pinned; see P/tools/other.txt. nets/ P/train.py. "
        "tools")
