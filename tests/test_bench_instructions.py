"""``bench/instructions.py``: the A/B tool that counts instructions with callgrind. Valgrind is
not on CI's machine, so the measuring run is not exercised here; what it reads and what it says
without valgrind are."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import instructions  # noqa: E402


def test_the_total_is_the_sum_of_every_process_summary(tmp_path: Path) -> None:
    (tmp_path / "callgrind.101").write_bytes(b"version: 1\ncmd: python -m npu_codemod scan\n"
                                            b"events: Ir\nsummary: 29474596144\nfn=(1) main\n")
    (tmp_path / "callgrind.102").write_bytes(b"cmd: git cat-file --batch\nsummary: 3748761\n")
    (tmp_path / "callgrind.103").write_bytes(b"cmd: killed before its totals\n")
    (tmp_path / "other.txt").write_bytes(b"summary: 1000\n")
    assert instructions.total_instructions(tmp_path) == 29474596144 + 3748761


def test_a_parent_dumped_before_its_fork_is_counted_once(tmp_path: Path) -> None:
    """A forked worker starts with its parent's counts (callgrind copies them): the parent's
    counts are dumped before each fork (its part file ``callgrind.<pid>.1``) and reset, so the
    worker's file holds its own only, and every part file is summed."""
    assert "--dump-before=os_fork*" in instructions.FORK_DUMP
    (tmp_path / "callgrind.101.1").write_bytes(b"cmd: python -m npu_codemod scan\nsummary: 1500000000\n")
    (tmp_path / "callgrind.101").write_bytes(b"cmd: python -m npu_codemod scan\nsummary: 1700000000\n")
    (tmp_path / "callgrind.102").write_bytes(b"cmd: python -m npu_codemod scan\nsummary: 29000000000\n")
    assert instructions.total_instructions(tmp_path) == 1500000000 + 1700000000 + 29000000000


def test_a_worker_holding_its_parents_counts_is_found(tmp_path: Path) -> None:
    """Two files of the measured Python and no part file: the dump before the fork matched
    nothing (an interpreter without symbols), so the worker's file holds its parent's counts."""
    python = "/venv/bin/python"
    scan = f"cmd:  {python} -m npu_codemod scan --repos r.txt\nsummary: 5\n".encode()
    (tmp_path / "callgrind.101").write_bytes(scan)
    (tmp_path / "callgrind.105").write_bytes(b"cmd:  /usr/bin/git cat-file --batch\nsummary: 3\n")
    assert instructions.forks_dumped(tmp_path, python)  # nothing forked
    (tmp_path / "callgrind.102").write_bytes(scan)
    assert not instructions.forks_dumped(tmp_path, python)
    (tmp_path / "callgrind.101.1").write_bytes(scan)
    assert instructions.forks_dumped(tmp_path, python)


def test_without_valgrind_it_says_so_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert instructions.main(["--corpus", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [
        "bench: valgrind is not installed (apt-get install valgrind); nothing measured"]


def test_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert instructions.main(["--corpus", str(tmp_path / "gone")]) == 2
    assert capsys.readouterr().out.splitlines() == [f"bench: {tmp_path / 'gone'} is not a folder"]


def test_a_folder_without_repositories_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(instructions.shutil, "which", lambda name: "/usr/bin/valgrind")
    assert instructions.main(["--corpus", str(tmp_path)]) == 2
    assert capsys.readouterr().out.splitlines() == [f"bench: no git repository in {tmp_path}"]


def test_the_bare_child_reads_and_parses_a_repositorys_tf_files(tmp_path: Path) -> None:
    """The measured child runs as its own process: it reads the TF files of the listed
    repositories (a file fissix cannot parse included) and exits 0, with and without parsing."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("import tensorflow as tf\nsess = tf.Session()\n")
    (repo / "old.py").write_text("import tensorflow as tf\nprint 'python 2'\n")
    (repo / "util.py").write_text("x = 1\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t.invalid", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for command in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "c"]):
        subprocess.run(command, cwd=repo, env=env, check=True)
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{repo}\n")
    for flags in (["--parse"], []):
        done = subprocess.run([sys.executable, str(BENCH / "instructions.py"), "--bare", str(listing), *flags],
                              capture_output=True, text=True)
        assert (done.returncode, done.stderr) == (0, "")


def test_a_command_that_fails_under_valgrind_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A measured command that fails is one line and exit 1, with what it said last. A
    ``valgrind`` on ``PATH`` that fails as valgrind does for a missing program stands in
    (CI has no valgrind); the real one gives the same line on this machine."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "valgrind").write_text('#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\n'
                                    'echo "valgrind: $1: No such file or directory" >&2\nexit 127\n')
    (tools / "valgrind").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{instructions.os.environ['PATH']}")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q",
                    "--allow-empty", "-m", "c"], cwd=repo, check=True)
    assert instructions.main(["--corpus", str(repo), "--python", "/no/such/python"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "bench: /no/such/python -m npu_codemod scan ... exited 127 under valgrind "
        "(valgrind: /no/such/python: No such file or directory); nothing measured"]
