"""NPU071 in ``tf2-compat`` files: a site of an API the TF 2.6 list marks ``unsupported`` that
a TF1 rule owns is that rule's (spec ``rules-tf2.md``, NPU071: "in `tf2-compat` files the TF1
owners listed in NPU100"; ``rules-beyond-sess-run.md``, NPU100: "at most one finding per site").
TF-GAN's TPU estimator code on TensorFlow 2 (``tf.compat.v1.estimator.tpu.RunConfig``,
``TPUConfig``, ``InputPipelineConfig``, ``TPUEstimatorSpec``, which NPU012 and NPU013 migrate
or report) kept its repository ``blocked``: "not supported on Ascend: ...". Now a site its
owner covers is ready, one its owner's finding reports (NPU012's "remove TPUClusterResolver")
is work left, counted once, and one its owner missed gets NPU100's owner-miss words: the
repository ``needs-work``, as its TF 1.x twin."""

from __future__ import annotations

from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods.api_owners import OWNER_OFF
from npu_codemod.codemods.api_sites import OWNER_MISS

from support.cli import cli, repo_record
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import process

TF2_RUNTIME = {"tf-runtime:2"}
TPU_SCRIPT = '''\
"""Trains a tiny model with tf.compat.v1's TPU estimator on TensorFlow 2."""
import tensorflow.compat.v1 as tf
from tensorflow.compat.v1 import estimator as tf_estimator


def model_fn(features, labels, mode, params):
    return tf_estimator.tpu.TPUEstimatorSpec(mode=mode, loss=features["loss"])


def make_config(model_dir, sliced):
    pipeline = tf_estimator.tpu.InputPipelineConfig.SLICED if sliced else \\
        tf_estimator.tpu.InputPipelineConfig.PER_HOST_V2
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="grpc://10.0.0.2:8470")
    return tf_estimator.tpu.RunConfig(
        cluster=resolver, model_dir=model_dir,
        tpu_config=tf_estimator.tpu.TPUConfig(iterations_per_loop=10,
                                              per_host_input_for_training=pipeline))


def main():
    estimator = tf_estimator.tpu.TPUEstimator(
        model_fn=model_fn, config=make_config("/tmp/model", False), use_tpu=True,
        train_batch_size=8)
    estimator.train(lambda params: None, max_steps=100)


if __name__ == "__main__":
    main()
'''
RULES = {"NPU011", "NPU012", "NPU013", "NPU062", "NPU071"}
TPU = "tf.compat.v1.estimator.tpu."


def _sites(source: str, rules: set[str]) -> dict[str, tuple[bool, bool, int]]:
    """API -> (covered, owned, sites) of the rows a person may have work on."""
    return {row.api: (row.covered, row.owned, row.sites)
            for row in process(source, rules, facts=TF2_RUNTIME).api_sites if row.api}


def test_the_tpu_estimators_apis_are_their_owners_and_npu071_reports_none() -> None:
    """Before: NPU071 reported TPUEstimatorSpec, both InputPipelineConfig values and TPUConfig
    ("no migration path"), and counted them and the resolver NPU012 reports as blocking."""
    outcome = testing.run_rules(RULES, TPU_SCRIPT, facts=TF2_RUNTIME)
    assert [f for f in outcome.findings if f.rule_id == "NPU071"] == []
    assert sorted(testing.sites(outcome.findings)) == [
        ("NPU011", 21, 16, "migrated"), ("NPU012", 13, 15, "unmigrated"), ("NPU012", 21, 16, "migrated"),
        ("NPU013", 14, 11, "migrated"), ("NPU062", 2, 0, "migrated")]
    sites = _sites(TPU_SCRIPT, RULES)
    assert sites == {
        "tf.compat.v1.distribute.cluster_resolver.TPUClusterResolver": (False, True, 1),
        f"{TPU}InputPipelineConfig": (True, False, 2), f"{TPU}RunConfig": (True, False, 1),
        f"{TPU}TPUConfig": (True, False, 1), f"{TPU}TPUEstimator": (True, False, 1),
        f"{TPU}TPUEstimatorSpec": (True, False, 1)}
    counted = process(TPU_SCRIPT, RULES, facts=TF2_RUNTIME).api_sites
    assert [row.api for row in counted if row.blocking] == []


