"""The merge verdict's reason counts what the figures count: sites (a line), so "to change"
and "to check" add up to the sites left, and a rule's two findings on one line are one site of
it (learning-to-learn's ``problems.py:242``: two APIs of one line read "4 site(s) left: 5 to
change (NPU100 5)" while summary.csv said 4)."""

from __future__ import annotations

from npu_codemod.codemods.merge_verdict import merge_verdict


def key(rule: str, line: int, level: str = "", status: str = "unmigrated", path: str = "train.py"):
    return rule, status, level, path, line


def test_two_findings_of_one_rule_on_one_line_are_one_site() -> None:
    findings = [key("NPU100", 3), key("NPU100", 3), key("NPU100", 7), key("NPU100", 9), key("NPU100", 12)]
    verdict = merge_verdict("unchanged", findings, [], None)
    assert (verdict.verdict, verdict.reason) == ("needs-work", "4 site(s) left: 4 to change (NPU100 4)")


def test_to_change_and_to_check_add_up_to_the_sites_left() -> None:
    findings = [key("NPU010", 3), key("NPU100", 3, "note"),  # one site to change: NPU010's is no note
                key("NPU100", 5, "note"), key("NPU100", 5, "note"),  # one site to check
                key("NPU007", 8, status="migrated"), key("NPU100", 8, "note"),  # still left: a note
                key("NPU000", 0, path="b.py"), key("NPU061", 0, path="b.py")]  # no line: each rule's own
    reason = merge_verdict("changed", findings, [], None).reason
    assert reason == "5 site(s) left: 3 to change (NPU000 1, NPU010 1, NPU061 1, NPU100 1), 2 to check (NPU100 2)"


def test_an_error_on_a_line_is_counted_as_an_error_not_as_work() -> None:
    findings = [key("NPU004", 2, status="error"), key("NPU100", 2), key("NPU100", 4)]
    assert merge_verdict("unchanged", findings, [], None).reason == \
        "1 site(s) left: 1 to change (NPU100 1); 1 error(s)"
