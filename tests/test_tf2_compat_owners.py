"""NPU071 in ``tf2-compat`` files (TF 1.x code run through ``tf.compat.v1`` on TF 2.x): a site
of an API Ascend migrates is judged as NPU100 judges it, with NPU100's owner table
(``codemods/api_owners.py``; spec ``rules-tf2.md``, NPU071: "in `tf2-compat` files the TF1 owners
listed in NPU100"). ``tf.compat.v1.ConfigProto`` is NPU007's through the session that uses it,
``tf.compat.v1.Session`` NPU007's at its site. Before, a site counted covered only with a
finding on it: the ``ConfigProto`` stayed "not ready" with no finding naming it (``needs-work``,
"1 API site(s) not ready", 0 sites left), where the same TF1 script is ``ready``."""

from __future__ import annotations

from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods.api_owners import OWNER_OFF, compat_owner

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import process

TF2_RUNTIME = {"tf-runtime:2"}
SESSION_SCRIPT = '''\
"""A TF 1.x session script on TensorFlow 2 through tf.compat.v1."""
import tensorflow as tf

tf.compat.v1.disable_eager_execution()


def main():
    config = tf.compat.v1.ConfigProto()
    config.allow_soft_placement = True
    total = tf.add(tf.constant(1.0), tf.constant(2.0))
    with tf.compat.v1.Session(config=config) as sess:
        print(sess.run(total))


if __name__ == "__main__":
    main()
'''
#: The owners of the script's APIs, and the compat header.
RULES = {"NPU007", "NPU062", "NPU071"}


def test_the_tf26_lists_compat_names_are_the_tf1_tables_names() -> None:
    config, session = compat_owner("tf.compat.v1.ConfigProto"), compat_owner("tf.compat.v1.Session")
    assert config is not None and session is not None
    assert (config.rules, config.at_site, session.rules, session.at_site) == (("NPU007",), False, ("NPU007",), True)
    dataset, placement = compat_owner("tf.compat.v1.data.Dataset"), compat_owner("tf.config.set_soft_device_placement")
    assert dataset is not None and placement is not None
    assert (dataset.rules, placement.rules) == (("NPU002",), ("NPU008",))
    assert compat_owner("tf.distribute.OneDeviceStrategy") is None


def test_a_config_proto_and_its_session_are_covered_by_their_owner() -> None:
    outcome = testing.run_rules(RULES, SESSION_SCRIPT, facts=TF2_RUNTIME)
    assert outcome.new is not None
    assert testing.sites(outcome.findings) == [("NPU007", 11, 9, "migrated"), ("NPU062", 2, 0, "migrated")]
    sites = {row.api: row for row in process(SESSION_SCRIPT, RULES, facts=TF2_RUNTIME).api_sites if row.api}
    assert set(sites) == {"tf.compat.v1.ConfigProto", "tf.compat.v1.Session"}
    assert all(row.covered for row in sites.values())


def test_a_site_whose_owner_is_off_is_named_in_npu100s_words() -> None:
    """NPU007 off: neither site is covered, and NPU071 names each (no site left unnamed)."""
    outcome = testing.run_rules({"NPU062", "NPU071"}, SESSION_SCRIPT, facts=TF2_RUNTIME)
    missed = [f for f in outcome.findings if f.rule_id == "NPU071"]
    assert testing.sites(missed) == [("NPU071", 8, 13, "unmigrated"), ("NPU071", 11, 9, "unmigrated")]
    assert [f.message.split(" (guide")[0] for f in missed] == [OWNER_OFF.format(
        api=api, rules="NPU007", ids="NPU007") for api in ("tf.compat.v1.ConfigProto", "tf.compat.v1.Session")]
    counted = process(SESSION_SCRIPT, {"NPU062", "NPU071"}, facts=TF2_RUNTIME).api_sites
    assert sum(row.sites for row in counted if row.known and not row.ready) == len(missed)


def test_a_dataset_is_covered_by_npu002_acting_at_its_batch_calls() -> None:
    source = SESSION_SCRIPT.replace(
        "    total = tf.add(", "    data = tf.compat.v1.data.Dataset.range(8).batch(4)\n    total = tf.add(")
    found = testing.run_rules(RULES | {"NPU002"}, source, facts=TF2_RUNTIME).findings
    assert [f for f in found if f.status == "unmigrated"] == []
    off = testing.run_rules(RULES, source, facts=TF2_RUNTIME).findings
    assert [(f.line, f.message.split(",")[0]) for f in off if f.status == "unmigrated"] == [
        (10, "Ascend migrates tf.compat.v1.data.Dataset.range")]


def _run(tmp_path: Path, engine: str) -> list[dict[str, str]]:
    report = f"report-{engine}"
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", report, "--no-progress",
        "--no-cache", "--engine", engine, cwd=tmp_path, expect=0)
    return read_csv(tmp_path / report / "repos.csv")


def test_a_compat_session_script_on_tf2_is_ready_end_to_end(tmp_path: Path) -> None:
    """The same verdict as the TF1 script: ``ready``, nothing left, every API site ready."""
    make_repo(tmp_path / "compat", {"train.py": SESSION_SCRIPT, "requirements.txt": "tensorflow==2.6.5\n"})
    (tmp_path / "repos.txt").write_text("compat\n")
    rows = _run(tmp_path, "selective")
    assert rows == _run(tmp_path, "full")
    [row] = rows
    assert (row["verdict"], row["verdict_reason"], row["left"], row["api_readiness"]) == ("ready", "", "0", "1.0000")
    findings = read_csv(tmp_path / "report-selective" / "findings.csv")
    assert sorted((f["rule_id"], f["status"]) for f in findings) == [("NPU007", "migrated"), ("NPU062", "migrated")]
