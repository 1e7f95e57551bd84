"""NPU021 horovod-init: golden before/after per bullet of the spec."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import BOTH_REPO, GUIDE, HOROVOD_REPO, HVD, message_of

RULES = {"NPU021"}
STARTED = "the NPU starts its collective communication itself, from the job's rank table"
TRAINER = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def main(_):
    # Horovod: initialize Horovod.
    hvd.init()

    train(FLAGS.model_dir)
'''
TRAINER_AFTER = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def main(_):
    # Horovod: initialize Horovod.
    train(FLAGS.model_dir)
'''


def test_the_init_statement_is_removed_and_its_comment_stays() -> None:
    findings = assert_migrates(RULES, TRAINER, TRAINER_AFTER, facts=HOROVOD_REPO,
                               findings=[("NPU021", 7, 4, "migrated")],
                               removed=[("NPU021", 7, 4, "migrated")])
    assert findings[0].message == f"removed hvd.init(): {STARTED}"


@pytest.mark.parametrize("imports, spelled", [
    ("import horovod.tensorflow as hvd", "hvd.init"),
    ("import horovod.tensorflow.keras as hvd", "hvd.init"),
    ("import horovod.keras as hvd", "hvd.init"),
    ("import horovod.tensorflow", "horovod.tensorflow.init"),
    ("from horovod import tensorflow as hvd", "hvd.init"),
    ("from horovod.tensorflow import init", "init"),
    ("from horovod.tensorflow.keras import init as hvd_init", "hvd_init"),
    ("from horovod.tensorflow.mpi_ops import init", "init"),
])
def test_every_spelling(imports: str, spelled: str) -> None:
    before = f"import tensorflow as tf\n{imports}\n\n{spelled}()\nmain()\n"
    after = f"import tensorflow as tf\n{imports}\n\nmain()\n"
    assert_migrates(RULES, before, after, facts=HOROVOD_REPO, findings=[("NPU021", 4, 0, "migrated")],
                    removed=[("NPU021", 4, 0, "migrated")])


def test_a_block_left_empty_gets_pass() -> None:
    before = HVD + "if FLAGS.use_horovod:\n    hvd.init()\nmain()\n"
    after = HVD + "if FLAGS.use_horovod:\n    pass\nmain()\n"
    assert_migrates(RULES, before, after, facts=HOROVOD_REPO, removed=[("NPU021", 4, 4, "migrated")])


def test_a_one_line_body_becomes_pass() -> None:
    before = HVD + "if FLAGS.use_horovod: hvd.init()\n"
    after = HVD + "if FLAGS.use_horovod: pass\n"
    assert_migrates(RULES, before, after, facts=HOROVOD_REPO, removed=[("NPU021", 3, 22, "migrated")])


@pytest.mark.parametrize("line, kept", [
    ("hvd.init(); size = 4\n", "size = 4\n"),
    ("size = 4; hvd.init()\n", "size = 4\n"),
    ("size = 4; hvd.init(); rank = 0\n", "size = 4; rank = 0\n"),
])
def test_between_semicolons_only_the_call_goes(line: str, kept: str) -> None:
    assert_migrates(RULES, HVD + line, HVD + kept, facts=HOROVOD_REPO,
                    removed=[("NPU021", 3, line.index("hvd"), "migrated")])


@pytest.mark.parametrize("source, column", [
    ("initialized = hvd.init()\n", 14),
    ("def start():\n    return hvd.init()\n", 11),
    ("callbacks = [hvd.init]\n", 13),
    ("hvd.init().wait()\n", 0),
])
def test_init_used_as_a_value_is_reported(source: str, column: int) -> None:
    findings = assert_reports(RULES, HVD + source, facts=HOROVOD_REPO,
                              findings=[("NPU021", 3 + source.count("\n") - 1, column, "unmigrated")])
    assert "is used as a value: remove it (the NPU starts" in findings[0].message


def test_a_file_that_imports_horovod_but_not_tensorflow_is_reported_not_changed() -> None:
    source = "import horovod.tensorflow as hvd\n\n\ndef setup():\n    hvd.init()\n"
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, path="distributed_utils.py",
                              findings=[("NPU021", 5, 4, "unmigrated")])
    assert findings[0].message.startswith(
        "this file imports Horovod but not TensorFlow, so npu-codemod does not rewrite it "
        "(from npu_bridge.npu_init import * gives the NPU names): remove hvd.init() (guide: ")


def test_a_repository_that_also_uses_a_strategy_is_reported_not_changed() -> None:
    findings = assert_reports(RULES, TRAINER, facts=BOTH_REPO, findings=[("NPU021", 7, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 7) == (
        "the repository trains with Horovod and with a tf.distribute strategy: pick one "
        f"distribution mode, then remove hvd.init() (guide: Migrating Horovod scripts, {GUIDE}#npu021-horovod-init)")


@pytest.mark.parametrize("source", [
    "import torch\nimport horovod.torch as hvd\n\nhvd.init()\n",  # Horovod for PyTorch
    "import tensorflow as tf\nimport horovod.torch as hvd\n\nhvd.init()\n",
    "import tensorflow as tf\n\nhvd.init()\n",  # hvd bound to nothing
])
def test_other_horovods_and_unbound_names_are_left_alone(source: str) -> None:
    assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[])


def test_off_by_default_and_in_the_distributed_pack() -> None:
    from npu_codemod.plugins.manager import load_plugins, select_rules

    rules = load_plugins().rules()
    (rule,) = [rule for rule in rules if rule.id == "NPU021"]
    assert (rule.pack, rule.default_on) == ("distributed", False)
    assert "NPU021" not in {r.id for r in select_rules(rules, None, set())}
    assert "NPU021" in {r.id for r in select_rules(rules, {"NPU021"}, set())}


KEPT = "still need Horovod initialised; migrate or remove them first"


@pytest.mark.parametrize("use, named", [
    ("loss = hvd.allreduce(loss)", "hvd.allreduce(...) (line 5)"),
    ("hooks = [hvd.callbacks.MetricAverageCallback()]", "hvd.callbacks.MetricAverageCallback() (line 5)"),
    ("print(hvd.rank())", "hvd.rank() (line 5)"),  # NPU022 is not enabled: it stays
    ("tape = hvd.DistributedGradientTape(tape)", "hvd.DistributedGradientTape(...) (line 5)"),
    ('print(f"worker {hvd.cross_rank()}")', "an f-string's Horovod call (line 5)"),
])
def test_the_init_stays_while_a_use_needs_it(use: str, named: str) -> None:
    findings = assert_reports(RULES, HVD + "\nhvd.init()\n" + use + "\n", facts=HOROVOD_REPO,
                              findings=[("NPU021", 4, 0, "unmigrated")])
    assert findings[0].message.startswith(f"kept: {named} {KEPT} (guide: Migrating Horovod scripts")


@pytest.mark.parametrize("use", ["if hvd.nccl_built():\n    print('NCCL')", "hvd.shutdown()",
                                 "compression = hvd.Compression.fp16"])
def test_uses_that_need_no_init_let_it_go(use: str) -> None:
    before = HVD + "\nhvd.init()\n" + use + "\n"
    assert_migrates(RULES, before, before.replace("hvd.init()\n", ""), facts=HOROVOD_REPO,
                    removed=[("NPU021", 4, 0, "migrated")])


@pytest.mark.parametrize("reset", [
    "def reset():\n    hvd.shutdown()\n    hvd.init()\n",
    "def reset():\n    hvd.shutdown(); hvd.init()\n",
])
def test_an_init_after_a_shutdown_restarts_horovod_and_stays(reset: str) -> None:
    findings = assert_reports(RULES, HVD + "\n\n" + reset, facts=HOROVOD_REPO)
    assert [(f.rule_id, f.status) for f in findings] == [("NPU021", "unmigrated")]
    assert findings[0].message.startswith(
        "kept: hvd.init() follows hvd.shutdown() (a reset that restarts Horovod): remove both once "
        "nothing uses Horovod")


def test_a_shutdown_in_another_function_does_not_keep_the_init() -> None:
    before = HVD + "\n\ndef main():\n    hvd.init()\n\n\ndef stop():\n    hvd.shutdown()\n"
    assert_migrates(RULES, before, before.replace("    hvd.init()\n", "    pass\n"),
                    facts=HOROVOD_REPO, removed=[("NPU021", 6, 4, "migrated")])
