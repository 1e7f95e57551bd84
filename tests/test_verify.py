"""``npu-codemod verify`` on real TensorFlow (CPU): a correct migration and planted migration
bugs, each with its verdict; a repository whose original cannot run; and what a run must never
do (touch the user's checkout, see a token).

One ``verify`` over every planted repository (module fixture): TensorFlow's import is the
cost of each run, so the runs share one batch.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from support.cli import cli
from support.git import git, make_repo, show, write_files
from support.repo_state import snapshot
from support.verify_repos import VERIFY_TIMEOUT

BRANCH = "npu-codemod/sess-run-to-npu"
VERIFY_TABLE = '[tool.npu-codemod.verify]\ncommand = "python train.py"\n'
TRAIN = '''\
"""A regression model trained with sess.run on synthetic data, evaluated on a held-out set."""
import numpy as np
import tensorflow as tf

EPOCHS = 50
EVAL_EXAMPLES = 70


def gelu(x):
    cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
    return x * cdf


def train_input_fn(features, labels, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    return dataset.shuffle(64, seed=3).repeat(EPOCHS).batch(batch_size)


def eval_input_fn(features, labels, batch_size):
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch_size)


def model(inputs, w1, w2, training):
    hidden = gelu(tf.matmul(inputs, w1))
    if training:
        hidden = tf.nn.dropout(hidden, rate=0.25)
    return tf.matmul(hidden, w2)


rng = np.random.RandomState(0)
features = rng.rand(64, 8).astype("float32")
labels = rng.rand(64, 1).astype("float32")
eval_features = rng.rand(EVAL_EXAMPLES, 8).astype("float32")
eval_labels = rng.rand(EVAL_EXAMPLES, 1).astype("float32")
with tf.device("/cpu:0"):
    x, y = train_input_fn(features, labels, 16).make_one_shot_iterator().get_next()
w1 = tf.get_variable("w1", [8, 16])
w2 = tf.get_variable("w2", [16, 1])
loss = tf.reduce_mean(tf.square(model(x, w1, w2, training=True) - y))
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
eval_x, eval_y = eval_input_fn(eval_features, eval_labels, 16).make_one_shot_iterator().get_next()
eval_error = tf.reduce_sum(tf.square(model(eval_x, w1, w2, training=False) - eval_y))
eval_count = tf.shape(eval_x)[0]
saver = tf.train.Saver()

sess = tf.Session()
sess.run(tf.global_variables_initializer())
step = 0
while True:
    try:
        _, value = sess.run([train_op, loss])
    except tf.errors.OutOfRangeError:
        break
    step += 1
    print("step", step, "loss", value)
saver.save(sess, "./model.ckpt")
sess.close()

eval_sess = tf.Session()
saver.restore(eval_sess, "./model.ckpt")
seen, total = 0, 0.0
while True:
    try:
        error, count = eval_sess.run([eval_error, eval_count])
    except tf.errors.OutOfRangeError:
        break
    seen, total = seen + count, total + error
assert seen == EVAL_EXAMPLES, f"evaluated {seen} of {EVAL_EXAMPLES} examples"
print("eval loss", total / seen)
eval_sess.close()
'''
#: Repository name: the edit of the tool's migration that plants the bug (None: none).
PLANTED = {
    "correct": None,
    "rate-as-keep-prob": ("npu_ops.dropout(hidden, keep_prob=1 - 0.25)", "npu_ops.dropout(hidden, 0.25)"),
    "wrong-gelu": ("return npu_unary_ops.gelu(x)", "return x * tf.sigmoid(1.702 * x)"),
    "learning-rate-x10": ("GradientDescentOptimizer(0.1)", "GradientDescentOptimizer(1.0)"),
    "closed-before-evaluation": ("seen, total = 0, 0.0\n", "eval_sess.close()\nseen, total = 0, 0.0\n"),
    "counted-evaluation-drops-remainder": ("labels)).batch(batch_size)\n",
                                           "labels)).batch(batch_size, drop_remainder=True)\n"),
    "config-not-passed": ("eval_sess = tf.Session(config=config)", "eval_sess = tf.Session()"),
    "no-drop-remainder": (".batch(batch_size, drop_remainder=True)\n", ".batch(batch_size)\n"),
    "no-soft-placement": ("tf.ConfigProto(allow_soft_placement=True)", "tf.ConfigProto()"),
}
NOT_CLOSED = ("session created at train.py:{} was not closed when the process ended (sess.close() "
              "releases the NPU's graph executor)")
NO_NPU_OPTIMIZER = "session created without the NpuOptimizer custom optimizer (at train.py:{})"
NO_SOFT_PLACEMENT = ("tf.device is used but the session's config does not set "
                     "allow_soft_placement=True (session at train.py:{})")
DYNAMIC_BATCH = ("a training step reads the input pipeline output IteratorGetNext of shape (?, 8): "
                 "its batch dimension is not static (batch with drop_remainder=True)")
MISSING_DATA = TRAIN.replace('features = rng.rand(64, 8).astype("float32")',
                             'features = np.load("data/features.npy")')


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("verify")
    migrated = _migrated_train(root / "migration")
    for name, edit in PLANTED.items():
        text = migrated if edit is None else migrated.replace(*edit)
        assert text != migrated or edit is None, name
        _repo_with_branch(root / name, {"train.py": TRAIN, "pyproject.toml": VERIFY_TABLE}, text)
    _repo_with_branch(root / "missing-data", {"train.py": MISSING_DATA, "pyproject.toml": VERIFY_TABLE},
                      migrated)
    _repo_with_branch(root / "no-command", {"train.py": TRAIN}, migrated)
    names = [*PLANTED, "missing-data", "no-command"]
    (root / "repos.txt").write_text("".join(f"{name}\n" for name in names))
    before = {name: snapshot(root / name) for name in names}
    done = cli("verify", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--report-dir",
               "report", "--workspace", "ws", cwd=root, timeout=VERIFY_TIMEOUT)
    run = json.loads((root / "report" / "run.json").read_text())
    return {"root": root, "done": done, "before": before, "migrated": migrated,
            "verify": {repo["repo"]: repo["verify"] for repo in run["repos"]}, "run": run}


def _migrated_train(path: Path) -> str:
    """The tool's own migration of TRAIN."""
    make_repo(path, {"train.py": TRAIN})
    (path.parent / "migrate.txt").write_text(f"{path.name}\n")
    done = cli("run", "--repos", "migrate.txt", "--no-progress", "--report-dir", "migrate-report",
               "--workspace", "migrate-ws", cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return show(path, BRANCH, "train.py").decode()


def _repo_with_branch(path: Path, files: dict, migrated_train: str) -> None:
    make_repo(path, files)
    git(path, "checkout", "-q", "-b", BRANCH)
    write_files(path, {"train.py": migrated_train})
    git(path, "commit", "-q", "-am", "Migrate TensorFlow sess.run training code to Ascend NPU")
    git(path, "checkout", "-q", "main")


def line_of(text: str, code: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line.startswith(code))


def test_a_correct_migration_is_equivalent_and_fixes_what_the_original_breaks(planted) -> None:
    record = planted["verify"]["correct"]
    train, evaluate = line_of(TRAIN, "sess = tf.Session()"), line_of(TRAIN, "eval_sess = tf.Session()")
    assert record["verdict"] == "equivalent"
    # The whole script ran: 10 training steps, then the input ended, the loop ended, the
    # checkpoint was saved and restored and the evaluation ran (5 batches) on both sides.
    assert record["steps_compared"] == 10 and record["calls_compared"] == 16
    assert record["evidence"] == ("10 training step(s) (1 fetched value(s) each), 6 other result(s), "
                                  "2 variable(s) at the end (144 parameters), 11 printed metric(s)")
    assert record["reason"].startswith(record["evidence"] + ": equal within rtol 1e-05")
    assert record["max_rel_diff"] <= record["rtol"] == 1e-5
    assert record["violations"] == []
    assert set(record["original_violations"]) == {
        NO_NPU_OPTIMIZER.format(train), NO_NPU_OPTIMIZER.format(evaluate), DYNAMIC_BATCH,
        NO_SOFT_PLACEMENT.format(train), NO_SOFT_PLACEMENT.format(evaluate)}
    assert record["command"] == "python train.py"
    assert record["source"] == "pyproject.toml [tool.npu-codemod.verify]"


@pytest.mark.parametrize("name", ["rate-as-keep-prob", "wrong-gelu", "learning-rate-x10"])
def test_a_changed_computation_diverges_at_the_first_step(planted, name: str) -> None:
    record = planted["verify"][name]
    assert record["verdict"] == "diverged"
    assert record["reason"].startswith("step 1 (Session.run call 2): Mean:0 = "
                                       if name != "learning-rate-x10" else "step 2 (Session.run call 3): Mean:0 = ")
    assert record["reason"].endswith("> rtol 1e-05)")


def test_a_session_closed_before_the_final_evaluation_fails_the_migrated_run(planted) -> None:
    record = planted["verify"]["closed-before-evaluation"]
    assert record["verdict"] == "migrated-fails"
    assert record["reason"] == ("the migrated run fails where the original does not: RuntimeError: "
                                "Attempted to use a closed Session. (exit code 1)")
    assert record["details"][-1] == "RuntimeError: Attempted to use a closed Session."
    assert any(v.startswith("Session.run on a closed session (created at train.py:")
               for v in record["violations"])


def test_drop_remainder_on_a_counted_evaluation_pipeline_fails_the_migrated_run(planted) -> None:
    record = planted["verify"]["counted-evaluation-drops-remainder"]
    assert record["verdict"] == "migrated-fails"
    assert record["reason"] == ("the migrated run fails where the original does not: AssertionError: "
                                "evaluated 64 of 70 examples (exit code 1)")


def test_a_session_created_without_the_npu_config_is_a_violation(planted) -> None:
    record = planted["verify"]["config-not-passed"]
    line = line_of(planted["migrated"], "eval_sess = tf.Session(config=config)")
    assert record["verdict"] == "violations"
    assert record["violations"] == [NO_NPU_OPTIMIZER.format(line), NO_SOFT_PLACEMENT.format(line)]
    assert record["reason"] == "2 NPU constraint(s) broken: " + "; ".join(record["violations"])


def test_soft_placement_off_where_tf_device_is_used_is_a_violation(planted) -> None:
    record = planted["verify"]["no-soft-placement"]
    text = planted["migrated"]
    lines = line_of(text, "sess = tf.Session("), line_of(text, "eval_sess = tf.Session(")
    assert record["verdict"] == "violations"
    assert record["violations"] == [NO_SOFT_PLACEMENT.format(line) for line in lines]


def test_a_training_pipeline_without_drop_remainder_is_a_violation(planted) -> None:
    record = planted["verify"]["no-drop-remainder"]
    assert record["verdict"] == "violations"
    assert record["violations"] == [DYNAMIC_BATCH]


def test_an_original_that_needs_a_missing_data_file_is_inconclusive(planted) -> None:
    record = planted["verify"]["missing-data"]
    assert record["verdict"] == "inconclusive"
    assert record["reason"].startswith("the original does not run here: FileNotFoundError: ")
    assert "data/features.npy" in record["reason"]
    assert record["migrated_s"] == record["original_s"]  # the migrated code was not run


def test_a_repository_without_a_command_is_no_command(planted) -> None:
    record = planted["verify"]["no-command"]
    assert record["verdict"] == "no-command"
    assert record["reason"].startswith("no verify command: set command in the repository's "
                                       "[tool.npu-codemod.verify]")


def test_failing_verdicts_exit_1_and_are_reported(planted) -> None:
    done, root = planted["done"], planted["root"]
    assert done.returncode == 1, done.stderr
    assert ("verify: 3 diverged, 1 equivalent, 1 inconclusive, 2 migrated-fails, 1 no-command, "
            "3 violations") in done.stderr
    assert ("npu-codemod: verify: not every repository is proven equivalent (3 diverged, 1 "
            "inconclusive, 2 migrated-fails, 1 no-command, 3 violations): exit code 1; --allow "
            "inconclusive,no-command accepts what proves nothing") in done.stderr
    assert "npu-codemod: wrong-gelu: verify diverged: step 1 (Session.run call 2)" in done.stderr
    with open(root / "report" / "verify.csv", newline="") as stream:
        rows = {row["repo"]: row for row in csv.DictReader(stream)}
    assert {name: row["verdict"] for name, row in rows.items()} == {
        name: record["verdict"] for name, record in planted["verify"].items()}
    assert rows["no-drop-remainder"]["violations"].startswith("a training step reads the input")
    html = (root / "report" / "report.html").read_text()
    assert '<h2>Verification</h2>' in html
    assert html.count('class="verdict-diverged">diverged</td>') == 6  # column and section


def test_no_run_touches_the_checkout_or_leaves_scratch_folders(planted) -> None:
    root = planted["root"]
    for name, before in planted["before"].items():
        assert snapshot(root / name) == before, name  # no model.ckpt, no __pycache__, same HEAD
    assert list((root / "ws" / "verify").iterdir()) == []


def test_run_verify_on_the_demo_repositories(tmp_path: Path) -> None:
    done = cli("demo", "--verify", "--report-dir", "report", cwd=tmp_path, timeout=VERIFY_TIMEOUT)
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    verify = {repo["repo"]: repo["verify"] for repo in run["repos"]}
    assert {name: record["verdict"] for name, record in verify.items()} == {
        "alexnet-finetune": "equivalent", "dqn-agent": "equivalent", "plain-python": "no-command",
        # The BERT sample has no verify command: it needs BERT's checkpoint and vocabulary.
        "bert-classifier": "no-command",
        "horovod-mnist": "no-command",  # Horovod does not run here: no command to compare
        "keras-tf2": "no-command"}
    assert verify["alexnet-finetune"]["steps_compared"] == 8
    assert verify["alexnet-finetune"]["violations"] == verify["dqn-agent"]["violations"] == []
    assert [v.split(" (")[0] for v in verify["alexnet-finetune"]["original_violations"]] == [
        "session created without the NpuOptimizer custom optimizer",
        "a training step reads the input pipeline output IteratorGetNext of shape",
        "session created at finetune.py:24 was not closed when the process ended"]
    assert verify["dqn-agent"]["original_violations"] == [
        "session created without the NpuOptimizer custom optimizer (at agent.py:10)"]
    assert verify["dqn-agent"]["source"] == "repo list verify="


def test_a_run_over_its_timeout_is_stopped_and_fails_unless_allowed(tmp_path: Path) -> None:
    make_repo(tmp_path / "slow", {"train.py": "import time\ntime.sleep(60)\n"})
    (tmp_path / "repos.txt").write_text('slow verify="python train.py"\n')
    args = ("verify", "--repos", "repos.txt", "--verify-timeout", "1", "--no-progress",
            "--report-dir", "report", "--workspace", "ws")
    done = cli(*args, cwd=tmp_path)
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    assert done.returncode == 1, done.stderr  # nothing was proven
    assert "exit code 1; --allow timeout accepts what proves nothing" in done.stderr
    assert record["verdict"] == "timeout"
    assert record["reason"] == "the original did not finish within 1 s (timeout; 10 steps asked)"
    assert record["original_s"] < 10
    assert cli(*args, "--allow", "timeout,inconclusive", cwd=tmp_path).returncode == 0


#: Variables of the issue that passed a deny-list: none reaches the repository's code.
SECRETS = {"GITHUB_TOKEN": "ghp_abcdefghijklmnop", "NPU_CODEMOD_TOKEN": "glpat-abcdefghij",
           "MY_SERVICE_API_KEY": "k-123456789", "AWS_SECRET_ACCESS_KEY": "aws-123456789",
           "DB_PASSWORD": "hunter2hunter2", "MYSQL_PWD": "mysql-pwd-1234",
           "DATABASE_URL": "postgres://app:dbpass-5678@db.invalid/app", "KAGGLE_KEY": "kaggle-key-9012",
           "CI_JOB_JWT": "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", "SLACK_WEBHOOK_URL":
           "https://hooks.slack.invalid/services/T000/B000/XXXX", "HTTPS_PROXY":
           "http://me:proxypass-3456@proxy.invalid:3128", "SENTRY_DSN": "https://key-7890@sentry.invalid/1",
           "KUBECONFIG": "/home/me/.kube/config-prod"}


def test_the_verify_environment_is_an_allow_list(tmp_path: Path) -> None:
    script = ("import json, os, sys\nprint(json.dumps([dict(os.environ), sys.executable]))\n"
              "raise SystemExit('DONE')\n")
    make_repo(tmp_path / "env", {"train.py": script, "pyproject.toml": '[tool.npu-codemod.verify]\n'
                                 'command = "python train.py"\nenv = ["DATA_DIR", "KAGGLE_KEY"]\n'})
    (tmp_path / "repos.txt").write_text("env\n")
    env = {**_environ(), **SECRETS, "PYTHONPATH": str(tmp_path), "DATA_DIR": "/data/set"}
    done = cli("verify", "--repos", "repos.txt", "--no-progress", "--report-dir", "report",
               "--workspace", "ws", "--allow", "inconclusive", cwd=tmp_path, env=env)
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    child, executable = json.loads(next(line for line in record["details"] if line.startswith("[{")))
    assert not set(SECRETS) & set(child)
    assert not any(value in json.dumps(child) for value in SECRETS.values())
    assert child["DATA_DIR"] == "/data/set"  # named by the repository's settings
    assert child["PYTHONPATH"].endswith("verify/runtime")
    assert child["HOME"].startswith(str(tmp_path / "ws" / "verify"))
    assert Path(executable).resolve() == Path(sys.executable).resolve()
    assert record["verdict"] == "inconclusive"  # it ran, but no session: nothing to compare
    assert record["reason"] == "the original does not run here: DONE (exit code 1)"
    assert done.returncode == 0, done.stderr  # --allow inconclusive


ISOLATION_PROBE = """\
import socket, subprocess, sys

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{marker}"], start_new_session=True)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("network: connected")
except OSError as exc:
    print("network:", exc)
try:
    open({outside!r}, "w").write("x")
    print("outside: written")
except OSError as exc:
    print("outside:", exc)
open("inside.txt", "w").write("x")
raise ValueError("cannot reach the bucket with ghp_0123456789abcdefghijABCDEFGHIJ012345")
"""


def test_a_run_has_no_network_no_writes_outside_scratch_and_leaves_no_process(tmp_path: Path) -> None:
    import socket
    import uuid

    from npu_codemod.orchestrator.verify.sandbox import NAMESPACES, isolation

    marker, outside = f"npu-codemod-verify-{uuid.uuid4().hex}", tmp_path / "outside.txt"
    with socket.create_server(("127.0.0.1", 0)) as listener:
        script = ISOLATION_PROBE.format(marker=marker, port=listener.getsockname()[1], outside=str(outside))
        make_repo(tmp_path / "probe", {"train.py": script})
        (tmp_path / "repos.txt").write_text('probe verify="python train.py"\n')
        done = cli("verify", "--repos", "repos.txt", "--no-progress", "--report-dir", "report",
                   "--workspace", "ws", cwd=tmp_path)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    assert not [pid for pid in _pids() if marker in _cmdline(pid)]  # the detached child is gone
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    assert record["isolation"] == isolation() == NAMESPACES  # root on Linux, as here and in CI
    assert "network: [Errno 101] Network is unreachable" in record["details"]
    assert f"outside: [Errno 30] Read-only file system: '{outside}'" in record["details"]
    assert not outside.exists()
    assert record["reason"] == "the original does not run here: ValueError: cannot reach the bucket with *** (exit code 1)"
    assert done.returncode == 1
    for report in ("run.json", "verify.csv", "report.html"):
        assert "ghp_0123456789" not in (tmp_path / "report" / report).read_text(), report


def _pids() -> list:
    return [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _cmdline(pid: str) -> str:
    try:
        return (Path("/proc") / pid / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _environ() -> dict:
    import os

    return dict(os.environ)


def test_the_npu_bridge_emulation_is_not_importable_outside_a_verify_run() -> None:
    from importlib.util import find_spec

    assert find_spec("npu_bridge") is None and find_spec("_npu_codemod_verify") is None


def test_a_missing_package_is_named_and_the_requirements_install_it(tmp_path: Path) -> None:
    files = {"requirements.txt": "tensorflow==1.15.5\n./vendor/helper\n", "train.py":
             "import helper\nprint('helper', helper.VERSION)\n",
             "vendor/helper/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
             'build-backend = "setuptools.build_meta"\n[project]\nname = "helper"\nversion = "1.0"\n',
             "vendor/helper/helper/__init__.py": "VERSION = '1.0'\n"}
    make_repo(tmp_path / "needs-helper", files)
    (tmp_path / "repos.txt").write_text('needs-helper verify="python train.py"\n')
    args = ("verify", "--repos", "repos.txt", "--no-progress", "--report-dir", "report", "--workspace", "ws")
    cli(*args, cwd=tmp_path, expect=1)
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    assert record["reason"] == (
        "missing package helper: the original cannot import it here (--verify-requirements installs "
        "the repository's requirements.txt or setup.py install_requires into a cached environment): "
        "ModuleNotFoundError: No module named 'helper' (exit code 1)")
    cli(*args, "--verify-requirements", cwd=tmp_path, expect=1)  # installed; tensorflow==1.15.5 left out
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    assert record["reason"].startswith("nothing to compare (the original ran no Session.run")
    assert "helper 1.0" in record["details"]


def test_run_verify_fails_on_what_proves_nothing_unless_allowed(tmp_path: Path) -> None:
    script = "import tensorflow as tf\nprint('no session here')\n"
    make_repo(tmp_path / "no-session", {"train.py": script})
    (tmp_path / "repos.txt").write_text('no-session verify="python -c pass"\n')
    args = ("run", "--repos", "repos.txt", "--verify", "--no-progress", "--report-dir", "report",
            "--workspace", "ws")
    done = cli(*args, cwd=tmp_path, expect=1)
    assert "verify: 1 inconclusive" in done.stderr
    assert ("npu-codemod: verify: not every repository is proven equivalent (1 inconclusive): exit "
            "code 1; --allow inconclusive accepts what proves nothing") in done.stderr
    record = json.loads((tmp_path / "report" / "run.json").read_text())["repos"][0]["verify"]
    assert record["reason"].startswith("nothing to compare (the original ran no Session.run")
    done = cli(*args, "--branch", "npu-codemod/again", "--allow", "inconclusive", cwd=tmp_path, expect=0)
    assert "verify: 1 inconclusive" in done.stderr
