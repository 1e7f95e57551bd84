"""Sharding a large repository across workers, pushing, reruns on a moved base, clone cache
and credential masking."""

from __future__ import annotations

import json
from pathlib import Path

from npu_codemod.orchestrator.batch.shards import MIN_SHARD_FILES, split_files
from npu_codemod.orchestrator.cli import main
from npu_codemod.orchestrator.git.repository import PyFile

from support.git import TF_SCRIPT, commit_files, git, make_remote, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"


def run(root: Path, report: str, *args: str) -> dict:
    main(["run", "--repos", str(root / "repos.txt"), "--workspace", str(root / "ws"),
          "--report-dir", str(root / report), "--no-progress", *args])
    return json.loads((root / report / "run.json").read_text())


def test_split_files_keeps_file_order_in_contiguous_slices():
    files = [PyFile(f"m{i:03}.py", "100644", "0" * 40) for i in range(3 * MIN_SHARD_FILES)]
    shards = split_files(files, 2)
    assert [len(s) for s in shards] == [24, 24]
    assert [f for shard in shards for f in shard] == files
    assert split_files(files[:MIN_SHARD_FILES], 8) == [tuple(files[:MIN_SHARD_FILES])]
    assert split_files([], 4) == [()]


def test_a_monorepo_sharded_over_two_workers_gives_the_serial_commit_and_findings(tmp_path):
    files = {f"pkg{i % 3}/train_{i:02}.py": TF_SCRIPT.replace("8", str(i + 1)) for i in range(40)}
    files["notes.py"] = "print('no tensorflow here')\n"
    for name in ("serial", "sharded"):
        make_repo(tmp_path / name / "mono", files)
        (tmp_path / name / "repos.txt").write_text("mono\n")
    serial = run(tmp_path / "serial", "report", "--jobs", "1")["repos"][0]
    sharded = run(tmp_path / "sharded", "report", "--jobs", "2")["repos"][0]
    assert sharded["findings"] == serial["findings"]
    assert sharded["files_changed"] == serial["files_changed"] and len(serial["files_changed"]) == 40
    assert sharded["files_scanned"] == serial["files_scanned"] == 41
    trees = [git(tmp_path / name / "mono", "rev-parse", f"{BRANCH}^{{tree}}") for name in ("serial", "sharded")]
    assert trees[0] == trees[1]


PICKY_ANALYSIS = """
from npu_codemod.plugins.hookspecs import hookimpl


@hookimpl
def npu_codemod_analyze_file(path, text):
    if path.endswith("7.py"):
        raise ValueError("cannot read " + path)
    return ["picky:" + path]
"""
SESSION_SCRIPT = (
    "import tensorflow as tf\n"
    "config = tf.ConfigProto()\n"
    "with tf.Session(config=config) as sess:\n"
    "    sess.run(tf.global_variables_initializer())\n"
)
TOWER = (
    "import tensorflow as tf\n\n\n"
    "def tower(images, gpu):\n"
    "    with tf.device('/gpu:%d' % gpu):\n"
    "        return tf.layers.dense(images, 10)\n"
)


def test_the_workers_analyse_a_sharded_repository_and_every_shard_gets_all_facts(tmp_path):
    # The session is in the first shard, the only tf.device in the last one: NPU008 sets
    # allow_soft_placement in the first from the last one's fact. The plugin's errors (files
    # ending in 7, in both shards) come in file order, as one serial pass gives them.
    files = {f"a_train_{i:02}.py": SESSION_SCRIPT for i in range(20)}
    files |= {f"z_model_{i:02}.py": TF_SCRIPT for i in range(19)} | {"z_model_tower.py": TOWER}
    plugin = tmp_path / "picky.py"
    plugin.write_text(PICKY_ANALYSIS)
    for name in ("serial", "sharded"):
        make_repo(tmp_path / name / "mono", files)
        (tmp_path / name / "repos.txt").write_text("mono\n")
    serial = run(tmp_path / "serial", "report", "--jobs", "1", "--plugin", str(plugin))["repos"][0]
    sharded = run(tmp_path / "sharded", "report", "--jobs", "2", "--plugin", str(plugin))["repos"][0]
    assert sharded["findings"] == serial["findings"]
    errors = [(f["path"], f["message"]) for f in sharded["findings"] if f["rule_id"] == "PLUGIN"]
    assert errors == [(path, f"npu_codemod_analyze_file raised ValueError: cannot read {path}; "
                       "facts from this plugin are missing") for path in ("a_train_07.py", "a_train_17.py", "z_model_07.py",
                                               "z_model_17.py")]
    first = git(tmp_path / "sharded" / "mono", "show", f"{BRANCH}:a_train_00.py")
    assert "config.allow_soft_placement = True" in first
    trees = [git(tmp_path / name / "mono", "rev-parse", f"{BRANCH}^{{tree}}") for name in ("serial", "sharded")]
    assert trees[0] == trees[1]


def test_local_repo_without_the_remote_keeps_its_branch_and_says_nothing_was_pushed(tmp_path):
    make_repo(tmp_path / "a")
    (tmp_path / "repos.txt").write_text("a\n")
    repo = run(tmp_path, "report", "--push")["repos"][0]
    assert (repo["status"], repo["pushed"]) == ("changed", False)
    assert repo["notes"] == ["no remote named 'origin': nothing was pushed, the branch is kept locally"]
    assert git(tmp_path / "a", "rev-parse", BRANCH) == repo["commit"]


