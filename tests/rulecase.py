"""Shared helpers for rule tests: run rules on a source string, assert golden before/after.

Thin wrappers over :mod:`npu_codemod.testing` taking rule ids. Usage in a test module (``tests/`` is on ``sys.path`` under pytest)::

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

from typing import AbstractSet, Optional

from npu_codemod import testing
from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.findings import Finding
from npu_codemod.plugins.manager import load_plugins

PATH = testing.PATH
Site = testing.Site
sites = testing.sites


def _ids(rule_ids: Optional[AbstractSet[str]]) -> frozenset[str]:
    return frozenset(rule.id for rule in load_plugins().rules()) if rule_ids is None \
        else frozenset(rule_ids)


def run_rules(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> tuple[Optional[str], list[Finding]]:
    """Run the rules once: (new source or None when unchanged, findings in report order)."""
    outcome = testing.run_rules(_ids(rule_ids), source, facts)
    return outcome.new, outcome.findings


def assert_migrates(
    before: str,
    after: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """:func:`npu_codemod.testing.assert_migrates` with the rules given by id."""
    return testing.assert_migrates(_ids(rule_ids), before, after, facts=facts)


def assert_unchanged(
    source: str,
    rule_ids: Optional[AbstractSet[str]] = None,
    facts: AbstractSet[str] = frozenset(),
) -> list[Finding]:
    """Assert the rules leave ``source`` as it is; returns the findings (maybe unmigrated)."""
    return testing.assert_reports(_ids(rule_ids), source, facts=facts)


def engine(rule_ids: Optional[AbstractSet[str]] = None) -> Engine:
    """The engine :mod:`npu_codemod.testing` runs for ``rule_ids`` (None: all built-in rules)."""
    return testing.engine_of_ids(_ids(rule_ids))
