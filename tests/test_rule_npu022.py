"""NPU022 horovod-topology: golden before/after per bullet of the spec."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports, run_rules

from support.packs import BOTH_REPO, HOROVOD_REPO, HVD, INIT, message_of, pack_migrates

RULES = {"NPU022"}
NO_PINNING = ("GPU pinning has no meaning on the NPU, where each process's device comes from how "
              "the job is launched (its rank table and device ID)")


@pytest.mark.parametrize("horovod, npu", [
    ("hvd.rank()", "get_npu_rank_id()"),
    ("hvd.local_rank()", "get_npu_local_rank_id()"),
    ("hvd.size()", "get_npu_rank_size()"),
    ("hvd.local_size()", "get_npu_local_rank_size()"),
])
def test_each_topology_call_becomes_the_npu_one(horovod: str, npu: str) -> None:
    findings = pack_migrates(RULES, f"value = {horovod}\n", f"value = {npu}\n",
                             findings=[("NPU022", 3, 8, "migrated")])
    assert findings[0].message == f"replaced {horovod} with {npu}"


def test_wherever_they_appear() -> None:
    before = '''\
dataset = dataset.shard(hvd.size(), hvd.rank())
opt = tf.train.AdamOptimizer(0.001 * hvd.size())
steps = args.num_steps // hvd.size()
if hvd.rank() == 0:
    saver.save(sess, os.path.join(FLAGS.model_dir, "rank%d" % hvd.rank()))
verbose = 1 if hvd.rank() == 0 else 0
'''
    after = '''\
dataset = dataset.shard(get_npu_rank_size(), get_npu_rank_id())
opt = tf.train.AdamOptimizer(0.001 * get_npu_rank_size())
steps = args.num_steps // get_npu_rank_size()
if get_npu_rank_id() == 0:
    saver.save(sess, os.path.join(FLAGS.model_dir, "rank%d" % get_npu_rank_id()))
verbose = 1 if get_npu_rank_id() == 0 else 0
'''
    findings = pack_migrates(RULES, before, after)
    assert len(findings) == 7 and {f.status for f in findings} == {"migrated"}


def test_in_the_expressions_of_f_strings() -> None:
    before = ('checkpoint = f"/tmp/model-{hvd.rank()}/ckpt"\n'
              'logging.info(f"worker {hvd.rank():02d} of {hvd.size()} {{braces}} {name!r}")\n'
              "text = f'''rank\n{hvd.local_rank()}'''\n")
    after = ('checkpoint = f"/tmp/model-{get_npu_rank_id()}/ckpt"\n'
             'logging.info(f"worker {get_npu_rank_id():02d} of {get_npu_rank_size()} {{braces}} {name!r}")\n'
             "text = f'''rank\n{get_npu_local_rank_id()}'''\n")
    findings = pack_migrates(RULES, before, after, findings=[
        ("NPU022", 3, 27, "migrated"), ("NPU022", 4, 23, "migrated"), ("NPU022", 4, 43, "migrated"),
        ("NPU022", 6, 1, "migrated")])
    assert findings[0].message == "replaced hvd.rank() with get_npu_rank_id() in an f-string"


@pytest.mark.parametrize("source", [
    'label = "hvd.rank()"\n',  # a plain string
    'label = f"{{hvd.rank()}}"\n',  # braces, not a field
    'label = f"{hvd_rank()}"\n',  # another name
])
def test_strings_that_only_mention_the_names_stay(source: str) -> None:
    assert_reports(RULES, HVD + source, facts=HOROVOD_REPO, findings=[])


def test_a_name_not_called_is_respelled_too() -> None:
    findings = pack_migrates(RULES, "rank_of = hvd.rank\n", "rank_of = get_npu_rank_id\n")
    assert findings[0].message == "replaced hvd.rank with get_npu_rank_id"


@pytest.mark.parametrize("imports, spelled", [
    ("import horovod.tensorflow.keras as hvd", "hvd.size"),
    ("from horovod.tensorflow import size", "size"),
    ("from horovod.tensorflow import size as world_size", "world_size"),
    ("import horovod.tensorflow", "horovod.tensorflow.size"),
])
def test_every_spelling(imports: str, spelled: str) -> None:
    header = f"import tensorflow as tf\n{imports}\n"
    assert_migrates(RULES, f"{header}n = {spelled}()\n", f"{INIT}{header}n = get_npu_rank_size()\n",
                    facts=HOROVOD_REPO, findings=[("NPU022", 3, 4, "migrated")])


def test_gpu_pinning_to_the_local_rank_is_removed() -> None:
    before = '''\
# Horovod: pin GPU to be used to process local rank (one GPU per process)
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
config.gpu_options.visible_device_list = str(hvd.local_rank())
session_config.gpu_options.visible_device_list = "%d" % (hvd.local_rank() % hvd.local_size())
'''
    after = '''\
# Horovod: pin GPU to be used to process local rank (one GPU per process)
config = tf.ConfigProto()
config.gpu_options.allow_growth = True
'''
    findings = assert_migrates(RULES, HVD + before, HVD + after, facts=HOROVOD_REPO,
                               findings=[("NPU022", 6, 0, "migrated"), ("NPU022", 7, 0, "migrated")],
                               removed=[("NPU022", 6, 0, "migrated"), ("NPU022", 7, 0, "migrated")])
    assert [f.message for f in findings] == [
        "removed the GPU pinning config.gpu_options.visible_device_list = str(hvd.local_rank()) (each "
        f"process's GPU numbered by its Horovod local rank, hvd.local_rank()): {NO_PINNING}",
        "removed the GPU pinning session_config.gpu_options.visible_device_list = \"%d\" % "
        "(hvd.local_rank() % hvd.local_size()) (each process's GPU numbered by its Horovod local rank, "
        f"hvd.local_rank()): {NO_PINNING}"]


def test_gpu_pinning_to_the_global_rank_is_named_so() -> None:
    """``str(hvd.rank())`` pins by the global rank: the message said "to the local rank"."""
    before = "config = tf.ConfigProto()\n# Pin GPU to rank\nconfig.gpu_options.visible_device_list = str(hvd.rank())\n"
    findings = assert_migrates(RULES, HVD + before, HVD + "config = tf.ConfigProto()\n# Pin GPU to rank\n",
                               facts=HOROVOD_REPO, findings=[("NPU022", 5, 0, "migrated")],
                               removed=[("NPU022", 5, 0, "migrated")])
    assert findings[0].message == (
        "removed the GPU pinning config.gpu_options.visible_device_list = str(hvd.rank()) (each "
        f"process's GPU numbered by its Horovod rank, hvd.rank()): {NO_PINNING}")


def test_other_gpu_settings_with_the_rank_are_respelled() -> None:
    pack_migrates(RULES,
                  "gpu_options = tf.GPUOptions(visible_device_list=str(hvd.local_rank()))\n",
                  "gpu_options = tf.GPUOptions(visible_device_list=str(get_npu_local_rank_id()))\n",
                  findings=[("NPU022", 3, 52, "migrated")])


def test_a_second_run_reports_the_npu_calls_as_migrated() -> None:
    source = INIT + HVD + 'd = dataset.shard(get_npu_rank_size(), get_npu_rank_id())\nf"{get_npu_rank_id()}"\n'
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[
        ("NPU022", 4, 18, "migrated"), ("NPU022", 4, 39, "migrated"), ("NPU022", 5, 3, "migrated")])
    assert [f.message for f in findings] == [
        "uses get_npu_rank_id()", "uses get_npu_rank_size()", "uses get_npu_rank_id()"]


def test_blocked_files_and_repositories_are_reported_not_changed() -> None:
    source = "import horovod.tensorflow as hvd\n\nRANK = hvd.rank()\nNAME = f'w{hvd.rank()}'\n"
    findings = assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[
        ("NPU022", 3, 7, "unmigrated"), ("NPU022", 4, 11, "unmigrated")])
    assert "does not rewrite it (from npu_bridge.npu_init import * gives the NPU names): replace " \
           "hvd.rank() with get_npu_rank_id() (guide" in findings[1].message
    pinned = HVD + "config.gpu_options.visible_device_list = str(hvd.local_rank())\n"
    findings = assert_reports(RULES, pinned, facts=BOTH_REPO, findings=[("NPU022", 3, 45, "unmigrated")])
    assert message_of(findings, "NPU022", 3).startswith(
        "the repository trains with Horovod and with a tf.distribute strategy: pick one "
        "distribution mode, then remove the GPU pinning config.gpu_options.visible_device_list = "
        "str(hvd.local_rank()) (each process's GPU numbered by its Horovod local rank, "
        f"hvd.local_rank()): {NO_PINNING} (guide")


def test_a_file_without_horovod_is_not_touched() -> None:
    outcome = run_rules(RULES, "import tensorflow as tf\nrank = comm.rank()\nsize = len(x)\n",
                        facts=HOROVOD_REPO)
    assert (outcome.new, outcome.findings) == (None, [])
