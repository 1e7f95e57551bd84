"""NPU024 horovod-broadcast: golden before/after per bullet of the spec."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.packs import BOTH_REPO, HOROVOD_REPO, HVD, INIT

RULES = {"NPU024"}
RANK_ID = "int(os.getenv('RANK_ID', '0'))"
KERAS_HVD = "import tensorflow as tf\nimport horovod.tensorflow.keras as hvd\n"


@pytest.mark.parametrize("arguments", ["0", "root_rank=0", "0, device=''", "root_rank=0, device=\"\""])
def test_the_broadcast_hook_becomes_the_npu_one_and_os_is_imported(arguments: str) -> None:
    findings = assert_migrates(
        RULES, HVD + f"hooks = [hvd.BroadcastGlobalVariablesHook({arguments})]\n",
        INIT + "import os\n" + HVD + f"hooks = [NPUBroadcastGlobalVariablesHook(0, {RANK_ID})]\n",
        facts=HOROVOD_REPO, findings=[("NPU024", 3, 9, "migrated")])
    assert findings[0].message == ("replaced hvd.BroadcastGlobalVariablesHook(...) with "
                                   "NPUBroadcastGlobalVariablesHook(...)")


def test_a_file_that_imports_os_gets_no_second_import() -> None:
    header = "import os\n\n" + HVD
    assert_migrates(RULES, header + "bcast = hvd.BroadcastGlobalVariablesHook(FLAGS.root)\n",
                    INIT + header + f"bcast = NPUBroadcastGlobalVariablesHook(FLAGS.root, {RANK_ID})\n",
                    facts=HOROVOD_REPO)


@pytest.mark.parametrize("arguments", ["0", "root_rank=0", "0, device=''"])
def test_the_keras_callback_becomes_the_npu_one(arguments: str) -> None:
    before = KERAS_HVD + f"callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback({arguments})]\n"
    after = INIT + KERAS_HVD + "callbacks = [NPUBroadcastGlobalVariablesCallback(root_rank=0)]\n"
    assert_migrates(RULES, before, after, facts=HOROVOD_REPO, findings=[("NPU024", 3, 13, "migrated")])


def test_the_callback_imported_from_the_callbacks_module() -> None:
    header = "import tensorflow as tf\nfrom horovod.tensorflow.keras.callbacks import BroadcastGlobalVariablesCallback\n"
    assert_migrates(RULES, header + "cb = BroadcastGlobalVariablesCallback(0)\n",
                    INIT + header + "cb = NPUBroadcastGlobalVariablesCallback(root_rank=0)\n",
                    facts=HOROVOD_REPO)


def test_broadcast_global_variables_is_reported() -> None:
    findings = assert_reports(RULES, HVD + "bcast = hvd.broadcast_global_variables(0)\nsess.run(bcast)\n",
                              facts=HOROVOD_REPO, findings=[("NPU024", 3, 8, "unmigrated")])
    assert findings[0].message.startswith(
        "hvd.broadcast_global_variables(...) broadcasts through Horovod: pass "
        f"NPUBroadcastGlobalVariablesHook(0, {RANK_ID}) to the session's hooks instead")


@pytest.mark.parametrize("source, why", [
    ("h = hvd.BroadcastGlobalVariablesHook(0, device='/cpu:0')\n", "no NPU equivalent for device='/cpu:0'"),
    ("h = hvd.BroadcastGlobalVariablesHook(**settings)\n",
     "its arguments are unpacked (*args/**kwargs), so which are given is unknown"),
    ("h = hvd.BroadcastGlobalVariablesHook()\n", "no root rank is passed"),
    ("hook_class = hvd.BroadcastGlobalVariablesHook\n", "used as a value, not called"),
])
def test_hooks_it_cannot_read_are_reported(source: str, why: str) -> None:
    findings = assert_reports(RULES, HVD + source, facts=HOROVOD_REPO)
    assert [f.status for f in findings] == ["unmigrated"]
    assert f": {why}; replace " in findings[0].message


def test_a_second_run_reports_the_npu_hook_and_callback() -> None:
    source = (INIT + "import os\n" + HVD + f"hooks = [NPUBroadcastGlobalVariablesHook(0, {RANK_ID})]\n"
              "callbacks = [NPUBroadcastGlobalVariablesCallback(root_rank=0)]\n")
    assert_reports(RULES, source, facts=HOROVOD_REPO, findings=[
        ("NPU024", 5, 9, "migrated"), ("NPU024", 6, 13, "migrated")])


def test_both_modes_are_reported() -> None:
    findings = assert_reports(RULES, HVD + "hooks = [hvd.BroadcastGlobalVariablesHook(0)]\n",
                              facts=BOTH_REPO, findings=[("NPU024", 3, 9, "unmigrated")])
    assert "pick one distribution mode, then replace hvd.BroadcastGlobalVariablesHook(...) with " \
           f"NPUBroadcastGlobalVariablesHook(<root rank>, {RANK_ID})" in findings[0].message
