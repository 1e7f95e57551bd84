"""Before/after tests of the mylib rules, run through npu-codemod's real engine."""

from npu_codemod_example_rule import MakeSessionSettings, MylibDropout, MylibMakeSession

from npu_codemod.testing import assert_migrates, assert_reports

BEFORE = """import tensorflow as tf
import mylib
h = mylib.dropout(h, 0.9)
sess = mylib.make_session()
"""
AFTER = """from npu_bridge.estimator import npu_ops
import tensorflow as tf
import mylib
h = npu_ops.dropout(h, 0.9)
sess = mylib.make_session()
"""


def test_dropout_is_replaced_and_make_session_reported():
    # assert_migrates also checks that AFTER compiles, that a second run changes nothing
    # and that it reports the same sites (MYL001 as migrated again).
    assert_migrates([MylibDropout(), MylibMakeSession()], BEFORE, AFTER,
                    findings=[("MYL001", 3, 4, "migrated"), ("MYL002", 4, 7, "unmigrated")])


def test_every_spelling_of_mylib():
    before = "import tensorflow as tf\nfrom mylib import dropout as drop\nh = drop(h, 0.9)\n"
    after = ("from npu_bridge.estimator import npu_ops\nimport tensorflow as tf\n"
             "from mylib import dropout as drop\nh = npu_ops.dropout(h, 0.9)\n")
    assert_migrates(MylibDropout(), before, after, findings=[("MYL001", 3, 4, "migrated")])


def test_rate_is_left_for_a_person():
    source = "import tensorflow as tf\nimport mylib\nh = mylib.dropout(h, rate=0.1)\n"
    assert_reports(MylibDropout(), source, findings=[("MYL001", 3, 4, "unmigrated")])


def test_report_all_setting():
    source = "import tensorflow as tf\nimport mylib\nsess = mylib.make_session(config=c)\n"
    assert_reports(MylibMakeSession(), source, findings=[])
    rule = MylibMakeSession(MakeSessionSettings(report_all=True))
    assert_reports(rule, source, findings=[("MYL002", 3, 7, "unmigrated")])
