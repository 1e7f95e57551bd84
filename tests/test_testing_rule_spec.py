"""``npu_codemod.testing``'s ``rules`` argument: one rule id, or ids in any collection, runs
those installed rules; ids mixed with classes are refused in one clear line (a string once
recursed into itself until Python's stack ran out)."""

from __future__ import annotations

import pytest

from npu_codemod.testing import run_rules, sites

SOURCE = '''import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
h = tf.nn.dropout(x, keep_prob=0.5)
'''


@pytest.mark.parametrize("rules", ["NPU004", ["NPU004"], ("NPU004",), {"NPU004"}, frozenset({"NPU004"})])
def test_rule_ids_in_any_collection_run_those_rules(rules: object) -> None:
    outcome = run_rules(rules, SOURCE)  # type: ignore[arg-type]
    assert outcome.new is not None and "npu_ops.dropout" in outcome.new
    assert [site[0] for site in sites(outcome.findings)] == ["NPU004"]


def test_ids_mixed_with_rule_classes_are_refused_in_one_line() -> None:
    from npu_codemod.plugins.manager import load_plugins

    rule_class = type(next(rule for rule in load_plugins().rules() if rule.id == "NPU004"))
    with pytest.raises(TypeError, match="rule ids alone or rule classes alone"):
        run_rules([rule_class, "NPU001"], SOURCE)
