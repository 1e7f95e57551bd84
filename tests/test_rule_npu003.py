"""NPU003 predict-last-batch: report-only, golden cases from the spec."""

from __future__ import annotations

import pytest

from support.rules import assert_unchanged, sites

RULES = {"NPU003"}
TF = "import tensorflow as tf\n"
PAD = ("pad the final prediction batch to batch_size with dummy examples and drop their outputs "
       "(guide: Data preprocessing: at inference, pad the last batch to the batch size, "
       "https://github.com/npu-codemod/npu-codemod/blob/main/docs/rules.md#npu003-predict-last-batch)")


def reported(source: str, *lines: int) -> None:
    findings = assert_unchanged(TF + source, RULES)
    assert sites(findings) == [("NPU003", line, column, "unmigrated") for line, column in lines]
    assert {f.message for f in findings} <= {PAD}


def test_the_guide_assert() -> None:
    reported("assert num_written_lines == num_actual_predict_examples\n", (2, 0))


@pytest.mark.parametrize("condition", [
    "len(all_results) == len(eval_examples)",
    "num_actual_predict_examples == num_written_lines",  # either side
    "numPredictions == numExamples",
    "self.num_written == len(predict_examples)",
    "num_outputs == total_samples",
])
def test_result_and_example_counts(condition: str) -> None:
    reported(f"assert {condition}\n", (2, 0))


def test_with_a_message_and_indented() -> None:
    source = ("def main():\n"
              "    if FLAGS.do_predict:\n"
              "        assert num_written_lines == num_actual_predict_examples, 'lost examples'\n")
    reported(source, (4, 8))


@pytest.mark.parametrize("source", [
    "assert len(predict_examples) == len(eval_examples)\n",  # two example counts
    "assert predictions == examples\n",  # not counts
    "assert num_written_lines != num_actual_predict_examples\n",  # not an equality
    "assert x == y\n",
    "assert num_written_lines == num_actual_predict_examples or True\n",  # not a comparison
    "if num_written_lines == num_actual_predict_examples:\n    pass\n",  # not an assert
])
def test_other_asserts_are_not_reported(source: str) -> None:
    reported(source)


def test_files_without_tensorflow_are_skipped() -> None:
    findings = assert_unchanged("assert num_written_lines == num_actual_predict_examples\n", RULES)
    assert findings == []


def test_all_rules_keep_the_file_and_report_again() -> None:
    source = TF + "assert num_written_lines == num_actual_predict_examples\n"
    first = assert_unchanged(source)
    assert [s for s in sites(first) if s[0] == "NPU003"] == [("NPU003", 2, 0, "unmigrated")]
