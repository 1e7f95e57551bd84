"""The warnings Python gives about the user's code (``assert (x, "msg")``, ``"\\d"`` in a plain
string, ``x is 1``) while the tool parses and compile-checks it are the user's linter's business:
they never reach the tool's output, where they would interleave with its table."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import cli
from support.git import make_repo

#: A script with each warning Python gives when compiling it (SyntaxWarning for the tuple
#: assertion and ``is`` with a literal; the escape's is a DeprecationWarning up to 3.11, printed
#: only for a ``__main__.py``, a SyntaxWarning from 3.12).
WARNING_SCRIPT = '''import re

import tensorflow as tf


def check(x):
    assert (x > 0, "x must be positive")
    return x is 1


PATTERN = re.compile("\\d+")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
'''


@pytest.mark.parametrize("command", [("scan",), ("run", "--dry-run")])
def test_no_warning_about_the_users_code_is_printed(tmp_path: Path, command: tuple[str, ...]) -> None:
    make_repo(tmp_path / "repo", {"train.py": WARNING_SCRIPT, "lib/util.py": WARNING_SCRIPT,
                                  "app/__main__.py": WARNING_SCRIPT})
    (tmp_path / "repos.txt").write_text("repo\n")
    done = cli(*command, "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--jobs", "1",
               "--workspace", "ws", cwd=tmp_path, expect=0)
    assert "Warning" not in done.stderr, done.stderr
    assert "train.py" in (tmp_path / "rep" / "findings.csv").read_text()  # the files were read


def test_check_prints_no_warning_about_the_users_code(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(WARNING_SCRIPT)
    (tmp_path / "__main__.py").write_text(WARNING_SCRIPT)  # 3.11 prints its DeprecationWarnings
    done = cli("check", "train.py", "__main__.py", cwd=tmp_path, expect=1)  # its sites still need migrating
    assert "Warning" not in done.stderr, done.stderr
    assert "train.py:1:1: NPU001" in done.stdout
