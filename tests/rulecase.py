"""Shared helpers for rule tests: run rules on a source string, assert golden before/after.

Usage in a test module (``tests/`` is on ``sys.path`` under pytest)::

    from rulecase import assert_migrates, assert_unchanged, run_rules, sites

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
from functools import lru_cache
from typing import AbstractSet, Optional, Sequence

from npu_codemod.codemods.engine import Engine, FileOutcome
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.check import FIXABLE, outcome_sites
from npu_codemod.plugins.manager import load_plugins

PATH = "train.py"
Site = tuple[str, int, int, str]


@lru_cache(maxsize=None)
def engine(rule_ids: Optional[frozenset[str]] = None) -> Engine:
    """An engine with exactly ``rule_ids`` (None: all built-in rules); built once per set."""
    rules = load_plugins().rules()
    if rule_ids is not None:
        unknown = rule_ids - {rule.id for rule in rules}
        assert not unknown, f"unknown rule ids: {sorted(unknown)}"
        rules = [rule for rule in rules if rule.id in rule_ids]
    return Engine(rules)


def run_rules(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> tuple[Optional[str], list[Finding]]:
    """Run the rules once: (new source or None when unchanged, findings in report order)."""
    outcome = process(source, rule_ids, facts)
    new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
    return new, list(outcome.findings)


def process(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> FileOutcome:
    ids = None if rule_ids is None else frozenset(rule_ids)
    return engine(ids).process(source.encode("utf-8"), PATH, repo="repo", facts=frozenset(facts))


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


def sites(findings: list[Finding]) -> list[Site]:
    """(rule_id, line, column, status) of each finding, sorted: the part tests compare exactly."""
    return sorted((f.rule_id, f.line, f.column, f.status) for f in findings)


def assert_migrates(
    before: str,
    after: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """Assert ``before`` becomes exactly ``after``, which compiles and is a fixed point.

    The second run must change nothing and report no ``error``; ``check`` on ``before`` must
    list what the first run rewrote and reported. Returns the first run's findings.
    """
    outcome = process(before, rule_ids, facts)
    new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
    assert new == after, f"--- got ---\n{new}\n--- expected ---\n{after}"
    compile(after, PATH, "exec", dont_inherit=True)
    again, second = run_rules(after, rule_ids, facts)
    assert again is None, f"second run changed the file again:\n{again}"
    assert not [f for f in second if f.status == "error"], second
    assert_check_lists_run_sites(outcome, second)
    return list(outcome.findings)


def assert_unchanged(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """Assert the rules leave ``source`` as it is (``check`` lists only the sites they
    report); returns the findings (maybe unmigrated)."""
    outcome = process(source, rule_ids, facts)
    assert outcome.new_data is None, f"unexpected rewrite:\n{outcome.new_data.decode('utf-8')}"
    assert_check_lists_run_sites(outcome, outcome.findings)
    return list(outcome.findings)
