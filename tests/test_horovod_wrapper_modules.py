"""Horovod's API passed on by a repository module in ways no import of the script follows:
``from common import *`` where ``common`` imports ``horovod.tensorflow as hvd`` (the script's
``hvd`` is Horovod's), and a wrapper module that star-imports Horovod, imported as ``hvd``
(``from utils import hvd_utils as hvd``: its names are Horovod's). The broadcast hook,
``init()`` and the rest had no finding with the pack on or off; now each use of Horovod's API
is reported (NPU025, NPU100 with the pack off), never rewritten, as the other uses through a
holder (``horovod_params``)."""

from __future__ import annotations

import pytest

from npu_codemod.codemods.tf_aliases import alias_facts
from npu_codemod.testing import run_rules, sites

from support.packs import DISTRIBUTED, message_of, repository_facts

COMMON = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n"
STARRED = '''\
import tensorflow as tf
from common import *

hvd.init()
hooks = [hvd.BroadcastGlobalVariablesHook(0)]


def rank_of(hvd):
    return hvd.rank()  # a parameter named hvd: reported as such, once
'''
WRAPPER = "from horovod.tensorflow import *\n"
WRAPPED = '''\
import tensorflow as tf
from utils import hvd_utils as hvd

hvd.init()
hooks = [hvd.BroadcastGlobalVariablesHook(0)]
'''
CASES = {"star": ({"common.py": COMMON, "train.py": STARRED}, STARRED),
         "wrapper": ({"utils/__init__.py": "", "utils/hvd_utils.py": WRAPPER, "train.py": WRAPPED}, WRAPPED),
         "wrapper with tf": ({"utils/__init__.py": "", "utils/hvd_utils.py": "import tensorflow as tf\n" + WRAPPER,
                              "train.py": WRAPPED}, WRAPPED)}


