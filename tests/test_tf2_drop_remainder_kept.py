"""NPU064 reports every ``drop_remainder`` given another value, and leaves alone a dataset that
is only looked at (spec rules-tf2.md, NPU064: "an explicit non-``True`` value is kept and
reported"; only training pipelines get the flag).

TF-GNN's runner batches its training pipeline as ``ds.batch(n, drop_remainder=self._flag)``
on the dataset another object's ``get_dataset()`` returns, with ``False`` by default: the
receiver is not shown to be a dataset, and nothing was said. Its record printer (``for x in
ds.take(n): print(x)``, no training anywhere) got ``drop_remainder=True`` and silently printed
fewer records.
"""

from __future__ import annotations

from npu_codemod import testing

TF2_RUNTIME = {"tf-runtime:2"}
RULES = {"NPU064"}
KEPT = ("drop_remainder is given as another value: kept; the NPU compiles a dynamic shape for "
        "the last batch (now: drop_remainder={value})")
LOOKED_AT = ("dataset only looked at (a loop, iter(...)) in a file that trains nothing: no "
             "training pipeline, left as is (drop_remainder=True would silently leave out its "
             "last samples)")

RUNNER = '''\
import tensorflow as tf


class Batched:
    def __init__(self, provider, batch_size, drop_remainder=False):
        self._provider = provider
        self._batch_size = batch_size
        self._drop_remainder = drop_remainder

    def get_dataset(self) -> tf.data.Dataset:
        ds = self._provider.get_dataset()
        return ds.batch(self._batch_size, drop_remainder=self._drop_remainder)


def run(model, provider, batch_size):
    train = tf.data.Dataset.range(64).batch(batch_size)
    model.fit(train)
    model.fit(Batched(provider, batch_size).get_dataset())
'''

PRINTER = '''\
"""Prints the first records of a file."""
import sys

import tensorflow as tf


def main(path, count):
    ds = tf.data.TFRecordDataset(path).batch(8)
    for records in ds.take(count):
        print(records)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
'''


def _messages(findings: list) -> list[tuple[int, int, str, str, str]]:
    return sorted((f.line, f.column, f.status, f.level, f.message.split(" (guide")[0])
                  for f in findings if f.rule_id == "NPU064")


def test_a_flag_on_a_receiver_from_another_objects_call_is_reported_with_its_value() -> None:
    after = RUNNER.replace(".range(64).batch(batch_size)", ".range(64).batch(batch_size, drop_remainder=True)")
    findings = testing.assert_migrates(RULES, RUNNER, after, facts=TF2_RUNTIME)
    assert _messages(findings) == [  # before: only (16, 38, "migrated", ...)
        (12, 18, "unmigrated", "", KEPT.format(value="self._drop_remainder")),
        (16, 38, "migrated", "", "added drop_remainder=True (static batch shape for the NPU)")]


def test_true_on_such_a_receiver_is_in_place() -> None:
    source = RUNNER.replace("drop_remainder=self._drop_remainder)", "drop_remainder=True)")
    findings = testing.run_rules(RULES, source, TF2_RUNTIME).findings
    assert (12, 18, "migrated", "", "drop_remainder=True is set") in _messages(findings)


def test_a_batch_of_an_imported_name_is_not_taken_for_a_dataset() -> None:
    source = ("import tensorflow as tf\nimport batching\n\n\n"
              "def make(x):\n    return batching.batch(x, drop_remainder=False)\n")
    assert testing.assert_reports(RULES, source, facts=TF2_RUNTIME, findings=[]) == []


def test_a_dataset_only_printed_in_a_file_that_trains_nothing_is_left_as_is() -> None:
    findings = testing.assert_reports(RULES, PRINTER, facts=TF2_RUNTIME)  # before: rewritten
    assert _messages(findings) == [(8, 39, "unmigrated", "note", LOOKED_AT)]


def test_its_explicit_value_is_named_in_the_note() -> None:
    source = PRINTER.replace(".batch(8)", ".batch(8, drop_remainder=False)")
    findings = testing.assert_reports(RULES, source, facts=TF2_RUNTIME)  # before: a warning
    assert _messages(findings) == [
        (8, 39, "unmigrated", "note", LOOKED_AT + " (now: drop_remainder=False)")]


def test_the_same_loop_in_a_file_that_trains_gets_the_flag() -> None:
    source = PRINTER.replace("        print(records)\n", "        train_step(records)\n").replace(
        "import tensorflow as tf\n", "import tensorflow as tf\n\nfrom steps import train_step\n")
    after = source.replace(".batch(8)", ".batch(8, drop_remainder=True)")
    testing.assert_migrates(RULES, source, after, facts=TF2_RUNTIME,
                            findings=[("NPU064", 10, 39, "migrated")])
