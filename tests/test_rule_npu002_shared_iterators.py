"""NPU002 leaves a dataset alone whose structure builds an iterator another dataset also feeds.

``Iterator.from_structure(train.output_types, train.output_shapes)`` takes its shapes from the
training dataset: with ``drop_remainder=True`` their batch dimension is static, and the first
smaller last batch of the test dataset the same iterator is then initialised with fails
("Incompatible shapes ... expected [32,4] but got [26,4]"). The spec: a pipeline shared by
training and evaluation is reported, not rewritten.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.jobs import DEFAULT_BRANCH
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules
from npu_codemod.plugins.rules.sess_run._pipeline_uses import pipeline_use_facts
from npu_codemod.testing import assert_migrates, assert_reports

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo, show

RULES = {"NPU002"}
ADDED = "added drop_remainder=True (static batch shape for the NPU)"
SHARED = ("shared by training and evaluation through one iterator ({}): with drop_remainder=True "
          "the iterator's batch dimension becomes static and the other dataset's last, smaller "
          "batch is rejected at run time; add drop_remainder=True to every dataset that "
          "initialises the iterator, or pad their last batches to batch_size (NPU003)")
INFERENCE = ("inference/eval pipeline (named {}, no repeat() before this batch): do not drop the "
             "remainder; pad the final batch to batch_size with dummy examples and drop their "
             "outputs (NPU003)")

REINITIALIZABLE = '''import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(1000).batch(32)
test_ds = tf.data.Dataset.from_tensor_slices((tx, ty)).batch(32)

it = tf.data.Iterator.from_structure({types}, {shapes})
features, labels = it.get_next()
train_init = it.make_initializer(train_ds)
test_init = it.make_initializer(test_ds)
'''


def _messages(findings):
    return [(f.line, f.status, f.message.split(" (guide")[0]) for f in findings]


@pytest.mark.parametrize("types, shapes", [
    ("train_ds.output_types", "train_ds.output_shapes"),
    ("tf.compat.v1.data.get_output_types(train_ds)", "tf.compat.v1.data.get_output_shapes(train_ds)"),
])
def test_a_dataset_whose_iterator_the_test_set_also_initialises_is_reported(types, shapes) -> None:
    source = REINITIALIZABLE.format(types=types, shapes=shapes)
    findings = assert_reports(RULES, source)
    assert _messages(findings) == [
        (3, "unmigrated", SHARED.format("train_ds's structure builds iterator 'it' on line 6, "
                                        "which test_ds also initialises on line 9")),
        (4, "unmigrated", INFERENCE.format("test_ds")),
    ]


def test_a_compat_v1_iterator_over_a_dataset_rebuilt_step_by_step() -> None:
    source = '''import tensorflow as tf

train_data = tf.data.Dataset.from_tensor_slices(train)
train_data = train_data.shuffle(10000)
train_data = train_data.batch(batch_size)
other = tf.data.Dataset.from_tensor_slices(rest).batch(batch_size)
iterator = tf.compat.v1.data.Iterator.from_structure(train_data.output_types,
                                                     train_data.output_shapes)
train_init = iterator.make_initializer(train_data)
other_init = iterator.make_initializer(other)
'''
    # The other dataset may drop its remainder: the iterator's shapes are the training set's.
    after = source.replace(".batch(batch_size)\niterator", ".batch(batch_size, drop_remainder=True)\niterator")
    findings = assert_migrates(RULES, source, after)
    assert _messages(findings) == [
        (5, "unmigrated", SHARED.format("train_data's structure builds iterator 'iterator' on "
                                        "line 7, which other also initialises on line 10")),
        (6, "migrated", ADDED),
    ]


def test_a_feedable_iterator_is_not_shown_to_serve_training_only() -> None:
    source = '''import tensorflow as tf

train_ds = tf.data.Dataset.from_tensor_slices(xs).repeat().batch(32)
handle = tf.placeholder(tf.string, shape=[])
it = tf.data.Iterator.from_string_handle(handle, train_ds.output_types, train_ds.output_shapes)
'''
    findings = assert_reports(RULES, source)
    assert _messages(findings) == [(3, "unmigrated", SHARED.format(
        "train_ds's structure builds a feedable iterator on line 5"))]


def test_an_iterator_initialised_with_the_training_dataset_only_is_rewritten() -> None:
    source = REINITIALIZABLE.format(types="train_ds.output_types", shapes="train_ds.output_shapes")
    source = source.replace("test_init = it.make_initializer(test_ds)\n", "")
    after = source.replace(".shuffle(1000).batch(32)", ".shuffle(1000).batch(32, drop_remainder=True)")
    findings = assert_migrates(RULES, source, after)
    assert _messages(findings)[0] == (3, "migrated", ADDED)


def test_a_dataset_of_another_function_with_the_same_name_is_rewritten() -> None:
    source = '''import tensorflow as tf


def train_input(xs):
    train_ds = tf.data.Dataset.from_tensor_slices(xs).repeat().batch(32)
    return train_ds


def evaluate(train_ds, test_ds):
    it = tf.data.Iterator.from_structure(train_ds.output_types, train_ds.output_shapes)
    return it.make_initializer(train_ds), it.make_initializer(test_ds)
'''
    after = source.replace(".repeat().batch(32)", ".repeat().batch(32, drop_remainder=True)")
    findings = assert_migrates(RULES, source, after)
    assert _messages(findings) == [(5, "migrated", ADDED)]


DATA = '''"""Datasets of the digit classifier."""
import tensorflow as tf


def get_dataset(batch_size, train, test):
    train_data = tf.data.Dataset.from_tensor_slices(train)
    train_data = train_data.shuffle(10000)
    train_data = train_data.batch(batch_size)
    test_data = tf.data.Dataset.from_tensor_slices(test)
    test_data = test_data.batch(batch_size)
    return train_data, test_data


def train_only(batch_size, train):
    train_data = tf.data.Dataset.from_tensor_slices(train).shuffle(10000)
    return train_data.batch(batch_size)
'''
MODEL = '''import tensorflow as tf

from digits import data


class Classifier(object):
    def get_data(self, train, test):
        train_data, test_data = data.get_dataset(128, train, test)
        iterator = tf.data.Iterator.from_structure(train_data.output_types,
                                                   train_data.output_shapes)
        self.image, self.label = iterator.get_next()
        self.train_init = iterator.make_initializer(train_data)
        self.test_init = iterator.make_initializer(test_data)

    def get_train_data(self, train):
        only = data.train_only(128, train)
        iterator = tf.data.Iterator.from_structure(only.output_types, only.output_shapes)
        self.train_init = iterator.make_initializer(only)
'''
FILES = {"digits/__init__.py": "", "digits/data.py": DATA, "digits/model.py": MODEL}


def test_the_facts_say_which_functions_feed_a_shared_iterator() -> None:
    assert pipeline_use_facts("digits/model.py", MODEL) == {
        "npu002-use:digits|digits.data.get_dataset|iterator",
        "npu002-use:digits|digits.data.train_only|train|digits/model.py:16",  # in get_train_data()
    }


def test_a_dataset_returned_to_a_shared_iterator_in_another_module_is_reported() -> None:
    loaded_rules = load_rules(RuleSelection(only=frozenset(RULES)))
    facts = loaded_rules.repository_facts(
        (path, text.encode("utf-8")) for path, text in FILES.items()).facts
    after = DATA.replace("return train_data.batch(batch_size)",
                         "return train_data.batch(batch_size, drop_remainder=True)")
    findings = assert_migrates(RULES, DATA, after, facts=facts, path="digits/data.py")
    assert _messages(findings) == [
        (8, "unmigrated", SHARED.format(
            "get_dataset() returns it to another module of the repository, which builds an "
            "iterator from its structure that another dataset also initialises")),
        (10, "unmigrated", INFERENCE.format("test_data")),
        (16, "migrated", ADDED),
    ]


#: A generator class of a library module (review rvn N5): one instance for training, one for
#: inference, both through one iterator made from the training instance's ``data``.
GENERATOR = '''import tensorflow as tf


class Gen(object):
    def __init__(self, xs, mode, batch_size, shuffle=True):
        data = tf.data.Dataset.from_tensor_slices(xs)
        if mode == "training":
            data = data.map(lambda x: x * 2.0)
        if shuffle:
            data = data.shuffle(100)
        data = data.batch(batch_size)
        self.data = data


class Other(object):
    def __init__(self, xs):
        self.data = tf.data.Dataset.from_tensor_slices(xs).shuffle(100).batch(8)
'''
SCRIPT = '''import tensorflow as tf

from gen.datagen import Gen, Other

with tf.device("/cpu:0"):
    tr = Gen(train, mode="training", batch_size=8)
    te = Gen(test, mode="inference", batch_size=8, shuffle=False)
    it = tf.data.Iterator.from_structure(tr.data.output_types, tr.data.output_shapes)
    x = it.get_next()
tr_init = it.make_initializer(tr.data)
te_init = it.make_initializer(te.data)
only = Other(train)
it2 = tf.data.Iterator.from_structure(only.data.output_types, only.data.output_shapes)
only_init = it2.make_initializer(only.data)
'''
GENERATOR_FILES = {"gen/__init__.py": "", "gen/datagen.py": GENERATOR, "gen/train.py": SCRIPT}


def test_the_facts_say_which_classes_attribute_feeds_a_shared_iterator() -> None:
    found = pipeline_use_facts("gen/train.py", SCRIPT)
    # Other's iterator is initialised with its own data only.
    assert {fact for fact in found if "|iterator" in fact} == {"npu002-use:gen|gen.datagen.Gen|iterator:data"}


def test_an_attribute_read_into_a_name_first_is_followed() -> None:
    script = SCRIPT.replace("    it = tf.data.Iterator.from_structure(tr.data.output_types, tr.data.output_shapes)",
                            "    train_ds = tr.data\n"
                            "    it = tf.data.Iterator.from_structure(train_ds.output_types, train_ds.output_shapes)")
    script = script.replace("make_initializer(tr.data)", "make_initializer(train_ds)")
    found = pipeline_use_facts("gen/train.py", script)
    assert {fact for fact in found if "|iterator" in fact} == {"npu002-use:gen|gen.datagen.Gen|iterator:data"}
    only = script.replace("te_init = it.make_initializer(te.data)\n", "")
    assert not {fact for fact in pipeline_use_facts("gen/train.py", only) if "|iterator" in fact}


def test_a_class_batch_whose_attribute_another_instance_shares_is_reported() -> None:
    loaded_rules = load_rules(RuleSelection(only=frozenset(RULES)))
    facts = loaded_rules.repository_facts(
        (path, text.encode("utf-8")) for path, text in GENERATOR_FILES.items()).facts
    after = GENERATOR.replace(".shuffle(100).batch(8)", ".shuffle(100).batch(8, drop_remainder=True)")
    findings = assert_migrates(RULES, GENERATOR, after, facts=facts, path="gen/datagen.py")
    assert _messages(findings) == [
        (11, "unmigrated", SHARED.format(
            "class Gen keeps it in self.data; another module of the repository builds an "
            "iterator from one instance's data that another instance's data also initialises")),
        (17, "migrated", ADDED),
    ]


def test_run_reports_the_shared_class_batch_with_either_engine_and_on_a_rerun(tmp_path: Path) -> None:
    script = SCRIPT.replace("from gen.datagen import", "from datagen import")
    files = {"datagen.py": GENERATOR, "train.py": script, "requirements.txt": "tensorflow==1.15.5\n"}
    trees = {}
    for engine in ("selective", "full"):
        root = tmp_path / engine
        repo = make_repo(root / "repo", files)
        (root / "repos.txt").write_text("repo\n")
        for report in ("first", "again"):  # again: on the migrated branch, merged
            cli("run", "--repos", "repos.txt", "--engine", engine, "--no-progress", "--no-cache",
                "--report-dir", report, "--workspace", "ws", cwd=root, expect=0)
            found = sorted((row["path"], row["line"], row["status"], row["message"].split(" (guide")[0])
                           for row in read_csv(root / report / "findings.csv") if row["rule_id"] == "NPU002")
            moved = report == "again"  # the rerun reads the NPU001 import the file gained
            assert found == [
                ("datagen.py", str(11 + moved), "unmigrated", SHARED.format(
                    "class Gen keeps it in self.data; another module of the repository builds an "
                    "iterator from one instance's data that another instance's data also initialises")),
                ("datagen.py", str(17 + moved), "compliant" if moved else "migrated",
                 "drop_remainder=True is set" if moved else ADDED)]
            rewritten = show(repo, DEFAULT_BRANCH, "datagen.py").decode()
            assert "data = data.batch(batch_size)\n" in rewritten
            assert ".shuffle(100).batch(8, drop_remainder=True)" in rewritten
            trees[engine, report] = git(repo, "rev-parse", f"{DEFAULT_BRANCH}^{{tree}}")
            git(repo, "merge", "-q", "--ff-only", DEFAULT_BRANCH)
        assert trees[engine, "again"] == trees[engine, "first"]
    assert trees["selective", "first"] == trees["full", "first"]
