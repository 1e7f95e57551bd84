"""The xla-gpu pack: NPU051 xla-off and NPU052 gpu-memory, on a config as real scripts write it
and on each bullet of the spec."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages

PACK = {"NPU001", "NPU051", "NPU052"}
HEADER = "from npu_bridge.npu_init import *\n"


TRAIN = '''\
import tensorflow as tf

from model import build_model


def session_config(use_xla):
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    if use_xla:
        # XLA JIT: faster on V100
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    return config


def model_fn(features):
    with tf.xla.experimental.jit_scope():
        logits = build_model(features)
    with tf.xla.experimental.jit_scope(compile_ops=True, separate_compiled_gradients=True):
        loss = tf.reduce_mean(logits)
    return loss


def setup_gpus():
    gpus = tf.config.experimental.list_physical_devices("GPU")
    if gpus:
        try:
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
            tf.config.experimental.set_virtual_device_configuration(
                gpus[0], [tf.config.experimental.VirtualDeviceConfiguration(memory_limit=4096)])
        except RuntimeError as error:
            print(error)
'''
TRAIN_MIGRATED = '''\
from npu_bridge.npu_init import *
import tensorflow as tf

from model import build_model


def session_config(use_xla):
    config = tf.ConfigProto(allow_soft_placement=True)
    config.gpu_options.allow_growth = True
    if use_xla:
        # XLA JIT: faster on V100
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.OFF
    return config


def model_fn(features):
    with tf.xla.experimental.jit_scope(compile_ops=False):
        logits = build_model(features)
    with tf.xla.experimental.jit_scope(compile_ops=False, separate_compiled_gradients=True):
        loss = tf.reduce_mean(logits)
    return loss


def setup_gpus():
    gpus = tf.config.experimental.list_physical_devices("GPU")
'''


def test_a_gpu_training_script_loses_xla_and_its_gpu_memory_settings():
    findings = assert_migrates(PACK, TRAIN, TRAIN_MIGRATED, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU051", 11, 8, "migrated"), ("NPU051", 16, 9, "migrated"),
        ("NPU051", 18, 9, "migrated"), ("NPU052", 28, 16, "migrated"), ("NPU052", 29, 12, "migrated")],
        removed=[("NPU052", 28, 16, "migrated"), ("NPU052", 29, 12, "migrated")])
    assert messages(findings, "NPU051") == [
        "set global_jit_level to tf.OptimizerOptions.OFF (was tf.OptimizerOptions.ON_1): the NPU "
        "compiles graphs itself",
        "added compile_ops=False to tf.xla.experimental.jit_scope: the NPU compiles graphs itself",
        "set compile_ops=False (was True) in tf.xla.experimental.jit_scope: the NPU compiles graphs itself"]
    assert messages(findings, "NPU052") == [
        "removed tf.config.experimental.set_memory_growth(...): the NPU has no GPU memory settings",
        "removed tf.config.experimental.set_virtual_device_configuration(...): the NPU has no GPU "
        "memory settings"]


@pytest.mark.parametrize("imports, before, after", [
    ("import tensorflow as tf", "config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_2",
     "config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.OFF"),
    ("import tensorflow.compat.v1 as tf1", "cfg.graph_options.optimizer_options.global_jit_level = tf1.OptimizerOptions.DEFAULT",
     "cfg.graph_options.optimizer_options.global_jit_level = tf1.OptimizerOptions.OFF"),
    ("from tensorflow.core.protobuf import config_pb2",
     "opts.global_jit_level = config_pb2.OptimizerOptions.ON_1",
     "opts.global_jit_level = config_pb2.OptimizerOptions.OFF"),
    ("import tensorflow as tf", "opts.global_jit_level = FLAGS.jit_level",
     "opts.global_jit_level = tf.OptimizerOptions.OFF"),
    ("import tensorflow as tf", "opts = tf.OptimizerOptions(global_jit_level=1, do_function_inlining=True)",
     "opts = tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF, do_function_inlining=True)"),
    ("import tensorflow as tf",
     "graph_options = tf.GraphOptions(optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.ON_1))",
     "graph_options = tf.GraphOptions(optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF))"),
])
def test_global_jit_level_becomes_off_in_the_files_spelling(imports: str, before: str, after: str):
    assert_migrates(PACK, f"{imports}\n{before}\n", f"{HEADER}{imports}\n{after}\n")


def test_a_global_jit_level_over_two_lines_is_named_on_one_line():
    """Regression (automl's EfficientDet ``main.py``): the message quoted the old value as written,
    its parentheses and line break included, a finding over two lines of findings.csv."""
    before = ("import tensorflow as tf\nif use_xla:\n    config.graph_options.optimizer_options.global_jit_level = (\n"
              "        tf.OptimizerOptions.ON_1)\n")
    after = f"{HEADER}import tensorflow as tf\nif use_xla:\n" \
        "    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.OFF\n"
    findings = assert_migrates(PACK, before, after)
    assert messages(findings, "NPU051") == [
        "set global_jit_level to tf.OptimizerOptions.OFF (was (tf.OptimizerOptions.ON_1)): the NPU compiles "
        "graphs itself"]


def test_a_global_jit_level_that_is_off_is_migrated_as_it_is():
    source = "import tensorflow as tf\nconfig.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.OFF\n"
    findings = assert_reports(PACK, source, findings=[("NPU051", 2, 0, "migrated")])
    assert messages(findings, "NPU051") == ["global_jit_level is OptimizerOptions.OFF"]


@pytest.mark.parametrize("imports, scope", [
    ("from tensorflow.contrib.compiler import jit", "jit.experimental_jit_scope"),
    ("import tensorflow as tf", "tf.contrib.compiler.jit.experimental_jit_scope"),
    ("from tensorflow.python.compiler.xla import jit", "jit.experimental_jit_scope"),
])
def test_every_jit_scope_gets_compile_ops_false(imports: str, scope: str):
    before = f"{imports}\n\nwith {scope}():\n    y = f(x)\n"
    after = f"{HEADER}{imports}\n\nwith {scope}(compile_ops=False):\n    y = f(x)\n"
    assert_migrates(PACK, before, after, findings=[("NPU001", 1, 0, "migrated"), ("NPU051", 3, 5, "migrated")])


def test_a_jit_scope_with_unpacked_arguments_is_reported():
    source = "import tensorflow as tf\n\nwith tf.xla.experimental.jit_scope(**jit_args):\n    y = f(x)\n"
    assert_reports(PACK, source, findings=[("NPU051", 3, 5, "unmigrated")])


@pytest.mark.parametrize("call", ["tf.xla.experimental.compile(model_fn, inputs=[features])",
                                  "tf.contrib.compiler.xla.compile(model_fn, inputs=[features])"])
def test_xla_compile_is_reported(call: str):
    findings = assert_reports(PACK, f"import tensorflow as tf\n\n(logits,) = {call}\n",
                              findings=[("NPU051", 3, 12, "unmigrated")])
    assert messages(findings, "NPU051")[0].startswith(
        f"{call.partition('(')[0]}(...): XLA compile has no NPU equivalent: call the function directly")


def test_a_one_line_body_and_module_level_settings_are_removed():
    before = '''\
import tensorflow as tf

gpus = tf.config.experimental.list_physical_devices("GPU")
if gpus: tf.config.experimental.set_memory_growth(gpus[0], True)  # grow as needed
tf.config.experimental.set_memory_growth(gpus[1], True)
print(len(gpus))
'''
    after = HEADER + '''\
import tensorflow as tf

gpus = tf.config.experimental.list_physical_devices("GPU")
print(len(gpus))
'''
    removed = [("NPU052", 4, 9, "migrated"), ("NPU052", 5, 0, "migrated")]
    assert_migrates(PACK, before, after, findings=[("NPU001", 1, 0, "migrated"), *removed], removed=removed)


def test_a_virtual_device_configuration_built_elsewhere_gets_no_memory_limit():
    before = ("import tensorflow as tf\n\n"
              "LIMITS = [tf.config.experimental.VirtualDeviceConfiguration(memory_limit=2048),\n"
              "          tf.config.experimental.VirtualDeviceConfiguration(1024)]\n")
    after = HEADER + before.replace("memory_limit=2048", "memory_limit=None").replace("(1024)", "(None)")
    findings = assert_migrates(PACK, before, after, findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU052", 3, 10, "migrated"), ("NPU052", 4, 10, "migrated")])
    assert messages(findings, "NPU052") == [
        "set memory_limit=None (was 2048): the NPU manages its memory itself",
        "set memory_limit=None (was 1024): the NPU manages its memory itself"]


def test_a_setting_used_as_a_value_is_reported():
    source = "import tensorflow as tf\n\nok = tf.config.experimental.set_memory_growth(gpu, True) or True\n"
    findings = assert_reports(PACK, source, findings=[("NPU052", 3, 5, "unmigrated")])
    assert messages(findings, "NPU052")[0].startswith(
        "tf.config.experimental.set_memory_growth(...) is used as a value: remove it")


@pytest.mark.parametrize("source", [
    # gpu_options are harmless on the NPU
    "import tensorflow as tf\n\nconfig = tf.ConfigProto()\nconfig.gpu_options.allow_growth = True\n"
    "config.gpu_options.per_process_gpu_memory_fraction = 0.5\n",
    # PyTorch's memory settings are another library's
    "import torch\n\ntorch.cuda.set_per_process_memory_fraction(0.5)\nconfig.global_jit_level = 2\n",
])
def test_what_is_not_xla_or_gpu_memory_of_tensorflow_is_left_alone(source: str):
    assert_reports(PACK, source, findings=[])


@pytest.mark.parametrize("statement, message", [
    ("graph_options = tf.GraphOptions()", "XLA stays off: no optimizer_options are given"),
    ("graph_options = tf.GraphOptions(rewrite_options=rewrite_options)",
     "XLA stays off: no optimizer_options are given"),
    ("options = tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L1, do_function_inlining=False)",
     "XLA stays off: no global_jit_level is given"),
])
def test_options_that_leave_xla_off_are_checked_and_need_nothing(statement: str, message: str):
    """tensor2tensor's ``create_session_config`` builds ``tf.GraphOptions()`` when not on TPU
    and ``tf.GraphOptions(rewrite_options=...)`` with the graph rewriter: NPU100 said of each
    "Ascend migrates tf.GraphOptions, but no enabled npu-codemod rule covered this use: migrate
    it as the guide says", a site left for work that needs none."""
    source = f"import tensorflow as tf\n\n{statement}\n"
    findings = assert_reports({"NPU051", "NPU100"}, source, findings=[("NPU051", 3, statement.index("tf."), "migrated")])
    assert messages(findings, "NPU051") == [message]


def test_options_given_in_unpacked_arguments_are_not_judged():
    source = "import tensorflow as tf\n\ngraph_options = tf.GraphOptions(**options)\n"
    findings = assert_reports({"NPU051"}, source, findings=[])
    assert findings == []


#: NVIDIA's TF 1.x scripts switch XLA on through TensorFlow's environment, not the config.
XLA_FROM_THE_ENVIRONMENT = '''\
import os

import tensorflow as tf

XLA_FLAGS = "TF_XLA_FLAGS"


def setup_xla(use_xla, level):
    if use_xla:
        os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"
    os.environ.setdefault(XLA_FLAGS, "--tf_xla_auto_jit=%d" % level)
    os.putenv("TF_XLA_FLAGS", os.environ.get("TF_XLA_FLAGS", "") + " --tf_xla_auto_jit=fusible")
    os.environ["TF_XLA_FLAGS"] = FLAGS.xla_flags
'''


def test_tf_xla_flags_that_switch_auto_clustering_on_are_reported_with_what_to_do():
    """Each setting of TF_XLA_FLAGS that switches XLA auto-clustering on (TensorFlow reads
    the variable when it builds the first session) is reported: XLA must be off, and the
    flags are not NPU options; one whose value the code does not show says what to check."""
    findings = assert_reports(PACK, XLA_FROM_THE_ENVIRONMENT, findings=[
        ("NPU051", 10, 8, "unmigrated"), ("NPU051", 11, 4, "unmigrated"),
        ("NPU051", 12, 4, "unmigrated"), ("NPU051", 13, 4, "unmigrated")])
    why = "the NPU compiles graphs itself, and XLA must be off"
    assert [message.partition(" (guide:")[0] for message in messages(findings, "NPU051")] == [
        "TF_XLA_FLAGS = \"--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit\" switches XLA auto-clustering on: "
        f"{why}; remove --tf_xla_auto_jit=2 and --tf_xla_cpu_global_jit from TF_XLA_FLAGS",
        f"TF_XLA_FLAGS = \"--tf_xla_auto_jit=%d\" % level may switch XLA auto-clustering on: {why}; "
        "remove --tf_xla_auto_jit=%d from TF_XLA_FLAGS",
        "TF_XLA_FLAGS = os.environ.get(\"TF_XLA_FLAGS\", \"\") + \" --tf_xla_auto_jit=fusible\" switches "
        f"XLA auto-clustering on: {why}; remove --tf_xla_auto_jit=fusible from TF_XLA_FLAGS",
        f"TF_XLA_FLAGS = FLAGS.xla_flags may switch XLA auto-clustering on: {why}; make sure it sets "
        "neither --tf_xla_auto_jit (but to 0 or -1) nor --tf_xla_cpu_global_jit"]


@pytest.mark.parametrize("statement", [
    'os.environ["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=0"',
    "os.environ['TF_XLA_FLAGS'] = '--tf_xla_auto_jit=-1 --tf_xla_cpu_global_jit=false'",
])
def test_tf_xla_flags_that_leave_auto_clustering_off_are_checked_and_need_nothing(statement: str):
    source = f"import os\n\nimport tensorflow as tf\n\n{statement}\n"
    findings = assert_reports(PACK, source, findings=[("NPU051", 5, 0, "migrated")])
    assert messages(findings, "NPU051") == ["TF_XLA_FLAGS leaves XLA auto-clustering off"]


@pytest.mark.parametrize("statement", [
    'os.environ["TF_XLA_FLAGS"] = "--xla_hlo_profile"',  # no auto-clustering flag
    'os.environ["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=/usr/local/cuda"',  # the compiler's
    'flags["TF_XLA_FLAGS"] = "--tf_xla_auto_jit=2"',  # a dict, not the environment
    'os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"',
])
def test_other_environment_settings_are_not_xla_auto_clustering(statement: str):
    assert_reports(PACK, f"import os\n\nimport tensorflow as tf\n\n{statement}\n", findings=[])


def test_each_flag_of_tf_xla_flags_is_read_on_its_own():
    """A flag's value comes after ``=``: the word after a space is the next flag, not the
    value of ``--tf_xla_cpu_global_jit`` (which took ``--tf_xla_auto_jit=2`` for its value)."""
    source = ('import os\n\nimport tensorflow as tf\n\n'
              'os.environ["TF_XLA_FLAGS"] = "--tf_xla_cpu_global_jit --tf_xla_auto_jit=2"\n')
    findings = assert_reports(PACK, source, findings=[("NPU051", 5, 0, "unmigrated")])
    assert messages(findings, "NPU051")[0].partition(": ")[2].startswith(
        "the NPU compiles graphs itself, and XLA must be off; remove --tf_xla_cpu_global_jit and "
        "--tf_xla_auto_jit=2 from TF_XLA_FLAGS")


#: A launcher that sets the environment of the whole run in one call (NVIDIA's DLE scripts).
XLA_IN_ONE_UPDATE = '''\
import os

import tensorflow as tf


def setup_environment(args):
    os.environ.update({
        "TF_XLA_FLAGS": "--tf_xla_auto_jit=2",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    })
    os.environ.update(TF_XLA_FLAGS="--tf_xla_auto_jit=fusible", CUDA_CACHE_DISABLE="0")
    os.environ.update(dict(TF_XLA_FLAGS=args.xla_flags))
'''


def test_tf_xla_flags_set_by_an_update_of_the_environment_are_reported():
    """``os.environ.update({...})``, ``update(TF_XLA_FLAGS=...)`` and ``update(dict(...))`` set
    the variable as an item assignment does: the same findings, at the call."""
    findings = assert_reports(PACK, XLA_IN_ONE_UPDATE, findings=[
        ("NPU051", 7, 4, "unmigrated"), ("NPU051", 11, 4, "unmigrated"), ("NPU051", 12, 4, "unmigrated")])
    why = "the NPU compiles graphs itself, and XLA must be off"
    assert [message.partition(" (guide:")[0] for message in messages(findings, "NPU051")] == [
        f"TF_XLA_FLAGS = \"--tf_xla_auto_jit=2\" switches XLA auto-clustering on: {why}; remove "
        "--tf_xla_auto_jit=2 from TF_XLA_FLAGS",
        f"TF_XLA_FLAGS = \"--tf_xla_auto_jit=fusible\" switches XLA auto-clustering on: {why}; remove "
        "--tf_xla_auto_jit=fusible from TF_XLA_FLAGS",
        f"TF_XLA_FLAGS = args.xla_flags may switch XLA auto-clustering on: {why}; make sure it sets "
        "neither --tf_xla_auto_jit (but to 0 or -1) nor --tf_xla_cpu_global_jit"]


@pytest.mark.parametrize("statement", [
    'params.update({"TF_XLA_FLAGS": "--tf_xla_auto_jit=2"})',  # a dict, not the environment
    'os.environ.update({"TF_CPP_MIN_LOG_LEVEL": "2"})',
    'os.environ.update(TF_XLA_FLAGS="--tf_xla_auto_jit=0")',  # checked: see below
])
def test_other_updates_say_nothing_of_auto_clustering_on(statement: str):
    findings = assert_reports(PACK, f"import os\n\nimport tensorflow as tf\n\n{statement}\n",
                              findings=[("NPU051", 5, 0, "migrated")] if "=0" in statement else [])
    assert all(finding.status == "migrated" for finding in findings)
