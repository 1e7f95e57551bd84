"""Repositories for ``npu-codemod verify`` tests: a script, the tool's own migration of it, and
that migration with a planted bug on the migration branch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Optional

from support.cli import cli
from support.git import git, make_repo, show, write_files

BRANCH = "npu-codemod/sess-run-to-npu"
#: A whole verify batch of TensorFlow runs may take minutes on a loaded machine.
VERIFY_TIMEOUT = 900


def verify_table(command: str) -> str:
    return f'[tool.npu-codemod.verify]\ncommand = "{command}"\n'


def migrated_by_the_tool(folder: Path, files: Mapping[str, str], path: str) -> str:
    """The tool's own migration of ``path`` among ``files`` (a repository made in ``folder``)."""
    make_repo(folder, dict(files))
    (folder.parent / f"{folder.name}.txt").write_text(f"{folder.name}\n")
    done = cli("run", "--repos", f"{folder.name}.txt", "--no-progress", "--report-dir",
               f"{folder.name}-report", "--workspace", f"{folder.name}-ws", cwd=folder.parent)
    assert done.returncode == 0, done.stderr
    return show(folder, BRANCH, path).decode()


def repo_with_branch(path: Path, files: Mapping[str, str], migrated: Mapping[str, str]) -> None:
    """A repository of ``files`` whose migration branch changes them to ``migrated``."""
    make_repo(path, dict(files))
    git(path, "checkout", "-q", "-b", BRANCH)
    write_files(path, dict(migrated))
    git(path, "commit", "-q", "-am", "Migrate TensorFlow sess.run training code to Ascend NPU")
    git(path, "checkout", "-q", "main")


def planted(migrated: str, edit: Optional[tuple[str, str]]) -> str:
    """``migrated`` with ``edit`` (old, new) made once; as it is for None."""
    if edit is None:
        return migrated
    assert migrated.count(edit[0]) == 1, edit[0]
    return migrated.replace(*edit)


def verify_all(root: Path, names: list[str], *args: str) -> tuple:
    """``npu-codemod verify`` of the repositories ``names`` under ``root``: (the finished
    process, each repository's verify record by name)."""
    (root / "repos.txt").write_text("".join(f"{name}\n" for name in names))
    done = cli("verify", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--report-dir",
               "report", "--workspace", "ws", *args, cwd=root, timeout=VERIFY_TIMEOUT)
    run = json.loads((root / "report" / "run.json").read_text())
    return done, {repo["repo"]: repo["verify"] for repo in run["repos"]}
