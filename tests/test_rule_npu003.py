"""NPU003 predict-last-batch: report-only, golden cases from the spec."""

from __future__ import annotations

import pytest

from support.rules import Golden, assert_unchanged, sites

RULES = {"NPU003"}
TF = "import tensorflow as tf\n"
PAD = ("pad the final prediction batch to batch_size with dummy examples and drop their outputs "
       "(guide: Data preprocessing: at inference, pad the last batch to the batch size, "
       "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu003-predict-last-batch)")
NPU003 = Golden("NPU003", header=TF)


def test_the_guide_assert() -> None:
    NPU003.reported("assert num_written_lines == num_actual_predict_examples\n", (2, 0), message=PAD)


@pytest.mark.parametrize("condition", [
    "len(all_results) == len(eval_examples)",
    "num_actual_predict_examples == num_written_lines",  # either side
    "numPredictions == numExamples",
    "self.num_written == len(predict_examples)",
    "num_outputs == total_samples",
])
def test_result_and_example_counts(condition: str) -> None:
    NPU003.reported(f"assert {condition}\n", (2, 0), message=PAD)


def test_with_a_message_and_indented() -> None:
    source = ("def main():\n"
              "    if FLAGS.do_predict:\n"
              "        assert num_written_lines == num_actual_predict_examples, 'lost examples'\n")
    NPU003.reported(source, (4, 8), message=PAD)


@pytest.mark.parametrize("source", [
    "assert len(predict_examples) == len(eval_examples)\n",  # two example counts
    "assert predictions == examples\n",  # not counts
    "assert num_written_lines != num_actual_predict_examples\n",  # not an equality
    "assert x == y\n",
    "assert num_written_lines == num_actual_predict_examples or True\n",  # not a comparison
    "if num_written_lines == num_actual_predict_examples:\n    pass\n",  # not an assert
])
def test_other_asserts_are_not_reported(source: str) -> None:
    NPU003.reported(source, message=PAD)


def test_files_without_tensorflow_are_skipped() -> None:
    findings = assert_unchanged("assert num_written_lines == num_actual_predict_examples\n", RULES)
    assert findings == []


def test_all_rules_keep_the_file_and_report_again() -> None:
    source = TF + "assert num_written_lines == num_actual_predict_examples\n"
    first = assert_unchanged(source)
    assert [s for s in sites(first) if s[0] == "NPU003"] == [("NPU003", 2, 0, "unmigrated")]
