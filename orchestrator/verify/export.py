"""A commit's files in a scratch folder, through ``git archive``: never a worktree, never the
user's checkout (its working tree, index and HEAD are not touched)."""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

import git

from npu_codemod.orchestrator.git.repository import GitError

#: Files bigger than this stay out of an export (a data set committed by mistake).
MAX_EXPORT_BYTES = 2 << 30


def export_commit(repo: git.Repo, commit: str, folder: Path) -> Path:
    """Write the tree of ``commit`` into ``folder`` (created; must not exist) and return it.
    Members that would land outside ``folder`` (absolute paths, ``..``, links out) are
    refused by tarfile's ``data`` filter where Python has it."""
    folder.mkdir(parents=True)
    with tempfile.TemporaryFile(dir=folder.parent) as archive:
        try:
            repo.archive(archive, commit, format="tar")
        except git.GitCommandError as exc:
            raise GitError(f"cannot export {commit[:12]}: {exc.stderr.strip() or exc}") from None
        if archive.tell() > MAX_EXPORT_BYTES:
            raise GitError(f"cannot export {commit[:12]}: its files exceed {MAX_EXPORT_BYTES >> 30} GiB")
        archive.seek(0)
        with tarfile.open(fileobj=archive, mode="r:") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(folder, filter="data")
            else:  # pragma: no cover - Python before 3.9.17/3.10.12/3.11.4
                tar.extractall(folder, members=_inside(tar))
    return folder


def _inside(tar: tarfile.TarFile):
    for member in tar.getmembers():
        name = Path(member.name)
        if not name.is_absolute() and ".." not in name.parts and not (member.issym() or member.islnk()):
            yield member
