"""NPU007 across the files of one repository, through the real pipeline: a config made by a
function of one file gets the NpuOptimizer once, there, and its callers elsewhere nothing."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.orchestrator.cli import main
from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.cli import cli
from support.git import commits_on, git, make_repo, show, write_files
from support.session_config import HEADER, SESSION_UTILS, TRAIN_THEN_EVALUATE, npu_lines

BRANCH = "npu-codemod/sess-run-to-npu"
BENCHMARK = '''\
"""TensorFlow benchmark library: the model graph and the session it runs in."""

from __future__ import print_function

import tensorflow as tf

from models import model_config


def create_config_proto(params):
  """Returns session config proto.

  Args:
    params: Params tuple, typically created by make_params or
            make_params_from_flags.
  """
  config = tf.ConfigProto()
  config.allow_soft_placement = True
  if params.num_intra_threads is None:
    if params.device == 'gpu':
      config.intra_op_parallelism_threads = 1
  else:
    config.intra_op_parallelism_threads = params.num_intra_threads
  config.inter_op_parallelism_threads = params.num_inter_threads
  return config


class BenchmarkCNN(object):
  """Class for benchmarking a cnn network."""

  def __init__(self, params):
    self.params = params
    self.model = model_config.get_model_config(params.model, params.data_name)

  def run(self, graph_info):
    sv = tf.train.Supervisor(is_chief=True, logdir=self.params.train_dir)
    with sv.managed_session(
        master=self.params.master,
        config=create_config_proto(self.params),
        start_standard_services=False) as sess:
      for _ in range(self.params.num_batches):
        sess.run(graph_info.fetches)
'''
TRAIN = '''\
"""Trains a model with the benchmark's session config."""

import tensorflow as tf

import benchmark_cnn as bm
from models import model_config


def main(params):
  model = model_config.get_model_config(params.model, params.data_name)
  config = bm.create_config_proto(params)
  config.gpu_options.allow_growth = True
  with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(params.num_batches):
      sess.run(model.train_op)


if __name__ == '__main__':
  main(bm.make_params_from_flags())
'''
EVAL = '''\
"""Evaluates checkpoints; --debug logs the device placement of every op."""

import tensorflow as tf

from benchmark_cnn import create_config_proto


def evaluate(params, checkpoint, debug=False):
  if debug:
    config = tf.ConfigProto(log_device_placement=True)
  else:
    config = create_config_proto(params)
  with tf.Session(config=config) as sess:
    tf.train.Saver().restore(sess, checkpoint)
    return sess.run('accuracy:0')
'''
MODEL_CONFIG = '''\
import tensorflow as tf


def get_model_config(name, data_name):
  with tf.device('/gpu:0'):
    return tf.constant(name)
