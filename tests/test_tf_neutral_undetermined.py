"""In a repository whose TensorFlow version is undetermined (no pins; TF 1.x and TF 2.x code side
by side, as tutorial repositories keep one folder per lesson), a ``tf-neutral`` file follows the
code the import graph puts it beside: a model module of a TF 2.x lesson gets no TF 1.x rule (its
``npu_bridge`` import would break the TF 2.x program), one of a TF 1.x lesson gets the TF 1.x rules."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.codemods.tf_programs import (
    GRAPH_FACT,
    NON_TF_TF2_FACT,
    graph_nodes,
    program_facts,
    tf1_neutral_files,
    tf1_side,
)
from npu_codemod.codemods.tf_versions import (
    NON_TF,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    TF1,
    treatment,
)

from support.cli import cli, repo_record
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"

NETWORK = '''"""The lesson's network (no version-specific API)."""
import tensorflow as tf


def dense_block(x, units, rate):
    x = tf.matmul(x, tf.ones([x.shape[-1], units]))
    return tf.nn.dropout(x, rate)
'''

EAGER_MAIN = '''"""Lesson 6: a custom training loop (TF 2.x)."""
import tensorflow as tf

from network import dense_block


@tf.function
def train_step(x, variables, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(dense_block(x, 10, 0.5))
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


if __name__ == "__main__":
    tf.random.set_seed(1)
    print(train_step(tf.ones([4, 8]), [], tf.keras.optimizers.SGD()))
'''

GRAPH_MAIN = '''"""Lesson 2: the same block in a TF 1.x graph."""
import tensorflow as tf

from network import dense_block


def main():
    x = tf.placeholder(tf.float32, [None, 8])
    y = dense_block(x, 10, 0.5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(y, {x: [[1.0] * 8]}))


if __name__ == "__main__":
    main()
'''

LESSONS = {"lesson02/network.py": NETWORK, "lesson02/main.py": GRAPH_MAIN,
           "lesson06/network.py": NETWORK, "lesson06/main.py": EAGER_MAIN}


def test_the_graph_puts_each_neutral_file_beside_its_lesson() -> None:
    facts = frozenset({
        GRAPH_FACT + "lesson02/network.py|x|", GRAPH_FACT + "lesson02/main.py|mxt1|network.dense_block",
        GRAPH_FACT + "lesson06/network.py|x|", GRAPH_FACT + "lesson06/main.py|mxt2|network.dense_block",
        GRAPH_FACT + "tools/plot.py|x|"})
    assert tf1_neutral_files(graph_nodes(facts)) == ["lesson02/network.py"]
    programs, _ = program_facts(facts, RUNTIME_UNKNOWN)
    assert "tf-neutral-tf1:lesson02/network.py" in programs
    assert "tf-neutral-tf1:lesson06/network.py" not in programs



def test_a_launcher_importing_no_tensorflow_follows_the_lesson_it_starts() -> None:
    """A ``non-tf`` file (Horovod's launcher, say) next to TF 2.x code only gets no TF 1.x rule
    (``non-tf-tf2:``); one next to TF 1.x code, or to none, keeps them as before."""
    facts = frozenset({
        GRAPH_FACT + "lesson02/main.py|mxt1|", GRAPH_FACT + "lesson02/launch.py|m|main.main",
        GRAPH_FACT + "lesson06/main.py|mxt2|", GRAPH_FACT + "lesson06/launch.py|m|main.train_step",
        GRAPH_FACT + "tools/launch.py|m|horovod.run"})
    programs, _ = program_facts(facts, RUNTIME_UNKNOWN)
    assert sorted(fact for fact in programs if fact.startswith(NON_TF_TF2_FACT)) == [
        NON_TF_TF2_FACT + "lesson06/launch.py"]
    assert treatment(NON_TF, RUNTIME_UNKNOWN, tf1_side(programs, "lesson06/launch.py", NON_TF)) == NON_TF
    assert treatment(NON_TF, RUNTIME_UNKNOWN, tf1_side(programs, "lesson02/launch.py", NON_TF)) == TF1
    assert treatment(NON_TF, RUNTIME_UNKNOWN, tf1_side(programs, "tools/launch.py", NON_TF)) == TF1
    assert (treatment(NON_TF, RUNTIME_TF2), treatment(NON_TF, RUNTIME_TF1)) == (NON_TF, TF1)

def test_a_tf2_lessons_model_module_gets_no_tf1_rule(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "tutorials", LESSONS)
    (tmp_path / "repos.txt").write_text("tutorials\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert "lesson06/network.py" not in record["files_changed"]
    assert "lesson02/network.py" in record["files_changed"]
    assert b"npu_ops.dropout" in show(repo, BRANCH, "lesson02/network.py")
    eager = show(repo, BRANCH, "lesson06/main.py").decode()
    assert "npu_bridge" not in eager and "npu.open().as_default()" in eager


LAYERS = '''"""Graph convolution layers kept from the TF 1.x code (tf.variable_scope)."""
import tensorflow as tf


def graph_conv(x, units, rate):
    with tf.variable_scope("graph_conv"):
        x = tf.matmul(x, tf.ones([x.shape[-1], units]))
    return tf.nn.dropout(x, rate)
'''


def test_an_eager_program_that_imports_tf1_files_is_reported_not_rewritten(tmp_path: Path) -> None:
    """The version is undetermined and one program holds TF 2.x and TF 1.x files: a TF 1.x rule's
    ``npu_bridge`` import in its TF 1.x module would break the TF 2.x program, so nothing in it
    is rewritten and its entry says why."""
    repo = make_repo(tmp_path / "tutorials", {
        **LESSONS, "lesson20/network.py": LAYERS.replace("def graph_conv", "def dense_block"),
        "lesson20/main.py": EAGER_MAIN})
    (tmp_path / "repos.txt").write_text("tutorials\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert not [path for path in record["files_changed"] if path.startswith("lesson20/")]
    assert show(repo, BRANCH, "lesson20/network.py").decode() == LESSONS["lesson02/network.py"].replace(
        NETWORK, LAYERS.replace("def graph_conv", "def dense_block"))
    mixed = [f for f in record["findings"] if f["path"] == "lesson20/main.py" and "mixes" in f["message"]]
    assert len(mixed) == 1 and mixed[0]["message"].startswith(
        "this program mixes eager TF 2.x files (lesson20/main.py) and TF 1.x files (lesson20/network.py): "
        "no TensorFlow version runs both as written")
    assert "lesson02/network.py" in record["files_changed"]  # the TF 1.x lesson is migrated


LIBRARY = '''"""A distributed-training library that runs on both versions (Horovod's horovod/tensorflow)."""
import tensorflow as tf


def broadcast_variables(variables, root_rank):
    if tf.executing_eagerly():
        return [v.assign(v) for v in variables]
    return tf.group(*[tf.assign(v, v) for v in variables])
'''


def test_a_library_elsewhere_in_the_repository_does_not_make_an_example_mixed(tmp_path: Path) -> None:
    """Horovod's ``examples/tensorflow2`` scripts import Horovod's own ``horovod/tensorflow``,
    whose TF 1.x branch sits behind a check of its own: the examples are not mixed programs."""
    example = EAGER_MAIN.replace("from network import dense_block\n",
                                 "from network import dense_block\nfrom hvdlib.tensorflow import broadcast_variables\n")
    repo = make_repo(tmp_path / "hvd", {"hvdlib/__init__.py": "", "hvdlib/tensorflow/__init__.py": LIBRARY,
                                        "examples/tf2/network.py": NETWORK, "examples/tf2/main.py": example})
    (tmp_path / "repos.txt").write_text("hvd\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert not [f for f in record["findings"] if "mixes" in f["message"]]
    assert "npu.open().as_default()" in show(repo, BRANCH, "examples/tf2/main.py").decode()
