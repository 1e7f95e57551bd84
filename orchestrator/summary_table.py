"""The closing summary on stderr: one line per repo, then totals."""

from __future__ import annotations

from collections import Counter
from typing import Sequence, TextIO

from .results import RepoResult


def print_summary(results: Sequence[RepoResult], stream: TextIO) -> None:
    if not results:
        print("no repositories in the list", file=stream)
        return
    width = min(max(len("repo"), *(len(r.repo) for r in results)), 60)
    print(f"{'repo':<{width}}  {'status':<9}  {'files':>5}  {'migr.':>5}  {'left':>5}  {'err':>4}",
          file=stream)
    for result in results:
        counts = Counter(f.status for f in result.findings)
        print(f"{result.repo[-width:]:<{width}}  {result.status:<9}  {len(result.files_changed):>5}  "
              f"{counts['migrated']:>5}  {counts['unmigrated']:>5}  {counts['error']:>4}", file=stream)
    statuses = Counter(result.status for result in results)
    cached = sum(result.files_cached for result in results)
    print(f"{len(results)} repos: {statuses['changed']} changed, {statuses['unchanged']} unchanged, "
          f"{statuses['failed']} failed" + (f"; {cached} file(s) from the result cache" if cached else ""),
          file=stream)
