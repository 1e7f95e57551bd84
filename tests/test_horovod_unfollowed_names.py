"""Horovod reached where no import of the file binds it: ``from horovod.tensorflow import *``
(``init()``, ``rank()``, ``BroadcastGlobalVariablesHook(0)``), an attribute named as the module
is on another object (``model.hvd.rank()``, ``self.model.hvd.size()``), a repository module's
``hvd`` read through that module (``common.hvd.rank()``). They had no finding with the pack on
or off; now each is reported (the distributed pack's NPU023/NPU025 with it on, NPU100 with it
off), never rewritten."""

from __future__ import annotations

from npu_codemod.testing import assert_reports, run_rules, sites

from support.packs import DISTRIBUTED, HOROVOD_REPO, message_of, repository_facts

STARRED = '''\
import tensorflow as tf
from horovod.tensorflow import *


def main(_):
    init()
    opt = DistributedOptimizer(tf.train.AdamOptimizer(0.001 * size()))
    hooks = [BroadcastGlobalVariablesHook(0)]
    if rank() == 0:
        print("chief")


def size_of(batch):
    size = len(batch)  # the file's own name: not Horovod's
    return size
'''
CHAINS = '''\
import tensorflow as tf


def train(model):
    if model.hvd.rank() == 0:
        tf.logging.info("workers: %d", model.hvd.size())


class Trainer(object):
    def __init__(self, model):
        self.model = model

    def steps(self, total):
        return total // self.model.hvd.size()

    def reduce(self, grads):
        return [self.model.hvd.allreduce(g) for g in grads]
'''
COMMON = "import horovod.tensorflow as hvd\n"
THROUGH_MODULE = '''\
import tensorflow as tf
import common

common.hvd.init()
shard = tf.constant([common.hvd.size(), common.hvd.rank()])
'''


def test_a_star_import_of_horovod_and_each_use_of_its_names_are_reported() -> None:
    findings = assert_reports(DISTRIBUTED, STARRED, facts=HOROVOD_REPO, findings=[
        ("NPU023", 7, 10, "unmigrated"), ("NPU025", 2, 0, "unmigrated"), ("NPU025", 6, 4, "unmigrated"),
        ("NPU025", 7, 62, "unmigrated"), ("NPU025", 8, 13, "unmigrated"), ("NPU025", 9, 7, "unmigrated")])
    assert message_of(findings, "NPU025", 2).startswith(
        "from horovod.tensorflow import * binds Horovod's names where npu-codemod does not follow them "
        "(each use of them it finds is reported, never rewritten): import horovod.tensorflow as hvd and "
        "spell hvd.<name> to have them migrated, or migrate them by hand")
    assert message_of(findings, "NPU025", 9).startswith(
        "rank() is Horovod's rank through from horovod.tensorflow import * (line 2): use get_npu_rank_id(); "
        "not rewritten, as npu-codemod does not follow the names of a star import: import "
        "horovod.tensorflow as hvd and spell it hvd.rank to have it migrated")
    assert message_of(findings, "NPU025", 6).startswith(
        "init() is Horovod's init through from horovod.tensorflow import * (line 2): remove it once no "
        "Horovod use needs it")
    assert message_of(findings, "NPU023", 7).startswith(
        "DistributedOptimizer(...) is Horovod's DistributedOptimizer through from horovod.tensorflow import *")


def test_with_the_pack_off_npu100_reports_the_star_import_and_its_uses() -> None:
    outcome = run_rules({"NPU100"}, STARRED, HOROVOD_REPO)
    assert outcome.new is None
    assert sites(outcome.findings) == [
        ("NPU100", 2, 0, "unmigrated"), ("NPU100", 6, 4, "unmigrated"), ("NPU100", 7, 10, "unmigrated"),
        ("NPU100", 7, 62, "unmigrated"), ("NPU100", 8, 13, "unmigrated"), ("NPU100", 9, 7, "unmigrated")]
    assert message_of(outcome.findings, "NPU100", 9).startswith(
        "rank() is Horovod's rank through from horovod.tensorflow import * (line 2): import "
        "horovod.tensorflow as hvd and spell it hvd.rank, then npu-codemod migrates this with "
        "`--rules default,distributed`")


