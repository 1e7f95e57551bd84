"""Reruns: which commit the migration is built on when the branch already exists.

- No branch yet: the base.
- The branch contains the base and holds only npu-codemod's own commits: the base's files are
  rewritten again (so a rerun reports the same sites, at the same lines, as the first run and
  as ``scan``), and a commit goes on the tip only if the tip does not hold exactly the base
  plus this run's edits: its tree is that, so edits of an earlier run with other rules (or a
  plugin broken since) are undone, there are never duplicate commits, and pushing it is a
  fast-forward.
- The branch contains the base and someone else committed to it: its tip is built on, with a
  warning naming the files it changes that this run's report does not explain.
- The base moved on and the branch holds only npu-codemod's own commits: it is rebuilt on the
  new base (the branch is rewritten, so pushing it needs ``--force-push``).
- The base moved on and someone else committed to the branch: their work is kept, the branch
  is built on as it is, and a note says the base must be merged in by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

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


@dataclass(frozen=True)
class TipState:
    """How the branch's tip compares with what this run would make of it (``source`` plus the
    run's new contents): whether it holds exactly that, and the files it changes that this run
    does not (edits of an earlier run, with other rules or a plugin that has broken since)."""

    held: bool = False
    undone: tuple[str, ...] = ()


def tip_state(repo: git.Repo, source: str, tip: Optional[str], blobs: Mapping[gitrepo.PyFile, str]
              ) -> TipState:
    """:class:`TipState` of ``tip`` (None: no branch yet) against ``source`` plus ``blobs``."""
    if tip is None:
        return TipState()
    at_source = gitrepo.python_contents(repo, source)
    wanted = {**at_source, **{file.path: blob for file, blob in blobs.items()}}
    at_tip = gitrepo.python_contents(repo, tip) if tip != source else at_source
    changed = {file.path for file in blobs}
    undone = sorted(path for path in set(at_tip) | set(at_source)
                    if at_tip.get(path) != at_source.get(path) and path not in changed)
    return TipState(held=at_tip == wanted, undone=tuple(undone))


def unexplained(repo: git.Repo, base: str, tip: str, explained: Iterable[str]) -> list[str]:
    """The files a branch others committed to changes since ``base`` that ``explained`` (the
    paths of this run's findings and changes) does not name."""
    known = set(explained)
    return [path for path in gitrepo.changed_paths(repo, base, tip) if path not in known]


def unexplained_note(paths: Sequence[str], limit: int = 10) -> str:
    """The warning of a branch with others' commits: the files this run's report does not explain."""
    shown = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
    return (f"warning: the branch has commits by others and was built on as it is; {len(paths)} "
            f"file(s) it changes are not explained by this report: {shown}")


def undone_note(paths: Sequence[str], limit: int = 10) -> str:
    """What a rerun did to the edits of an earlier run that this run's rules did not make."""
    shown = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
    return (f"the branch's earlier edits to {len(paths)} file(s) were undone (this run's rules "
            f"do not make them): {shown}")
