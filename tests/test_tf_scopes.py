"""A folder with its own TensorFlow pins is decided on its own (``codemods/tf_scopes.py``):
TF 2.x code kept beside TF 1.x code, as google-research/simclr keeps its ``tf2/`` folder (its
own ``requirements.txt``) beside the TF 1.15 code its top ``requirements.txt`` pins."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.tf_scopes import decided_facts, scope_folders
from npu_codemod.codemods.tf_versions import RUNTIME_FACT, RUNTIME_TF1, RUNTIME_TF2, SCOPE_FACT, runtime_of

from support.cli import cli, repo_record
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