def test_horovod_through_an_attribute_named_hvd_of_any_object_is_reported() -> None:
    findings = assert_reports(DISTRIBUTED, CHAINS, facts=HOROVOD_REPO, findings=[
        ("NPU025", 5, 7, "unmigrated"), ("NPU025", 6, 39, "unmigrated"),
        ("NPU025", 14, 24, "unmigrated"), ("NPU025", 17, 16, "unmigrated")])
    assert message_of(findings, "NPU025", 14).startswith(
        "self.model.hvd.size() is Horovod's size through the attribute self.model.hvd (named as "
        "Horovod's module is, and used as it): use get_npu_rank_size(); not rewritten, as the attribute "
        "may hold something else (what is assigned to it is not known here)")
    outcome = run_rules({"NPU100"}, CHAINS, HOROVOD_REPO)
    assert sites(outcome.findings) == [("NPU100", 5, 7, "unmigrated"), ("NPU100", 6, 39, "unmigrated"),
                                       ("NPU100", 14, 24, "unmigrated"), ("NPU100", 17, 16, "unmigrated")]


def test_a_repository_module_s_hvd_read_through_the_module_is_reported() -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": THROUGH_MODULE})
    findings = assert_reports(DISTRIBUTED, THROUGH_MODULE, facts=facts, findings=[
        ("NPU025", 4, 0, "unmigrated"), ("NPU025", 5, 21, "unmigrated"), ("NPU025", 5, 40, "unmigrated")])
    assert message_of(findings, "NPU025", 4).startswith(
        "common.hvd.init() is Horovod's init through the module variable common.hvd (common sets it "
        "to the Horovod module): remove it once no Horovod use needs it")
    outcome = run_rules({"NPU100"}, THROUGH_MODULE, facts)
    assert sites(outcome.findings) == [("NPU100", 4, 0, "unmigrated"), ("NPU100", 5, 21, "unmigrated"),
                                       ("NPU100", 5, 40, "unmigrated")]


KEEPING = '''\
import tensorflow as tf
import horovod.tensorflow as hvd
from horovod.tensorflow import *


def main(model, grads):
    hvd.init()
    averaged = [allreduce(g) for g in grads]
    return averaged + [model.hvd.allreduce(g) for g in grads]
'''


def test_hvd_init_stays_while_uses_no_rule_rewrites_still_need_it() -> None:
    """The star import's ``allreduce`` and ``model.hvd.allreduce`` run Horovod: removing
    ``hvd.init()`` (as NPU021 did, no use of ``hvd`` being left) broke them."""
    findings = assert_reports(DISTRIBUTED, KEEPING, facts=HOROVOD_REPO, findings=[
        ("NPU021", 7, 4, "unmigrated"), ("NPU025", 3, 0, "unmigrated"), ("NPU025", 8, 16, "unmigrated"),
        ("NPU025", 9, 23, "unmigrated")])
    assert message_of(findings, "NPU021", 7).startswith(
        "kept: allreduce(...) (line 8), model.hvd.allreduce(...) (line 9) still need Horovod "
        "initialised; migrate or remove them first")


def test_hvd_init_stays_while_a_linked_file_s_star_import_needs_it() -> None:
    train = "import tensorflow as tf\nimport horovod.tensorflow as hvd\nimport reduce\n\nhvd.init()\n" \
            "grads = reduce.average([tf.ones([1])])\n"
    reduce = "import tensorflow as tf\nfrom horovod.tensorflow import *\n\n\ndef average(grads):\n" \
             "    return [allreduce(g) for g in grads]\n"
    facts = repository_facts({"train.py": train, "reduce.py": reduce})
    findings = assert_reports(DISTRIBUTED, train, path="train.py", facts=facts,
                              findings=[("NPU021", 5, 0, "unmigrated")])
    assert findings[0].message.startswith(
        "kept: hvd.allreduce in reduce (this file imports from it) still need Horovod initialised")


KERAS_WRAPPER = "import horovod.tensorflow.keras as hvd\n"
KERAS_SCRIPT = '''\
import tensorflow as tf
from utils import hvd_utils


def fit(model, x, y, hvd):
    model.fit(x, y, callbacks=[hvd.callbacks.MetricAverageCallback()])


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.fit(x, y, callbacks=[hvd_utils.hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
'''
KERAS_STARRED = '''\
import tensorflow as tf
from horovod.tensorflow.keras import *

callbacks_list = [callbacks.BroadcastGlobalVariablesCallback(0)]
'''


