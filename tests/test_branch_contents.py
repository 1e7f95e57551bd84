"""The migration branch is the base plus exactly the last run's edits: a rerun with fewer rules
undoes the edits it no longer makes, a branch others committed to is built on with a warning
naming what the report does not explain, and uncommitted work is said to be left out. Real
repositories, through the CLI."""

from __future__ import annotations

from pathlib import Path

from support.cli import cli, repo_record
from support.git import commit_files, git, make_repo, show
from support.mnist_workers import FILES, HEAD, MODEL, MYLIB_PLUGIN, WORKERS

BRANCH = "npu-codemod/sess-run-to-npu"


def _changed(repo: Path) -> set[str]:
    return set(git(repo, "diff", "--name-only", f"main...{BRANCH}").split())


def _run(tmp_path: Path, report: str, *args: str) -> dict:
    cli("run", "--repos", "repos.txt", "--report-dir", report, "--no-progress", *args,
        cwd=tmp_path, expect=0)
    return repo_record(tmp_path / report)


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "mnist", FILES)
    (tmp_path / "repos.txt").write_text("mnist\n")
    return repo


def test_a_rerun_with_fewer_rules_undoes_the_edits_it_no_longer_makes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = _run(tmp_path, "one", "--rules", "default,distributed")
    assert _changed(repo) == {"train.py", "model.py", "workers.py"}
    second = _run(tmp_path, "two")
    assert second["status"] == "changed"
    assert _changed(repo) == {"train.py", "model.py"} == set(second["files_changed"])
    assert show(repo, BRANCH, "workers.py").decode() == WORKERS
    assert git(repo, "rev-parse", f"{BRANCH}~1") == first["commit"]  # a fast-forward
    assert second["notes"] == ["the branch's earlier edits to 1 file(s) were undone (this run's "
                               "rules do not make them): workers.py"]
    rewriting = {f["path"] for f in second["findings"] if f["status"] == "migrated"}
    assert rewriting == _changed(repo)


def test_the_same_rules_again_after_fewer_give_the_first_branch_back(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = _run(tmp_path, "one", "--rules", "default,distributed")
    _run(tmp_path, "two", "--rules", "NPU004")
    assert _changed(repo) == {"model.py"}
    third = _run(tmp_path, "three", "--rules", "default,distributed")
    assert git(repo, "rev-parse", f"{BRANCH}^{{tree}}") == git(repo, "rev-parse", f"{first['commit']}^{{tree}}")
    assert third["status"] == "changed"
    fourth = _run(tmp_path, "four", "--rules", "default,distributed")
    assert (fourth["status"], fourth["commit"]) == ("unchanged", third["commit"])


def test_a_branch_others_committed_to_is_built_on_with_a_warning(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _run(tmp_path, "one", "--rules", "default,distributed")
    git(repo, "checkout", "-q", BRANCH)
    commit_files(repo, {"launch.sh": "mpirun -np 8 python train.py\n",
                        "model.py": MODEL.replace("256", "512")}, "wider model, launcher")
    git(repo, "checkout", "-q", "main")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "two", "--no-progress", cwd=tmp_path,
               expect=0)
    record = repo_record(tmp_path / "two")
    assert show(repo, BRANCH, "launch.sh").decode() == "mpirun -np 8 python train.py\n"
    assert ("npu-codemod: mnist: warning: the branch has commits by others and was built on as it "
            "is; 2 file(s) it changes are not explained by this report: launch.sh, workers.py") \
        in done.stderr.splitlines()
    warnings = [note for note in record["notes"] if note.startswith("warning:")]
    # workers.py keeps the first run's Horovod edits (built on as it is) and launch.sh is not
    # code: neither is explained by this run's findings; model.py is.
    assert warnings == ["warning: the branch has commits by others and was built on as it is; 2 "
                        "file(s) it changes are not explained by this report: launch.sh, workers.py"]


def test_uncommitted_changes_are_said_to_be_left_out_in_one_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "model.py").write_text(MODEL.replace("tf.nn.dropout(hidden, keep_prob)", "hidden"))
    (repo / "README.md").write_text("edited, not a Python file\n")
    done = cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress",
               cwd=tmp_path, expect=0)
    lines = [line for line in done.stderr.splitlines() if "uncommitted" in line]
    assert lines == ["uncommitted changes in mnist (1 file(s)) are not part of the migration: the "
                     "branch is built from the committed base"]
    record = repo_record(tmp_path / "one")
    assert "model.py" in record["files_changed"]  # its committed dropout is migrated
    assert record["uncommitted"] == 1
    git(repo, "checkout", "-q", "--", "model.py")
    assert cli("run", "--repos", "repos.txt", "--report-dir", "two", "--no-progress", cwd=tmp_path,
               expect=0).stderr.count("uncommitted") == 0


def test_a_rerun_with_a_broken_plugin_undoes_the_edits_only_it_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mnist", {**FILES, "head.py": HEAD})
    (tmp_path / "repos.txt").write_text("mnist\n")
    plugin = tmp_path / "mylib_rules.py"
    plugin.write_text(MYLIB_PLUGIN)
    _run(tmp_path, "one", "--plugin", str(plugin))
    assert "head.py" in _changed(repo)
    plugin.write_text("import mylib_internal  # the licence server is down\n")
    record = _run(tmp_path, "two", "--plugin", str(plugin))
    assert "head.py" not in _changed(repo) and show(repo, BRANCH, "head.py").decode() == HEAD
    assert [f["rule_id"] for f in record["findings"] if f["status"] == "error"] == ["PLUGIN"]
    assert record["notes"][-1].endswith("were undone (this run's rules do not make them): head.py")


def test_a_split_rerun_with_fewer_rules_undoes_a_groups_stale_edits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "mnist", {f"trainer/{name}": text for name, text in FILES.items()})
    (tmp_path / "repos.txt").write_text("mnist\n")
    group = f"{BRANCH}/trainer"
    _run(tmp_path, "one", "--split-by", "directory", "--rules", "default,distributed")
    assert "trainer/workers.py" in git(repo, "diff", "--name-only", f"main...{group}").split()
    first = git(repo, "rev-parse", group)
    _run(tmp_path, "two", "--split-by", "directory")
    assert set(git(repo, "diff", "--name-only", f"main...{group}").split()) == \
        {"trainer/train.py", "trainer/model.py"}
    assert git(repo, "rev-parse", f"{group}~1") == first  # a fast-forward
    third = _run(tmp_path, "three", "--split-by", "directory")
    assert third["status"] == "unchanged" and git(repo, "rev-parse", f"{group}~1") == first


def test_a_committed_python_symlink_is_no_uncommitted_change(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "train_link.py").symlink_to("train.py")
    git(repo, "add", "train_link.py")
    git(repo, "commit", "-q", "-m", "a symlink to the training script")
    assert git(repo, "status", "--porcelain") == ""
    done = cli("run", "--repos", "repos.txt", "--report-dir", "one", "--no-progress",
               cwd=tmp_path, expect=0)
    assert "uncommitted" not in done.stderr
    assert repo_record(tmp_path / "one")["uncommitted"] == 0
