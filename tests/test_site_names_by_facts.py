"""A rule's site names in a repository (``Rule._site_names_for(facts)``, issue 32): a rule
leaves out the names of sites it does nothing with there, so that ``--engine selective`` does
not parse the code that spells only those. Each case runs in both modes (the outcomes must be
the same) and says what the selective one parsed: a name left out where the rule acts loses a
finding, a name kept where it does not parses a unit for nothing."""

from __future__ import annotations

import pytest

from npu_codemod.codemods.engine import FULL, SELECTIVE, Engine
from npu_codemod.codemods.tf_versions import (
    RUNTIME_FACT,
    RUNTIME_NOT_GIVEN,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
    SCOPE_FACT,
    TF2_COMPAT,
    runs_tf2_somewhere,
    runtime_of,
)
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.plugins.packs import default_rules

RULES = default_rules(load_plugins().rules())
(NPU008,) = [rule for rule in RULES if rule.id == "NPU008"]
USES_DEVICE = "uses-tf-device"
RUNTIMES = (RUNTIME_TF1, RUNTIME_TF2, RUNTIME_UNKNOWN, RUNTIME_NOT_GIVEN)

#: compat.v1 code: ``tf2-compat`` where the repository runs TF 2.x, TF 1.x code elsewhere. NPU008
#: reports ``tf.device`` only in the first, and sets soft placement only in the second, where
#: the repository uses ``tf.device``.
COMPAT = '''\
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def tower(x):
    with tf.device("/cpu:0"):
        return tf.layers.dense(x, 10)


def configure(config):
    config.allow_soft_placement = False
    return config
'''


def _facts(runtime: str, scoped: str = "", device: bool = False) -> frozenset[str]:
    facts = {RUNTIME_FACT + runtime} if runtime else set()
    if scoped:
        facts.add(f"{SCOPE_FACT}sub/:{scoped}")
    return frozenset(facts | ({USES_DEVICE} if device else set()))


def _run(facts: frozenset[str]):
    selective = Engine(RULES, SELECTIVE, plan_every_file=True)
    outcome = selective.process(COMPAT.encode(), "model.py", repo="repo", facts=facts)
    assert outcome == Engine(RULES, FULL).process(COMPAT.encode(), "model.py", repo="repo", facts=facts)
    return [(finding.rule_id, finding.line, finding.status) for finding in outcome.findings], selective.counts


def test_tf_device_is_parsed_where_a_compat_file_reports_it() -> None:
    findings, counts = _run(_facts(RUNTIME_TF2))
    assert findings == [("NPU008", 7, "unmigrated")]
    assert counts["selective"] == 1 and counts["skipped_lines"] == 3  # configure(): no site


def test_tf_device_is_not_parsed_where_no_file_can_be_compat() -> None:
    findings, counts = _run(_facts(RUNTIME_TF1, device=True))
    assert ("NPU008", 12, "migrated") in findings
    assert counts["selective"] == 1 and counts["skipped_lines"] == 3  # tower(): no site


def test_no_setting_is_parsed_where_the_repository_uses_no_tf_device() -> None:
    findings, counts = _run(_facts(RUNTIME_TF1))
    assert findings == [] and counts["unparsed"] == 1


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("scoped", ["", *RUNTIMES[:3]])
def test_tf2_somewhere_is_where_a_file_may_be_compat(runtime: str, scoped: str) -> None:
    facts = _facts(runtime, scoped)
    compat = any(runtime_of(facts, path) == RUNTIME_TF2 for path in ("model.py", "sub/model.py"))
    assert runs_tf2_somewhere(facts) is compat


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("device", [False, True])
def test_npu008_names_tf_device_only_where_a_file_may_be_compat(runtime: str, device: bool) -> None:
    names = set(NPU008._site_names_for(_facts(runtime, device=device)))
    assert ("device" in names) is (runtime == RUNTIME_TF2)
    assert ("allow_soft_placement" in names) is device
    assert TF2_COMPAT in NPU008.file_kinds  # the kind where its tf.device findings are
