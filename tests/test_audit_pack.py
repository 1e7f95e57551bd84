"""The audit pack's parts: the shipped support list and its regeneration, the lookup, the owner
table, and the one walk that finds every reference (``qualified.references_under``)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import types
from pathlib import Path

import pytest
from fissix import pygram, pytree
from fissix.pgen2 import driver

from npu_codemod.api._toolkit import ApiStatus
from npu_codemod.codemods import regenerate_support_list as regenerate
from npu_codemod.codemods.api_owners import OWNERS
from npu_codemod.codemods.names import ImportNames
from npu_codemod.codemods.qualified import references_under
from npu_codemod.codemods.support_list import SupportList, list_name, support_list
from npu_codemod.orchestrator.batch import file_cache
from npu_codemod.plugins.manager import load_plugins

ROOT = Path(__file__).resolve().parents[1]
#: The published list (the project's ``../shared/data``), vendored so the suite needs nothing
#: outside the repository: ``tests/data/README.md`` says where it comes from.
SOURCE = ROOT / "tests" / "data" / "ascend-tf1.15-api-support.csv"
SOURCE_SHA256 = "b2fa4e81f3fd9d9f447b107ce8a9cb5807fcd116eab4657c609ac706b6ff9606"
PARSER = driver.Driver(pygram.python_grammar_no_print_and_exec_statement, convert=pytree.convert)


def test_the_shipped_list_is_what_the_script_makes_of_the_published_csv() -> None:
    assert hashlib.sha256(SOURCE.read_bytes()).hexdigest() == SOURCE_SHA256  # the copy is unedited
    shipped = regenerate.DATA_FILE.read_text(encoding="utf-8")
    assert shipped == regenerate.render(SOURCE.read_text(encoding="utf-8"), SOURCE.name)
    done = subprocess.run([sys.executable, "-m", "npu_codemod.codemods.regenerate_support_list",
                           "--check", str(SOURCE)], capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_shipped_list_says_where_it_comes_from() -> None:
    header = [line for line in regenerate.DATA_FILE.read_text(encoding="utf-8").splitlines()
              if line.startswith("#")]
    text = "\n".join(header)
    assert "tf1.15_api_support_list.xlsx in Huawei's Ascend/tensorflow repository" in text
    assert "Apache-2.0" in text and "8,352 rows, sha256 " in text
    assert f"# Regenerate: {regenerate.COMMAND} path/to/ascend-tf1.15-api-support.csv" in header


def test_regenerate_writes_a_copy_and_refuses_what_is_not_the_list(tmp_path: Path) -> None:
    source = tmp_path / "list.csv"
    source.write_text("api,module,status\nhvd.elastic.run(func),hvd,under-analysis\n"
                      "hvd.init,hvd,trains-after-migration\nhvd.init,hvd,trains-after-migration\n")
    out = tmp_path / "copy.csv"
    assert regenerate.main([str(source), "--out", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert rows == ["api,status", "hvd.elastic.run,under-analysis", "hvd.init,trains-after-migration"]
    assert regenerate.main([str(source), "--out", str(out), "--check"]) == 0
    source.write_text("api,status\nhvd.init,trains-after-migration\n")
    assert regenerate.main([str(source), "--out", str(out)]) == 2
    source.write_text("api,module,status\ntf.x,tf,fine\n")
    with pytest.raises(ValueError, match="line 2: not an api,module,status row"):
        regenerate.read_source(source.read_text())
    with pytest.raises(ValueError, match="tf.x is listed as both supported and deprecated"):
        regenerate.normalized([("tf.x", "supported"), ("tf.x(a)", "deprecated")])


@pytest.mark.parametrize("api, found", [
    ("tf.contrib.slim.conv2d", ("tf.contrib.slim", "deprecated")),  # a member of a listed module
    ("tf.contrib.layers.xavier_initializer", ("tf.contrib.layers.xavier_initializer", "supported")),
    ("tf.contrib.layers.layer_norm", ("tf.contrib.layers.layer_norm", "deprecated")),
    ("tf.compat.v1.is_finite", ("tf.is_finite", "unsupported")),  # compat-alias resolved
    ("tf.compat.v2.nn.relu", ("tf.nn.relu", "supported")),
    ("tf.compat.v1.estimator.tpu.NotAName", ("", "unknown")),  # aliases a module not listed
    ("tf.float32", ("", "unknown")),
    ("tf.Session.run", ("tf.Session", "trains-after-migration")),
    ("hvd.elastic.run", ("hvd.elastic.run", "under-analysis")),
])
def test_a_name_takes_the_status_of_its_longest_listed_prefix(api: str, found: tuple) -> None:
    assert support_list().lookup(api) == found


def test_compat_aliases_follow_the_aliased_entry() -> None:
    listed = SupportList({"tf.compat.v1.foo": "compat-alias", "tf.foo": "deprecated"})
    assert listed.lookup("tf.compat.v1.foo.bar") == ("tf.foo", "deprecated")
    assert SupportList({"tf.compat.v1.foo": "compat-alias"}).lookup("tf.compat.v1.foo") == \
        ("", "unknown")


def test_list_name_spells_full_names_as_the_list_does() -> None:
    assert list_name("tensorflow.contrib.slim.conv2d") == "tf.contrib.slim.conv2d"
    assert list_name("horovod.tensorflow.rank") == "hvd.rank"
    assert list_name("horovod.tensorflow.keras.callbacks.BroadcastGlobalVariablesCallback") == \
        "hvd.callbacks.BroadcastGlobalVariablesCallback"
    assert list_name("horovod.keras.DistributedOptimizer") == "hvd.DistributedOptimizer"
    assert list_name("tensorflow") is None and list_name("horovod.torch.rank") is None


def test_every_api_ascend_migrates_has_exactly_one_owner_entry() -> None:
    statuses = support_list().statuses
    migrated = {api for api, status in statuses.items() if status in ApiStatus.MIGRATED}
    assert set(OWNERS) == migrated
    builtin = {rule.id for rule in load_plugins().rules()}
    named = {rule_id for owner in OWNERS.values() for rule_id in owner.rules}
    planned = {f"NPU{n:03}" for n in (11, 12, 13, 21, 22, 23, 24, 26, 31, 32, 33, 51, 52)}
    assert named - builtin <= planned  # the packs not written yet, by their spec ids


def references(source: str, *roots: str) -> list[tuple[int, int, str, int, bool]]:
    tree = PARSER.parse_string(source)
    return [(r.line, r.column, r.name, r.end, r.call is not None)
            for r in references_under(tree, [ImportNames(tree, root=root) for root in roots])]


def test_references_under_finds_every_use_in_one_walk() -> None:
    source = '''import tensorflow as tf
from tensorflow.contrib import slim
import horovod.tensorflow as hvd


@tf.function
def step(x, act=slim.nn_ops, *, tf_name="tf"):
    y = slim.conv2d(x, 3).op.name
    hvd.init()
    tf = None  # assigned: not a use
    return tf.compat.v1.nn.relu(y), tf.float32, step.tf, dict(tf=1)
'''
    assert references(source, "tensorflow", "horovod") == [
        (6, 1, "tensorflow.function", 3, False),  # a decorator
        (7, 16, "tensorflow.contrib.slim.nn_ops", 2, False),  # a default value
        (8, 8, "tensorflow.contrib.slim.conv2d", 2, True),  # .op.name follows the call
        (9, 4, "horovod.tensorflow.init", 2, True),
        (11, 11, "tensorflow.nn.relu", 5, True),  # compat.v1 folded
        (11, 36, "tensorflow.float32", 2, False),
    ]
    assert references(source, "horovod") == [(9, 4, "horovod.tensorflow.init", 2, True)]


def test_the_cache_fingerprint_covers_the_data_files_of_the_built_in_rules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = types.ModuleType("npu_codemod.plugins")
    rules.__path__ = [str(tmp_path)]
    (tmp_path / "npu100.py").write_text("STATUSES = 'api_support.csv'\n")
    (tmp_path / "api_support.csv").write_text("api,status\ntf.is_finite,unsupported\n")
    monkeypatch.setattr(file_cache, "plugins", rules)
    try:
        file_cache._package_sources.cache_clear()
        before = file_cache._package_sources()
        (tmp_path / "api_support.csv").write_text("api,status\ntf.is_finite,supported\n")
        file_cache._package_sources.cache_clear()
        assert file_cache._package_sources() != before
    finally:
        monkeypatch.undo()
        file_cache._package_sources.cache_clear()
