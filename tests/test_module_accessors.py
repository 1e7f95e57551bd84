"""Issue 25: module accessor functions. A library reaches ``tf.contrib`` through functions that
return modules (``lib/utils/contrib.py``: ``def tpu(): ... return contrib_tpu``), so that it
imports where contrib is missing; ``contrib.tpu().TPUEstimator(...)`` resolves like
``tf.contrib.tpu.TPUEstimator`` for every rule and for NPU100. A function whose module is not
known (it looks the module up by name) makes NPU100 report each access through it, counted.
"""

from __future__ import annotations

from npu_codemod.api._toolkit import accessor_facts
from npu_codemod.codemods.accessors import file_accessors, repository_accessors
from npu_codemod.testing import assert_migrates, assert_reports, engine_of_ids

from support.accessor_sources import ALIASED, CONTRIB, TRAINER
from support.packs import repository_facts
from support.rules import messages

RULES = {"NPU001", "NPU011", "NPU012", "NPU013", "NPU100"}
HEADER = "from npu_bridge.npu_init import *\n"

FILES = {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/contrib.py": CONTRIB,
         "lib/trainer.py": TRAINER}
FACTS = repository_facts(FILES)


def test_accessor_facts_name_the_module_each_function_returns():
    assert sorted(accessor_facts("lib/utils/contrib.py", CONTRIB)) == [
        "accessor:lib.utils.contrib.contrib_module=?",  # looked up by name
        "accessor:lib.utils.contrib.distribute=tensorflow.contrib.distribute",
        "accessor:lib.utils.contrib.framework=tensorflow.contrib.framework",  # DummyModule on TF 2
        "accessor:lib.utils.contrib.slim=tensorflow.contrib.slim",
        "accessor:lib.utils.contrib.tpu=tensorflow.contrib.tpu"]  # is_available takes an argument
    spelled = file_accessors("lib/trainer.py", TRAINER, repository_accessors(FACTS))
    assert spelled["contrib.tpu"] == spelled["tpu_module"] == "tensorflow.contrib.tpu"


def test_calls_through_accessors_are_migrated_like_the_modules_they_return():
    after = TRAINER.replace("from __future__ import absolute_import\n",
                            "from __future__ import absolute_import\n" + HEADER).replace(
        "tpu_config=tpu_config)", "tpu_config=tpu_config, save_summary_steps=0)").replace(
        "      config=run_config,", "      config=npu_run_config_init(run_config=run_config),").replace(
        "      use_tpu=flags.use_tpu,", "      use_tpu=False,").replace(
        '"use_tpu": flags.use_tpu})', '"use_tpu": flags.use_tpu}, eval_on_tpu=False, export_to_tpu=False)')
    findings = assert_migrates(RULES, TRAINER, after, facts=FACTS, path="lib/trainer.py", findings=[
        ("NPU001", 4, 0, "migrated"),
        ("NPU012", 16, 16, "not-needed"),  # contrib.tpu().CrossShardOptimizer, under params["use_tpu"]
        ("NPU100", 17, 7, "unmigrated"),  # contrib.framework().arg_scope: deprecated
        ("NPU100", 18, 14, "unmigrated"),  # contrib.contrib_module(): not resolved
        ("NPU012", 20, 9, "unmigrated"),  # tpu_module().TPUEstimatorSpec(host_call=...)
        ("NPU013", 26, 15, "migrated"),  # contrib.tpu().RunConfig
        ("NPU011", 27, 14, "migrated"), ("NPU012", 27, 14, "migrated")])  # TPUEstimator
    assert messages(findings, "NPU012")[0].startswith(
        "TPU-only: remove contrib.tpu().CrossShardOptimizer for the NPU and use `optimizer` directly")
    assert messages(findings, "NPU012")[1].startswith("tpu_module().TPUEstimatorSpec with host_call")
    assert messages(findings, "NPU100") == [
        "deprecated in TF 1.15: replace tf.contrib.framework.arg_scope with its public TF 1.15 "
        "equivalent before migrating, or the migration may fail (guide: Ascend's TF 1.15 API "
        "support list, https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu100-api-support)",
        "unresolved TensorFlow access: contrib.contrib_module() is a function of the repository "
        "that returns a TensorFlow module npu-codemod cannot resolve (it picks or looks the module "
        "up): check contrib.contrib_module().summarize_tensor against Ascend's API support list by "
        "hand (guide: Ascend's TF 1.15 API support list, "
        "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu100-api-support)"]


