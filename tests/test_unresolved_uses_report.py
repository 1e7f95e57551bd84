"""Issue 27: a repository whose TensorFlow uses could not all be resolved says how many, in
``repos.csv`` and on the page, so its readiness figure is not read as complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_codemod.codemods.accessors import unresolved_accesses
from npu_codemod.codemods.api_sites import UNRESOLVED_ACCESS, unresolved_uses
from npu_codemod.codemods.findings import Finding
from npu_codemod.plugins.rules.audit.npu100_api_support import may_call

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo

LOOKUP = '''\
"""tf.contrib's packages, looked up by name so that the library imports without them."""
import importlib

import tensorflow as tf


def contrib_module(name="layers"):
  return importlib.import_module("tensorflow.contrib." + name)


def contrib_package(name):
  return importlib.import_module("tensorflow.contrib.%s" % name)


def version():
  return tf.__version__
'''
MODEL = '''\
"""A small model of the library; two of its uses go through a module looked up by name."""
import tensorflow as tf

from lib import lookup


def build(features, params):
  hidden = tf.layers.dense(features, params["units"], activation=tf.nn.relu)
  lookup.contrib_module().summarize_tensor(hidden)
  logits = tf.layers.dense(hidden, params["classes"])
  layers = lookup.contrib_module("layers")
  lookup.contrib_module(name="losses").softmax_cross_entropy(logits)
  metrics = lookup.contrib_package("metrics")
  metrics.streaming_accuracy(logits, features)
  return layers.flatten(logits)
'''


def test_the_audits_marker_is_the_one_the_reports_count() -> None:
    finding = Finding("r", "m.py", 9, 2, "NPU100", "api-support", "unmigrated",
                      f"{UNRESOLVED_ACCESS}: contrib_module() is a function of the repository ...")
    other = Finding("r", "m.py", 8, 2, "NPU100", "api-support", "unmigrated", "tf.layers.dense ...")
    assert unresolved_uses([finding, other]) == 1


def test_a_scan_counts_the_uses_it_could_not_resolve_in_repos_csv_and_on_the_page(tmp_path: Path) -> None:
    make_repo(tmp_path / "lib-repo", {"lib/__init__.py": "", "lib/lookup.py": LOOKUP, "lib/model.py": MODEL})
    make_repo(tmp_path / "plain", {"train.py": "import tensorflow as tf\n\nx = tf.layers.dense\n"})
    (tmp_path / "repos.txt").write_text("lib-repo\nplain\n")
    cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path, expect=0)
    rows = {row["repo"]: row for row in read_csv(tmp_path / "rep" / "repos.csv")}
    assert rows["lib-repo"]["api_unresolved"] == "4"
    assert rows["plain"]["api_unresolved"] == "0"
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "4 TensorFlow use(s) could not be resolved" in page
    assert page.count("could not be resolved</span>") == 1


_ACCESS_PIECES = st.sampled_from(["contrib", "framework", "contrib.framework", ".", "()", "(1)", "\n",
                                  " = ", "fw", "x", "ｆramework", "tpu", ".arg_scope", "\\\n", " "])


@settings(max_examples=400, deadline=None)
@given(st.lists(_ACCESS_PIECES, max_size=12).map("".join),
       st.sampled_from([[], ["contrib.framework"], ["framework"], ["contrib.framework", "tpu"]]))
def test_a_file_the_gate_passes_by_has_no_unresolved_use(text: str, spellings: list[str]) -> None:
    """NPU100 walks a file for the calls of accessors it cannot resolve only when the gate
    lets it: what it spares is what ``unresolved_accesses`` would have found nothing in."""
    if not may_call(text, spellings):
        assert unresolved_accesses(text, spellings) == []


@pytest.mark.parametrize("text", ["fw = contrib.framework()\nfw.arg_scope(x)\n",
                                  "contrib.framework().arg_scope\n", "contrib.\\\nframework(1).x\n",
                                  "contrib.ｆramework().arg_scope\n"])
def test_the_gate_lets_every_spelling_of_a_call_through(text: str) -> None:
    assert unresolved_accesses(text, ["contrib.framework"])
    assert may_call(text, ["contrib.framework"])
