"""Ascend's own tool prompts on stdin; npu-codemod never does, with every pack on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH

from support.git import git, make_repo

TRAIN = textwrap.dedent('''\
    import horovod.tensorflow as hvd
    import tensorflow as tf

    hvd.init()


    def main():
        config = tf.estimator.RunConfig(model_dir="/ckpt/%d" % hvd.rank())
        estimator = tf.estimator.Estimator(model_fn=lambda features, labels, mode: None,
                                           config=config)
        estimator.train(input_fn=lambda: None, hooks=[hvd.BroadcastGlobalVariablesHook(0)])


    if __name__ == "__main__":
        main()
    ''')


def test_run_with_every_pack_never_reads_stdin(tmp_path: Path) -> None:
    """stdin is an open pipe nobody writes to: a prompt would wait on it until the timeout."""
    make_repo(tmp_path / "repo", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("repo\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt", "--rules",
         "default,distributed", "--no-progress", "--report-dir", "report", "--workspace", "ws"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        code = process.wait(timeout=240)
    finally:
        process.kill()
        assert process.stdin is not None
        process.stdin.close()
    assert code == 0, process.stderr.read() if process.stderr else ""
    migrated = git(tmp_path / "repo", "show", f"{DEFAULT_BRANCH}:train.py")
    assert "npu_run_config_init" in migrated and "hvd.init()" not in migrated
