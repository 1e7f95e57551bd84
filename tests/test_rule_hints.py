"""The built-in rules' speed hints are private and change no output.

``Rule._tokens``, ``_bare_calls_of_tf_names``, ``_scope``, ``_site_names`` and
``_site_names_for`` only spare work (a prefilter on the text, the calls offered, what is
parsed). A third-party rule never sets them: the public API does not name them. These tests
run every built-in rule over the corpus and the sample projects once as shipped and once with
every hint reset to its default, and want the same bytes and the same findings; and every
golden case of ``npu_codemod.testing`` compares the selective engine with the hints to the
full engine without them, so a wrong hint fails the rule's own tests.
"""

from __future__ import annotations

import pytest

from npu_codemod.api import FileContext, Reference, Rule
from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.rule import SPEED_HINTS, without_hints
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.testing import assert_reports, run_rules

from support.goldens import CORPUS, PROJECTS, project_names, sources

CASES = [(root, name) for root in (CORPUS, PROJECTS) for name in project_names(root)]


def migrate(files: dict[str, bytes], hints: bool) -> tuple[dict[str, bytes], list[tuple]]:
    """One run of every rule with repository-wide facts, as :func:`support.goldens.migrate`
    does it: the bytes of every file, and every finding with its message."""
    loaded_rules = load_rules(RuleSelection())
    engine = loaded_rules.engine if hints else Engine([without_hints(rule) for rule in loaded_rules.rules])
    facts = loaded_rules.repository_facts(list(files.items())).facts
    result, findings = {}, []
    for path, data in files.items():
        outcome = engine.process(data, path, repo="sample", facts=facts)
        result[path] = data if outcome.new_data is None else outcome.new_data
        findings += [(f.path, f.line, f.column, f.rule_id, f.status, f.message) for f in outcome.findings]
    return result, sorted(findings)


def test_the_built_in_rules_do_use_hints() -> None:
    """Else the comparison below would prove nothing."""
    rules = load_rules(RuleSelection()).rules
    for hint in SPEED_HINTS:
        assert any(getattr(rule, hint) != getattr(Rule, hint) for rule in rules), hint


@pytest.mark.parametrize("root, name", CASES, ids=[name for _, name in CASES])
def test_every_rule_without_its_hints_migrates_a_project_alike(root, name: str) -> None:
    files = sources(root / name)
    hinted, hinted_findings = migrate(files, hints=True)
    bare, bare_findings = migrate(files, hints=False)
    assert bare == hinted
    assert bare_findings == hinted_findings


def test_no_public_name_of_the_rule_api_is_a_hint() -> None:
    from npu_codemod.orchestrator.api_reference import ApiPage

    text = ApiPage().page()
    for hint in (*SPEED_HINTS, "_site_names_for", "tokens", "bare_calls_of_tf_names", "site_names"):
        assert f"`{hint}:" not in text and f"`Rule.{hint}`" not in text, hint


class RunConfigs(Rule):
    id = "TST950"
    name = "run-configs"
    description = "Reports every RunConfig."
    calls = ("tensorflow.estimator.RunConfig",)

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        ctx.report(reference, "unmigrated", "a RunConfig")


class WrongTokens(RunConfigs):
    _tokens = ("Estimator(",)  # a RunConfig is made without one


SOURCE = "import tensorflow as tf\n\nconfig = tf.estimator.RunConfig(model_dir=d)\n"


def test_a_wrong_hint_fails_the_golden_case_it_changes() -> None:
    assert_reports(RunConfigs(), SOURCE, findings=[("TST950", 3, 9, "unmigrated")])
    with pytest.raises(AssertionError, match="without the rules' speed hints"):
        run_rules(WrongTokens(), SOURCE)


def test_a_copy_without_hints_has_every_default_and_leaves_the_rule_alone() -> None:
    rule = next(rule for rule in load_rules(RuleSelection()).rules if rule.id == "NPU002")
    bare = without_hints(rule)
    assert [getattr(bare, hint) for hint in SPEED_HINTS] == [getattr(Rule, hint) for hint in SPEED_HINTS]
    assert tuple(bare._site_names_for(frozenset())) == ()
    assert (rule.id, rule._scope, rule._bare_calls_of_tf_names) == ("NPU002", "linked", True)


#: The hints' former public names: set on a rule now, they would be dead attributes.
FORMER_NAMES = ("tokens", "bare_calls_of_tf_names", "scope", "site_names", "site_names_for", "order")


def test_no_built_in_rule_sets_a_hint_under_its_former_public_name() -> None:
    stale = [(rule.id, name) for rule in load_rules(RuleSelection()).rules
             for klass in type(rule).__mro__ if klass is not Rule and klass is not object
             for name in FORMER_NAMES if name in vars(klass)]
    assert stale == [], "speed hints are private: _tokens, _scope, _site_names, ..."
