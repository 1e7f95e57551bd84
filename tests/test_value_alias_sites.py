"""A name bound to an API value, then read, is one API use: at the binding (``codemods/
value_aliases``; docs/reports.md: each site counted once).

TAPAS's TPU run config: ``is_per_host = tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2``,
then ``per_host_input_for_training=is_per_host``. ``is_per_host`` resolves back to the API, so
the read was a use of its own: NPU071 reported "... InputPipelineConfig.PER_HOST_V2" twice and
both audits counted 2 sites of ``InputPipelineConfig`` for one use.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods.api_owners import OWNER_OFF

from support.audit import AUDIT, counted
from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import process

TF2_RUNTIME = {"tf-runtime:2"}
PIPELINE = "tf.compat.v1.estimator.tpu.InputPipelineConfig"
RUN_CONFIG = '''\
import tensorflow.compat.v1 as tf
from tensorflow.compat.v1 import estimator as tf_estimator


def build(model_fn, model_dir):
  is_per_host = tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2
  run_config = tf_estimator.tpu.RunConfig(
      model_dir=model_dir,
      save_summary_steps=0,
      tpu_config=tf_estimator.tpu.TPUConfig(
          iterations_per_loop=100,
          per_host_input_for_training=is_per_host))
  return tf_estimator.tpu.TPUEstimator(
      use_tpu=False, eval_on_tpu=False, export_to_tpu=False,
      model_fn=model_fn, config=run_config, train_batch_size=8)
'''
HEADER = ("import npu_device\nfrom npu_device.compat.v1.npu_init import *\n"
          "npu_device.compat.enable_v1()\n")
#: The TF 2.x route with the TPU estimator's owners (NPU012, NPU013) off: each site a miss.
OWNERS_OFF = {"NPU011", "NPU062", "NPU071"}
MIGRATED = HEADER + RUN_CONFIG.replace("config=run_config", "config=npu_run_config_init(run_config=run_config)")


def _pipeline_sites(rows: object) -> int:
    return sum(row.sites for row in rows if row.api.endswith("InputPipelineConfig"))  # type: ignore[attr-defined]


def test_npu071_reports_and_counts_the_binding_not_each_read() -> None:
    findings = testing.assert_migrates(OWNERS_OFF, RUN_CONFIG, MIGRATED, facts=TF2_RUNTIME)
    pipeline = [(f.line, f.column) for f in findings
                if f.rule_id == "NPU071" and f"{PIPELINE}.PER_HOST_V2" in f.message]
    assert pipeline == [(6, 16)]  # before: also (12, 38), the read of is_per_host
    assert [f.message.split(" (guide")[0] for f in findings if (f.line, f.column) == (6, 16)] == [
        OWNER_OFF.format(api=f"{PIPELINE}.PER_HOST_V2", rules="NPU012", ids="NPU012")]
    assert _pipeline_sites(process(RUN_CONFIG, OWNERS_OFF, facts=TF2_RUNTIME).api_sites) == 1


def test_npu071_counts_one_site_when_the_owner_covers_it() -> None:
    rules = OWNERS_OFF | {"NPU012", "NPU013"}
    assert _pipeline_sites(process(RUN_CONFIG, rules, facts=TF2_RUNTIME).api_sites) == 1


def test_npu100_counts_one_site_on_the_tf1_route() -> None:
    source = RUN_CONFIG.replace(".compat.v1", "")
    rules = {"NPU011", "NPU012", "NPU013"} | AUDIT
    assert counted(rules, source)[("tf.estimator.tpu.InputPipelineConfig", "supported-after-migration", True)] == 1


def test_a_supported_value_read_twice_is_one_site() -> None:
    source = "import tensorflow as tf\n\nkind = tf.float32\nx = tf.zeros([2], dtype=kind)\ny = tf.ones([2], kind)\n"
    # tf.float32 (no listed prefix: unknown) once, tf.zeros and tf.ones
    assert counted(AUDIT, source) == Counter({("", "unknown", False): 1, ("", "supported", False): 2})


def test_a_dtype_value_is_reported_where_it_is_bound() -> None:
    source = "import tensorflow as tf\n\nkind = tf.float64\nx = tf.zeros([2], dtype=kind)\n"
    found = testing.run_rules({"NPU071"}, source, facts=TF2_RUNTIME).findings
    assert testing.sites(found) == [("NPU071", 3, 7, "unmigrated")]  # before: also (4, 24)


def _run(tmp_path: Path, engine: str) -> Path:
    report = f"report-{engine}"
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", report, "--no-progress",
        "--no-cache", "--engine", engine, "--disable-rule", "NPU012", "--disable-rule", "NPU013",
        cwd=tmp_path, expect=0)
    return tmp_path / report


def test_the_reports_count_the_use_once_end_to_end(tmp_path: Path) -> None:
    """summary.csv and repos.csv: one NPU071 finding and one site left for the value (before:
    NPU071 unmigrated 4, left 4); the same with either engine, and over the migrated code."""
    make_repo(tmp_path / "tapas", {"est.py": RUN_CONFIG, "requirements.txt": "tensorflow~=2.6.0\n"})
    make_repo(tmp_path / "migrated", {"est.py": MIGRATED, "requirements.txt": "tensorflow~=2.6.0\n"})
    (tmp_path / "repos.txt").write_text("tapas\nmigrated\n")
    selective, full = _run(tmp_path, "selective"), _run(tmp_path, "full")
    for name in ("repos.csv", "summary.csv", "findings.csv"):
        assert (selective / name).read_text() == (full / name).read_text()
    summary = {(r["repo"], r["rule_id"]): (r["migrated"], r["unmigrated"])
               for r in read_csv(selective / "summary.csv")}
    for repo in ("tapas", "migrated"):  # InputPipelineConfig once, RunConfig, TPUConfig
        assert summary[(repo, "NPU071")] == ("0", "3")
    assert {row["repo"]: row["left"] for row in read_csv(selective / "repos.csv")} == {"tapas": "3", "migrated": "3"}
    records = json.loads((selective / "run.json").read_text())["repos"]
    assert [[(s["api"], s["sites"]) for s in record["api_sites"] if s["api"] == PIPELINE]
            for record in records] == [[(PIPELINE, 1)], [(PIPELINE, 1)]]