'''
FILES = {"benchmark_cnn.py": BENCHMARK, "train.py": TRAIN, "eval.py": EVAL,
         "models/__init__.py": "", "models/model_config.py": MODEL_CONFIG}
BENCHMARK_MIGRATED = BENCHMARK.replace(
    "from __future__ import print_function\n", "from __future__ import print_function\n" + HEADER
).replace("  return config\n", npu_lines("config", "  ") + "  return config\n")
EVAL_MIGRATED = EVAL.replace(
    '"""\n\nimport tensorflow', '"""\n' + HEADER + "\nimport tensorflow"
).replace("    config = tf.ConfigProto(log_device_placement=True)\n",
          "    config = tf.ConfigProto(log_device_placement=True)\n" + npu_lines("config", "    ")
).replace("  with tf.Session(", "  config.allow_soft_placement = True\n  with tf.Session(")


def findings(report: Path) -> list[tuple[str, int, str, str, str]]:
    run = json.loads((report / "run.json").read_text())
    return sorted((f["path"], f["line"], f["rule_id"], f["status"], f["message"])
                  for repo in run["repos"] for f in repo["findings"])


def test_the_config_function_gets_the_lines_once_and_callers_in_other_files_nothing(tmp_path: Path):
    repo = make_repo(tmp_path / "tf_cnn_benchmarks", FILES)
    (tmp_path / "repos.txt").write_text("tf_cnn_benchmarks\n")
    first = cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    migrated = {path: show(repo, BRANCH, path).decode() for path in FILES}
    assert migrated == {**FILES, "benchmark_cnn.py": BENCHMARK_MIGRATED, "eval.py": EVAL_MIGRATED}
    # one NpuOptimizer per config object: create_config_proto's, and eval's --debug config
    assert {path: text.count("custom_optimizers.add()") for path, text in migrated.items()} == {
        "benchmark_cnn.py": 1, "train.py": 0, "eval.py": 1, "models/__init__.py": 0,
        "models/model_config.py": 0}
    npu007 = [(path, line, status, message) for path, line, rule, status, message
              in findings(tmp_path / "one") if rule == "NPU007"]
    configured_there = ("the config is configured in benchmark_cnn.create_config_proto, which "
                        "returns it with the NPU optimizer config")
    assert [(path, line, status) for path, line, status, _ in npu007] == [
        ("benchmark_cnn.py", 37, "migrated"), ("eval.py", 13, "migrated"),
        ("train.py", 13, "compliant")]  # configured in benchmark_cnn.py: nothing rewritten here
    assert npu007[0][3].startswith("added the lines that give the config returned by create_config_proto()")
    assert npu007[1][3].startswith("added the lines that give config")
    assert npu007[2][3].startswith(configured_there)

    # the migrated files are a fixed point, with the facts they give themselves
    loaded_rules = load_rules(RuleSelection())
    contents = {path: text.encode() for path, text in migrated.items()}
    facts = loaded_rules.repository_facts(contents.items()).facts
    assert "npu007-config:benchmark_cnn.create_config_proto" in facts
    for path, data in contents.items():
        outcome = loaded_rules.engine.process(data, path, facts=facts)
        assert outcome.new_data is None, path
        assert {f.status for f in outcome.findings} <= {"migrated"}, path

    tip = git(repo, "rev-parse", BRANCH)
    second = cli("run", "--repos", "repos.txt", "--report-dir", "two", "--no-progress", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert git(repo, "rev-parse", BRANCH) == tip and len(commits_on(repo, BRANCH)) == 2
    again = findings(tmp_path / "two")
    assert {status for *_, status, _ in again} == {"migrated", "compliant"}
    assert [(path, line, status) for path, line, rule, status, _ in again if rule == "NPU007"] == [
        (path, line, status) for path, line, status, _ in npu007]  # the same sites


def test_check_on_the_files_gets_the_same_repository_facts_as_run(tmp_path: Path):
    write_files(tmp_path / "before", FILES)
    result = cli("check", ".", cwd=tmp_path / "before")
    assert result.returncode == 1, result.stderr
    sites = [line.split(" [fixable")[0] for line in result.stdout.splitlines()]
    assert "benchmark_cnn.py:37:10: NPU007" in sites and "eval.py:13:8: NPU007" in sites
    # train.py: its config comes from create_config_proto, configured in benchmark_cnn.py
    assert not [site for site in sites if site.startswith("train.py")]
    write_files(tmp_path / "after", {**FILES, "benchmark_cnn.py": BENCHMARK_MIGRATED,
                                     "eval.py": EVAL_MIGRATED})
    clean = cli("check", ".", cwd=tmp_path / "after")
    assert (clean.returncode, clean.stdout) == (0, "")


def test_the_result_cache_tells_a_promised_config_function_from_a_plain_one(tmp_path: Path):
    repo = make_repo(tmp_path / "bench", FILES)
    (tmp_path / "repos.txt").write_text("bench\n")

    def scan(*args: str) -> list:
        code = main(["scan", "--repos", str(tmp_path / "repos.txt"), "--workspace",
                     str(tmp_path / "ws"), "--report-dir", str(tmp_path / "report"),
                     "--no-progress", "--jobs", "1", *args])
        assert code == 0
        return [(line, message.split(" the NPU")[0].split(",")[0]) for path, line, rule, _, message
                in findings(tmp_path / "report") if path == "train.py" and rule == "NPU007"]

    assert scan() == [(13, "the config is configured in benchmark_cnn.create_config_proto")]
    # the library no longer runs a session with it: nobody configures it, train.py must
    write_files(repo, {"benchmark_cnn.py": BENCHMARK.split("\n\nclass BenchmarkCNN")[0] + "\n"})
    git(repo, "commit", "-qam", "library without its own session")
    assert scan() == [(13, "added the lines that give config")] == scan("--no-cache")


def test_a_config_a_caller_configures_gets_no_second_npu_optimizer_in_a_helper_of_another_file(tmp_path: Path):
    """train.py configures its config for its own session and gives the same object to
    utils/session_utils.py's create_session: NPU007 gave the helper's parameter the lines too,
    two NpuOptimizer entries on one object. The helper's session is reported instead, and a
    second run over the migrated repository changes nothing."""
    files = {"utils/__init__.py": "", "utils/session_utils.py": SESSION_UTILS, "train.py": TRAIN_THEN_EVALUATE}
    repo = make_repo(tmp_path / "trainer", files)
    (tmp_path / "repos.txt").write_text("trainer\n")
    first = cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    migrated = {path: show(repo, BRANCH, path).decode() for path in files}
    helper = SESSION_UTILS[SESSION_UTILS.index("def create_session"):]
    assert migrated["utils/session_utils.py"].endswith(helper)  # make_config: configured for default_session
    assert {path: text.count("custom_optimizers.add()") for path, text in migrated.items()} == {
        "utils/__init__.py": 0, "utils/session_utils.py": 1, "train.py": 1}
    npu007 = [(path, line, status, message) for path, line, rule, status, message
              in findings(tmp_path / "one") if rule == "NPU007"]
    assert [(path, line, status) for path, line, status, _ in npu007] == [
        ("train.py", 8, "migrated"), ("utils/session_utils.py", 13, "migrated"),
        ("utils/session_utils.py", 18, "unmigrated")]
    assert npu007[2][3].startswith("'config' is a parameter of create_session, and a call in train.py passes it")
    loaded_rules = load_rules(RuleSelection())  # the migrated files are a fixed point
    contents = {path: text.encode() for path, text in migrated.items()}
    facts = loaded_rules.repository_facts(contents.items()).facts
    assert [path for path, data in contents.items()
            if loaded_rules.engine.process(data, path, facts=facts).new_data is not None] == []

    tip = git(repo, "rev-parse", BRANCH)
    second = cli("run", "--repos", "repos.txt", "--report-dir", "two", "--no-progress", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert git(repo, "rev-parse", BRANCH) == tip
    assert [(path, line, status) for path, line, rule, status, _ in findings(tmp_path / "two")
            if rule == "NPU007"] == [(path, line, status) for path, line, status, _ in npu007]  # the same sites
