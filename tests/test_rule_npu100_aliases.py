"""NPU100: a name bound to an API that a rule migrates at every call is no miss.

``Reg = tf.estimator.BoostedTreesRegressor`` then ``Reg(...)``: NPU011 gives the call its
``config=npu_run_config_init()``, so the binding line is no site left to migrate by hand, and
the API is counted once, at the call (as ``tf.estimator.BoostedTreesRegressor(...)`` is).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from npu_codemod.testing import assert_migrates, assert_reports

from support.audit import AUDIT, audit_messages, counted, owner_miss
from support.cli import cli
from support.csvfiles import read_csv as rows
from support.git import make_repo

RULES = {"NPU001", "NPU011"} | AUDIT
ALIASED = '''import tensorflow as tf

Reg = tf.estimator.BoostedTreesRegressor
columns = [tf.feature_column.numeric_column("x")]
model = Reg(feature_columns=columns, n_batches_per_layer=1)
'''
MIGRATED = ALIASED.replace("import tensorflow", "from npu_bridge.npu_init import *\nimport tensorflow").replace(
    "n_batches_per_layer=1)", "n_batches_per_layer=1, config=npu_run_config_init())")
OWNER_MISS = ("Ascend migrates tf.estimator.BoostedTreesRegressor, but no enabled npu-codemod rule "
              "covered this use: migrate it as the guide says")
COUNTED = Counter({("tf.estimator.BoostedTreesRegressor", "supported-after-migration", True): 1,
                   ("", "supported", False): 1})  # supported APIs are counted together


def test_a_binding_whose_every_call_a_rule_migrated_is_no_site() -> None:
    findings = assert_migrates(RULES, ALIASED, MIGRATED)
    assert audit_messages(findings) == []
    assert counted(RULES, ALIASED) == COUNTED


def test_the_binding_counts_as_the_direct_call_does() -> None:
    direct = ALIASED.replace("Reg = tf.estimator.BoostedTreesRegressor\n", "").replace(
        "model = Reg(", "model = tf.estimator.BoostedTreesRegressor(")
    assert counted(RULES, direct) == COUNTED


def test_a_binding_also_used_as_a_value_stays_the_site_reported() -> None:
    source = ALIASED + "registry = {'boosted': Reg}\n"
    after = MIGRATED + "registry = {'boosted': Reg}\n"
    findings = assert_migrates(RULES, source, after)
    assert [(line, message.split(" (guide")[0]) for line, message in audit_messages(findings)] == [
        (3, OWNER_MISS)]


def test_a_binding_without_its_rule_stays_the_site_reported() -> None:
    findings = assert_reports(AUDIT, ALIASED)
    assert audit_messages(findings) == [(3, owner_miss("tf.estimator.BoostedTreesRegressor"))]


def test_a_repository_calling_an_aliased_premade_estimator_is_ready(tmp_path: Path) -> None:
    make_repo(tmp_path / "aliased", {"fit.py": ALIASED})
    (tmp_path / "repos.txt").write_text("aliased\n", encoding="utf-8")
    cli("run", "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws", "--dry-run",
        "--no-progress", "--jobs", "1", cwd=tmp_path, expect=0)
    [row] = rows(tmp_path / "report" / "repos.csv")
    assert (row["api_readiness"], row["verdict"], row["migrated"], row["left"]) == (
        "1.0000", "ready", "1", "0")
