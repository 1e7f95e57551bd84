"""Estimator subclasses reached through a package's re-exports (``codemods/reexports.py``).

``import mylib; mylib.estimator.GANEstimator(...)``, where ``mylib/__init__.py`` imports the
subpackage and ``mylib/estimator/__init__.py`` imports the class from the module that defines
it (TF-GAN's ``tfgan.estimator.GANEstimator``), is a construction of the repository's Estimator
subclass like ``from mylib.estimator.gan_estimator import GANEstimator``: NPU011 gives it the
NPU run config (spec: the repository's subclasses "in any file"), NPU012 switches its TPU off,
and NPU027 knows its ``train``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.api._toolkit import class_facts
from npu_codemod.codemods.built_models import ModelFacts
from npu_codemod.codemods.reexports import reexport_facts, reexports
from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show

RULES = {"NPU001", "NPU011"}
HEADER = "from npu_bridge.npu_init import *\n"

GAN_ESTIMATOR = '''\
import tensorflow as tf
from tensorflow import estimator as tf_estimator

__all__ = ["GANEstimator"]


class GANEstimator(tf_estimator.Estimator):
    def __init__(self, generator_fn, model_dir=None, config=None):
        super(GANEstimator, self).__init__(model_fn=make_model_fn(generator_fn), model_dir=model_dir,
                                           config=config)
'''
CLASS_FACTS = frozenset(class_facts("mylib/estimator/gan_estimator.py", GAN_ESTIMATOR))


def package_facts(inits: dict[str, str]) -> frozenset[str]:
    """The class facts and the ``reexport:`` facts of the package ``__init__`` files ``inits``."""
    return CLASS_FACTS.union(*(reexport_facts(path, text) for path, text in inits.items()))


#: TF-GAN's shape: the package imports its subpackage, which star-imports the class's module.
STAR_REEXPORT = package_facts({"mylib/__init__.py": "from mylib import estimator\n",
                               "mylib/estimator/__init__.py": "from .gan_estimator import *\n"})


def test_a_package_init_records_what_its_imports_bind():
    assert reexport_facts("mylib/estimator/__init__.py", (
        "from __future__ import absolute_import\n"
        "import tensorflow as tf\n"
        "from .gan_estimator import *\n"
        "from .tpu import TPUGANEstimator as TPUEstimator\n"
        "import mylib.estimator.losses as losses\n"
        "import mylib.estimator.metrics\n"
        "try:\n    from mylib.estimator import extra\nexcept ImportError:\n    extra = None\n")) == {
        "reexport:mylib.estimator|*|mylib.estimator.gan_estimator",
        "reexport:mylib.estimator|TPUEstimator|mylib.estimator.tpu.TPUGANEstimator",
        "reexport:mylib.estimator|losses|mylib.estimator.losses",
        "reexport:mylib.estimator|extra|mylib.estimator.extra",
    }
    # a plain module re-exports nothing: only a package's names are followed
    assert reexport_facts("mylib/train.py", "from mylib.estimator import gan_estimator\n") == set()


@pytest.mark.parametrize("inits", [
    {"mylib/__init__.py": "from mylib import estimator\n",
     "mylib/estimator/__init__.py": "from .gan_estimator import *\n"},
    {"mylib/__init__.py": "from . import estimator\n",
     "mylib/estimator/__init__.py": "from mylib.estimator.gan_estimator import GANEstimator\n"},
    {"mylib/__init__.py": "import mylib.estimator as estimator\n",
     "mylib/estimator/__init__.py": "from .gan_estimator import GANEstimator\n"},
    # the package star-imports an inner package that imports the subpackage (TF-GAN's own)
    {"mylib/__init__.py": "from mylib.python import *\n",
     "mylib/python/__init__.py": "from mylib.estimator import gan_estimator as estimator\n"},
], ids=["star", "named", "import-as", "nested-star"])
def test_a_subclass_spelled_through_the_package_gets_the_npu_run_config(inits: dict[str, str]):
    before = '''\
import tensorflow as tf
import mylib


def main():
    est = mylib.estimator.GANEstimator(generator_fn=generator_fn, model_dir="/tmp/m")
    est.train(input_fn, max_steps=10)
'''
    after = HEADER + before.replace('model_dir="/tmp/m")', 'model_dir="/tmp/m", config=npu_run_config_init())')
    assert_migrates(RULES, before, after, facts=package_facts(inits), path="train.py", findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 6, 10, "migrated")])


def test_the_subpackage_imported_by_name_or_aliased_resolves_the_same():
    before = '''\
import tensorflow as tf
import mylib as lib
from mylib import estimator


def main(run_config):
    first = estimator.GANEstimator(generator_fn, "/tmp/a", run_config)
    second = lib.estimator.GANEstimator(generator_fn, config=run_config)
    return first, second
'''
    after = HEADER + before.replace(
        '"/tmp/a", run_config)', '"/tmp/a", npu_run_config_init(run_config=run_config))').replace(
        "generator_fn, config=run_config)", "generator_fn, config=npu_run_config_init(run_config=run_config))")
    assert_migrates(RULES, before, after, facts=STAR_REEXPORT, path="scripts/train.py", findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 7, 12, "migrated"), ("NPU011", 8, 13, "migrated")])


@pytest.mark.parametrize("facts", [
    CLASS_FACTS,  # no package re-exports the class: nothing to follow
    package_facts({"mylib/__init__.py": "from mylib import estimator\n",
                   "mylib/estimator/__init__.py": "from .losses import *\n"}),  # another module's names
], ids=["no-reexports", "other-module"])
def test_a_name_no_package_re_exports_is_not_guessed_at(facts: frozenset[str]):
    source = "import tensorflow as tf\nimport mylib\n\nest = mylib.estimator.GANEstimator(g, config=rc)\n"
    assert_reports(RULES, source, findings=[], facts=facts, path="train.py")


def test_a_package_cycle_of_star_imports_ends():
    facts = package_facts({"mylib/__init__.py": "from mylib.estimator import *\n",
                           "mylib/estimator/__init__.py": "from mylib import *\n"})
    assert reexports(facts).resolve("mylib.estimator.Missing", (), lambda target, package: None) is None
    source = "import tensorflow as tf\nimport mylib\n\nest = mylib.estimator.GANEstimator(g, config=rc)\n"
    assert_reports(RULES, source, findings=[], facts=facts, path="train.py")


def test_a_tpu_subclass_through_the_package_has_its_tpu_switched_off():
    module = '''\
import tensorflow as tf


class TPUGANEstimator(tf.compat.v1.estimator.tpu.TPUEstimator):
    def __init__(self, generator_fn, config=None, use_tpu=True, eval_on_tpu=True, export_to_tpu=True):
        super().__init__(model_fn=make_model_fn(generator_fn), config=config, use_tpu=use_tpu)
'''
    facts = frozenset(class_facts("mylib/estimator/tpu_gan_estimator.py", module)) | reexport_facts(
        "mylib/__init__.py", "from mylib import estimator\n") | reexport_facts(
        "mylib/estimator/__init__.py", "from .tpu_gan_estimator import *\n")
    before = "import tensorflow as tf\nimport mylib\n\nest = mylib.estimator.TPUGANEstimator(g, config=rc, use_tpu=True)\n"
    after = HEADER + before.replace(
        "config=rc, use_tpu=True)",
        "config=npu_run_config_init(run_config=rc), use_tpu=False, eval_on_tpu=False, export_to_tpu=False)")
    assert_migrates({"NPU001", "NPU011", "NPU012"}, before, after, facts=facts, path="train.py", findings=[
        ("NPU001", 1, 0, "migrated"), ("NPU011", 4, 6, "migrated"), ("NPU012", 4, 6, "migrated")])


def test_the_train_of_a_subclass_through_the_package_trains_an_estimator():
    # NPU027's question (which receivers are Estimators) resolves the same spelling
    assert ModelFacts(STAR_REEXPORT).kind("mylib.estimator.GANEstimator", "train.py") == "estimator"
    assert ModelFacts(CLASS_FACTS).kind("mylib.estimator.GANEstimator", "train.py") is None


#: The reproducer: the script builds the estimator through the package, whose ``__init__``
#: files import no TensorFlow.
REPO = {
    "requirements.txt": "tensorflow==1.15.5\n",
    "mylib/__init__.py": "from mylib import estimator\n",
    "mylib/estimator/__init__.py": "from .gan_estimator import *\n",
    "mylib/estimator/gan_estimator.py": GAN_ESTIMATOR,
    "train.py": '''\
import tensorflow as tf
import mylib


def main():
    est = mylib.estimator.GANEstimator(generator_fn=lambda x: tf.layers.dense(x, 1), model_dir="/tmp/m")
    est.train(input_fn, max_steps=10)


if __name__ == "__main__":
    main()
''',
}


def test_run_gives_the_re_exported_subclass_the_npu_run_config_with_either_engine(tmp_path: Path):
    trees = {}
    for engine in ("selective", "full"):
        repo = make_repo(tmp_path / engine / "repo", REPO)
        (tmp_path / engine / "repos.txt").write_text("repo\n")
        cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
            "--report-dir", "report", "--workspace", "ws", cwd=tmp_path / engine, expect=0)
        found = [(row["path"], row["line"], row["rule_id"], row["status"])
                 for row in read_csv(tmp_path / engine / "report" / "findings.csv") if row["rule_id"] == "NPU011"]
        assert found == [("train.py", "6", "NPU011", "migrated")]
        assert read_csv(tmp_path / engine / "report" / "repos.csv")[0]["verdict"] == "ready"
        assert b'model_dir="/tmp/m", config=npu_run_config_init())' in show(repo, DEFAULT_BRANCH, "train.py")
        trees[engine] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
    assert trees["selective"] == trees["full"]
