"""The closing summary on stderr: every repository of a short list; of a long one only those
that failed (the rest are in repos.csv), and the totals either way."""

from __future__ import annotations

import io

from npu_codemod.orchestrator.summary_table import MAX_ROWS, RepoLine, print_summary


def line(name: str, status: str = "changed") -> RepoLine:
    return RepoLine(name, status, files_changed=1, migrated=3, unmigrated=2, errors=0,
                    files_cached=0, pr_failed=False)


def summary(lines: list[RepoLine]) -> list[str]:
    out = io.StringIO()
    print_summary(lines, out)
    return out.getvalue().splitlines()


def test_a_short_list_shows_every_repository_and_the_totals() -> None:
    out = summary([line("alpha"), line("beta", "failed")])
    assert [row.split()[:2] for row in out[1:3]] == [["alpha", "changed"], ["beta", "failed"]]
    assert out[-1] == "2 repos: 1 changed, 0 unchanged, 1 failed; sites migrated 6, left 4, errors 0"


def test_a_long_list_shows_only_the_failed_ones() -> None:
    lines = [line(f"r{i:03}", "failed" if i in (7, 90) else "changed") for i in range(MAX_ROWS + 60)]
    out = summary(lines)
    assert [row.split()[0] for row in out[1:3]] == ["r007", "r090"]
    assert out[3] == f"({len(lines) - 2} more repos: every row is in repos.csv)"
    assert out[-1].startswith(f"{len(lines)} repos: {len(lines) - 2} changed, 0 unchanged, 2 failed")


def test_a_long_list_without_failures_is_the_totals_alone() -> None:
    out = summary([line(f"r{i}") for i in range(MAX_ROWS + 1)])
    assert out == ["(none failed: every repo's row is in repos.csv)",
                   f"{MAX_ROWS + 1} repos: {MAX_ROWS + 1} changed, 0 unchanged, 0 failed; "
                   f"sites migrated {3 * (MAX_ROWS + 1)}, left {2 * (MAX_ROWS + 1)}, errors 0"]


def test_verify_prints_its_own_table_not_a_migration_one() -> None:
    lines = [RepoLine("alpha", "unchanged", 0, 0, 0, 0, 0, False, verdict="equivalent",
                      verify_reason="12 steps agree within rtol 1e-05"),
             RepoLine("beta", "unchanged", 0, 0, 0, 0, 0, False, verdict="diverged",
                      verify_reason="step 3: loss differs by 4.1%")]
    out = io.StringIO()
    print_summary(lines, out, verify=True)
    assert out.getvalue().splitlines() == [
        "repo   status     verify          reason",
        "alpha  unchanged  equivalent      12 steps agree within rtol 1e-05",
        "beta   unchanged  diverged        step 3: loss differs by 4.1%",
        "verify: 1 diverged, 1 equivalent"]


def test_scan_says_would_change_and_the_merge_verdicts_come_before_the_totals() -> None:
    lines = [line("alpha", "unchanged")._replace(merge="needs-work"),
             line("beta", "unchanged")._replace(files_changed=0, unmigrated=0, merge="ready")]
    out = io.StringIO()
    print_summary(lines, out, scan=True)
    rows = out.getvalue().splitlines()
    assert [row[7:23].strip() for row in rows[1:3]] == ["would change", "would not change"]
    assert rows[-2:] == ["merge verdicts: 1 ready, 1 needs-work",
                         "2 repos: 1 would change, 1 would not change, 0 failed; would migrate 6 sites, "
                         "left 2, errors 0"]
    assert "unchanged" not in out.getvalue()
