"""Before/after tests of the mylib rules, run through npu-codemod's real engine."""

from npu_codemod.codemods.engine import Engine

from npu_codemod_example_rule import MakeSessionSettings, MylibDropout, MylibMakeSession

BEFORE = """import tensorflow as tf
import mylib
h = mylib.dropout(h, 0.9)
sess = mylib.make_session()
"""
AFTER = """import tensorflow as tf
import mylib
h = npu_ops.dropout(h, 0.9)
sess = mylib.make_session()
"""


def run(source: str, *rules):
    outcome = Engine(list(rules)).process(source.encode(), "train.py", repo="repo")
    new = outcome.new_data.decode() if outcome.new_data is not None else None
    return new, sorted((f.rule_id, f.line, f.status) for f in outcome.findings)


def test_dropout_is_replaced_and_make_session_reported():
    new, findings = run(BEFORE, MylibDropout(), MylibMakeSession())
    assert new == AFTER
    assert findings == [("MYL001", 3, "migrated"), ("MYL002", 4, "unmigrated")]


def test_second_run_changes_nothing():
    assert run(AFTER, MylibDropout())[0] is None


def test_rate_is_left_for_a_person():
    source = "import tensorflow as tf\nimport mylib\nh = mylib.dropout(h, rate=0.1)\n"
    assert run(source, MylibDropout()) == (None, [("MYL001", 3, "unmigrated")])


def test_report_all_setting():
    source = "import tensorflow as tf\nimport mylib\nsess = mylib.make_session(config=c)\n"
    assert run(source, MylibMakeSession())[1] == []
    rule = MylibMakeSession(MakeSessionSettings(report_all=True))
    assert run(source, rule)[1] == [("MYL002", 3, "unmigrated")]