def test_horovod_s_keras_callbacks_through_a_holder_are_reported() -> None:
    """``<holder>.callbacks.BroadcastGlobalVariablesCallback(0)``: Horovod's Keras callbacks sit
    in its ``callbacks`` module, which had no finding through a wrapper module's ``hvd``, a
    parameter or a star import (the broadcast of the variables silently missed)."""
    facts = repository_facts({"utils/__init__.py": "", "utils/hvd_utils.py": KERAS_WRAPPER,
                              "train.py": KERAS_SCRIPT})
    outcome = run_rules(DISTRIBUTED, KERAS_SCRIPT, facts, path="train.py")
    assert [site for site in sites(outcome.findings) if site[0] == "NPU025"] == [
        ("NPU025", 6, 31, "unmigrated"), ("NPU025", 10, 27, "unmigrated")]
    assert message_of(outcome.findings, "NPU025", 10).startswith(
        "hvd_utils.hvd.callbacks.BroadcastGlobalVariablesCallback(...) is Horovod's "
        "callbacks.BroadcastGlobalVariablesCallback through the module variable hvd_utils.hvd "
        "(utils.hvd_utils sets it to the Horovod module): use "
        "NPUBroadcastGlobalVariablesCallback(root_rank=root_rank); not rewritten")
    assert message_of(outcome.findings, "NPU025", 6).startswith(
        "hvd.callbacks.MetricAverageCallback() is Horovod's callbacks.MetricAverageCallback through "
        "the parameter hvd")
    audit = run_rules({"NPU100"}, KERAS_SCRIPT, facts, path="train.py")
    assert sites(audit.findings) == [("NPU100", 6, 31, "unmigrated"), ("NPU100", 10, 27, "unmigrated")]


def test_horovod_s_keras_callbacks_through_a_star_import_are_reported() -> None:
    findings = assert_reports(DISTRIBUTED, KERAS_STARRED, facts=HOROVOD_REPO, findings=[
        ("NPU025", 2, 0, "unmigrated"), ("NPU025", 4, 18, "unmigrated")])
    assert message_of(findings, "NPU025", 4).startswith(
        "callbacks.BroadcastGlobalVariablesCallback(...) is Horovod's "
        "callbacks.BroadcastGlobalVariablesCallback through from horovod.tensorflow.keras import * "
        "(line 2): use NPUBroadcastGlobalVariablesCallback(root_rank=root_rank)")


CALLBACKS_UTILS = '''\
import tensorflow as tf
import horovod.tensorflow.keras as hvd
import horovod.keras.callbacks as hcb
from horovod.tensorflow.keras import callbacks as cbs

hvd.init()
'''
CALLBACKS_SCRIPT = '''\
import tensorflow as tf
from utils import cbs, hcb

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
callbacks = [hcb.BroadcastGlobalVariablesCallback(0), cbs.MetricAverageCallback()]
model.fit(x, y, callbacks=callbacks)
'''


def test_horovod_s_keras_callbacks_module_under_a_name_of_its_own_is_followed() -> None:
    """``import horovod.keras.callbacks as hcb`` (``from horovod.tensorflow.keras import
    callbacks as cbs``) in a repository module, the script importing ``hcb`` from it: its
    callbacks had no finding, NPU027 appended the NPU's broadcast beside Horovod's, and NPU021
    removed the module's ``hvd.init()`` that Horovod's callbacks still need."""
    files = {"utils.py": CALLBACKS_UTILS, "train.py": CALLBACKS_SCRIPT}
    facts = repository_facts(files)
    assert {"horovod-name:utils.hcb=callbacks", "horovod-name:utils.cbs=callbacks"} <= facts
    outcome = run_rules(DISTRIBUTED, CALLBACKS_SCRIPT, facts, path="train.py")
    assert outcome.new is None
    assert sorted(sites(outcome.findings)) == [("NPU025", 5, 13, "unmigrated"), ("NPU025", 5, 54, "unmigrated"),
                                               ("NPU027", 6, 0, "unmigrated")]
    assert max(f.message for f in outcome.findings if f.rule_id == "NPU025").startswith(
        "hcb.BroadcastGlobalVariablesCallback(...) is Horovod's callbacks.BroadcastGlobalVariablesCallback "
        "(utils imports it from Horovod): use NPUBroadcastGlobalVariablesCallback(root_rank=root_rank)")
    kept = run_rules(DISTRIBUTED, CALLBACKS_UTILS, facts, path="utils.py")
    assert kept.new is None or "hvd.init()" in kept.new
    assert message_of(kept.findings, "NPU021", 6).startswith(
        "kept: hvd.callbacks.BroadcastGlobalVariablesCallback, hvd.callbacks.MetricAverageCallback in train "
        "(it imports from this file) still need Horovod initialised")
    audit = run_rules({"NPU100"}, CALLBACKS_SCRIPT, facts, path="train.py")
    assert sites(audit.findings) == [("NPU100", 5, 13, "unmigrated"), ("NPU100", 5, 54, "unmigrated")]
