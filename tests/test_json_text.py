"""readable_json: the same JSON value as json.dumps, outer levels indented, records on one line."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.reports.json_text import ONE_LINE_DEPTH, readable_json

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_same_value_as_json_dumps(value: object) -> None:
    text = readable_json(value)
    assert text.endswith("\n")
    assert json.loads(text) == json.loads(json.dumps(value))


def test_outer_levels_are_indented_and_each_record_is_one_line() -> None:
    finding = {"rule": "NPU004", "line": 3, "message": "替换 dropout", "where": {"column": 0}}
    run = {"version": 1, "rules": ["NPU001", "NPU002"], "empty": [],
           "repos": [{"name": "a", "findings": [finding, finding]}]}
    lines = readable_json(run).splitlines()
    assert lines[:4] == ['{', '  "version": 1,', '  "rules": ["NPU001", "NPU002"],', '  "empty": [],']
    one_line = json.dumps(finding, ensure_ascii=False)
    assert lines.count("        " + one_line + ",") == 1 and lines.count("        " + one_line) == 1
    assert ONE_LINE_DEPTH == 4
