"""Shared helpers for rule tests: run rules on a source string, assert golden before/after.

Usage in a test module (``tests/`` is on ``sys.path`` under pytest)::

    from rulecase import assert_migrates, assert_unchanged, run_rules, sites

    def test_batch_gets_drop_remainder():
        findings = assert_migrates(BEFORE, AFTER, rule_ids={"NPU002"})
        assert sites(findings) == [("NPU002", 3, 11, "migrated")]

``rule_ids`` is the exact set of enabled rules (unlike the CLI's ``--rules``, NPU001 is *not*
added implicitly, so a test of one rule sees only that rule's edits); None enables every rule
of the built-in plugins. Sources are str; they are encoded as UTF-8 and run through the real
:class:`Engine`, so the decode/parse/compile checks apply as in production.
"""

from __future__ import annotations

from functools import lru_cache
from typing import AbstractSet, Optional

from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.findings import Finding
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
    ids = None if rule_ids is None else frozenset(rule_ids)
    outcome = engine(ids).process(source.encode("utf-8"), PATH, repo="repo", facts=frozenset(facts))
    new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
    return new, list(outcome.findings)


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

    The second run must change nothing and report no ``error``. Returns the first run's findings.
    """
    new, findings = run_rules(before, rule_ids, facts)
    assert new == after, f"--- got ---\n{new}\n--- expected ---\n{after}"
    compile(after, PATH, "exec", dont_inherit=True)
    again, second = run_rules(after, rule_ids, facts)
    assert again is None, f"second run changed the file again:\n{again}"
    assert not [f for f in second if f.status == "error"], second
    return findings


def assert_unchanged(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """Assert the rules leave ``source`` as it is; returns the findings (maybe unmigrated)."""
    new, findings = run_rules(source, rule_ids, facts)
    assert new is None, f"unexpected rewrite:\n{new}"
    return findings
