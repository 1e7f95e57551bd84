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
from dataclasses import dataclass
from typing import AbstractSet, Iterable, Optional, Sequence

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


def messages(findings: Iterable[Finding], rule_id: str) -> list[str]:
    """The messages of ``rule_id``'s findings, by site (line, then column)."""
    return [f.message for f in sorted(findings, key=lambda f: (f.line, f.column)) if f.rule_id == rule_id]


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


@dataclass(frozen=True)
class Golden:
    """The golden cases of one rule, ``rule_id``: every source opens with ``header``, a rewrite
    adds ``added`` above it (the ``npu_init`` import), and ``rule_ids`` run (default: the rule
    alone). The expected sites are the (line, column) pairs of ``rule_id``'s findings."""

    rule_id: str
    header: str = ""
    added: str = ""
    rule_ids: AbstractSet[str] = frozenset()
    facts: AbstractSet[str] = frozenset()

    @property
    def ids(self) -> AbstractSet[str]:
        return self.rule_ids or {self.rule_id}

    def rewrites(self, before: str, after: str) -> list[Finding]:
        """:func:`assert_migrates` with the header and the added lines; every finding."""
        return assert_migrates(self.header + before, self.added + self.header + after,
                               self.ids, self.facts)

    def migrated(self, before: str, after: str, *expected: tuple[int, int]) -> list[Finding]:
        """:meth:`rewrites`, and the rule's ``migrated`` sites are exactly ``expected``."""
        findings = self.rewrites(before, after)
        self.assert_sites(findings, "migrated", expected)
        return findings

    def reported(self, source: str, *expected: tuple[int, int], status: str = "unmigrated",
                 message: Optional[str] = None) -> list[Finding]:
        """:func:`assert_unchanged`, and the rule's sites are exactly ``expected``, in ``status``
        (each with ``message``, when given)."""
        findings = assert_unchanged(self.header + source, self.ids, self.facts)
        self.assert_sites(findings, status, expected)
        if message is not None:
            others = {f.message for f in findings if f.rule_id == self.rule_id} - {message}
            assert not others, f"other messages than {message!r}: {sorted(others)}"
        return findings

    def assert_sites(self, findings: Sequence[Finding], status: str,
                     expected: Sequence[tuple[int, int]]) -> None:
        got = sites([f for f in findings if f.rule_id == self.rule_id])
        want = [(self.rule_id, line, column, status) for line, column in expected]
        assert got == want, f"sites differ:\nexpected: {want}\ngot:      {got}"


def run_repository(files: dict[str, str], rule_id: str,
                   every_finding: bool = False) -> dict[str, tuple[Optional[str], list[Finding]]]:
    """Run the rule ``rule_id`` over the files of one repository (path -> source), with the
    repository facts of them all: path -> (new source or None, that rule's findings, or
    ``every_finding``: those of the rules it brings along too, NPU001's)."""
    from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

    loaded_rules = load_rules(RuleSelection(only=frozenset({rule_id})))
    data = {path: text.encode("utf-8") for path, text in files.items()}
    facts = loaded_rules.repository_facts(data.items()).facts
    result = {}
    for path, content in data.items():
        outcome = loaded_rules.engine.process(content, path, facts=facts)
        new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
        result[path] = (new, [f for f in outcome.findings if every_finding or f.rule_id == rule_id])
    return result
