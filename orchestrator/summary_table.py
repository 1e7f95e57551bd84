"""The closing summary on stderr: one line per repo, then totals."""

from __future__ import annotations

from collections import Counter
from typing import Iterator, NamedTuple, Sequence, TextIO

from npu_codemod.codemods.merge_verdict import VERDICTS
from npu_codemod.orchestrator.results import RepoResult


class RepoLine(NamedTuple):
    """What the summary and the exit code need of a repository: a few numbers, not its
    findings (those are in the spooled record), so a batch of any size keeps them all.
    ``migrated``, ``compliant``, ``unmigrated`` (what is left) and ``errors`` count sites, as
    every report does (``codemods/sites.py``)."""

    repo: str
    status: str
    files_changed: int
    migrated: int
    unmigrated: int
    errors: int
    files_cached: int
    pr_failed: bool
    files_skipped: int = 0  # test files left out
    api_ready: int = 0  # API use sites that are ready (api_sites), of
    api_known: int = 0  # the API use sites with a known status
    verdict: str = ""  # ``verify``, ``run --verify``: the repository's verdict
    uncommitted: int = 0  # files of the working tree not committed: not part of the migration
    compliant: int = 0  # sites already in NPU form
    not_needed: int = 0  # sites the migration made dead code
    merge: str = ""  # the merge verdict (codemods/merge_verdict.py)
    verify_reason: str = ""

    @classmethod
    def of(cls, result: RepoResult) -> "RepoLine":
        sites = result.sites
        known = [row for row in result.api_sites if row.known]
        verify = result.verify
        return cls(result.repo, result.status, len(result.files_changed), sites.migrated,
                   sites.left, sites.errors, result.files_cached, bool(result.pr_error),
                   result.files_skipped, sum(row.sites for row in known if row.ready),
                   sum(row.sites for row in known), verify.verdict if verify else "",
                   result.uncommitted, sites.compliant, sites.not_needed, result.merge.verdict,
                   verify.reason if verify else "")

    @property
    def api_readiness(self) -> str:
        return _percent(self.api_ready, self.api_known)

    def shown_status(self, scan: bool) -> str:
        """``scan`` writes nothing: a repository it would change says so."""
        if not scan or self.status not in ("changed", "unchanged"):
            return self.status
        return "would change" if self.files_changed else "would not change"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


#: Past this many repositories the table lists only the failed ones: hundreds of lines on a
#: terminal hide what needs a person, and repos.csv has every row.
MAX_ROWS = 40


def print_summary(lines: Sequence[RepoLine], stream: TextIO, scan: bool = False,
                  verify: bool = False) -> None:
    """The table and the totals; ``scan``: nothing was written, the sites are what ``run``
    would migrate; ``verify``: the verdicts of ``npu-codemod verify``, no migration table."""
    if not lines:
        print("no repositories in the list", file=stream)
        return
    shown = lines if len(lines) <= MAX_ROWS else [line for line in lines if line.status == "failed"]
    width = min(max(len("repo"), *(len(line.repo) for line in shown[:MAX_ROWS])), 60) if shown else 0
    for row in (_verify_rows if verify else _migration_rows)(shown[:MAX_ROWS], width, scan):
        print(row, file=stream)
    if len(shown) < len(lines):
        hidden = len(lines) - min(len(shown), MAX_ROWS)
        print(f"({hidden} more repos: every row is in repos.csv)" if shown else
              "(none failed: every repo's row is in repos.csv)", file=stream)
    if verify:
        _print_verdicts(lines, stream)
        return
    merges = Counter(line.merge for line in lines if line.merge)
    if merges:
        print("merge verdicts: " + ", ".join(f"{merges[name]} {name}" for name in VERDICTS
                                             if merges[name]), file=stream)
    uncommitted = [line for line in lines if line.uncommitted]
    if uncommitted:
        print(uncommitted_line(uncommitted), file=stream)
    print(_totals(lines, scan), file=stream)
    _print_verdicts(lines, stream)


def _migration_rows(lines: Sequence[RepoLine], width: int, scan: bool) -> Iterator[str]:
    if not lines:
        return
    status_width = max(9, *(len(line.shown_status(scan)) for line in lines))
    yield (f"{'repo':<{width}}  {'status':<{status_width}}  {'verdict':<12}  {'files':>5}  "
           f"{'migr.':>5}  {'compl.':>6}  {'left':>5}  {'err':>4}  {'api':>4}")
    for line in lines:
        yield (f"{line.repo[-width:]:<{width}}  {line.shown_status(scan):<{status_width}}  "
               f"{line.merge or '-':<12}  {line.files_changed:>5}  {line.migrated:>5}  "
               f"{line.compliant:>6}  {line.unmigrated:>5}  {line.errors:>4}  {line.api_readiness:>4}")


def _verify_rows(lines: Sequence[RepoLine], width: int, scan: bool) -> Iterator[str]:
    if not lines:
        return
    yield f"{'repo':<{width}}  {'status':<9}  {'verify':<14}  reason"
    for line in lines:
        yield (f"{line.repo[-width:]:<{width}}  {line.status:<9}  {line.verdict or '-':<14}  "
               f"{line.verify_reason}").rstrip()


def _totals(lines: Sequence[RepoLine], scan: bool) -> str:
    statuses = Counter(line.status for line in lines)
    migrated = sum(line.migrated for line in lines)
    cached = sum(line.files_cached for line in lines)
    skipped = sum(line.files_skipped for line in lines)
    known = sum(line.api_known for line in lines)
    ready = sum(line.api_ready for line in lines)
    changed = sum(1 for line in lines if line.files_changed and line.status in ("changed", "unchanged"))
    repos = (f"{changed} would change, {statuses['changed'] + statuses['unchanged'] - changed} would "
             f"not change" if scan else f"{statuses['changed']} changed, {statuses['unchanged']} unchanged")
    compliant = sum(line.compliant for line in lines)
    not_needed = sum(line.not_needed for line in lines)
    return (f"{len(lines)} repos: {repos}, {statuses['failed']} failed; "
            + (f"would migrate {migrated} sites" if scan else f"sites migrated {migrated}")
            + (f", compliant {compliant}" if compliant else "")
            + f", left {sum(line.unmigrated for line in lines)}"
            + (f", not needed {not_needed}" if not_needed else "")
            + f", errors {sum(line.errors for line in lines)}"
            + (f"; API readiness {100 * ready / known:.1f}% ({known - ready} of {known} API use "
               "sites blocking)" if known else "")
            + (f"; {skipped} test file(s) skipped (--include-tests migrates them)" if skipped else "")
            + (f"; {cached} file(s) from the result cache" if cached else ""))


def _print_verdicts(lines: Sequence[RepoLine], stream: TextIO) -> None:
    verdicts = Counter(line.verdict for line in lines if line.verdict)
    if verdicts:
        print("verify: " + ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items())),
              file=stream)


def uncommitted_line(lines: Sequence[RepoLine], named: int = 5) -> str:
    """One line on the repositories whose working tree holds uncommitted changes."""
    shown = ", ".join(f"{line.repo} ({line.uncommitted} file(s))" for line in lines[:named])
    more = f" and {len(lines) - named} more" if len(lines) > named else ""
    return (f"uncommitted changes in {shown}{more} are not part of the migration: the branch is "
            "built from the committed base")
