"""A repository that builds its ``MirroredStrategy`` through an accessor function of another
module (``contrib.distribute().MirroredStrategy()``, tensor2tensor's shape) trains
distributed on the first run already: NPU027 passes the NPU hooks then, not only once NPU026's
``NPUStrategy()`` shows on a rerun (which changed the branch a second time). Through the CLI,
on a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import cli
from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
CONTRIB = '''"""Access to tf.contrib modules that TF 2 lacks."""
import tensorflow as tf


def distribute():
    from tensorflow.contrib import distribute as contrib_distribute
    return contrib_distribute
'''
TRAINER = '''"""Builds the estimator and trains it, mirrored over the local GPUs when asked for."""
import tensorflow as tf

from lib.utils import contrib


def run_config(model_dir, num_gpus):
    distribution = None
    if num_gpus > 1:
        distribution = contrib.distribute().MirroredStrategy()
    return tf.estimator.RunConfig(model_dir=model_dir, train_distribute=distribution)


def train(model_fn, input_fn, model_dir, num_gpus, steps):
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=run_config(model_dir, num_gpus))
    estimator.train(input_fn=input_fn, steps=steps)
'''
FILES = {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/contrib.py": CONTRIB,
         "lib/trainer.py": TRAINER}


def test_a_strategy_built_through_an_accessor_is_distributed_on_the_first_run(tmp_path: Path) -> None:
    make_repo(tmp_path / "lib", FILES)
    (tmp_path / "repos.txt").write_text("lib\n")
    rules = ("--rules", "default,distributed")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", *rules, cwd=tmp_path, expect=0)
    trainer = git(tmp_path / "lib", "show", f"{BRANCH}:lib/trainer.py")
    assert "distribution = npu_strategy.NPUStrategy()" in trainer
    assert "estimator.train(input_fn=input_fn, steps=steps, hooks=npu_hooks_append())" in trainer
    (tmp_path / "again.txt").write_text(f"lib {BRANCH}\n")
    cli("run", "--repos", "again.txt", "--report-dir", "two", "--branch", "again", "--no-progress", *rules,
        cwd=tmp_path, expect=0)
    (rerun,) = json.loads((tmp_path / "two" / "run.json").read_text())["repos"]
    assert rerun["status"] == "unchanged" and rerun["files_changed"] == []


def test_an_accessor_to_another_module_makes_no_strategy(tmp_path: Path) -> None:
    """``contrib.layers().MirroredStrategy()`` names no strategy of TensorFlow's: no NPU hooks."""
    files = {**FILES, "lib/utils/contrib.py": CONTRIB.replace("distribute", "layers"),
             "lib/trainer.py": TRAINER.replace("contrib.distribute()", "contrib.layers()")}
    make_repo(tmp_path / "lib", files)
    (tmp_path / "repos.txt").write_text("lib\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", "--rules", "default,distributed",
        cwd=tmp_path, expect=0)
    trainer = git(tmp_path / "lib", "show", f"{BRANCH}:lib/trainer.py")
    assert "hooks=npu_hooks_append()" not in trainer


#: The accessor passed on by the packages' ``__init__``s, or star-imported: each builds the
#: strategy as ``contrib.distribute()`` did (``lib/utils/__init__.py`` and the trainer's import).
PASSED_ON = {
    "package re-export": ("from lib.utils.contrib import distribute\n", "from lib.utils import distribute"),
    "package star re-export": ("from .contrib import *  # noqa: F401,F403\n", "import lib.utils as utils"),
    "star import": ("", "from lib.utils.contrib import *  # noqa: F403"),
}


@pytest.mark.parametrize("shape", sorted(PASSED_ON))
def test_a_strategy_built_through_an_accessor_passed_on_is_distributed(tmp_path: Path, shape: str) -> None:
    init, imported = PASSED_ON[shape]
    call = "utils.distribute()" if "utils" in imported.split()[-1] else "distribute()"
    files = {**FILES, "lib/utils/__init__.py": init,
             "lib/trainer.py": TRAINER.replace("from lib.utils import contrib", imported).replace(
                 "contrib.distribute()", call)}
    make_repo(tmp_path / "lib", files)
    (tmp_path / "repos.txt").write_text("lib\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", "--rules", "default,distributed",
        cwd=tmp_path, expect=0)
    trainer = git(tmp_path / "lib", "show", f"{BRANCH}:lib/trainer.py")
    assert "distribution = npu_strategy.NPUStrategy()" in trainer
    assert "estimator.train(input_fn=input_fn, steps=steps, hooks=npu_hooks_append())" in trainer
