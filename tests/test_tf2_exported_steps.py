"""NPU068 on a training step a script exports instead of running: TensorFlow Lite's
model-personalization example traces ``train`` of a ``tf.Module`` and saves its concrete function as
a signature for on-device training. Before, ``gradients = npu.distribute.all_reduce(...)`` went into
it, so the exported model would carry an NPU collective to a phone; now it is reported."""

from __future__ import annotations

from support.rules import assert_migrates, assert_unchanged, messages, sites
from support.tf2_scripts import PERSONALIZATION

RULES = frozenset({"NPU068"})
TF2_RUNTIME = frozenset({"tf-runtime:2"})



def test_a_step_exported_as_a_signature_gets_no_all_reduce() -> None:
    findings = assert_unchanged(PERSONALIZATION, RULES, facts=TF2_RUNTIME)
    assert sites(f for f in findings if f.rule_id == "NPU068") == [("NPU068", 18, 8, "unmigrated")]
    assert messages(findings, "NPU068")[0].startswith(
        "train() is exported (its concrete function is saved or converted, e.g. as a TFLite on-device "
        "training signature), not run by this script: an all_reduce here would go into the exported model")


def test_a_step_the_script_runs_is_still_all_reduced() -> None:
    """The same step called by the script's loop, nothing exported: rewritten as before."""
    source = PERSONALIZATION.replace(
        '''    tf.saved_model.save(model, saved_model_dir,
                        signatures={"train": model.train.get_concrete_function()})
    converter = tf.lite.TFLiteConverter.from_saved_model(saved_model_dir)
    with open("model.tflite", "wb") as f:
        f.write(converter.convert())
''', '''    for _ in range(10):
        model.train(tf.zeros([8, 62720]), tf.zeros([8, 4]))
''')
    after = source.replace('"""Converts a TF model to a TFLite transfer learning model."""\n',
                           '"""Converts a TF model to a TFLite transfer learning model."""\nimport npu_device as npu\n') \
        .replace("        gradients = tape.gradient(loss, [self.ws, self.bs])\n",
                 "        gradients = tape.gradient(loss, [self.ws, self.bs])\n"
                 '        gradients = npu.distribute.all_reduce(gradients, "mean")\n')
    findings = assert_migrates(source, after, RULES, facts=TF2_RUNTIME)
    assert sites(f for f in findings if f.rule_id == "NPU068") == [("NPU068", 18, 8, "migrated")]
