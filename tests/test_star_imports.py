"""A file that uses TensorFlow only through ``from models import *`` is reported at that line,
never left alone in silence (``codemods/star_imports``): the exports of the star-imported
module, what passes on through another star import, ``__all__`` and private names, and a
real repository through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.codemods.star_imports import (
    star_exports,
    star_findings,
    star_import_facts,
)
from npu_codemod.codemods.tf_scopes import FILE_FACT

from support.cli import cli, repo_record
from support.git import make_repo

NETS = '''"""Layers shared by the models."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib import slim as _slim

slim = tf.contrib.slim


def dense(x, n):
    return tf.layers.dense(x, n)
'''

TRAINER = '''"""Trains the model: every TensorFlow name comes from the star import."""
import os

from nets import *


def train(logdir):
    x = tf.placeholder(tf.float32, [None, 4])
    loss = tf.reduce_mean(dense(x, 1))
    step = tf.train.AdamOptimizer(1e-3).minimize(loss)
    sv = tf.train.Supervisor(logdir=logdir)
    sess = sv.prepare_or_wait_for_session(config=tf.ConfigProto(allow_soft_placement=True))
    sess.run(step, {x: [[0.0] * 4]})


if __name__ == "__main__":
    train(os.environ.get("LOGDIR", "/tmp/sv"))
