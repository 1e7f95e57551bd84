"""The closing summary on stderr: one line per repo, then totals."""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple, Sequence, TextIO

from npu_codemod.orchestrator.results import RepoResult


class RepoLine(NamedTuple):
    """What the summary and the exit code need of a repository: a few numbers, not its
    findings (those are in the spooled record), so a batch of any size keeps them all."""

    repo: str
    status: str
    files_changed: int
    migrated: int
    unmigrated: int
    errors: int
    files_cached: int
    pr_failed: bool
    files_skipped: int = 0  # test files left out
    verdict: str = ""  # ``verify``, ``run --verify``: the repository's verdict

    @classmethod
    def of(cls, result: RepoResult) -> "RepoLine":
        counts = Counter(f.status for f in result.findings)
        return cls(result.repo, result.status, len(result.files_changed), counts["migrated"],
                   counts["unmigrated"], counts["error"], result.files_cached, bool(result.pr_error),
                   result.files_skipped, result.verify.verdict if result.verify else "")


#: Past this many repositories the table lists only the failed ones: hundreds of lines on a
#: terminal hide what needs a person, and repos.csv has every row.
MAX_ROWS = 40


def print_summary(lines: Sequence[RepoLine], stream: TextIO, scan: bool = False) -> None:
    """The table and the totals; ``scan``: nothing was written, the sites are what ``run``
    would migrate."""
    if not lines:
        print("no repositories in the list", file=stream)
        return
    shown = lines if len(lines) <= MAX_ROWS else [line for line in lines if line.status == "failed"]
    if shown:
        width = min(max(len("repo"), *(len(line.repo) for line in shown[:MAX_ROWS])), 60)
        print(f"{'repo':<{width}}  {'status':<9}  {'files':>5}  {'migr.':>5}  {'left':>5}  {'err':>4}",
              file=stream)
        for line in shown[:MAX_ROWS]:
            print(f"{line.repo[-width:]:<{width}}  {line.status:<9}  {line.files_changed:>5}  "
                  f"{line.migrated:>5}  {line.unmigrated:>5}  {line.errors:>4}", file=stream)
    if len(shown) < len(lines):
        hidden = len(lines) - min(len(shown), MAX_ROWS)
        print(f"({hidden} more repos: every row is in repos.csv)" if shown else
              "(none failed: every repo's row is in repos.csv)", file=stream)
    statuses = Counter(line.status for line in lines)
    migrated = sum(line.migrated for line in lines)
    cached = sum(line.files_cached for line in lines)
    skipped = sum(line.files_skipped for line in lines)
    print(f"{len(lines)} repos: {statuses['changed']} changed, {statuses['unchanged']} unchanged, "
          f"{statuses['failed']} failed; " + (f"would migrate {migrated} sites" if scan else
                                                f"sites migrated {migrated}") + ", left "
          f"{sum(line.unmigrated for line in lines)}, errors {sum(line.errors for line in lines)}"
          + (f"; {skipped} test file(s) skipped (--include-tests migrates them)" if skipped else "")
          + (f"; {cached} file(s) from the result cache" if cached else ""), file=stream)
    verdicts = Counter(line.verdict for line in lines if line.verdict)
    if verdicts:
        print("verify: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())),
              file=stream)
