"""NPU021 keeps the ``hvd.init()`` of ``common.py`` (``import horovod.tensorflow as hvd``) while
a module that gets ``hvd`` from it (``from common import hvd``, ``import common`` then
``common.hvd``, ``from common import *``) still has a Horovod use that needs it: the use's
facts count it as the module's own import's would. Before, such a file recorded no Horovod
use, the init went, and the use raised "Horovod has not been initialized" (spec NPU021:
removed only when no use that needs it is left anywhere the program reaches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.plugins.rules.distributed.horovod_facts import horovod_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli, repo_record
from support.git import make_repo, show
from support.packs import message_of, repository_facts

#: The pack without NPU027 (which wraps a train call's hooks: not what these tests are about).
HOROVOD = frozenset({"NPU021", "NPU022", "NPU023", "NPU024", "NPU025"})
COMMON = '''\
import tensorflow as tf
import horovod.tensorflow as hvd


def setup():
    hvd.init()
    return tf.ConfigProto()
'''
#: The importer's Horovod uses no rule of the pack migrates, and the API the message names.
LEFT = [
    ("from common import hvd, setup\n", "x = hvd.allreduce(tf.constant(1.0))\n", "hvd.allreduce"),
    ("from common import hvd as h, setup\n", "h.broadcast_variables([], root_rank=0)\n",
     "hvd.broadcast_variables"),
    ("from common import hvd, setup\n", "callbacks = [hvd.callbacks.MetricAverageCallback()]\n",
     "hvd.callbacks.MetricAverageCallback"),
    ("from common import hvd, setup\nimport runner\n", "runner.run(hvd)\n", "horovod.tensorflow"),
    ("import common\nfrom common import setup\n", "x = common.hvd.allreduce(tf.constant(1.0))\n",
     "hvd.allreduce"),
    ("import common\nfrom common import setup\n", "print(common.hvd.rank())\n", "hvd.rank"),
    ("from common import *\n", "x = hvd.allreduce(tf.constant(1.0))\n", "hvd.allreduce"),
]
MIGRATED_USES = '''\
import tensorflow as tf
from common import hvd, setup

setup()
opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(0.1 * hvd.size()))
print(hvd.rank())
'''


def _train(imports: str, use: str) -> str:
    return f"import tensorflow as tf\n{imports}\nsetup()\n{use}"


@pytest.mark.parametrize(("imports", "use", "api"), LEFT)
def test_a_use_through_the_module_s_hvd_keeps_its_init(imports: str, use: str, api: str) -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": _train(imports, use),
                              "runner.py": "import tensorflow as tf\n\n\ndef run(h):\n    return h\n"})
    findings = assert_reports(HOROVOD, COMMON, path="common.py", facts=facts,
                              findings=[("NPU021", 6, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 6).startswith(
        f"kept: {api} in train (it imports from this file) still need Horovod initialised")


def test_uses_the_importer_s_rules_migrate_let_the_init_go() -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": MIGRATED_USES})
    assert_migrates(HOROVOD, COMMON, COMMON.replace("    hvd.init()\n", ""), path="common.py",
                    facts=facts, removed=[("NPU021", 6, 4, "migrated")])


def test_they_keep_it_while_the_rule_that_migrates_them_is_off() -> None:
    facts = repository_facts({"common.py": COMMON, "train.py": MIGRATED_USES})
    findings = assert_reports(HOROVOD - {"NPU022"}, COMMON, path="common.py", facts=facts,
                              findings=[("NPU021", 6, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 6).startswith("kept: hvd.rank, hvd.size in train")


def test_they_keep_it_when_the_name_is_not_known_to_be_horovod() -> None:
    """``helpers.hvd`` is bound by no file the analysis read: the importer's rules leave its
    uses, so they still need the init of the module that runs with it."""
    main = "import tensorflow as tf\nimport horovod.tensorflow as hvd\nimport train\n\nhvd.init()\n"
    train = MIGRATED_USES.replace("from common import hvd, setup\n\nsetup()\n", "from helpers import hvd\n")
    facts = repository_facts({"main.py": main, "train.py": train})
    assert_reports(HOROVOD, main, path="main.py", facts=facts, findings=[("NPU021", 5, 0, "unmigrated")])


def test_the_facts_name_the_repository_name_a_migrated_use_goes_through() -> None:
    kept = {fact for fact in horovod_facts("train.py", MIGRATED_USES) if fact.startswith("horovod-kept:")}
    assert kept == {"horovod-kept:train|hvd.DistributedOptimizer~NPU023@common.hvd,"
                    "hvd.rank~NPU022@common.hvd,hvd.size~NPU022@common.hvd|common.hvd,common.setup,tensorflow"}
    through_module = _train("import common\nfrom common import setup\n", "print(common.hvd.rank())\n")
    assert "horovod-kept:train|hvd.rank|common,common.setup,tensorflow" in horovod_facts("train.py", through_module)


def test_an_init_of_a_third_file_stays_for_a_use_of_the_shared_hvd() -> None:
    """``main.py`` and ``train.py`` both get ``hvd`` from ``common.py`` (no TensorFlow there)."""
    main = ('import tensorflow as tf\nfrom common import hvd\nimport train\n\n'
            'if __name__ == "__main__":\n    hvd.init()\n    train.main()\n')
    left = "import tensorflow as tf\nfrom common import hvd\n\n\ndef main():\n    return hvd.allreduce(tf.constant(1.0))\n"
    migrated = left.replace("hvd.allreduce(tf.constant(1.0))", "hvd.rank()")
    common = "import horovod.tensorflow as hvd\n"
    facts = repository_facts({"common.py": common, "main.py": main, "train.py": left})
    findings = assert_reports(HOROVOD, main, path="main.py", facts=facts, findings=[("NPU021", 6, 4, "unmigrated")])
    assert message_of(findings, "NPU021", 6).startswith("kept: hvd.allreduce in train (this file imports from it)")
    facts = repository_facts({"common.py": common, "main.py": main, "train.py": migrated})
    after = main.replace("    hvd.init()\n", "").replace("from common import hvd\n", "")
    assert_migrates(HOROVOD, main, after, path="main.py", facts=facts,
                    removed=[("NPU021", 6, 4, "migrated"), ("NPU025", 2, 0, "migrated")])


@pytest.mark.parametrize("engine", ["selective", "full"])
@pytest.mark.parametrize(("imports", "use"), [
    ("from common import hvd, setup\n", "x = hvd.allreduce(tf.constant(1.0))\n"),
    ("import common\nfrom common import setup\n", "x = common.hvd.allreduce(tf.constant(1.0))\n"),
])
def test_a_repository_keeps_the_init_its_importer_needs_and_reruns_clean(
        tmp_path: Path, engine: str, imports: str, use: str) -> None:
    train = _train(imports, use)
    common = COMMON + "\n\ndef world():\n    return hvd.size()\n"  # NPU022's: the run changes the repository
    repo = make_repo(tmp_path / "hvd", {"common.py": common, "train.py": train,
                                        "requirements.txt": "tensorflow==1.15.5\nhorovod==0.19.0\n"})
    (tmp_path / "repos.txt").write_text("hvd\n")
    run = ("run", "--repos", "repos.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine)
    cli(*run, "--report-dir", "off", "--branch", "off", cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "off")["verdict"] != "ready"  # NPU100 reports the init
    cli(*run, "--rules", "default,distributed", "--report-dir", "on", "--branch", "on", cwd=tmp_path, expect=0)
    migrated = show(repo, "on", "common.py").decode()
    assert "    hvd.init()\n" in migrated and "return get_npu_rank_size()" in migrated
    assert show(repo, "on", "train.py").decode().endswith(use)
    (kept,) = [f for f in repo_record(tmp_path / "on")["findings"] if f["rule_id"] == "NPU021"]
    assert (kept["path"], kept["status"]) == ("common.py", "unmigrated")
    assert kept["message"].startswith("kept: hvd.allreduce in train")
    (tmp_path / "again.txt").write_text("hvd on\n")
    again = ("run", "--repos", "again.txt", "--jobs", "1", "--no-progress", "--no-cache", "--engine", engine)
    cli(*again, "--rules", "default,distributed", "--report-dir", "again", "--branch", "again",
        cwd=tmp_path, expect=0)
    assert repo_record(tmp_path / "again")["status"] == "unchanged"
