"""A folder with its own TensorFlow pins is decided on its own (``codemods/tf_scopes.py``):
TF 2.x code kept beside TF 1.x code, as google-research/simclr keeps its ``tf2/`` folder (its
own ``requirements.txt``) beside the TF 1.15 code its top ``requirements.txt`` pins."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.tf_scopes import code_folders, decided_facts, scope_folders
from npu_codemod.codemods.tf_versions import (
    RUNTIME_FACT,
    RUNTIME_TF1,
    RUNTIME_TF2,
    SCOPE_FACT,
    runtime_of,
    runtime_why,
)

from support.cli import check_lines, cli, repo_record
from support.git import TF_SCRIPT, make_repo, show
from support.tf2_scripts import KERAS_FIT

BRANCH = "npu-codemod/sess-run-to-npu"
INIT = "import npu_device as npu\nnpu.open().as_default()\n"

SIDE_BY_SIDE = {
    "requirements.txt": "absl-py\ntensorflow==1.15.4\ntensorflow-datasets==3.1.0\n",
    "train.py": TF_SCRIPT,
    "tf2/requirements.txt": "tensorflow\ntensorflow-datasets\n",
    "tf2/train.py": KERAS_FIT,
    "README.md": "# two versions of one model\n",
}


def test_only_a_folder_with_pins_and_tf_code_under_it_is_a_scope() -> None:
    manifests = {"requirements.txt": "tensorflow==1.15.4\n", "tf2/requirements.txt": "tensorflow\n",
                 "docker/requirements.txt": "tensorflow-gpu==1.15.5\n", "tools/requirements.txt": "numpy\n"}
    assert scope_folders(manifests, ["train.py", "tf2/train.py", "tools/plot.py", "docker/x.py"]) == [
        "docker/", "tf2/"]
    assert scope_folders(manifests, ["train.py", "tf2/train.py"]) == ["tf2/"]  # docker/: no code there


def test_a_file_takes_the_runtime_of_the_deepest_scope_that_holds_it() -> None:
    facts = frozenset({RUNTIME_FACT + RUNTIME_TF1, SCOPE_FACT + "tf2/:" + RUNTIME_TF2,
                       SCOPE_FACT + "tf2/legacy/:" + RUNTIME_TF1})
    assert runtime_of(facts, "train.py") == RUNTIME_TF1
    assert runtime_of(facts, "tf2/train.py") == RUNTIME_TF2
    assert runtime_of(facts, "tf2/legacy/train.py") == RUNTIME_TF1
    assert runtime_of(facts, "tf2x/train.py") == RUNTIME_TF1


def test_pins_in_a_folder_without_code_still_pin_the_repository() -> None:
    manifests = {"requirements/gpu.txt": "tensorflow-gpu==2.6.0\n"}
    facts, messages = decided_facts(None, manifests, frozenset({"tf-file@tf-code:E-only|train.py"}))
    assert runtime_of(facts, "train.py") == RUNTIME_TF2
    assert not any(fact.startswith(SCOPE_FACT) for fact in facts) and messages == ()


def test_tf2_code_beside_tf1_code_gets_the_tf2_pack_and_the_tf1_code_the_tf1_rules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "simclr", SIDE_BY_SIDE)
    (tmp_path / "repos.txt").write_text("simclr\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert record["file_kinds"] == {"tf1": 1, "tf2": 1}
    assert record["files_changed"] == ["tf2/train.py", "train.py"]
    assert show(repo, BRANCH, "train.py").startswith(b"from npu_bridge.npu_init import *\n")
    tf2 = show(repo, BRANCH, "tf2/train.py").decode()
    assert tf2.startswith('"""Fine-tune a text classifier with Keras fit (TensorFlow 2.x)."""\n' + INIT)
    assert "npu_bridge" not in tf2 and "drop_remainder=True" in tf2
    cli("run", "--repos", "repos.txt", "--report-dir", "rep2", "--jobs", "1", cwd=tmp_path, expect=0)
    again = repo_record(tmp_path / "rep2")
    assert again["status"] == "unchanged" and again["file_kinds"] == record["file_kinds"]
    assert again["sites"] == record["sites"]


def test_check_decides_each_folder_as_run_does(tmp_path: Path) -> None:
    make_repo(tmp_path / "simclr", SIDE_BY_SIDE)
    done = cli("check", "simclr", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("simclr/tf2/train.py:2:1: NPU061 ") for line in lines), lines
    assert any(line.startswith("simclr/train.py:1:1: NPU001 ") for line in lines), lines
    assert not any("pinned to TF 1.x" in line for line in lines), lines


# --- a folder's pins decide that folder's code only (google/tpu's tools/ray_tpu) ----------------

SLIM_TRAIN = '''\
import tensorflow as tf
slim = tf.contrib.slim


def main():
    x = tf.placeholder(tf.float32, [None, 4])
    y = slim.fully_connected(x, 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())


if __name__ == "__main__":
    main()
'''

JAX_TOOL = '''\
import jax
import tensorflow_datasets as tfds

if __name__ == "__main__":
    print(jax.devices(), tfds.list_builders()[:1])
'''

TOOL_PIN = "jax\ntensorflow-cpu==2.9.3\ntensorflow-datasets==4.4.0\n"


def test_a_folder_with_pins_and_python_code_is_a_scope_even_without_tf_files() -> None:
    manifests = {"tools/jaxtool/requirements.txt": TOOL_PIN, "requirements/gpu.txt": "tensorflow-gpu==2.6.0\n"}
    python = ["train.py", "tools/jaxtool/run.py", "tools/jaxtool/sub/util.py"]
    assert code_folders(manifests, python) == ("tools/jaxtool/",)
    assert scope_folders(manifests, ["train.py"], code=code_folders(manifests, python)) == ["tools/jaxtool/"]
    tool = {"tools/jaxtool/requirements.txt": TOOL_PIN}
    facts, _ = decided_facts(None, tool, frozenset({"tf-file@tf-code:T1|train.py"}), code=code_folders(tool, python))
    assert runtime_of(facts, "train.py") == RUNTIME_TF1  # the top's code decides the top
    assert runtime_of(facts, "tools/jaxtool/run.py") == RUNTIME_TF2


def test_a_tool_folders_pin_does_not_pin_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "pin", {"train.py": SLIM_TRAIN, "tools/jaxtool/run.py": JAX_TOOL,
                                        "tools/jaxtool/requirements.txt": TOOL_PIN})
    lines = check_lines(tmp_path, "pin", expect=1)
    assert not [line for line in lines if "pinned to TF" in line], lines
    assert "pin/train.py:1:1: NPU001 [fixable] add 'from npu_bridge.npu_init import *'" in lines
    assert any(line.startswith("pin/train.py:8:10: NPU007 [fixable]") for line in lines), lines
    (tmp_path / "repos.txt").write_text("pin\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert record["files_changed"] == ["train.py"] and record["file_kinds"].get("conflict") is None
    assert show(repo, BRANCH, "train.py").startswith(b"from npu_bridge.npu_init import *\n")


def test_a_conflict_with_the_pins_names_the_pins_that_decided(tmp_path: Path) -> None:
    make_repo(tmp_path / "pin", {"train.py": SLIM_TRAIN, "requirements.txt": "tensorflow==2.6.5\nnumpy\n",
                                 "tools/jaxtool/legacy.py": SLIM_TRAIN, "tools/jaxtool/requirements.txt": TOOL_PIN})
    lines = check_lines(tmp_path, "pin", expect=1)
    assert lines == [
        "pin/tools/jaxtool/legacy.py:2:8: NPU000 TF 1.x-only API tf.contrib in a repository pinned to TF 2.x "
        "(pin/tools/jaxtool/requirements.txt: tensorflow-cpu==2.9.3): move it to tf.compat.v1 or to the TF 2.x "
        "API first; nothing was rewritten",
        "pin/train.py:2:8: NPU000 TF 1.x-only API tf.contrib in a repository pinned to TF 2.x "
        "(pin/requirements.txt: tensorflow==2.6.5): move it to tf.compat.v1 or to the TF 2.x API first; "
        "nothing was rewritten"]


def test_a_conflict_with_a_runtime_from_the_code_says_so() -> None:
    facts, _ = decided_facts(None, {}, frozenset({"tf-code:T2"}))
    assert runtime_why(facts, "b.py") == "whose code is TF 2.x (TF 2.x-only APIs, no TF 1.x-only one; no pin)"
    configured, _ = decided_facts("1", {}, frozenset())
    assert runtime_why(configured, "a.py") == "set to TF 1.x ([tool.npu-codemod] tensorflow or --tensorflow)"
