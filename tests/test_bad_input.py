"""Bad files in real repositories, through the real CLI: each is one clear line (an ``error``
finding or nothing at all), the batch goes on, and the user's repository is unchanged.

Everything here runs once on one repository holding all the bad files next to a good one
(``bad_run``), and once on a repository that holds only bad files (nothing to commit).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from npu_codemod.codemods.file_kinds import SYMLINK

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show
from support.repo_state import repo_state

BRANCH = "npu-codemod/sess-run-to-npu"
TF = b"import tensorflow as tf\n"
DROPOUT = b"y = tf.nn.dropout(x, 0.5)\n"
HUGE_BYTES = 50 * 1024 * 1024

BAD_FILES = {  # path: bytes
    "undecodable.py": TF + b"s = '\xff\xfe'\n" + DROPOUT,
    "binary.py": TF + b"\x00\x01\x02\x89PNG\r\n\x1a\n" + DROPOUT,
    "py2_broken.py": TF + b"print 'x'\ndef f(a, /):\n    pass\n" + DROPOUT,
    "match.py": TF + b"match x:\n    case 1:\n        pass\n" + DROPOUT,
    "posonly.py": TF + b"def f(a, /, b):\n    return a\n" + DROPOUT,
    "cookie.py": b"# coding: utf-16\n" + TF + DROPOUT,
    "empty.py": b"",
    # generated weights: one expression deeper than Python's compiler can recurse
    "deep.py": TF + b"y = tf.nn.dropout(x, 0.5)\nWEIGHTS = " + b" + ".join(b"0.5" for _ in range(40000)) + b"\n",
}
#: (line, start of the message) of the one ``error`` finding of each bad file; None: no finding.
EXPECTED = {
    "undecodable.py": (2, "cannot read file: not valid utf-8 text: byte 0xff on line 2"),
    "binary.py": (2, "cannot read file: binary file (NUL byte on line 2)"),
    "py2_broken.py": (3, "cannot parse line 3, column 9: unexpected '/'"),
    "match.py": (2, "cannot parse line 2, column 6: unexpected 'x'"),
    "posonly.py": (2, "cannot parse line 2, column 9: unexpected '/'"),
    "cookie.py": (1, "cannot read file: encoding 'utf-16' is not ASCII-compatible"),
    "huge.py": (1, f"file too large to migrate automatically ({HUGE_BYTES:,} bytes"),
    "empty.py": None,
    "deep.py": (1, "file nested too deeply to migrate automatically"),
}
GOOD = TF + b"ds = tf.data.TFRecordDataset(f).batch(8)\n" + DROPOUT
PY2 = TF + b"print 'loss', 1\nprint >>sys.stderr, 'x'\n" + DROPOUT
#: Saved by an old Mac editor: CR alone ends each line (Python reads it).
CR_ONLY = (TF + b"def build(x):\n    return tf.nn.dropout(x, 0.5)\n").replace(b"\n", b"\r")


def write_huge(path: Path) -> None:
    """50 MB of TensorFlow code, written in chunks (the test must not hold it twice)."""
    line = b"x = tf.constant(1)  # padding padding padding padding\n"
    with path.open("wb") as stream:
        stream.write(TF)
        remaining = HUGE_BYTES - len(TF)
        chunk = line * (1 << 14)
        while remaining > 0:
            stream.write(chunk[:remaining])
            remaining -= len(chunk)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    outside = root / "outside"
    outside.mkdir()
    (outside / "evil.py").write_bytes(TF + DROPOUT)
    repo = make_repo(root / "repo", {**BAD_FILES, "good.py": GOOD, "py2.py": PY2,
                                     "readonly.py": GOOD, "deleted.py": GOOD,
                                     "cr_only.py": CR_ONLY})
    write_huge(repo / "huge.py")
    os.symlink("../outside/evil.py", repo / "link.py")
    os.symlink(str(outside), repo / "linkdir")
    git(repo, "add", "huge.py", "link.py", "linkdir")
    git(repo, "commit", "-q", "-m", "huge file and links out of the repo")
    (repo / "readonly.py").chmod(0o444)
    (repo / "deleted.py").unlink()  # deleted in the working tree, not in the commit
    only_bad = make_repo(root / "only-bad", BAD_FILES)
    (root / "repos.txt").write_text("repo\nonly-bad\n")
    before = {"repo": repo_state(repo, BRANCH), "only-bad": repo_state(only_bad),
              "outside": (outside / "evil.py").read_bytes()}
    result = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress",
                 "--jobs", "2", cwd=root)
    return root, before, result


def test_the_run_succeeds_without_a_traceback(bad_run) -> None:
    root, _, result = bad_run
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    run = json.loads((root / "rep" / "run.json").read_text())
    assert [(r["repo"], r["status"]) for r in run["repos"]] == [("repo", "changed"),
                                                                ("only-bad", "unchanged")]


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_each_bad_file_is_one_line_error_and_left_as_it_was(bad_run, path: str) -> None:
    root, _, _ = bad_run
    for repo in ("repo", "only-bad") if path in BAD_FILES else ("repo",):
        rows = [row for row in read_csv(root / "rep" / "findings.csv") if row["repo"] == repo and row["path"] == path]
        if EXPECTED[path] is None:
            assert rows == []
        else:
            (row,) = rows
            line, message = EXPECTED[path]
            assert (row["rule_id"], row["status"], int(row["line"])) == ("NPU000", "error", line)
            assert row["message"].startswith(message) and "\n" not in row["message"]
    repo = root / "repo"
    assert show(repo, BRANCH, path) == show(repo, "main", path)


def test_python2_file_is_migrated_with_the_print_statement_grammar(bad_run) -> None:
    root, _, _ = bad_run
    assert show(root / "repo", BRANCH, "py2.py") == (
        b"from npu_bridge.npu_init import *\n"
        + PY2.replace(b"tf.nn.dropout", b"npu_ops.dropout"))


def test_a_file_with_cr_only_line_endings_is_migrated_and_keeps_them(bad_run) -> None:
    root, _, _ = bad_run
    assert show(root / "repo", BRANCH, "cr_only.py") == (
        b"from npu_bridge.npu_init import *\r" + CR_ONLY.replace(b"tf.nn.dropout", b"npu_ops.dropout"))


def test_only_good_files_change_on_the_branch(bad_run) -> None:
    root, _, _ = bad_run
    changed = git(root / "repo", "diff", "--name-only", "main", BRANCH).split()
    assert changed == ["cr_only.py", "deleted.py", "good.py", "py2.py", "readonly.py"]
    assert show(root / "repo", BRANCH, "readonly.py") == show(root / "repo", BRANCH, "good.py")


def test_symlinks_out_of_the_repo_are_never_followed(bad_run) -> None:
    root, before, _ = bad_run
    repo = root / "repo"
    links = [(row["path"], row["line"], row["rule_id"], row["status"], row["message"])
             for row in read_csv(root / "rep" / "findings.csv") if row["path"].startswith("link")]
    # The .py link is named (not followed); the folder link is no .py file.
    assert links == [("link.py", "1", "NPU000", "unmigrated", SYMLINK)]
    assert (root / "outside" / "evil.py").read_bytes() == before["outside"]
    tree = git(repo, "ls-tree", BRANCH, "link.py", "linkdir")
    assert [line.split()[0] for line in tree.splitlines()] == ["120000", "120000"]
    assert show(repo, BRANCH, "link.py") == b"../outside/evil.py"


def test_the_users_repositories_are_unchanged(bad_run) -> None:
    root, before, _ = bad_run
    assert repo_state(root / "repo", BRANCH) == before["repo"]
    assert repo_state(root / "only-bad") == before["only-bad"]  # no branch either
    assert stat.S_IMODE((root / "repo" / "readonly.py").stat().st_mode) == 0o444
    assert not (root / "repo" / "deleted.py").exists()
