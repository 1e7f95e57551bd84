"""Reruns: which commit the migration is built on when the branch already exists.

- No branch yet: the base.
- The branch contains the base and holds only npu-codemod's own commits: the base's files are
  rewritten again (so a rerun reports the same sites, at the same lines, as the first run and
  as ``scan``), and a commit goes on the tip only if the tip lacks some of the new contents,
  so there are never duplicate commits, and pushing it is a fast-forward.
- The branch contains the base and someone else committed to it: its tip is built on.
- The base moved on and the branch holds only npu-codemod's own commits: it is rebuilt on the
  new base (the branch is rewritten, so pushing it needs ``--force-push``).
- The base moved on and someone else committed to the branch: their work is kept, the branch
  is built on as it is, and a note says the base must be merged in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import git

from npu_codemod.orchestrator.git import repository as gitrepo

#: A line of every commit message npu-codemod writes: how its own commits are recognised.
OWN_COMMIT_MARK = "Applied by npu-codemod"


@dataclass(frozen=True)
class BuildPoint:
    source: str  # the commit whose files are read and rewritten
    parent: str  # the commit a new commit goes on top of
    notes: tuple[str, ...] = ()


def build_point(repo: git.Repo, base: str, tip: Optional[str]) -> BuildPoint:
    if tip is None:
        return BuildPoint(base, base)
    own = all(OWN_COMMIT_MARK in message for message in gitrepo.messages_since(repo, base, tip))
    if gitrepo.is_ancestor(repo, base, tip):
        return BuildPoint(base if own else tip, tip)
    if own:
        return BuildPoint(base, base, (f"the base moved on: branch rebuilt on {base[:12]} "
                                       "(pushing it needs --force-push)",))
    return BuildPoint(tip, tip, (f"the base moved on ({base[:12]}) and the branch has commits by "
                                 "others: kept as it is; merge the base into it by hand",))
