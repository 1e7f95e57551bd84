"""Files the engine refuses up front: too large to parse within reason (one place: the engine)."""

from __future__ import annotations

from npu_codemod.codemods.engine import MAX_SOURCE_BYTES

from support.rules import engine

BIG = b"import tensorflow as tf\n" + b"y = tf.nn.dropout(x, 0.5)\n" * (MAX_SOURCE_BYTES // 26 + 1)


def test_file_over_the_size_limit_is_one_error_and_not_parsed() -> None:
    outcome = engine().process(BIG, "gen/huge.py", repo="org/repo")
    assert outcome.new_data is None
    (finding,) = outcome.findings
    assert (finding.rule_id, finding.status, finding.line) == ("NPU000", "error", 1)
    assert finding.message == (f"file too large to migrate automatically ({len(BIG):,} bytes, "
                               "the limit is 1,048,576): migrate it by hand")


def test_file_at_the_limit_is_still_migrated() -> None:
    body = b"import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"
    data = body + b"#" * (MAX_SOURCE_BYTES - len(body) - 1) + b"\n"
    assert len(data) == MAX_SOURCE_BYTES
    outcome = engine(frozenset({"NPU004"})).process(data, "big.py")
    assert outcome.new_data is not None and b"npu_ops.dropout" in outcome.new_data


def test_large_file_without_tensorflow_is_skipped_silently() -> None:
    assert engine().process(b"x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1), "data.py").findings == ()
