"""Golden before/after tests for rules, for pytest: what LibCST's ``CodemodTest`` gives.

::

    from npu_codemod.testing import assert_migrates, assert_reports

    def test_run_config_becomes_npu_run_config():
        assert_migrates(RunConfigRule(), BEFORE, AFTER,
                        findings=[("ACME001", 3, 9, "migrated")])

Both run the real engine (decode, parse, every rule callback, the compile check, the import
placement) on the source as UTF-8 bytes. :func:`assert_migrates` also checks that the output
compiles, that a second run changes nothing, and that it reports the same sites with the same
statuses (the idempotence every rule promises); a mismatch fails with a unified diff.

``rules`` is a :class:`~npu_codemod.api.Rule` instance or class, an iterable of them, or rule
ids of the installed plugins: one (``"NPU004"``), or a set, list or tuple of them
(``{"NPU004"}``; exactly those: NPU001 is not added).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import AbstractSet, Any, Iterable, Optional, Sequence, Union

from npu_codemod.codemods.engine import DEFAULT_MODE, FULL, SELECTIVE, Engine
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.rule import Rule, without_hints

__all__ = ["Outcome", "Site", "assert_migrates", "assert_reports", "engine_of_ids", "run_rules",
           "sites"]

#: (rule id, line, column, status) of a finding: the part tests compare exactly.
Site = tuple[str, int, int, str]
RuleSpec = Union[Rule, type, str, Iterable[Any], AbstractSet[str]]
PATH = "train.py"


@dataclass(frozen=True)
class Outcome:
    """One run of the rules over a source: the new source (None: unchanged) and findings."""

    new: Optional[str]
    findings: list[Finding]


def run_rules(rules: RuleSpec, source: str, facts: AbstractSet[str] = frozenset(),
              path: str = PATH) -> Outcome:
    """Run ``rules`` once over ``source`` through the real engine, in both of its modes
    (``--engine selective`` and ``full``), which must give the same outcome: the full run's
    rules without their private speed hints (``Rule._scope``, ``_tokens``...), so a hint that
    changes an outcome fails every golden case it changes."""
    data, frozen = source.encode("utf-8"), frozenset(facts)
    outcome = _engine(rules, SELECTIVE).process(data, path, repo="repo", facts=frozen)
    whole = _engine(rules, FULL).process(data, path, repo="repo", facts=frozen)
    if outcome != whole:
        raise AssertionError("--engine selective and --engine full (without the rules' speed "
                             f"hints) differ:\nselective: {outcome}\nfull:      {whole}")
    new = None if outcome.new_data is None else outcome.new_data.decode("utf-8")
    return Outcome(new, list(outcome.findings))


def sites(findings: Iterable[Finding]) -> list[Site]:
    """(rule_id, line, column, status) of each finding, sorted."""
    return sorted((f.rule_id, f.line, f.column, f.status) for f in findings)


def assert_migrates(rules: RuleSpec, before: str, after: str, *,
                    findings: Optional[Sequence[Site]] = None,
                    facts: AbstractSet[str] = frozenset(), path: str = PATH,
                    removed: Sequence[Site] = ()) -> list[Finding]:
    """Assert ``before`` becomes exactly ``after``, which compiles and is a fixed point.

    ``findings``, when given, are the exact sites of the first run. The second run over
    ``after`` must change nothing, report no ``error``, and report as many sites of each rule
    and status as the first, less ``removed``: sites of the first run whose code the rewrite
    removes (``hvd.init()`` taken out), which the second run has nowhere to report. Returns
    the first run's findings.
    """
    first = run_rules(rules, before, facts, path)
    if first.new != after:
        raise AssertionError("the rewrite differs from the expected output:\n"
                             + _diff(after, first.new if first.new is not None else before))
    compile(after, path, "exec", dont_inherit=True)
    _check_sites(first.findings, findings)
    missing = sorted(set(removed) - set(sites(first.findings)))
    assert not missing, f"removed= names sites the first run did not report: {missing}"
    second = run_rules(rules, after, facts, path)
    if second.new is not None:
        raise AssertionError("a second run changed the file again:\n" + _diff(after, second.new))
    errors = [f for f in second.findings if f.status == "error"]
    assert not errors, f"the second run reported errors: {errors}"
    kept = [f for f in first.findings if sites([f])[0] not in set(removed)]
    if _statuses(second.findings) != _statuses(kept):
        raise AssertionError("the second run reports other sites than the first:\n"
                             f"first:  {sites(first.findings)}\nsecond: {sites(second.findings)}")
    return first.findings


def assert_reports(rules: RuleSpec, source: str, *,
                   findings: Optional[Sequence[Site]] = None,
                   facts: AbstractSet[str] = frozenset(), path: str = PATH) -> list[Finding]:
    """Assert the rules leave ``source`` unchanged; ``findings`` are the exact sites expected.
    Returns the findings (for message checks)."""
    outcome = run_rules(rules, source, facts, path)
    if outcome.new is not None:
        raise AssertionError("expected no rewrite, got:\n" + _diff(source, outcome.new))
    _check_sites(outcome.findings, findings)
    return outcome.findings


def _check_sites(found: list[Finding], expected: Optional[Sequence[Site]]) -> None:
    if expected is not None and sites(found) != sorted(expected):
        raise AssertionError(f"sites differ:\nexpected: {sorted(expected)}\ngot:      "
                             f"{sites(found)}\nmessages: {[f.message for f in found]}")


def _statuses(findings: Iterable[Finding]) -> Counter[tuple[str, str]]:
    return Counter((f.rule_id, f.status) for f in findings)


def _diff(expected: str, got: str) -> str:
    lines = difflib.unified_diff(expected.splitlines(keepends=True), got.splitlines(keepends=True),
                                 "expected", "got")
    return "".join(lines)


def _engine(rules: RuleSpec, mode: str = DEFAULT_MODE) -> Engine:
    ids = _rule_ids(rules)
    if ids is not None:
        return engine_of_ids(ids, mode)
    return Engine(_hinted(_instances(rules), mode), mode, plan_every_file=True)


def _rule_ids(rules: RuleSpec) -> Optional[frozenset[str]]:
    """The installed rules' ids ``rules`` names: one id (``"NPU064"``) or a set, list or
    tuple of ids; None for rule classes or instances."""
    if isinstance(rules, str):
        return frozenset({rules})
    if isinstance(rules, (set, frozenset, list, tuple)) and rules and all(isinstance(r, str) for r in rules):
        return frozenset(rules)
    return None


@lru_cache(maxsize=None)
def engine_of_ids(rule_ids: frozenset[str], mode: str = DEFAULT_MODE) -> Engine:
    """An engine with exactly the installed plugins' rules ``rule_ids``, built once per set
    (and ``mode``: see ``--engine``)."""
    from npu_codemod.plugins.manager import load_plugins

    rules = load_plugins().rules()
    unknown = rule_ids - {rule.id for rule in rules}
    assert not unknown, f"unknown rule ids: {sorted(unknown)}"
    # Plan a selective parse of every file, however short: a golden case compares both modes.
    return Engine(_hinted([rule for rule in rules if rule.id in rule_ids], mode), mode,
                  plan_every_file=True)


def _hinted(rules: list[Rule], mode: str) -> list[Rule]:
    """The rules as the selective engine runs them; the full engine gets them without their
    speed hints (the reference a hint must not change)."""
    return [without_hints(rule) for rule in rules] if mode == FULL else rules


def _instances(rules: RuleSpec) -> list[Rule]:
    if isinstance(rules, Rule):
        return [rules]
    if isinstance(rules, type):
        if not issubclass(rules, Rule):
            raise TypeError(f"not a Rule subclass: {rules.__name__}")
        return [rules()]
    if isinstance(rules, str):  # ids mixed with classes: a string would iterate into itself
        raise TypeError(f"give rule ids alone or rule classes alone, not both: {rules!r}")
    return [one for item in rules for one in _instances(item)]