def test_rejected_push_fails_the_repo_with_gits_reason(tmp_path):
    work = make_repo(tmp_path / "a")
    bare = make_remote(work, tmp_path / "a.git")
    git(work, "checkout", "-q", "-b", "theirs")  # someone else's branch of the same name
    other = commit_files(work, {"other.py": "x = 1\n"}, "theirs")
    git(work, "push", "-q", "origin", f"theirs:refs/heads/{BRANCH}")
    git(work, "checkout", "-q", "main")
    (tmp_path / "repos.txt").write_text("a\n")
    repo = run(tmp_path, "report", "--push")["repos"][0]
    assert repo["status"] == "failed"
    assert repo["error"] == "push to origin rejected: [rejected] (non-fast-forward)"
    assert git(bare, "rev-parse", BRANCH) == other


def test_split_change_pushes_each_group_and_a_rejection_names_the_branch(tmp_path):
    work = make_repo(tmp_path / "a", {"nlp/train.py": TF_SCRIPT, "vision/train.py": TF_SCRIPT})
    bare = make_remote(work, tmp_path / "a.git")
    other = commit_files(work, {"other.py": "x = 1\n"}, "theirs")
    git(work, "push", "-q", "origin", f"HEAD:refs/heads/{BRANCH}/nlp")  # someone else's
    git(work, "reset", "-q", "--hard", "HEAD~1")
    (tmp_path / "repos.txt").write_text("a\n")
    repo = run(tmp_path, "report", "--push", "--split-by", "directory")["repos"][0]
    assert repo["status"] == "failed"
    assert repo["error"].startswith(f"{BRANCH}/nlp: push to origin rejected: [rejected]")
    assert git(bare, "rev-parse", f"{BRANCH}/nlp") == other


def test_base_moved_on_rebuilds_our_branch_and_pushing_it_needs_force(tmp_path):
    work = make_repo(tmp_path / "a")
    bare = make_remote(work, tmp_path / "a.git")
    (tmp_path / "repos.txt").write_text("a\n")
    assert run(tmp_path, "first", "--push")["repos"][0]["pushed"]
    new_base = commit_files(work, {"README.md": "moved on\n"}, "upstream work")

    refused = run(tmp_path, "second", "--push")["repos"][0]
    assert refused["status"] == "failed"
    assert refused["error"].endswith("; the branch was rebuilt on a new base: rerun with --force-push")
    assert refused["notes"] == [f"the base moved on: branch rebuilt on {new_base[:12]} (pushing it needs --force-push)"]

    forced = run(tmp_path, "third", "--push", "--force-push")["repos"][0]
    assert (forced["status"], forced["pushed"]) == ("unchanged", True)
    assert git(bare, "rev-parse", f"{BRANCH}~1") == new_base
    assert git(work, "rev-list", "--count", f"main..{BRANCH}") == "1"


def test_someone_elses_commit_on_the_branch_is_kept_when_the_base_moves(tmp_path):
    work = make_repo(tmp_path / "a")
    (tmp_path / "repos.txt").write_text("a\n")
    run(tmp_path, "first")
    git(work, "checkout", "-q", BRANCH)
    fix = commit_files(work, {"fix.py": "y = 2\n"}, "a reviewer's fix")
    git(work, "checkout", "-q", "main")
    commit_files(work, {"README.md": "moved on\n"}, "upstream work")
    repo = run(tmp_path, "second")["repos"][0]
    assert repo["status"] == "unchanged" and repo["commit"] == fix
    assert "has commits by others: kept as it is" in repo["notes"][0]


def test_url_is_cloned_once_then_fetched_and_credentials_never_show(tmp_path, capsys):
    work = make_repo(tmp_path / "a")
    make_remote(work, tmp_path / "a.git")
    secret = "https://bob:s3cr3t-t0ken@127.0.0.1:9/team/model.git"
    (tmp_path / "repos.txt").write_text(f"file://{tmp_path}/a.git\n{secret}\n")
    first = run(tmp_path, "report")["repos"]
    clone = next((tmp_path / "ws" / "clones").glob("a.git-*[!k]"))
    marker = clone / "npu-codemod-was-here"
    marker.write_text("")
    commit_files(work, {"b.py": TF_SCRIPT}, "more")
    git(work, "push", "-q", "origin", "main")
    second = run(tmp_path, "again", "--jobs", "2")["repos"]
    assert marker.exists()  # fetched into the same cache, not cloned again
    assert first[0]["status"] == "changed"
    assert second[0]["files_changed"] == ["b.py", "train.py"]  # rebuilt on the fetched base
    assert second[0]["notes"][0].startswith("the base moved on: branch rebuilt on")
    assert second[1]["status"] == "failed" and second[1]["error"].startswith(
        "cannot clone https://***@127.0.0.1:9/team/model.git: fatal: unable to access")
    everything = capsys.readouterr().err + "".join(
        p.read_text() for p in (tmp_path / "again").rglob("*") if p.is_file())
    assert "s3cr3t" not in everything and "https://***@127.0.0.1:9/team/model.git" in everything
