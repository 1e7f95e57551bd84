"""``npu-codemod check``: the CI gate / pre-commit hook over plain files and folders."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npu_codemod.orchestrator.loaded_rules import RuleSelection, load_rules

from support.cli import check_lines as check
from support.cli import cli
from support.git import make_repo, show
from support.goldens import CORPUS, PROJECTS, project_names, sources
from support.rules import assert_check_lists_run_sites

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (
    "import tensorflow as tf\n"
    "\n"
    "ds = tf.data.TextLineDataset('train.txt').batch(32)\n"
    "x = tf.placeholder(tf.float32)\n"
    "y = tf.nn.dropout(x, 0.5)\n"
)
NEEDS_PERSON = "import tensorflow as tf\n\nbatch = memory.batch(32)\n"
NAMES = project_names(CORPUS)
PROJECT_NAMES = project_names(PROJECTS)


def test_unmigrated_script_fails_and_its_migrated_version_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPT})
    lines = check(repo, "train.py", expect=1)
    assert lines == [
        "train.py:1:1: NPU001 [fixable] add 'from npu_bridge.npu_init import *'",
        "train.py:3:43: NPU002 [fixable] add drop_remainder=True (static batch shape for the NPU)",
        ("train.py:5:5: NPU004 [fixable] replace tf.nn.dropout with npu_ops.dropout; check the "
         "model's accuracy: the guide notes the NPU dropout may affect it"),
    ]
    (tmp_path / "repos.txt").write_text("repo\n")
    cli("run", "--repos", "repos.txt", "--report-dir", "report", "--no-progress", cwd=tmp_path, expect=0)
    migrated = tmp_path / "migrated"
    migrated.mkdir()
    (migrated / "train.py").write_bytes(show(repo, "npu-codemod/sess-run-to-npu", "train.py"))
    assert check(migrated, "train.py", expect=0) == []


def test_sites_needing_a_person_fail_with_line_and_one_based_column(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(NEEDS_PERSON)
    (tmp_path / "plain.py").write_text("import os\n")
    [line] = check(tmp_path, "agent.py", "plain.py", expect=1)
    assert re.fullmatch(r"agent\.py:3:16: NPU002 if this is a tf\.data\.Dataset, .*", line)


def test_folders_are_walked_skipping_hidden_and_cache_folders(tmp_path: Path) -> None:
    for folder in ("src/models", ".venv/lib", "src/__pycache__"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "agent.py").write_text(NEEDS_PERSON)
    assert [line.split(":")[0] for line in check(tmp_path, "src", expect=1)] == [
        str(Path("src/models/agent.py"))]
    assert check(tmp_path, "src/__pycache__/agent.py", expect=1)  # named files are always read


def test_rule_settings_come_from_the_pyproject_toml_here_or_from_config(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "pyproject.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "sideways"\n')
    done = cli("check", "train.py", cwd=tmp_path, expect=2)
    assert done.stderr.strip().splitlines() == [
        f"npu-codemod: error: {tmp_path / 'pyproject.toml'}: setting 'style' of rule NPU007 must be "
        "one of 'inline', 'helper', got 'sideways'"]
    (tmp_path / "good.toml").write_text('[tool.npu-codemod.rules.NPU007]\nstyle = "helper"\n')
    assert len(check(tmp_path, "train.py", "--config", "good.toml", expect=1)) == 3


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("check", "nope.py", cwd=tmp_path, expect=2)
    assert done.stderr == "npu-codemod: error: no such file or folder: nope.py\n"


def test_pre_commit_hook_runs_check_on_the_staged_files(tmp_path: Path) -> None:
    hook = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    entry = re.search(r"^\s+entry:\s*(.+)$", hook, re.M).group(1).split()
    assert re.search(r"^\s+types:\s*\[python\]$", hook, re.M)
    executable = shutil.which(entry[0], path=str(Path(sys.executable).parent))
    assert executable, f"{entry[0]} is not installed next to {sys.executable}"
    (tmp_path / "agent.py").write_text(NEEDS_PERSON)
    (tmp_path / "ok.py").write_text("import os\n")
    run = [executable, *entry[1:]]
    assert subprocess.run([*run, "agent.py", "ok.py"], cwd=tmp_path).returncode == 1
    assert subprocess.run([*run, "ok.py"], cwd=tmp_path).returncode == 0


GELU_ONLY = '''\
"""Activation functions shared by the encoder and the decoder."""
import math

import numpy as np
import tensorflow as tf


def gelu(input_tensor):
    """Gaussian Error Linear Unit, the tanh approximation (BERT, GPT-2).

    Args:
      input_tensor: float Tensor to perform activation.
    """
    cdf = 0.5 * (1.0 + tf.tanh(
        (np.sqrt(2 / np.pi) * (input_tensor + 0.044715 * tf.pow(input_tensor, 3)))))
    return input_tensor * cdf


def swish(x, beta=1.0):
    return x * tf.sigmoid(beta * x)


def get_activation(name):
    return {"gelu": gelu, "swish": swish, "relu": tf.nn.relu, "tanh": tf.tanh}[name]
'''
LAYERS_ONLY = '''\
import tensorflow as tf


class Encoder(object):
    def __init__(self, hidden_size, dropout_rate):
        self.hidden_size = hidden_size
        self.dropout_rate = dropout_rate

    def __call__(self, inputs, training):
        hidden = tf.layers.dense(inputs, self.hidden_size, activation=tf.nn.relu)
        hidden = tf.layers.dropout(hidden, rate=self.dropout_rate, training=training)
        return tf.keras.layers.Dropout(self.dropout_rate)(hidden, training=training)
'''


def test_a_file_with_only_a_gelu_function_lists_both_rewrites(tmp_path: Path) -> None:
    (tmp_path / "activations.py").write_text(GELU_ONLY)
    assert check(tmp_path, "activations.py", expect=1) == [
        "activations.py:2:1: NPU001 [fixable] add 'from npu_bridge.npu_init import *'",
        ("activations.py:8:1: NPU006 [fixable] replace the tanh GELU formula with "
         "npu_unary_ops.gelu(input_tensor); callers are unchanged"),
    ]


def test_sites_that_only_need_an_import_are_listed_at_each_site(tmp_path: Path) -> None:
    (tmp_path / "encoder.py").write_text(LAYERS_ONLY)
    fix = ("[fixable] import npu_convert_dropout, so {} runs the NPU dropout; check the model's "
           "accuracy: the guide notes the NPU dropout may affect it")
    assert check(tmp_path, "encoder.py", expect=1) == [
        "encoder.py:1:1: NPU001 [fixable] add 'from npu_bridge.npu_init import *'",
        f"encoder.py:11:18: NPU005 {fix.format('tf.layers.dropout')}",
        f"encoder.py:12:16: NPU005 {fix.format('tf.keras.layers.Dropout')}",
    ]
    (tmp_path / "encoder.py").write_text(
        "from npu_bridge.npu_init import *\n"
        "from npu_bridge.estimator.npu import npu_convert_dropout\n" + LAYERS_ONLY)
    assert check(tmp_path, "encoder.py", expect=0) == []


@pytest.mark.parametrize("project", [CORPUS / name for name in NAMES]
                         + [PROJECTS / name for name in PROJECT_NAMES],
                         ids=lambda project: f"{project.parent.name}/{project.name}")
def test_check_lists_exactly_what_run_rewrites_and_reports_in_the_corpus(project: Path) -> None:
    """The acceptance of issue 13 over every corpus and sample project file."""
    loaded_rules = load_rules(RuleSelection())
    files = sources(project)
    facts = loaded_rules.repository_facts(list(files.items())).facts
    outcomes = {path: loaded_rules.engine.process(data, path, facts=facts) for path, data in files.items()}
    migrated = {path: outcome.new_data or files[path] for path, outcome in outcomes.items()}
    facts_after = loaded_rules.repository_facts(list(migrated.items())).facts
    for path, outcome in outcomes.items():
        again = loaded_rules.engine.process(migrated[path], path, facts=facts_after)
        assert again.new_data is None, path
        assert_check_lists_run_sites(outcome, again.findings)
