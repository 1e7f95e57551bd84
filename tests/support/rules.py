"""Shared helpers for rule tests: run rules on a source string, assert golden before/after.

Thin wrappers over :mod:`npu_codemod.testing` taking rule ids. Usage in a test module
(``tests/`` is on ``sys.path`` under pytest)::

    from support.rules import assert_migrates, assert_unchanged, run_rules, sites

    def test_batch_gets_drop_remainder():
        findings = assert_migrates(BEFORE, AFTER, rule_ids={"NPU002"})
        assert sites(findings) == [("NPU002", 3, 11, "migrated")]

Both assertions also check the acceptance of ``check`` (:func:`assert_check_lists_run_sites`):
it lists exactly the sites the run rewrote plus those it reported.

``rule_ids`` is the exact set of enabled rules (unlike the CLI's ``--rules``, NPU001 is *not*
added implicitly, so a test of one rule sees only that rule's edits); None enables every rule
of the built-in plugins. Sources are str; they are encoded as UTF-8 and run through the real
:class:`Engine`, so the decode/parse/compile checks apply as in production.
"""

from __future__ import annotations

from collections import Counter
from typing import AbstractSet, Optional, Sequence

from npu_codemod import testing
from npu_codemod.codemods.engine import Engine, FileOutcome
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.ci_gate import FIXABLE, outcome_sites
from npu_codemod.plugins.manager import load_plugins

PATH = testing.PATH
Site = testing.Site
sites = testing.sites


def _ids(rule_ids: Optional[AbstractSet[str]]) -> frozenset[str]:
    return frozenset(rule.id for rule in load_plugins().rules()) if rule_ids is None \
        else frozenset(rule_ids)


def engine(rule_ids: Optional[AbstractSet[str]] = None) -> Engine:
    """The engine :mod:`npu_codemod.testing` runs for ``rule_ids`` (None: all built-in rules)."""
    return testing.engine_of_ids(_ids(rule_ids))


def run_rules(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> tuple[Optional[str], list[Finding]]:
    """Run the rules once: (new source or None when unchanged, findings in report order)."""
    outcome = testing.run_rules(_ids(rule_ids), source, facts)
    return outcome.new, outcome.findings


def process(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> FileOutcome:
    return engine(rule_ids).process(source.encode("utf-8"), PATH, repo="repo",
                                    facts=frozenset(facts))


def rewritten(first: Sequence[Finding], again: Sequence[Finding]) -> list[Finding]:
    """The ``migrated`` findings of a run whose site it rewrote, told apart by the run over
    its output (``again``): that one no longer gives their message ("added
    drop_remainder=True" becomes "drop_remainder=True is set"), while a site already in NPU
    form gets the same message both times."""
    def count(findings: Sequence[Finding]) -> Counter:
        return Counter((f.rule_id, f.message) for f in findings if f.status == "migrated")

    before, after = count(first), count(again)
    return [f for f in first if f.status == "migrated"
            and after[(f.rule_id, f.message)] < before[(f.rule_id, f.message)]]


def assert_check_lists_run_sites(outcome: FileOutcome, again: Sequence[Finding]) -> None:
    """``check`` on the file lists exactly the sites ``run`` rewrites (:func:`rewritten`,
    marked fixable) plus those it reports (``unmigrated``/``error``), by (line, rule)."""
    listed = outcome_sites(outcome)
    reported = [f for f in outcome.findings if f.status != "migrated"]
    expected = Counter((f.line, f.rule_id, False) for f in reported)
    expected += Counter((f.line, f.rule_id, True) for f in rewritten(outcome.findings, again))
    got = Counter((s.line, s.rule_id, s.message.startswith(FIXABLE)) for s in listed)
    assert got == expected, f"check lists {sorted(got)}, run rewrote/reported {sorted(expected)}"
    assert outcome.new_data is None or any(s.message.startswith(FIXABLE) for s in listed)


def assert_migrates(
    before: str,
    after: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """:func:`npu_codemod.testing.assert_migrates` with the rules given by id, and ``check`` on
    ``before`` lists what the first run rewrote and reported."""
    findings = testing.assert_migrates(_ids(rule_ids), before, after, facts=facts)
    second = testing.run_rules(_ids(rule_ids), after, facts).findings
    assert_check_lists_run_sites(process(before, rule_ids, facts), second)
    return findings


def assert_unchanged(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """Assert the rules leave ``source`` as it is (``check`` lists only the sites they
    report); returns the findings (maybe unmigrated)."""
    findings = testing.assert_reports(_ids(rule_ids), source, facts=facts)
    outcome = process(source, rule_ids, facts)
    assert_check_lists_run_sites(outcome, outcome.findings)
    return findings
