"""NPU061 (and the rules writing ``npu.*`` code) in a script that imports TensorFlow only inside
the function a cluster launcher ships to its workers (TensorFlowOnSpark's ``TFCluster.run(sc,
main_fun, ...)``): the NPU is opened, and ``npu_device`` imported, in that function, never at the
module top, which runs in the launching process (a Spark driver) only."""

from __future__ import annotations

from pathlib import Path

from support.git import make_repo, show
from support.rules import assert_migrates, assert_unchanged, sites

TF2_RUNTIME = {"tf-runtime:2"}
BRANCH = "npu-codemod/sess-run-to-npu"

LAUNCHED = '''\
"""Train a regressor on Spark executors."""


def worker_fn(args, ctx):
    """Runs on each executor."""
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(tf.zeros([8, 4]), tf.zeros([8, 1]), epochs=1)


if __name__ == "__main__":
    from pyspark.context import SparkContext
    from tensorflowonspark import TFCluster

    cluster = TFCluster.run(SparkContext(), worker_fn, None, 2, num_ps=0)
    cluster.shutdown()
'''
OPENED = LAUNCHED.replace('    """Runs on each executor."""\n',
                          '    """Runs on each executor."""\n    import npu_device as npu\n'
                          '    npu.open().as_default()\n')


def test_the_device_is_opened_in_the_function_that_imports_tensorflow_and_trains() -> None:
    """Before, the init went to the module top: the driver opened an NPU, the executors that
    train never did."""
    findings = assert_migrates(LAUNCHED, OPENED, {"NPU061"}, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 4, 0, "migrated")]
    assert findings[0].message.startswith("added 'import npu_device as npu' and "
                                          "'npu.open().as_default()' at the top of worker_fn()")
    again = assert_unchanged(OPENED, {"NPU061"}, facts=TF2_RUNTIME)
    assert [(f.line, f.column, f.status) for f in again] == [(7, 4, "migrated")]


def test_the_distributed_rules_import_npu_device_in_that_function_too() -> None:
    """NPU067/NPU068 write ``npu.distribute`` calls in the function: their import goes there,
    once, next to NPU061's init, not to the module top."""
    after = OPENED.replace(
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])\n",
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])\n"
        "    npu.distribute.broadcast(model.trainable_variables)\n").replace(
        'optimizer="sgd"', 'optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper("sgd")')
    findings = assert_migrates(LAUNCHED, after, {"NPU061", "NPU067", "NPU068"}, facts=TF2_RUNTIME)
    assert [f.rule_id for f in findings if f.status == "migrated"] == ["NPU061", "NPU067", "NPU068"]
    alone = LAUNCHED.replace(
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])\n",
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])\n"
        "    npu.distribute.broadcast(model.trainable_variables)\n").replace(
        '    """Runs on each executor."""\n', '    """Runs on each executor."""\n    import npu_device as npu\n')
    assert_migrates(LAUNCHED, alone, {"NPU067"}, facts=TF2_RUNTIME)


TWO_FUNCTIONS = '''\
def build():
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    model.compile(optimizer="sgd", loss="mse")
    return model


def worker_fn(args, ctx):
    import tensorflow as tf

    build().fit(tf.zeros([8, 4]), tf.zeros([8, 1]), epochs=1)


if __name__ == "__main__":
    from tensorflowonspark import TFCluster

    TFCluster.run(None, worker_fn, None, 2, num_ps=0)
'''


def test_with_two_functions_importing_tensorflow_the_init_is_reported_not_placed() -> None:
    findings = assert_unchanged(TWO_FUNCTIONS, {"NPU061"}, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU061", 2, 4, "unmigrated")]
    assert findings[0].message.startswith(
        "TensorFlow is imported only inside functions (build(), worker_fn()): open the NPU in the "
        "process that imports TensorFlow and trains")


def test_a_module_level_tensorflow_import_keeps_the_init_at_the_top() -> None:
    script = "import tensorflow as tf\n\n\n" + LAUNCHED.replace("    import tensorflow as tf\n\n", "")
    opened = script.replace("import tensorflow as tf\n",
                            "import npu_device as npu\nnpu.open().as_default()\nimport tensorflow as tf\n", 1)
    assert sites(assert_migrates(script, opened, {"NPU061"}, facts=TF2_RUNTIME)) == [("NPU061", 1, 0, "migrated")]


def test_a_launcher_repository_opens_the_npu_on_the_executors(tmp_path: Path) -> None:
    """End to end (the repository's entry analysis, both engines give the same branch)."""
    from support.cli import cli

    for engine in ("selective", "full"):
        root = tmp_path / engine
        make_repo(root / "spark", {"requirements.txt": "tensorflow==2.6.5\n", "job.py": LAUNCHED})
        (root / "repos.txt").write_text("spark\n")
        done = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--engine", engine,
                   "--rules", "tf2,tf2-distributed", cwd=root)
        assert done.returncode == 0, done.stderr
        job = show(root / "spark", BRANCH, "job.py").decode()
        assert job.startswith('"""Train a regressor on Spark executors."""\n\n\ndef worker_fn(args, ctx):\n'
                              '    """Runs on each executor."""\n    import npu_device as npu\n'
                              '    npu.open().as_default()\n    import tensorflow as tf\n'), job
        assert job.count("import npu_device") == 1


def test_npu065_imports_npu_device_in_the_function_that_uses_it() -> None:
    before = '''\
def worker_fn(args, ctx):
    import tensorflow as tf

    opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    return opt
'''
    after = before.replace("    import tensorflow as tf\n", "    import npu_device as npu\n    import tensorflow as tf\n").replace(
        "tf.keras.mixed_precision.LossScaleOptimizer", "npu.train.optimizer.NpuLossScaleOptimizer")
    findings = assert_migrates(before, after, {"NPU065"}, facts=TF2_RUNTIME)
    assert [site for site in sites(findings) if site[0] == "NPU065"] == [("NPU065", 4, 10, "migrated")]
