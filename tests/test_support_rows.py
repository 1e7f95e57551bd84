"""``support_rows`` reads the shipped support lists as ``csv.DictReader`` does."""

from __future__ import annotations

import csv
import io
from importlib import resources

import pytest

from npu_codemod.codemods.support_list import support_rows


def _dict_reader(text: str) -> list[tuple[str, str]]:
    lines = (line for line in io.StringIO(text) if not line.startswith("#"))
    return [(row["api"], row["status"]) for row in csv.DictReader(lines)]


@pytest.mark.parametrize("data_file", ["api_support.csv", "api_support_tf2.csv"])
def test_the_shipped_lists_read_as_dict_reader_reads_them(data_file: str) -> None:
    text = resources.files("npu_codemod.codemods").joinpath(data_file).read_text(encoding="utf-8")
    rows = list(support_rows(text))
    assert len(rows) > 6000
    assert rows == _dict_reader(text)


def test_columns_are_found_by_their_header_and_quoted_cells_read() -> None:
    text = ('# provenance\nstatus,api,note\nsupported,"tf.a,b",x\n\n'
            'deprecated,tf.contrib.slim\n# a comment row\nunsupported\n')
    assert list(support_rows(text)) == [("tf.a,b", "supported"), ("tf.contrib.slim", "deprecated")]


def test_a_text_without_the_columns_has_no_rows() -> None:
    assert list(support_rows("")) == []
    assert list(support_rows("name,state\ntf.a,supported\n")) == []