def _unknown_sites(source: str) -> int:
    outcome = engine_of_ids(frozenset(RULES)).process(source.encode(), "lib/trainer.py", repo="repo",
                                                      facts=FACTS)
    return sum(sites.sites for sites in outcome.api_sites if sites.status == "unknown")


def test_an_unresolved_access_is_counted_for_api_readiness():
    without = TRAINER.replace("    summary = contrib.contrib_module().summarize_tensor(logits)\n",
                              "    summary = logits\n")
    assert _unknown_sites(TRAINER) == _unknown_sites(without) + 1


def test_the_accessor_module_itself_is_audited_as_it_is():
    findings = assert_reports(RULES, CONTRIB, facts=FACTS, path="lib/utils/contrib.py")
    assert {f.rule_id for f in findings} == {"NPU100"}


LOCAL = '''\
"""Pre-training with the accessor defined next to its use."""
import tensorflow as tf


def _tpu_lib():
  """tf.contrib.tpu, looked up only where the TPU is used."""
  return tf.contrib.tpu


def build(flags, model_fn, run_config):
  return _tpu_lib().TPUEstimator(model_fn=model_fn, config=run_config, use_tpu=True,
                                 eval_on_tpu=False, export_to_tpu=False)
'''


def test_an_accessor_of_the_same_file_resolves_too():
    facts = repository_facts({"pretrain.py": LOCAL})
    after = LOCAL.replace("import tensorflow as tf\n", HEADER + "import tensorflow as tf\n").replace(
        "config=run_config, use_tpu=True,", "config=npu_run_config_init(run_config=run_config), use_tpu=False,")
    findings = assert_migrates(RULES, LOCAL, after, facts=facts, path="pretrain.py", findings=[
        ("NPU001", 2, 0, "migrated"), ("NPU011", 11, 9, "migrated"), ("NPU012", 11, 9, "migrated"),
        ("NPU100", 7, 9, "unmigrated")])  # return tf.contrib.tpu: deprecated
    assert messages(findings, "NPU012") == ["set use_tpu=False (was True): the TPU is switched off on the NPU"]


def test_a_name_bound_to_an_accessor_call_resolves_like_the_module():
    after = ALIASED.replace("from __future__ import absolute_import\n",
                            "from __future__ import absolute_import\n" + HEADER).replace(
        "RunConfig(model_dir=flags.model_dir)", "RunConfig(model_dir=flags.model_dir, save_summary_steps=0)").replace(
        "      config=run_config,", "      config=npu_run_config_init(run_config=run_config),").replace(
        "      use_tpu=flags.use_tpu,", "      use_tpu=False,").replace(
        "train_batch_size=flags.batch_size)", "train_batch_size=flags.batch_size, eval_on_tpu=False, "
        "export_to_tpu=False)")
    findings = assert_migrates(RULES, ALIASED, after, facts=FACTS, path="lib/aliased.py", findings=[
        ("NPU001", 4, 0, "migrated"),
        ("NPU100", 15, 12, "unmigrated"),  # layers_lib.summarize_tensor: not resolved
        ("NPU012", 19, 9, "unmigrated"),  # tpu_lib.TPUEstimatorSpec(host_call=...)
        ("NPU013", 25, 15, "migrated"),  # tpu_lib.RunConfig
        ("NPU011", 26, 14, "migrated"), ("NPU012", 26, 14, "migrated")])  # tpu_lib.TPUEstimator
    assert messages(findings, "NPU012")[0].startswith("tpu_lib.TPUEstimatorSpec with host_call")
    assert "check contrib.contrib_module().summarize_tensor against" in messages(findings, "NPU100")[0]
