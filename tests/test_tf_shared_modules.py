"""A module no pin decides takes the runtime of the programs that import it
(``codemods/tf_shared_modules.py``): google-research/big_transfer keeps its input pipeline at the
top, where nothing pins TensorFlow, and imports it from ``bit_tf2/train.py``, whose own
``requirements.txt`` pins TF 2.2. The TF 1.x rules' ``npu_bridge`` there broke the TF 2.x program."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.program_graph import Node
from npu_codemod.codemods.tf_programs import GRAPH_FACT, NEUTRAL_TF1_FACT
from npu_codemod.codemods.tf_runtime import UNDETERMINED
from npu_codemod.codemods.tf_scopes import decided_facts
from npu_codemod.codemods.tf_shared_modules import Shared, shared_runtimes
from npu_codemod.codemods.tf_versions import (
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    runtime_of,
    runtime_why,
)

from support.cli import check_lines, cli, repo_record
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"


def _node(path: str, *imports: str, main: bool = False) -> Node:
    return Node(path, main, compat=False, trains=False, tf=True, imports=imports)


def _folder(path: str) -> str:
    return next((folder for folder in ("tf2/", "tf1/", "free/") if path.startswith(folder)), "")


RUNTIMES = {"": RUNTIME_UNKNOWN, "tf2/": RUNTIME_TF2, "tf1/": RUNTIME_TF1, "free/": RUNTIME_UNKNOWN}
PINNED = frozenset({"tf2/", "tf1/"})


def _shared(*nodes: Node) -> dict[str, Shared]:
    return shared_runtimes({node.module: node for node in nodes}, _folder, RUNTIMES, PINNED)


def test_a_module_only_tf2_programs_import_runs_tf2_through_other_modules() -> None:
    found = _shared(_node("tf2/train.py", "loader", main=True), _node("loader.py", "pipe"), _node("pipe.py"))
    assert {path: item.runtime for path, item in found.items()} == {"loader.py": RUNTIME_TF2, "pipe.py": RUNTIME_TF2}
    assert found["pipe.py"].importers == (("tf2/train.py", RUNTIME_TF2),)
    assert found["pipe.py"].why == "whose programs that import this module run TF 2.x (tf2/train.py)"


def test_a_module_tf1_and_tf2_programs_import_is_undetermined_and_reported() -> None:
    found = _shared(_node("tf2/train.py", "pipe", main=True), _node("tf1/train.py", "pipe", main=True),
                    _node("pipe.py"))
    assert found["pipe.py"].runtime == RUNTIME_UNKNOWN
    assert "(tf1/train.py: TF 1.x, tf2/train.py: TF 2.x)" in found["pipe.py"].message


def test_an_importer_of_no_known_version_says_nothing() -> None:
    """demo.py's version is undetermined (an unversioned requirement, a PyTorch or JAX program):
    the decided importers decide (dopamine's labs/ beside its TF 2.x agents: TF 1.x adapter code
    in the TF 2.x program's module broke it at import)."""
    beside_a_script = _shared(_node("tf2/train.py", "pipe", main=True), _node("demo.py", "pipe", main=True),
                              _node("pipe.py"))
    assert beside_a_script["pipe.py"].runtime == RUNTIME_TF2
    assert beside_a_script["pipe.py"].message == ""
    tf1_beside_a_script = _shared(_node("tf1/train.py", "pipe", main=True), _node("demo.py", "pipe", main=True),
                                  _node("pipe.py"))
    assert tf1_beside_a_script["pipe.py"].runtime == RUNTIME_TF1


def test_the_folder_decides_when_no_importer_decides() -> None:
    assert _shared(_node("demo.py", "pipe", main=True), _node("pipe.py")) == {}
    tested = _shared(_node("tf2/train.py", "pipe", main=True), _node("pipe_test.py", "pipe", main=True),
                     _node("pipe.py"))
    assert tested["pipe.py"].runtime == RUNTIME_TF2  # a test decides nothing
    assert _shared(_node("tf2/train.py", "tf1.util", main=True), _node("tf1/util.py")) == {}  # pinned


SCOPE_FACTS = frozenset({
    "tf-file@|pipe.py", "tf-file@tf-code:E-only|app/train.py",
    f"{GRAPH_FACT}app/train.py|mxt2|pipe", f"{GRAPH_FACT}pipe.py|x|",
})


def test_decided_facts_give_a_shared_module_its_importers_runtime() -> None:
    facts, messages = decided_facts(None, {"app/requirements.txt": "tensorflow==2.2.0\n"}, SCOPE_FACTS)
    assert runtime_of(facts, "pipe.py") == RUNTIME_TF2
    assert runtime_of(facts, "pipe.pyi") == RUNTIME_UNKNOWN  # the file itself, not a prefix
    assert runtime_why(facts, "pipe.py") == "whose programs that import this module run TF 2.x (app/train.py)"
    assert NEUTRAL_TF1_FACT + "pipe.py" not in facts
    assert not [message for message in messages if message.text == UNDETERMINED]


def test_a_neutral_file_given_the_tf1_rules_beside_tf2_code_is_reported_as_undetermined() -> None:
    side_by_side = frozenset({"tf-file@|pipe.py", f"{GRAPH_FACT}pipe.py|x|", "tf-file@tf-code:T1|old.py",
                              f"{GRAPH_FACT}old.py|mx1|pipe", "tf-file@tf-code:T2|new.py", f"{GRAPH_FACT}new.py|mx2|"})
    facts, messages = decided_facts(None, {}, side_by_side)
    assert NEUTRAL_TF1_FACT + "pipe.py" in facts
    assert [(message.path, message.text) for message in messages] == [("", UNDETERMINED)]
    in_a_scope, messages = decided_facts(None, {"new/requirements.txt": "tensorflow==2.6.0\n"}, frozenset({
        "tf-file@|pipe.py", f"{GRAPH_FACT}pipe.py|x|", "tf-file@|new/train.py", f"{GRAPH_FACT}new/train.py|mx|"}))
    assert NEUTRAL_TF1_FACT + "pipe.py" in in_a_scope
    assert [(message.path, message.text) for message in messages] == [("", UNDETERMINED)]
    alone, messages = decided_facts(None, {}, frozenset({"tf-file@|pipe.py", f"{GRAPH_FACT}pipe.py|x|"}))
    assert NEUTRAL_TF1_FACT + "pipe.py" in alone and messages == ()  # no TF 2.x code: TF 1.x code, as before


# --- end to end: a real repository shaped like big_transfer -------------------------------------

TRAIN = '''\
import tensorflow as tf
import pipe


def main():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(pipe.get_data(), epochs=1)


if __name__ == "__main__":
    main()
'''

PIPE = '''\
import tensorflow as tf
import augment


def get_data():
    x = tf.data.Dataset.range(10).map(augment.pair)
    return x.shuffle(10).repeat().batch(4)
'''

AUGMENT = '''\
import tensorflow as tf


def pair(i):
    x = tf.cast([i], tf.float32)
    return x, x * 2.0
'''

LEGACY = '''\
import tensorflow as tf
import pipe


def main():
    with tf.Session() as sess:
        sess.run(pipe.get_data().make_one_shot_iterator().get_next())


if __name__ == "__main__":
    main()
'''

SHARED = {"app/requirements.txt": "tensorflow==2.6.0\n", "app/__init__.py": "", "app/train.py": TRAIN,
          "pipe.py": PIPE, "augment.py": AUGMENT}


def test_a_top_module_a_pinned_tf2_program_imports_gets_the_tf2_rules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "bit", SHARED)
    lines = check_lines(tmp_path, "bit", expect=1)
    assert any(line.startswith("bit/pipe.py:7:35: NPU064 ") for line in lines), lines
    assert not [line for line in lines if "NPU001" in line or "NPU002" in line or "undetermined" in line], lines
    (tmp_path / "repos.txt").write_text("bit\n")
    for engine in ("selective", "full"):
        cli("run", "--repos", "repos.txt", "--report-dir", engine, "--jobs", "1", "--engine", engine,
            "--no-cache", cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "selective")["sites"] == repo_record(tmp_path / "full")["sites"]
    assert (tmp_path / "selective" / "findings.csv").read_text() == (tmp_path / "full" / "findings.csv").read_text()
    pipe = show(repo, BRANCH, "pipe.py").decode()
    assert "npu_bridge" not in pipe and ".batch(4, drop_remainder=True)" in pipe
    assert "npu_bridge" not in show(repo, BRANCH, "augment.py").decode()
    assert show(repo, BRANCH, "app/train.py").startswith(b"import npu_device as npu\nnpu.open().as_default()\n")


def test_a_module_tf1_and_tf2_programs_share_is_reported_and_gets_no_npu_bridge(tmp_path: Path) -> None:
    make_repo(tmp_path / "bit", {**SHARED, "legacy.py": LEGACY})
    lines = check_lines(tmp_path, "bit", expect=1)
    pipe = [line for line in lines if line.startswith("bit/pipe.py:")]
    assert pipe[0].startswith("bit/pipe.py:1:1: NPU000 TensorFlow major version undetermined for this module: "
                              "the programs that import it run different versions (bit/app/train.py: TF 2.x, "
                              "bit/legacy.py: TF 1.x)"), pipe
    assert any(line.startswith("bit/pipe.py:7:35: NPU064 ") for line in pipe), pipe
    assert not [line for line in pipe if "NPU001" in line or "NPU002" in line], pipe
    assert any(line.startswith("bit/legacy.py:1:1: NPU001 ") for line in lines), lines
