"""``--split-by``: one commit and branch (``<branch>/<group>``) per group, each pushed alone.

A split change is always computed from the base commit, and a group's branch gets a new
commit only when its tip does not hold exactly the base plus the group's new contents (a
branch with only npu-codemod's commits: edits of an earlier run are undone), so a rerun adds
no commit. The findings of a group's files go with its group, changed or not.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import git

from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.batch.jobs import FileChange, RepoJob, new_blobs
from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.branch_reuse import build_point, tip_state
from npu_codemod.orchestrator.prs.groups import group_paths, grouper
from npu_codemod.orchestrator.results import ChangeGroup, RepoResult


def commit_groups(repo: git.Repo, job: RepoJob, base: str, result: RepoResult,
                  changes: Sequence[FileChange], findings: Sequence[Finding],
                  message: Callable[[list[Finding]], str]) -> RepoResult:
    """Commit each group's changes on its own branch on top of ``base`` (the pipeline pushes them)."""
    assert job.split_by is not None  # the pipeline commits groups only with --split-by
    group_of = grouper(job.split_by, lambda path: _text(gitrepo.read_file(repo, base, path)))
    changed = {change.file.path: change for change in changes}
    groups, committed = [], False
    for group, paths in group_paths(set(changed) | {f.path for f in findings}, group_of).items():
        files = [path for path in paths if path in changed]
        if not files:
            groups.append(ChangeGroup(group.name, group.owners, (), tuple(paths)))
            continue
        branch = f"{job.branch}/{group.name}"
        gitrepo.check_branch_name(branch, repo)
        tip = gitrepo.branch_tip(repo, branch)
        blobs = new_blobs(changed[path] for path in files)
        point = build_point(repo, base, tip)  # a branch with only our commits: base + this run
        held = point.parent == tip and tip_state(repo, point.source, tip, blobs).held
        commit = tip if held else None
        if commit is None:
            commit = gitrepo.commit_blobs(repo, point.parent, blobs,
                                          message([f for f in findings if f.path in paths]),
                                          tree_of=point.source)
            gitrepo.update_branch(repo, branch, commit, tip)
            committed = True
        groups.append(ChangeGroup(group.name, group.owners, tuple(files), tuple(paths), branch, commit))
    return result.with_changes(status="changed" if committed else "unchanged", groups=tuple(groups))


def _text(data: Optional[bytes]) -> Optional[str]:
    return data.decode("utf-8", "replace") if data is not None else None