def test_a_site_its_owner_missed_gets_npu100s_words_and_blocks_nothing() -> None:
    """An alias of the RunConfig (TF-GAN's test library): NPU013 acts where it is called, not
    on the assignment; NPU100 says the same of its TF 1.x twin. Before: "no migration path",
    and the repository ``blocked``."""
    source = TPU_SCRIPT.replace("\n\ndef model_fn", "\nTpuRunConfig = tf_estimator.tpu.RunConfig\n\n\ndef model_fn")
    found = [f for f in testing.run_rules(RULES, source, facts=TF2_RUNTIME).findings if f.rule_id == "NPU071"]
    assert testing.sites(found) == [("NPU071", 5, 15, "unmigrated")]
    assert found[0].message.split(" (guide")[0] == OWNER_MISS.format(api=f"{TPU}RunConfig")
    counted = process(source, RULES, facts=TF2_RUNTIME).api_sites
    assert [(row.api, row.covered, row.owned, row.sites) for row in counted if row.api == f"{TPU}RunConfig"] == [
        (f"{TPU}RunConfig", False, True, 1), (f"{TPU}RunConfig", True, False, 1)]
    assert [row.api for row in counted if row.blocking] == []


def test_with_npu012_off_each_site_it_owns_names_the_opt_in() -> None:
    """The owner off: each of its sites is named, in NPU100's words, and none is covered."""
    rules = RULES - {"NPU012"}
    found = [f for f in testing.run_rules(rules, TPU_SCRIPT, facts=TF2_RUNTIME).findings if f.rule_id == "NPU071"]
    off = OWNER_OFF.format(api=f"{TPU}TPUConfig", rules="NPU012", ids="NPU012")
    assert (16, 19, off) in [(f.line, f.column, f.message.split(" (guide")[0]) for f in found]
    sites = _sites(TPU_SCRIPT, rules)
    assert sites[f"{TPU}TPUConfig"] == (False, True, 1)
    assert sites[f"{TPU}TPUEstimatorSpec"] == (False, True, 1)
    assert sites[f"{TPU}TPUEstimator"] == (True, False, 1)  # NPU011 still wraps its config


def _run(tmp_path: Path, engine: str) -> Path:
    report = tmp_path / f"report-{engine}"
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", report.name, "--no-progress",
        "--no-cache", "--engine", engine, cwd=tmp_path, expect=0)
    return report


def test_a_compat_tpu_estimator_program_on_tf2_needs_work_end_to_end(tmp_path: Path) -> None:
    """``needs-work`` with the one site NPU012 reports left, counted once (before:
    ``blocked`` by four APIs, 5 sites left). The same with either engine."""
    make_repo(tmp_path / "gan", {"train.py": TPU_SCRIPT, "requirements.txt": "tensorflow==2.6.5\n"})
    (tmp_path / "repos.txt").write_text("gan\n")
    selective, full = _run(tmp_path, "selective"), _run(tmp_path, "full")
    for name in ("repos.csv", "summary.csv", "findings.csv"):
        assert (selective / name).read_text() == (full / name).read_text()
    [row] = read_csv(selective / "repos.csv")
    assert (row["verdict"], row["verdict_reason"]) == ("needs-work", "1 site(s) left: 1 to change (NPU012 1)")
    assert (row["migrated"], row["left"]) == ("3", "1")
    summary = {r["rule_id"]: (r["migrated"], r["unmigrated"]) for r in read_csv(selective / "summary.csv")}
    assert summary == {"NPU011": ("1", "0"), "NPU012": ("1", "1"), "NPU013": ("1", "0"), "NPU062": ("1", "0")}
    record = repo_record(selective)
    assert {"api": "tf.compat.v1.distribute.cluster_resolver.TPUClusterResolver", "status": "unsupported",
            "covered": False, "sites": 1, "owned": True} in record["api_sites"]
    assert record["sites"]["left"] == 1