'''


def _facts(files: dict[str, str], tf_files: set[str]) -> set[str]:
    """The facts the analysis gives for ``files`` (``tf_files``: those importing TensorFlow)."""
    facts = {f"{FILE_FACT}|{path}" for path in tf_files}
    for path, text in files.items():
        facts |= star_import_facts(path, text, imports_tf=path in tf_files)
    return facts


def _findings(files: dict[str, str], tf_files: set[str]) -> list[tuple[str, int, str]]:
    return star_findings(_facts(files, tf_files), files.get)


def test_a_module_s_star_import_binds_its_public_tensorflow_names() -> None:
    assert star_exports("nets.py", NETS) == {"slim", "tf"}
    restricted = NETS + '\n__all__ = ["dense"]\n'
    assert star_exports("nets.py", restricted) == set()  # __all__ leaves TensorFlow out
    assert star_exports("pkg/__init__.py", "import tensorflow as _tf\n") == set()


def test_modules_are_read_only_for_a_file_that_imports_no_tensorflow() -> None:
    """Every TensorFlow file paid for its exports when the analysis read them: now only the
    modules a non-TF file star-imports are read, at the end."""
    asked: list[str] = []
    files = {"nets.py": NETS, "own.py": "import tensorflow as tf\nfrom nets import *\n\nx = tf.constant(1)\n"}

    def read(path: str) -> "str | None":
        asked.append(path)
        return files.get(path)
    assert star_findings(_facts(files, {"nets.py", "own.py"}), read) == [] and asked == []
    files["trainer.py"] = TRAINER
    assert star_findings(_facts(files, {"nets.py", "own.py"}), read) and asked == ["nets.py"]


def test_a_script_using_tf_through_the_star_import_is_reported_at_that_line() -> None:
    facts = _facts({"nets.py": NETS, "trainer.py": TRAINER}, {"nets.py"})
    assert star_findings(facts, {"nets.py": NETS, "trainer.py": TRAINER}.get) == [(
        "trainer.py", 4,
        "uses TensorFlow only through `from nets import *` (nets binds tf): not migrated, the "
        "rules read a file's own imports; import what it uses here (`import tensorflow as tf`) "
        "and run again")]


def test_names_pass_on_through_another_module_s_star_import_and_relative_ones() -> None:
    files = {"lib/__init__.py": "", "lib/nets.py": NETS, "lib/common.py": "from .nets import *\nSEED = 1\n",
             "lib/trainer.py": TRAINER.replace("from nets import *", "from .common import *")}
    found = _findings(files, {"lib/nets.py"})
    assert [(path, line) for path, line, _ in found] == [("lib/trainer.py", 4)]
    assert "`from .common import *` (lib.common binds tf)" in found[0][2]


def test_a_file_with_two_such_star_imports_is_one_finding_naming_both() -> None:
    metrics = "import tensorflow as tf\n\n\ndef accuracy(a, b):\n    return tf.reduce_mean(a - b)\n"
    trainer = "from nets import *\nfrom metrics import *\n\nx = tf.constant(1)\nslim.fully_connected(x, 2)\n"
    found = _findings({"nets.py": NETS, "metrics.py": metrics, "trainer.py": trainer}, {"nets.py", "metrics.py"})
    assert found == [("trainer.py", 1, "uses TensorFlow only through `from nets import *` (nets binds "
                      "slim, tf) and `from metrics import *` (metrics binds tf): not migrated, the "
                      "rules read a file's own imports; import what it uses here (`import "
                      "tensorflow as tf`) and run again")]


def test_no_finding_where_no_tensorflow_name_is_used_or_the_file_imports_tf_itself() -> None:
    unused = "from nets import *\n\nprint(dense)\n"
    own = "import tensorflow as tf\nfrom nets import *\n\nx = tf.constant(1)\n"
    assert _findings({"nets.py": NETS, "show.py": unused, "own.py": own}, {"nets.py", "own.py"}) == []
    assert _findings({"trainer.py": TRAINER}, set()) == []  # nets is not in the repo


def test_the_cli_reports_the_file_and_the_verdict_is_not_ready(tmp_path: Path) -> None:
    make_repo(tmp_path / "gan", {"nets.py": NETS, "trainer.py": TRAINER})
    (tmp_path / "repos.txt").write_text("gan\n")
    records = []
    for engine in ("selective", "full"):
        cli("scan", "--repos", "repos.txt", "--report-dir", engine, "--no-progress", "--no-cache",
            "--engine", engine, cwd=tmp_path, expect=0)
        records.append(repo_record(tmp_path / engine))
    record = records[0]
    assert [(f["path"], f["line"], f["status"]) for f in record["findings"] if f["rule_id"] == "NPU000"] \
        == [("trainer.py", 4, "unmigrated")]
    assert record["verdict"] == "needs-work"
    assert records[0]["findings"] == records[1]["findings"]


@pytest.mark.parametrize("rules", [("--disable-rule", "tf2"), ("--rules", "sess-run")])
def test_the_finding_does_not_depend_on_the_tf2_pack(tmp_path: Path, rules: tuple[str, str]) -> None:
    """Files that import no TensorFlow were read for the analysis only while NPU061 (tf2 pack)
    wanted every file: without it, the star-import and standalone-Keras findings vanished."""
    keras = ("from keras.models import Sequential\nfrom keras.layers import Dense\n\n"
             "model = Sequential([Dense(1)])\nmodel.compile('sgd', 'mse')\nmodel.fit(x, y)\n")
    make_repo(tmp_path / "gan", {"nets.py": NETS, "trainer.py": TRAINER, "keras_train.py": keras})
    (tmp_path / "repos.txt").write_text("gan\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "out", "--no-progress", "--no-cache", *rules,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "out")
    assert sorted((f["path"], f["line"]) for f in record["findings"] if f["rule_id"] == "NPU000") \
        == [("keras_train.py", 6), ("trainer.py", 4)]


def test_check_lists_the_file_as_run_does(tmp_path: Path) -> None:
    (tmp_path / "nets.py").write_text(NETS)
    (tmp_path / "trainer.py").write_text(TRAINER)
    lines = cli("check", ".", cwd=tmp_path, expect=1).stdout.splitlines()
    assert [line for line in lines if "star import" in line or "only through" in line] == [
        "trainer.py:4:1: NPU000 uses TensorFlow only through `from nets import *` (nets binds tf): "
        "not migrated, the rules read a file's own imports; import what it uses here (`import "
        "tensorflow as tf`) and run again"]


# --- a named import of a TensorFlow alias (tensorpack's ``from tensorpack import tfv1 as tf``) ---

COMPAT = "import tensorflow as tf\n\ntfv1 = tf.compat.v1\n"
COMPAT_GUARDED = '''import tensorflow as tf


def is_tfv2():
    return tf.__version__.startswith("2")


if is_tfv2():
    tfv1 = tf.compat.v1
else:
    try:
        tfv1 = tf.compat.v1
    except AttributeError:
        tfv1 = tf
'''
EXPORT = '''from mylib import tfv1 as tf


