"""NPU013 run-config-summary: RunConfig gets save_summary_steps=0; other values are reported."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages

RULES = {"NPU001", "NPU013"}
HEADER = "from npu_bridge.npu_init import *\n"
GUIDE = ("(guide: Estimator migration: the run configuration (save_summary_steps), "
         "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu013-run-config-summary)")


@pytest.mark.parametrize("imports, spelled", [
    ("import tensorflow as tf", "tf.estimator.RunConfig"),
    ("import tensorflow.compat.v1 as tf", "tf.estimator.RunConfig"),
    ("from tensorflow.estimator import RunConfig", "RunConfig"),
    ("from tensorflow.python.estimator import run_config as run_config_lib", "run_config_lib.RunConfig"),
    ("import tensorflow as tf", "tf.contrib.tpu.RunConfig"),
    ("import tensorflow as tf", "tf.compat.v1.estimator.tpu.RunConfig"),
])
def test_a_run_config_without_the_setting_gets_save_summary_steps_0(imports: str, spelled: str):
    before = f"{imports}\n\nconfig = {spelled}(model_dir=FLAGS.output_dir, save_checkpoints_steps=1000)\n"
    after = HEADER + before.replace("=1000)", "=1000, save_summary_steps=0)")
    findings = assert_migrates(RULES, before, after, findings=[("NPU001", 1, 0, "migrated"),
                                                               ("NPU013", 3, 9, "migrated")])
    assert messages(findings, "NPU013") == ["added save_summary_steps=0 (no per-step summaries on the NPU, "
                                  "as Ascend's tool sets)"]


@pytest.mark.parametrize("call, value", [
    ("tf.estimator.RunConfig(model_dir=d, save_summary_steps=0)", "0"),
    ("tf.estimator.RunConfig(model_dir=d, save_summary_steps=None)", "None"),
    ("tf.estimator.RunConfig(d, None, 0)", "0"),
    ("tf.estimator.RunConfig(model_dir=d).replace(save_summary_steps=0)", "0"),
])
def test_summaries_that_are_off_are_migrated_as_they_are(call: str, value: str):
    findings = assert_reports(RULES, f"import tensorflow as tf\n\nconfig = {call}\n",
                              findings=[("NPU013", 3, 9, "migrated")])
    assert messages(findings, "NPU013") == [f"save_summary_steps={value} is set: no per-step summaries"]


@pytest.mark.parametrize("call, value", [
    ("tf.estimator.RunConfig(model_dir=d, save_summary_steps=100)", "100"),
    ("tf.estimator.RunConfig(d, None, FLAGS.summary_steps)", "FLAGS.summary_steps"),
    ("tf.contrib.tpu.RunConfig(master=FLAGS.master, save_summary_steps=FLAGS.steps)", "FLAGS.steps"),
    ("tf.estimator.RunConfig(model_dir=d).replace(save_summary_steps=10)", "10"),
])
def test_an_explicit_value_is_kept_and_reported(call: str, value: str):
    findings = assert_reports(RULES, f"import tensorflow as tf\n\nconfig = {call}\n",
                              findings=[("NPU013", 3, 9, "unmigrated")])
    assert messages(findings, "NPU013") == [f"per-step summaries: set save_summary_steps=0 unless you need "
                                  f"them on the NPU (now: save_summary_steps={value}) {GUIDE}"]


def test_unpacked_arguments_are_reported():
    findings = assert_reports(RULES, "import tensorflow as tf\n\nconfig = tf.estimator.RunConfig(**cfg)\n",
                              findings=[("NPU013", 3, 9, "unmigrated")])
    assert messages(findings, "NPU013")[0].startswith("save_summary_steps may come in the unpacked arguments")


def test_a_run_config_of_another_library_is_left_alone():
    source = "import tensorflow as tf\nfrom ray.air import RunConfig\n\nconfig = RunConfig(name='x')\n"
    assert_reports(RULES, source, findings=[])
