"""The parts of ``npu-codemod verify`` that need no TensorFlow: the comparison and the order
of verdicts, the settings and where they come from, the environment a run gets, the export,
the options, and the verdict in a pull request's body."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from npu_codemod.orchestrator.git.repository import open_repo
from npu_codemod.orchestrator.prs.text import load_templates, pr_context
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import parse_repo_list
from npu_codemod.orchestrator.verify.compare import (
    compare_calls,
    compare_printed,
    judge,
    relative_difference,
)
from npu_codemod.orchestrator.verify.export import export_commit
from npu_codemod.orchestrator.verify.records import VERDICTS, VerifyRecord
from npu_codemod.orchestrator.verify.requirements import listed_requirements, missing_module
from npu_codemod.orchestrator.verify.sandbox import RUNTIME, SideRun, clean_environment, printed_metrics
from npu_codemod.orchestrator.verify.settings import VerifyOptions, VerifySettings, resolve

from support.cli import cli
from support.git import git, make_repo, write_files


def call(step, *values, shapes=()):
    return {"step": step, "names": ["loss:0"] * len(values), "values": list(values),
            "shapes": [["x:0", list(shape)] for shape in shapes]}


RUN = (call(None), call(1, 0.5, shapes=[(16, 8)]), call(2, 0.25, shapes=[(16, 8)]))
SETTINGS = VerifySettings(command="python train.py", rtol=1e-5)
#: The trainable variables after the last step: [name, kind, shape, numbers, digest].
VARIABLES = (["w:0", "f", [2, 2], [0.5, -1.0, 2.0, 0.125], None],)


def side(calls=RUN, code=0, stopped=False, violations=(), tail=("done",), variables=VARIABLES,
         printed=()) -> SideRun:
    return SideRun(exit_code=code, seconds=1.0, stopped=stopped, calls=tuple(calls),
                   violations=tuple(violations), output_tail=tuple(tail), variables=tuple(variables),
                   printed=tuple(printed))


def test_equal_runs_are_equivalent_with_their_largest_difference() -> None:
    migrated = (call(None), call(1, 0.5000001, shapes=[(16, 8)]), call(2, 0.25, shapes=[(16, 8)]))
    assert compare_calls(RUN, migrated, 1e-5) == ("", 3, pytest.approx(2e-7))
    record = judge(SETTINGS, side(violations=["no NpuOptimizer"]), side(migrated))
    assert (record.verdict, record.steps_compared, record.calls_compared) == ("equivalent", 2, 3)
    assert record.evidence == ("2 training step(s) (1 fetched value(s) each), 1 other result(s), "
                               "1 variable(s) at the end (4 parameters)")
    assert record.reason == record.evidence + ": equal within rtol 1e-05; max relative difference 2e-07"
    assert record.original_violations == ("no NpuOptimizer",) and record.violations == ()


@pytest.mark.parametrize("migrated, reason", [
    ((call(None), call(1, 0.5, shapes=[(16, 8)]), call(2, 0.26, shapes=[(16, 8)])),
     "step 2 (Session.run call 3): loss:0 = 0.25 in the original, 0.26 in the migrated run "
     "(relative difference 0.0385 > rtol 1e-05)"),
    ((call(None), call(1, 0.5, shapes=[(15, 8)]), call(2, 0.25, shapes=[(16, 8)])),
     "step 1 (Session.run call 2): fetched arrays of shapes (16, 8) in the original, (15, 8) in "
     "the migrated run"),
    ((call(None), call(None, 0.5, shapes=[(16, 8)]), call(2, 0.25, shapes=[(16, 8)])),
     "step 1 (Session.run call 2): a training step in the original only"),
    ((call(None), call(1, 0.5, shapes=[(16, 8)])),
     "the original ran 3 Session.run call(s), the migrated run 2"),
    ((call(None), call(1, shapes=[(16, 8)]), call(2, 0.25, shapes=[(16, 8)])),
     "step 1 (Session.run call 2): 1 float value(s) fetched in the original, 0 in the migrated run"),
])
def test_the_first_difference_is_the_reason_of_diverged(migrated, reason) -> None:
    record = judge(SETTINGS, side(), side(migrated, violations=["a violation"]))
    assert (record.verdict, record.reason) == ("diverged", reason)  # before violations


def test_values_near_zero_and_nan_compare_as_equal() -> None:
    assert compare_calls([call(1, 1e-12)], [call(1, 3e-12)], 1e-5)[0] == ""
    assert compare_calls([call(1, math.nan)], [call(1, math.nan)], 1e-5)[0] == ""
    assert compare_calls([call(1, math.nan)], [call(1, 1.0)], 1e-5)[0].startswith("step 1")
    assert relative_difference(2.0, 1.0) == 0.5 and relative_difference(0.0, 0.0) == 0.0


def test_verdicts_come_in_the_order_of_the_issue() -> None:
    failing = side(code=1, tail=("Traceback (most recent call last):", "ValueError: boom"))
    timed_out = SideRun(exit_code=None, seconds=5.0)
    cases = [
        (failing, failing, "inconclusive",
         "the original does not run here: ValueError: boom (exit code 1)"),
        (side(), timed_out, "timeout",
         "the migrated run did not finish within 300 s (timeout; 10 steps asked)"),
        (side(calls=()), side(), "inconclusive",
         "nothing to compare (the original ran no Session.run nor Keras training: no TensorFlow "
         "session, or the command does not train)"),
        (side(), failing, "migrated-fails",
         "the migrated run fails where the original does not: ValueError: boom (exit code 1)"),
        (side(), side(violations=["v1", "v2"]), "violations", "2 NPU constraint(s) broken: v1; v2"),
    ]
    for original, migrated, verdict, reason in cases:
        record = judge(SETTINGS, original, migrated)
        assert (record.verdict, record.reason) == (verdict, reason)
    assert VERDICTS == ("no-command", "inconclusive", "timeout", "migrated-fails", "diverged",
                        "violations", "equivalent")


def test_a_run_stopped_at_the_step_limit_is_not_a_failure() -> None:
    stopped = SideRun(exit_code=-9, seconds=1.0, stopped=True, calls=RUN, variables=VARIABLES)
    assert not stopped.failed and judge(SETTINGS, stopped, stopped).verdict == "equivalent"


def test_settings_come_from_the_command_line_then_the_list_then_the_repository(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.npu-codemod.verify]\ncommand = "python train.py"\nsteps = 3\ntimeout = 20\n')
    own = resolve(VerifyOptions(), None, tmp_path)
    assert own == VerifySettings(command="python train.py", steps=3, timeout=20.0,
                                 source="pyproject.toml [tool.npu-codemod.verify]")
    listed = resolve(VerifyOptions(), "python run.py", tmp_path)
    assert (listed.command, listed.source, listed.steps) == ("python run.py", "repo list verify=", 3)
    given = resolve(VerifyOptions(command="python x.py", steps=7, rtol=1e-3), "python run.py", tmp_path)
    assert (given.command, given.source, given.steps, given.rtol, given.timeout) == (
        "python x.py", "--verify-command", 7, 1e-3, 20.0)
    assert resolve(VerifyOptions(), None, tmp_path / "nothing-here").command is None


@pytest.mark.parametrize("table, message", [
    ('command = "x"\nstep = 3', "pyproject.toml: unknown key 'step' in [tool.npu-codemod.verify] "
                                "(known: command, env, steps, timeout, rtol, memory)"),
    ("steps = 2.5", "pyproject.toml: [tool.npu-codemod.verify] steps must be a positive whole "
                    "number, got 2.5"),
    ("rtol = -1", "pyproject.toml: [tool.npu-codemod.verify] rtol must be a positive number, got -1"),
])
def test_bad_settings_are_named(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.npu-codemod.verify]\n{table}\n")
    with pytest.raises(ValueError) as raised:
        resolve(VerifyOptions(), None, tmp_path)
    assert str(raised.value) == message


def test_the_repo_list_takes_a_quoted_verify_command(tmp_path: Path) -> None:
    entries = parse_repo_list('a main verify="python train.py --max_steps 20" slug=org/a\n'
                              '"b c" verify="python run.py"\n', tmp_path)
    assert [(e.name, e.base_ref, e.option("verify"), e.option("slug")) for e in entries] == [
        ("a", "main", "python train.py --max_steps 20", "org/a"), ("b c", None, "python run.py", None)]


def test_credentials_and_python_paths_stay_out_of_the_environment() -> None:
    environ = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "me",
               "GITHUB_TOKEN": "x", "NPU_CODEMOD_TOKEN": "x", "GITLAB_TOKEN": "x", "CI_JOB_TOKEN": "x",
               "AWS_ACCESS_KEY_ID": "x", "MY_SECRET": "x", "DB_PASSWORD": "x", "OPENAI_API_KEY": "x",
               "GOOGLE_APPLICATION_CREDENTIALS": "x", "SSH_AUTH_SOCK": "x", "GIT_ASKPASS": "x",
               "PYTHONPATH": "/home/me/checkout", "VIRTUAL_ENV": "/v"}
    assert clean_environment(environ) == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}
    assert clean_environment(environ, named=("GIT_AUTHOR_NAME", "MY_SECRET")) == {
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "GIT_AUTHOR_NAME": "me"}  # named: never a secret


def test_an_export_holds_the_commit_not_the_working_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": "print(1)\n", "data/a.txt": "a\n"})
    commit = git(repo, "rev-parse", "HEAD")
    write_files(repo, {"train.py": "print('uncommitted')\n", "new.py": "x\n"})
    out = export_commit(open_repo(str(repo)), commit, tmp_path / "scratch" / "repo")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["data", "data/a.txt", "train.py"]
    assert (out / "train.py").read_text() == "print(1)\n"
    assert git(repo, "status", "--porcelain") == "M train.py\n?? new.py"


@pytest.mark.parametrize("args, message", [
    (["run", "--verify", "--dry-run"], "--verify runs the committed migration: it cannot be used with --dry-run"),
    (["run", "--verify-steps", "3"], "--verify-steps needs --verify"),
    (["verify", "--verify-steps", "0"], "--verify-steps must be a positive number"),
    (["verify", "--verify-command", " "], "--verify-command must not be empty"),
])
def test_bad_verify_options_are_one_line(tmp_path: Path, args: list, message: str) -> None:
    (tmp_path / "repos.txt").write_text("")
    done = cli(*args, "--repos", "repos.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == f"npu-codemod: error: {message}"


def test_help_says_verify_executes_the_repositories_code() -> None:
    done = cli("verify", "--help", cwd=Path.cwd())
    assert "EXECUTES EACH REPOSITORY'S CODE" in " ".join(done.stdout.split())
    assert "--verify" in cli("run", "--help", cwd=Path.cwd()).stdout


def test_the_launcher_entry_runs_a_command_in_the_current_folder(tmp_path: Path) -> None:
    import json

    done = subprocess.run([sys.executable, "-m", "npu_codemod.orchestrator.verify.launch", "--",
                           "python", "-c", "open('out.txt', 'w').write('x'); raise SystemExit(3)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    run = json.loads(done.stdout)
    assert done.returncode == 1 and run["exit_code"] == 3 and run["calls"] == []
    assert run["records"] == 1 and (tmp_path / "out.txt").read_text() == "x"


def test_the_pull_request_body_carries_the_verdict() -> None:
    record = VerifyRecord("violations", reason="1 NPU constraint(s) broken: no NpuOptimizer",
                          command="python train.py", violations=("no NpuOptimizer",),
                          original_violations=("no NpuOptimizer", "not closed"),
                          evidence="3 training step(s) (1 fetched value(s) each), 2 variable(s) at the end")
    context = pr_context("bert", "org/bert", "npu", "main", [], ["train.py"], {},
                         lambda path, line: f"https://x/{path}#{line}", verify=record.to_dict())
    body = load_templates().render(context)[1]
    assert ("## Verified on CPU: violations\n\n1 NPU constraint(s) broken: no NpuOptimizer\n\n"
            "The repository's verify command `python train.py` ran before and after") in body
    assert "\nCompared: 3 training step(s) (1 fetched value(s) each), 2 variable(s) at the end.\n" in body
    assert ("NPU constraints the migrated code breaks:\n- no NpuOptimizer\n"
            "Before the migration:\n- no NpuOptimizer\n- not closed\n") in body
    plain = load_templates().render(pr_context("bert", "org/bert", "npu", "main", [], [], {},
                                               lambda path, line: ""))[1]
    assert "Verified on CPU" not in plain


def described(name, *numbers, kind="f", shape=None, digest=None):
    return [name, kind, list(shape or [len(numbers)]), list(numbers) if numbers else None, digest]


@pytest.mark.parametrize("left, right, reason", [
    (described("logits:0", 0.5, 0.25), described("logits:0", 0.5, 0.2501),
     "step 1 (Session.run call 1): logits:0's element 1 = 0.25 in the original, 0.2501 in the "
     "migrated run (relative difference 0.0004 > rtol 1e-05)"),
    (described("global_step:0", 3, kind="i", shape=[]), described("global_step:0", 4, kind="i", shape=[]),
     "step 1 (Session.run call 1): global_step:0's element 0 = 3 in the original, 4 in the migrated run"),
    (described("ids:0", kind="i", shape=[128], digest="ab"), described("ids:0", kind="i", shape=[128], digest="cd"),
     "step 1 (Session.run call 1): ids:0 differs (its integer of shape (128) values are not the same)"),
    (described("big:0", *[2.0, 4.0, -1.0, 1.0, 0.5], shape=[100, 100]),
     described("big:0", *[2.0, 4.5, -1.0, 1.0, 0.5], shape=[100, 100]),
     "step 1 (Session.run call 1): big:0's sum of squares = 4 in the original, 4.5 in the migrated "
     "run (relative difference 0.111 > rtol 1e-05)"),
    (described("x:0", 1.0, shape=[1]), described("x:0", 1.0, kind="i", shape=[1]),
     "step 1 (Session.run call 1): x:0 is floating point of shape (1) in the original, integer of "
     "shape (1) in the migrated run"),
])
def test_every_fetched_value_is_compared(left, right, reason) -> None:
    original = ({"step": 1, "names": [], "values": [], "shapes": [], "arrays": [left]},)
    migrated = ({"step": 1, "names": [], "values": [], "shapes": [], "arrays": [right]},)
    record = judge(SETTINGS, side(original), side(migrated))
    assert (record.verdict, record.reason) == ("diverged", reason)


def test_the_variables_after_the_last_step_are_compared_when_no_value_is_fetched() -> None:
    quiet = (call(None), call(1), call(2))  # sess.run(train_op): nothing fetched
    changed = (["w:0", "f", [2, 2], [0.5, -1.0, 2.5, 0.125], None],)
    record = judge(SETTINGS, side(quiet), side(quiet, variables=changed))
    assert record.verdict == "diverged"
    assert record.reason == ("the variables after the last training step: w:0's element 2 = 2 in the "
                             "original, 2.5 in the migrated run (relative difference 0.2 > rtol 1e-05)")
    fewer = judge(SETTINGS, side(quiet), side(quiet, variables=()))
    assert fewer.reason == ("the original has 1 trainable variable(s) after its last training step, "
                            "the migrated run 0")


@pytest.mark.parametrize("calls, variables, missing", [
    ((call(None, 0.5), call(None, 0.25)), VARIABLES, "no training step ran"),
    (RUN, (), "no trainable variables after the last training step"),
])
def test_equivalent_needs_a_training_step_and_the_variables_at_the_end(calls, variables, missing) -> None:
    record = judge(SETTINGS, side(calls, variables=variables), side(calls, variables=variables))
    assert record.verdict == "inconclusive"
    assert record.reason.startswith(f"nothing to compare ({missing}); compared: ")
    broken = judge(SETTINGS, side(calls, variables=variables),
                   side(calls, variables=variables, violations=["no NpuOptimizer"]))
    assert (broken.verdict, broken.reason) == ("violations", "1 NPU constraint(s) broken: no NpuOptimizer")


def test_printed_metrics_are_compared_to_the_precision_they_were_printed_with() -> None:
    printed = printed_metrics("step 1 loss 0.2513 (1.2 sec)\nINFO:tensorflow:loss = 0.25, step = 2\n"
                              "eval accuracy: 0.9 ETA: 3s\nval_loss=1e-3\n")
    assert printed == (("loss", "0.2513"), ("loss", "0.25"), ("accuracy", "0.9"), ("val_loss", "1e-3"))
    assert compare_printed(printed, printed, 1e-5) == ""
    rounded = (("loss", "0.2514"), *printed[1:])  # one unit of the last digit printed
    assert compare_printed(printed, rounded, 1e-5) == ""
    changed = (*printed[:2], ("accuracy", "0.8"), printed[3])
    assert compare_printed(printed, changed, 1e-5) == ("printed metric 3: accuracy 0.9 in the original, "
                                                       "accuracy 0.8 in the migrated run")
    record = judge(SETTINGS, side(printed=printed), side(printed=printed[:3]))
    assert (record.verdict, record.reason) == (
        "diverged", "the original printed 4 metric value(s), the migrated run 3")


def test_a_run_stopped_in_its_loop_says_what_did_not_run() -> None:
    stopped = SideRun(exit_code=0, seconds=1.0, stopped=True, calls=RUN, variables=VARIABLES)
    record = judge(SETTINGS, stopped, stopped)
    assert record.verdict == "equivalent"
    assert record.reason.endswith("; stopped at the step limit (the training loop does not end when "
                                  "its input does): what follows it did not run")


@pytest.mark.parametrize("args, message", [
    (["verify", "--allow", "diverged"], "--allow diverged: only inconclusive, no-command, timeout can be allowed"),
    (["run", "--allow", "timeout"], "--allow needs --verify"),
])
def test_only_verdicts_that_prove_nothing_can_be_allowed(tmp_path: Path, args: list, message: str) -> None:
    (tmp_path / "repos.txt").write_text("")
    done = cli(*args, "--repos", "repos.txt", cwd=tmp_path)
    assert (done.returncode, done.stderr.strip()) == (2, f"npu-codemod: error: {message}")


def test_token_shaped_text_is_masked_wherever_it_comes_from() -> None:
    text = ("ValueError: bad key ghp_0123456789abcdefghijABCDEFGHIJ012345 for "
            "https://user:pw@example.invalid/x, AKIAABCDEFGHIJKLMNOP")
    assert mask_secrets(text) == "ValueError: bad key *** for https://***@example.invalid/x, ***"


def test_without_namespaces_a_detached_child_is_still_stopped(tmp_path: Path, monkeypatch) -> None:
    import uuid

    from npu_codemod.orchestrator.verify import sandbox

    monkeypatch.setattr(sandbox, "isolation", lambda: sandbox.GROUP_ONLY)
    marker = f"npu-codemod-detached-{uuid.uuid4().hex}"
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "spawn.py").write_text(
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
        f"{marker!r}], start_new_session=True)\n")
    run = sandbox.run_side("python spawn.py", tmp_path / "repo", tmp_path / "scratch", 10, 60, 8192)
    assert (run.exit_code, run.isolation) == (0, sandbox.GROUP_ONLY)
    assert not [entry for entry in Path("/proc").glob("[0-9]*") if marker in _cmdline(entry)]


def _cmdline(entry: Path) -> str:
    try:
        return (entry / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_a_missing_module_of_tensorflow_is_no_missing_package() -> None:
    assert missing_module("ModuleNotFoundError: No module named 'scipy.sparse' (exit code 1)") == "scipy"
    assert missing_module("ModuleNotFoundError: No module named 'tensorflow.contrib.quantize'") is None
    assert missing_module("ValueError: No module named 'x'") is None
    assert missing_module("ModuleNotFoundError: No module named 'tensorflow_hub'") == "tensorflow_hub"


def test_requirements_come_from_requirements_txt_else_setup_py(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text('from setuptools import setup\n\nsetup(name="m", version="1", '
                                       'install_requires=["numpy>=1.14", "tensorflow==1.15.0"])\n')
    assert listed_requirements(tmp_path) == ["numpy>=1.14", "tensorflow==1.15.0"]
    (tmp_path / "requirements.txt").write_text("# pinned\nscipy==1.2\n\ntensorflow-gpu==1.15\n")
    assert listed_requirements(tmp_path) == ["scipy==1.2", "tensorflow-gpu==1.15"]
    computed = tmp_path / "computed"
    computed.mkdir()
    (computed / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=open('r').read().split())\n")
    assert listed_requirements(computed) is None and listed_requirements(tmp_path / "none") is None


def named(step, kind, **series):
    return {"step": step, "kind": kind, "names": list(series), "values": list(series.values()),
            "shapes": [], "arrays": []}


def test_named_series_say_what_was_compared_and_a_difference_names_its_step() -> None:
    """Keras batches and TF 2.x loop steps carry named series: the verdict lists them; the
    first difference names the run's step and both values."""
    steps = (named(1, "fit", loss=0.5, accuracy=0.25, **{"gradient norm": 2.0}),
             named(2, "train", loss=0.4, **{"gradient norm": 1.5}),
             named(3, "train", loss=0.3, **{"gradient norm": 1.25}))
    tf2 = replace(SETTINGS, tensorflow="2")
    record = judge(tf2, side(steps, stopped=True), side(steps, stopped=True))
    assert record.reason == ("loss, accuracy and gradient norm over 3 training step(s), 1 variable(s) "
                             "at the end (4 parameters): equal within rtol 1e-05; max relative "
                             "difference 0; stopped at the step limit (a TF 2.x training loop has no "
                             "input the launcher can end): what follows it did not run")
    changed = (*steps[:2], named(3, "train", loss=0.3, **{"gradient norm": 1.5}))
    record = judge(tf2, side(steps), side(changed))
    assert record.reason == ("step 3 (training step of a TF 2.x loop 3): gradient norm = 1.25 in the "
                             "original, 1.5 in the migrated run (relative difference 0.167 > rtol 1e-05)")


COUNTING = """\
import sys
from _npu_codemod_verify.steps import StepCount

count = StepCount(sys.argv[1])
print(" ".join(str(count.next()) for _ in range(200)))
"""


def test_training_steps_are_numbered_once_over_the_run_s_processes(tmp_path: Path) -> None:
    """Two processes counting at once: one sequence, no number twice (the count's lock)."""
    env = {**os.environ, "PYTHONPATH": str(RUNTIME)}
    command = [sys.executable, "-c", COUNTING, str(tmp_path)]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    numbers = [int(n) for run in runs for n in run.communicate(timeout=120)[0].split()]
    assert sorted(numbers) == list(range(1, 401))
    assert (tmp_path / "training-steps").read_text() == "400"