def test_a_module_that_star_imports_horovod_is_a_fact() -> None:
    assert alias_facts("utils/hvd_utils.py", WRAPPER) == {"horovod-held:utils.hvd_utils.*"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_horovod_passed_on_by_a_repository_module_is_reported(case: str) -> None:
    files, script = CASES[case]
    facts = repository_facts(files)
    outcome = run_rules(DISTRIBUTED, script, facts, path="train.py")
    assert outcome.new is None or "hvd.BroadcastGlobalVariablesHook(0)" in outcome.new  # never rewritten
    assert [site for site in sites(outcome.findings) if site[0] == "NPU025"][:2] == [
        ("NPU025", 4, 0, "unmigrated"), ("NPU025", 5, 9, "unmigrated")]
    audit = run_rules({"NPU100"}, script, facts, path="train.py")
    assert sites(audit.findings)[:2] == [("NPU100", 4, 0, "unmigrated"), ("NPU100", 5, 9, "unmigrated")]


def test_the_messages_say_which_module_passes_horovod_on() -> None:
    files, script = CASES["star"]
    findings = run_rules(DISTRIBUTED, script, repository_facts(files), path="train.py").findings
    assert message_of(findings, "NPU025", 5).startswith(
        "hvd.BroadcastGlobalVariablesHook(...) is Horovod's BroadcastGlobalVariablesHook through the "
        "module variable hvd (common sets it to the Horovod module; from common import * binds it "
        "here): use NPUBroadcastGlobalVariablesHook(root_rank, int(os.getenv('RANK_ID', '0'))); not rewritten")
    assert [site for site in sites(findings) if site[0] == "NPU025"][2:] == [("NPU025", 9, 11, "unmigrated")]
    files, script = CASES["wrapper"]
    findings = run_rules(DISTRIBUTED, script, repository_facts(files), path="train.py").findings
    message = message_of(findings, "NPU025", 4)
    assert message.startswith("hvd.init() is Horovod's init through the module hvd (utils.hvd_utils "
                              "passes on Horovod's names with a star import): remove it once no Horovod use")
    assert "; not rewritten, as the module may hold something else (a name it defines itself is not " \
        "Horovod's)" in message


NAMED_WRAPPER = ("import tensorflow as tf\nfrom horovod.tensorflow import BroadcastGlobalVariablesHook, init\n"
                 "from horovod.tensorflow.keras import callbacks\n")
NAMED = '''\
import tensorflow as tf
from utils import hvd_utils
from utils.hvd_utils import BroadcastGlobalVariablesHook, init

init()
hvd_utils.init()
hooks = [BroadcastGlobalVariablesHook(0), hvd_utils.BroadcastGlobalVariablesHook(0)]
callbacks = [hvd_utils.callbacks.BroadcastGlobalVariablesCallback(0)]
'''


def test_horovod_s_names_a_repository_module_imports_are_facts() -> None:
    assert alias_facts("utils/hvd_utils.py", NAMED_WRAPPER) == {
        "horovod-name:utils.hvd_utils.BroadcastGlobalVariablesHook=BroadcastGlobalVariablesHook",
        "horovod-name:utils.hvd_utils.init=init", "horovod-name:utils.hvd_utils.callbacks=callbacks"}


def test_horovod_s_names_re_exported_by_a_repository_module_are_reported() -> None:
    facts = repository_facts({"utils/__init__.py": "", "utils/hvd_utils.py": NAMED_WRAPPER, "train.py": NAMED})
    outcome = run_rules(DISTRIBUTED, NAMED, facts, path="train.py")
    expected = [(5, 0), (6, 0), (7, 9), (7, 42), (8, 13)]
    assert [site[1:3] for site in sites(outcome.findings) if site[0] == "NPU025"] == expected
    assert message_of(outcome.findings, "NPU025", 5).startswith(
        "init() is Horovod's init (utils.hvd_utils imports it from Horovod): remove it once no Horovod use")
    assert message_of(outcome.findings, "NPU025", 8).startswith(
        "hvd_utils.callbacks.BroadcastGlobalVariablesCallback(...) is Horovod's "
        "callbacks.BroadcastGlobalVariablesCallback through the module hvd_utils (utils.hvd_utils imports "
        "it from Horovod): use NPUBroadcastGlobalVariablesCallback(root_rank=root_rank); not rewritten")
    audit = run_rules({"NPU100"}, NAMED, facts, path="train.py")
    assert [site[1:3] for site in sites(audit.findings)] == expected


HELD_WRAPPER = "import horovod.tensorflow.keras as hvd\n"
HELD_TRAINING = '''\
import tensorflow as tf
from utils import hvd_utils

estimator = tf.estimator.Estimator(model_fn=model_fn)
estimator.train(input_fn, hooks=[hvd_utils.hvd.BroadcastGlobalVariablesHook(0), timer])
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
callbacks = [hvd_utils.hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
model.fit(x, y, callbacks=callbacks)
estimator.train(input_fn, hooks=[timer])
'''


def test_hooks_holding_horovod_s_broadcast_through_a_holder_get_no_append() -> None:
    """NPU025 tells to replace the hook with NPUBroadcastGlobalVariablesHook(...): wrapped in
    npu_hooks_append(...), which appends one more, the variables would be broadcast twice."""
    facts = repository_facts({"utils/__init__.py": "", "utils/hvd_utils.py": HELD_WRAPPER, "train.py": HELD_TRAINING})
    outcome = run_rules(DISTRIBUTED, HELD_TRAINING, facts, path="train.py")
    assert outcome.new is not None and outcome.new.count("_append(") == 1  # the last train's
    assert "estimator.train(input_fn, hooks=npu_hooks_append(hooks_list=[timer]))" in outcome.new
    assert [site for site in sites(outcome.findings) if site[0] == "NPU027"] == [
        ("NPU027", 5, 0, "unmigrated"), ("NPU027", 8, 0, "unmigrated"), ("NPU027", 9, 0, "migrated")]
    assert message_of(outcome.findings, "NPU027", 5).startswith(
        "the hooks hold hvd_utils.hvd.BroadcastGlobalVariablesHook(...), Horovod's broadcast, which NPU025 "
        "reports: replace it with NPUBroadcastGlobalVariablesHook(...) and leave the hooks as they are: "
        "npu_hooks_append(...) would add a second broadcast of the variables")
    assert message_of(outcome.findings, "NPU027", 8).startswith(
        "the callbacks hold hvd_utils.hvd.callbacks.BroadcastGlobalVariablesCallback(...), Horovod's broadcast")


LISTED = '''\
import tensorflow as tf
from horovod.tensorflow import BroadcastGlobalVariablesHook, init, rank

__all__ = ["init", "rank", "BroadcastGlobalVariablesHook", "build_model"]


def build_model():
    return tf.keras.Sequential([])
'''
LISTED_SCRIPT = '''\
import tensorflow as tf
from common import *

init()
estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="/tmp/model-%d" % rank())
estimator.train(input_fn, hooks=[BroadcastGlobalVariablesHook(0)])
'''


def test_horovod_s_names_a_module_s_all_passes_on_are_reported() -> None:
    """``from common import *`` binds what ``common.__all__`` lists, Horovod's names it
    imports among them: they had no finding, and the hooks holding Horovod's broadcast got the
    NPU's appended beside it."""
    facts = repository_facts({"common.py": LISTED, "train.py": LISTED_SCRIPT})
    assert "horovod-all:common=BroadcastGlobalVariablesHook,build_model,init,rank" in facts
    outcome = run_rules(DISTRIBUTED, LISTED_SCRIPT, facts, path="train.py")
    assert outcome.new is None
    assert sorted(sites(outcome.findings)) == [("NPU025", 4, 0, "unmigrated"), ("NPU025", 5, 82, "unmigrated"),
                                               ("NPU025", 6, 33, "unmigrated"), ("NPU027", 6, 0, "unmigrated")]
    assert message_of(outcome.findings, "NPU025", 4).startswith(
        "init() is Horovod's init (common imports it from Horovod; from common import * binds it here): "
        "remove it once no Horovod use needs it")
    audit = run_rules({"NPU100"}, LISTED_SCRIPT, facts, path="train.py").findings
    assert [(f.line, f.column) for f in audit if "Horovod's" in f.message] == [(4, 0), (5, 82), (6, 33)]


SHIM = '''\
class _NoHorovod(object):
    def rank(self):
        return 0

    def BroadcastGlobalVariablesHook(self, root_rank):
        return None


hvd = _NoHorovod()
'''
HIDDEN = "import tensorflow as tf\nimport horovod.tensorflow as hvd\n\n__all__ = ['build_model']\n"
SHIMMED_SCRIPT = '''\
import tensorflow as tf
from common import *
from shim import *

estimator = tf.estimator.Estimator(model_fn=model_fn)
estimator.train(input_fn, hooks=[hvd.BroadcastGlobalVariablesHook(0)], steps=hvd.rank() + 1)
'''


def test_a_star_import_binds_no_horovod_its_module_s_all_leaves_out() -> None:
    """``common`` imports Horovod as ``hvd`` but its ``__all__`` leaves it out: ``from common
    import *`` does not bind it, and the script's ``hvd`` is the shim's. It was reported as
    Horovod's, and its hooks got no NPU broadcast."""
    facts = repository_facts({"common.py": HIDDEN, "shim.py": SHIM, "train.py": SHIMMED_SCRIPT})
    assert "horovod-all:common=build_model" in facts
    outcome = run_rules(DISTRIBUTED, SHIMMED_SCRIPT, facts, path="train.py")
    assert sites(outcome.findings) == [("NPU027", 6, 0, "migrated")]
    assert outcome.new is not None and "hooks=npu_hooks_append(hooks_list=[hvd.BroadcastGlobalVariablesHook(0)])" \
        in outcome.new


HVD_STAR = "from horovod.tensorflow import *\n"
NESTED_SCRIPT = '''\
import tensorflow as tf
from hvd_utils import *

init()
opt = DistributedOptimizer(tf.train.AdamOptimizer(0.01 * size()))
estimator = tf.estimator.Estimator(model_fn=model_fn)
estimator.train(input_fn, hooks=[BroadcastGlobalVariablesHook(0)])
'''
NESTED_HVD_SCRIPT = '''\
import tensorflow as tf
from hvd_utils import *

hvd.init()
estimator = tf.estimator.Estimator(model_fn=model_fn)
estimator.train(input_fn, hooks=[hvd.BroadcastGlobalVariablesHook(0)])
'''


@pytest.mark.parametrize("files, script, expected", [
    # hvd_utils star-imports Horovod (and imports no TensorFlow)
    ({"hvd_utils.py": HVD_STAR}, NESTED_SCRIPT,
     [("NPU023", 5, 6), ("NPU025", 4, 0), ("NPU025", 5, 57), ("NPU025", 7, 33), ("NPU027", 7, 0)]),
    # ... through a module that star-imports it
    ({"hvd_utils.py": "from hvd_base import *\n", "hvd_base.py": HVD_STAR}, NESTED_SCRIPT,
     [("NPU023", 5, 6), ("NPU025", 4, 0), ("NPU025", 5, 57), ("NPU025", 7, 33), ("NPU027", 7, 0)]),
    # hvd_utils passes on common's hvd
    ({"hvd_utils.py": "from common import *\n", "common.py": "import horovod.tensorflow as hvd\n"},
     NESTED_HVD_SCRIPT, [("NPU025", 4, 0), ("NPU025", 6, 33), ("NPU027", 6, 0)]),
])
def test_horovod_passed_on_by_nested_star_imports_is_reported(files: dict, script: str, expected: list) -> None:
    """``from hvd_utils import *``, ``hvd_utils`` star-importing Horovod (or a module that
    does, or one whose ``hvd`` is Horovod): the script's Horovod calls had no finding, and its
    hooks got the NPU's broadcast beside Horovod's."""
    facts = repository_facts({**files, "train.py": script})
    outcome = run_rules(DISTRIBUTED, script, facts, path="train.py")
    assert outcome.new is None
    assert sorted(site[:3] for site in sites(outcome.findings)) == expected
    assert all(site[3] == "unmigrated" for site in sites(outcome.findings))


SETUP = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def setup():
    hvd.init()
    return tf.ConfigProto()
'''
SETUP_SCRIPT = '''\
import tensorflow as tf
from common import *

from setup import setup

config = setup()
estimator = tf.estimator.Estimator(model_fn=model_fn)
estimator.train(input_fn, hooks=[BroadcastGlobalVariablesHook(0)], steps=1000 // size())
'''


def test_an_init_stays_while_a_star_import_s_horovod_names_still_need_it() -> None:
    """``setup.py``'s ``hvd.init()`` was removed while ``train.py``, which imports from it,
    kept Horovod's broadcast hook and ``size()`` from ``from common import *`` (``common``
    star-importing a module that star-imports Horovod): the training failed at its first
    step (Horovod not initialised)."""
    files = {"hvd_utils.py": HVD_STAR, "common.py": "from hvd_utils import *\n", "setup.py": SETUP,
             "train.py": SETUP_SCRIPT}
    facts = repository_facts(files)
    outcome = run_rules(DISTRIBUTED, SETUP, facts, path="setup.py")
    assert outcome.new is None or "hvd.init()" in outcome.new
    assert message_of(outcome.findings, "NPU021", 6).startswith(
        "kept: hvd.BroadcastGlobalVariablesHook, hvd.size in train (it imports from this file) still need "
        "Horovod initialised")
    own = {**files, "train.py": SETUP_SCRIPT.replace("1000 // size()", "1000 // size(4)").replace(
        "from setup import setup\n", "from setup import setup\n\n\ndef size(n):\n    return n\n").replace(
        "hooks=[BroadcastGlobalVariablesHook(0)], ", "")}
    migrated = run_rules(DISTRIBUTED, SETUP, repository_facts(own), path="setup.py").new
    assert migrated is not None and "hvd.init()" not in migrated  # its own size(): no Horovod use left
