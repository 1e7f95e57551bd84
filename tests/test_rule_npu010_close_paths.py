"""NPU010: a close that does not run on every path is no close.

``if len(sys.argv) > 1: sess.close()`` leaves the session open (and the NPU graph executor
held) on the other path; the spec's "never closed" session is reported, not taken as closed.
A ``try``/``finally``, ``with``, ``contextlib.closing`` or a close in each branch of an ``if``
with an ``else`` still closes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import cli
from support.csvfiles import read_csv as rows
from support.git import make_repo
from support.rules import assert_unchanged, sites
from support.session_close import TF, close_reported

EVERY_PATH = (": on the other paths it is never closed; close it where every path passes (after the "
              "branch, or in a finally)")


@pytest.mark.parametrize("source, made, line, clause", [
    ("import sys\nx = tf.constant(1.0)\nsess = tf.Session()\nprint(sess.run(x))\n"
     "if len(sys.argv) > 1:\n    sess.close()\nprint('done')\n", (4, 7), 7, "if len(sys.argv) > 1:"),
    ("def f(steps):\n    sess = tf.Session()\n    for step in range(steps):\n        sess.run(step)\n"
     "        sess.close()\n", (3, 11), 6, "for step in range(steps):"),
    ("sess = tf.Session()\ntry:\n    sess.run(op)\nexcept ValueError:\n    sess.close()\n", (2, 7), 6,
     "except ValueError:"),
    ("def f():\n    sess = tf.Session()\n    if quick:\n        pass\n    elif done:\n"
     "        sess.close()\n", (3, 11), 7, "elif done:"),
])
def test_a_close_on_one_path_only_is_reported(source: str, made: tuple[int, int], line: int,
                                               clause: str) -> None:
    close_reported(source, (*made, f"sess is closed only under '{clause}' (line {line}){EVERY_PATH}"))


@pytest.mark.parametrize("source", [
    "sess = tf.Session()\ntry:\n    sess.run(op)\nfinally:\n    sess.close()\n",
    "sess = tf.Session()\ntry:\n    sess.run(op)\nexcept ValueError:\n    pass\nelse:\n    sess.close()\n",
    "def f():\n    sess = tf.Session()\n    with sess:\n        sess.run(op)\n",
    "def f():\n    sess = tf.Session()\n    if done:\n        sess.close()\n    else:\n        sess.close()\n",
    "if ready:\n    sess = tf.Session()\n    sess.run(op)\n    sess.close()\n",
    "sess = tf.Session()\n\n\ndef main():\n    sess.run(op)\n\n\nif __name__ == '__main__':\n"
    "    main()\n    sess.close()\n",
])
def test_a_close_on_every_path_still_closes(source: str) -> None:
    findings = assert_unchanged(TF + source, {"NPU010"})
    assert [site[0::3] for site in sites(findings)] == [("NPU010", "migrated")]


def test_a_session_made_for_contextlib_closing_is_no_site() -> None:
    source = "from contextlib import closing\nwith closing(tf.Session()) as sess:\n    sess.run(op)\n"
    assert assert_unchanged(TF + source, {"NPU010"}) == []


def test_a_repository_closing_on_one_path_only_has_the_session_left(tmp_path: Path) -> None:
    source = (TF + "import sys\n\nsess = tf.Session()\nprint(sess.run(tf.constant(1.0)))\n"
              "if len(sys.argv) > 1:\n    sess.close()\n")
    make_repo(tmp_path / "closing", {"train.py": source})
    (tmp_path / "repos.txt").write_text("closing\n", encoding="utf-8")
    cli("run", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws", "--dry-run",
        "--rules", "NPU010", "--no-progress", "--jobs", "1", cwd=tmp_path, expect=0)
    [row] = rows(tmp_path / "report" / "repos.csv")
    assert (row["compliant"], row["left"], row["verdict"]) == ("0", "1", "needs-work")
