"""Graph-only code guarded by an expression (``spec/rules-tf2.md``, "Mixed programs"; ``docs/packs.md``:
``tf.compat.v1`` code that runs only when TensorFlow does not execute eagerly is no C1/C2 signal).

The body of ``if not tf.executing_eagerly():`` was graph-only code, the same call behind a
short-circuit guard was not: TF Addons' ``seq2seq/decoder.py`` (``is_xla = not
tf.executing_eagerly() and in_xla(tf.compat.v1.get_default_graph())``) made the module a
compat.v1 graph file, and every program of the library was refused as mixed. The operands an
``and`` evaluates after ``not <x>.executing_eagerly()``, or an ``or`` after
``<x>.executing_eagerly()``, run in graph mode only, as either arm of a conditional expression
on the mode does: no C1/C2 signal, and NPU071 leaves them alone (``mode_checks``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.tf_versions import RUNTIME_TF2, TF2_COMPAT, TF_NEUTRAL, file_kind, signals_of
from npu_codemod.testing import assert_reports

from support.cli import cli, repo_record
from support.git import make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
DEVICE_INIT = "import npu_device as npu\nnpu.open().as_default()\n"
GRAPH = "in_xla(tf.compat.v1.get_default_graph())"
DECODER = '''\
import tensorflow as tf


def in_xla(graph):
    return False


def decode(x):
    is_xla = {guarded}
    return x * 2 if is_xla else x
'''
#: Each way of spelling "only when TensorFlow does not execute eagerly" around the graph call.
GUARDED = {
    "not-eager-and": f"not tf.executing_eagerly() and {GRAPH}",
    "eager-or": f"tf.executing_eagerly() or {GRAPH}",
    "chained-and": f"x is not None and not tf.executing_eagerly() and {GRAPH}",
    "nested-or-in-and": f"not tf.compat.v1.executing_eagerly() and (x is None or {GRAPH})",
    "not-eager-if-expression": f"{GRAPH} if not tf.executing_eagerly() else False",
    "eager-if-expression-else": f"False if tf.executing_eagerly() else {GRAPH}",
}
#: The graph call evaluated in eager mode as well: still a compat.v1 graph use.
UNGUARDED = {
    "eager-and": f"tf.executing_eagerly() and {GRAPH}",
    "not-eager-or": f"not tf.executing_eagerly() or {GRAPH}",
    "graph-before-the-test": f"{GRAPH} and not tf.executing_eagerly()",
    "other-test-and": f"x is not None and {GRAPH}",
}
IF_ELSE = DECODER.replace("    is_xla = {guarded}\n", f'''\
    if tf.executing_eagerly():
        is_xla = False
    else:
        is_xla = {GRAPH}
''')


@pytest.mark.parametrize("text", [DECODER.format(guarded=guard) for guard in GUARDED.values()] + [IF_ELSE],
                         ids=[*GUARDED, "eager-if-else"])
def test_a_graph_call_behind_a_mode_guard_expression_is_no_compat_signal(text: str) -> None:
    signals = signals_of(text, "lib/decoder.py")
    assert signals.c1 is None and signals.c2 is None
    assert file_kind(signals, RUNTIME_TF2).kind == TF_NEUTRAL


@pytest.mark.parametrize("guard", UNGUARDED.values(), ids=UNGUARDED.keys())
def test_a_graph_call_eager_code_evaluates_is_still_a_compat_signal(guard: str) -> None:
    signals = signals_of(DECODER.format(guarded=guard), "lib/decoder.py")
    assert signals.c2 is not None and signals.c2.spelled == "tf.compat.v1.get_default_graph"
    assert file_kind(signals, RUNTIME_TF2).kind == TF2_COMPAT


# --- NPU071 in an eager file -----------------------------------------------------------------

EAGER = '''import tensorflow as tf


@tf.function
def step(x):
    return x * 2


def graph_items(ds):
    sess = {test} and tf.compat.v1.Session()
    return sess.run(tf.compat.v1.data.make_one_shot_iterator(ds).get_next())
'''


def test_a_session_behind_a_not_eager_and_is_not_reported() -> None:
    assert_reports(["NPU071"], EAGER.format(test="not tf.executing_eagerly()"), findings=[])


def test_a_session_behind_an_eager_and_is_still_reported() -> None:
    findings = assert_reports(["NPU071"], EAGER.format(test="tf.executing_eagerly()"))
    assert [(f.line, f.status) for f in findings if "tf.compat.v1.Session" in f.message] == [(10, "unmigrated")]


# --- the program -----------------------------------------------------------------------------

TRAIN = '''\
import tensorflow as tf

from lib import decoder


def main():
    ds = tf.data.Dataset.range(10).map(lambda i: (tf.cast([i], tf.float32), 1.0)).batch(4)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1), tf.keras.layers.Lambda(decoder.decode)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(ds, epochs=1)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_program_reaching_a_guarded_graph_call_is_migrated(tmp_path: Path, engine: str) -> None:
    """Regression (tensorflow/addons ``seq2seq/decoder.py:311-316``): the program was refused as
    mixing eager TF 2.x and compat.v1 graph files, nothing rewritten."""
    repo = make_repo(tmp_path / "addons", {
        "requirements.txt": "tensorflow>=2.4\n", "train.py": TRAIN, "lib/__init__.py": "",
        "lib/decoder.py": DECODER.format(guarded=GUARDED["not-eager-and"])})
    (tmp_path / "repos.txt").write_text("addons\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["rule_id"], f["status"]) for f in record["findings"]] == [
        ("train.py", "NPU061", "migrated"), ("train.py", "NPU064", "migrated")]
    assert "tf2-compat" not in record["file_kinds"]
    script = show(repo, BRANCH, "train.py").decode()
    assert script.startswith(DEVICE_INIT) and "drop_remainder=True" in script
