"""NPU021 keeps ``hvd.init()`` while a Horovod use that needs it is left anywhere the script's
program reaches, through any number of imports (``main -> lib.setup -> lib.model``), and when
what links them is not known (a module without TensorFlow in between): removing the init
there makes Horovod raise "Horovod has not been initialized" at graph build."""

from __future__ import annotations

from pathlib import Path

from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.git import make_repo, show
from support.packs import message_of, repository_facts

BRANCH = "npu-codemod/sess-run-to-npu"
#: The pack without NPU027 (which wraps the train call's hooks: not what these tests are about).
HOROVOD = frozenset({"NPU021", "NPU022", "NPU023", "NPU024", "NPU025"})
KEPT = "still need Horovod initialised; migrate or remove them first"

MAIN = '''\
import tensorflow as tf
import horovod.tensorflow as hvd
from lib.setup import build_estimator


def main():
    hvd.init()
    estimator = build_estimator()
    estimator.train(input_fn=lambda: None, max_steps=10)


if __name__ == "__main__":
    main()
'''
SETUP = '''\
import tensorflow as tf
from lib.model import model_fn


def build_estimator():
    return tf.estimator.Estimator(model_fn=model_fn)
'''
MODEL = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def model_fn(features, labels, mode):
    loss = tf.reduce_sum(tf.get_variable("w", [1]) * features)
    opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(0.1), device_dense="/gpu:0")
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(loss))
'''
MIGRATED_MODEL = MODEL.replace(', device_dense="/gpu:0"', "")
TWO_HOPS = {"main.py": MAIN, "lib/__init__.py": "", "lib/setup.py": SETUP, "lib/model.py": MODEL}


def test_a_use_two_imports_away_keeps_the_init() -> None:
    findings = assert_reports(HOROVOD, MAIN, path="main.py", facts=repository_facts(TWO_HOPS),
                              findings=[("NPU021", 7, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 7).startswith(
        f"kept: hvd.DistributedOptimizer in lib.model (this file imports from it through lib.setup) {KEPT}")


def test_the_init_goes_once_the_use_two_imports_away_is_migrated() -> None:
    facts = repository_facts({**TWO_HOPS, "lib/model.py": MIGRATED_MODEL})
    after = MAIN.replace("import horovod.tensorflow as hvd\n", "").replace("    hvd.init()\n", "")
    assert_migrates(HOROVOD, MAIN, after, path="main.py", facts=facts,
                    removed=[("NPU021", 7, 4, "migrated"), ("NPU025", 2, 0, "migrated")])


def test_an_init_in_a_helper_stays_for_a_use_a_common_importer_reaches() -> None:
    """``main.py`` imports the helper that starts Horovod and the model that uses it: one
    program, although neither of the two imports the other."""
    helper = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n\n\ndef start():\n    hvd.init()\n"
    main = MAIN.replace("import horovod.tensorflow as hvd\n", "from lib.hvd_setup import start\n") \
        .replace("hvd.init()", "start()")
    facts = repository_facts({**TWO_HOPS, "main.py": main, "lib/hvd_setup.py": helper})
    findings = assert_reports(HOROVOD, helper, path="lib/hvd_setup.py", facts=facts,
                              findings=[("NPU021", 6, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 6).startswith(
        f"kept: hvd.DistributedOptimizer in lib.model (main imports from both) {KEPT}")


def test_a_link_through_a_file_without_tensorflow_is_not_known_and_keeps_the_init() -> None:
    """``lib/runner.py`` imports no TensorFlow: the analysis does not read it, so whether
    ``main.py`` reaches ``lib/model.py`` is not known; the init stays."""
    runner = "from lib.model import model_fn\n\n\ndef build_estimator():\n    return model_fn\n"
    main = MAIN.replace("from lib.setup import", "from lib.runner import")
    facts = repository_facts({**TWO_HOPS, "main.py": main, "lib/runner.py": runner, "lib/setup.py": ""})
    findings = assert_reports(HOROVOD, main, path="main.py", facts=facts,
                              findings=[("NPU021", 7, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 7).startswith(
        "kept: hvd.DistributedOptimizer in lib.model (what imports it is not known")


def test_another_script_s_use_keeps_nothing() -> None:
    """``eval.py`` is a script of its own that starts Horovod itself: its use is not
    ``main.py``'s program's, and ``main.py``'s imports are all known."""
    evaluate = MODEL + '\n\nif __name__ == "__main__":\n    hvd.init()\n'
    facts = repository_facts({**TWO_HOPS, "lib/model.py": MIGRATED_MODEL, "eval.py": evaluate})
    after = MAIN.replace("import horovod.tensorflow as hvd\n", "").replace("    hvd.init()\n", "")
    assert_migrates(HOROVOD, MAIN, after, path="main.py", facts=facts,
                    removed=[("NPU021", 7, 4, "migrated"), ("NPU025", 2, 0, "migrated")])


def test_run_keeps_the_init_of_a_script_whose_use_is_two_imports_away(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "unet", TWO_HOPS)
    (tmp_path / "repos.txt").write_text("unet\n")
    run = cli("run", "--repos", "repos.txt", "--rules", "default,distributed", "--report-dir", "out",
              cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    migrated = show(repo, BRANCH, "main.py").decode()
    assert "    hvd.init()\n" in migrated and "import horovod.tensorflow as hvd\n" in migrated
    report = (tmp_path / "out" / "findings.csv").read_text(encoding="utf-8")
    assert "main.py,7,4,NPU021,horovod-init,unmigrated,\"kept: hvd.DistributedOptimizer in lib.model" in report


DYNAMIC_MAIN = '''\
import importlib

import tensorflow as tf
import horovod.tensorflow as hvd


def main(model_module):
    hvd.init()
    model = importlib.import_module(model_module)
    model.train()


if __name__ == "__main__":
    main("models.resnet")
'''
DYNAMIC_MODEL = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def train():
    loss = tf.reduce_sum(tf.get_variable("w", [1]))
    return hvd.allreduce(loss)
'''


def test_a_module_loaded_at_run_time_keeps_the_init() -> None:
    """``main.py`` loads its model module by name (``importlib.import_module``, as configs and
    model zoos do): nothing imports ``models/resnet.py``, but it runs in ``main.py``'s program,
    and its all-reduce needs the init."""
    facts = repository_facts({"main.py": DYNAMIC_MAIN, "models/resnet.py": DYNAMIC_MODEL})
    findings = assert_reports(HOROVOD, DYNAMIC_MAIN, path="main.py", facts=facts,
                              findings=[("NPU021", 8, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 8).startswith(
        "kept: hvd.allreduce in models.resnet (what imports it is not known, and this file's "
        "program loads modules at run time (importlib, runpy...): it may run with this file)")