def main():
    x = tf.placeholder(tf.float32, [None, 2])
    with tf.Session() as sess:
        print(sess.run(x, {x: [[1.0, 2.0]]}))


if __name__ == "__main__":
    main()
'''
NAMED_FOUND = ("uses TensorFlow only through `from mylib import tfv1 as tf` (mylib binds tfv1 to "
               "tensorflow.compat.v1: `import tensorflow.compat.v1 as tf`): not migrated, the rules read a "
               "file's own imports; import it here as shown and run again")


def test_a_script_using_tf_through_a_package_s_named_alias_is_reported_at_that_line() -> None:
    files = {"mylib/__init__.py": "from .compat import tfv1\n", "mylib/compat.py": COMPAT, "export.py": EXPORT}
    assert _findings(files, {"mylib/compat.py"}) == [("export.py", 1, NAMED_FOUND)]


def test_a_named_alias_is_followed_through_absolute_re_exports_and_guarded_assignments() -> None:
    """tensorpack: ``__init__`` imports ``tfv1`` from ``tensorpack.compat`` inside an ``if``,
    whose ``tfv1`` is assigned in both arms of a version test; the example is two folders deep."""
    files = {"tp/__init__.py": "STATIC = False\nif STATIC:\n    from tp.compat import tfv1\n",
             "tp/compat/__init__.py": COMPAT_GUARDED,
             "examples/basics/export.py": EXPORT.replace("from mylib import", "from tp import")}
    found = _findings(files, {"tp/compat/__init__.py"})
    assert [(path, line) for path, line, _ in found] == [("examples/basics/export.py", 1)]
    assert "`from tp import tfv1 as tf` (tp binds tfv1 to tensorflow.compat.v1" in found[0][2]


def test_a_direct_named_import_of_a_module_s_tf_is_reported() -> None:
    files = {"mylib/__init__.py": "", "mylib/compat.py": COMPAT,
             "export.py": EXPORT.replace("from mylib import tfv1 as tf", "from mylib.compat import tf")}
    found = _findings(files, {"mylib/compat.py"})
    assert [(path, line) for path, line, _ in found] == [("export.py", 1)]
    assert "(mylib.compat binds tf to tensorflow: `import tensorflow as tf`)" in found[0][2]


def test_named_imports_of_other_names_or_by_tensorflow_files_are_no_finding() -> None:
    utils = "import numpy as np\n\ntfv1 = np.float32\n"
    files = {"mylib/__init__.py": "from .compat import tfv1\n", "mylib/compat.py": utils, "export.py": EXPORT}
    assert _findings(files, set()) == []  # tfv1 is no TensorFlow name there
    files = {"mylib/__init__.py": "from .compat import tfv1\n", "mylib/compat.py": COMPAT,
             "export.py": "import tensorflow\n" + EXPORT}
    assert _findings(files, {"mylib/compat.py", "export.py"}) == []  # imports TensorFlow itself
    unused = "from mylib import tfv1 as tf\n\nprint('no use')\n"
    files = {"mylib/__init__.py": "from .compat import tfv1\n", "mylib/compat.py": COMPAT, "export.py": unused}
    assert _findings(files, {"mylib/compat.py"}) == []


@pytest.mark.parametrize("engine", ["selective", "full"])
def test_a_repository_script_using_a_named_tf_alias_is_not_ready(tmp_path: Path, engine: str) -> None:
    """Regression (tensorpack ``examples/basics/export-model.py``): ``non-tf``, no finding,
    verdict ``ready`` although its ``tf.Session()`` gets no NPU config."""
    make_repo(tmp_path / "alias", {"mylib/__init__.py": "from .compat import tfv1\n", "mylib/compat.py": COMPAT,
                                   "export.py": EXPORT})
    (tmp_path / "repos.txt").write_text("alias\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--jobs", "1", "--engine", engine,
        cwd=tmp_path, expect=0)
    record = repo_record(tmp_path / "rep")
    assert [(f["path"], f["line"], f["rule_id"], f["status"], f["message"]) for f in record["findings"]] == [
        ("export.py", 1, "NPU000", "unmigrated", NAMED_FOUND)]
    assert record["verdict"] != "ready"
