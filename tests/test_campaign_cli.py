"""The command line a new user meets (the real CLI in a subprocess): a misspelt option is one
line with a did-you-mean, repo-list errors cite file:line, one fixed-width progress bar with
the repositories in flight, scan says "would migrate" and "would change", --dry-run after a real run still
writes the branch's patch, the workspace defaults to the per-user cache, every --help page
says what its command does."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.progress import TEXT_WIDTH, progress_text

from support.cli import cli
from support.git import git, make_repo, show

BRANCH = "npu-codemod/sess-run-to-npu"
TRAIN = "import tensorflow as tf\ny = tf.nn.dropout(x, 0.5)\n"


@pytest.mark.parametrize("args, line", [
    (["run", "--repos", "repos.txt", "--dryrun"],
     "npu-codemod run: error: unrecognized arguments: --dryrun: did you mean --dry-run? "
     "(see npu-codemod run --help)"),
    (["run", "--repo", "repos.txt"],
     "npu-codemod run: error: ambiguous option: --repo could match --repos, --report-dir, "
     "--repo-timeout: did you mean --repos? (see npu-codemod run --help)"),
    (["sacn", "--repos", "repos.txt"],
     "npu-codemod: error: argument COMMAND: invalid choice: 'sacn' (choose from 'run', 'scan', "
     "'verify', 'rules', 'report', 'status', 'prs', 'check', 'demo'): did you mean scan? "
     "(see npu-codemod --help)"),
    (["prs", "merge", "run.json", "--aprovals", "2"],
     "npu-codemod prs merge: error: unrecognized arguments: --aprovals 2: did you mean --approvals? "
     "(see npu-codemod prs merge --help)"),
    (["run"], "npu-codemod run: error: the following arguments are required: --repos "
              "(see npu-codemod run --help)"),
])
def test_a_usage_error_is_one_line_with_a_did_you_mean(tmp_path: Path, args, line) -> None:
    result = cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [line]


def test_repo_list_errors_cite_file_and_line(tmp_path: Path) -> None:
    make_repo(tmp_path / "good", {"train.py": TRAIN})
    (tmp_path / "plain").mkdir()
    (tmp_path / "repos.txt").write_text("good\n# a comment\nmissing\nplain\ngood2 main extra\n")
    make_repo(tmp_path / "good2", {"train.py": TRAIN})
    (tmp_path / "more.txt").write_text("good nope\n")
    result = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    other = cli("scan", "--repos", "more.txt", "--report-dir", "rep2", "--no-progress", cwd=tmp_path)
    errors = [line for line in (result.stderr + other.stderr).splitlines()
              if line.startswith("npu-codemod: ") and "reports in" not in line]
    assert errors == [
        f"npu-codemod: missing: repos.txt:3: no such path: {tmp_path / 'missing'}",
        f"npu-codemod: plain: repos.txt:4: not a git repository: {tmp_path / 'plain'}",
        "npu-codemod: good2: repos.txt:5: malformed entry 'good2 main extra': expected PATH_OR_URL "
        "[BASE_REF] [slug=... verify=... wave=...]",
        "npu-codemod: good: more.txt:1: base ref 'nope' not found"]


def test_scan_says_would_migrate(tmp_path: Path) -> None:
    make_repo(tmp_path / "a", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("a\n")
    result = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--no-cache",
                 cwd=tmp_path)
    assert any(line.startswith("1 repos: 1 would change, 0 would not change, 0 failed; would migrate 1 "
                               "sites, left 0, errors 0") for line in result.stderr.splitlines())
    assert "unchanged" not in result.stderr
    run = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", "--no-cache", cwd=tmp_path)
    assert any(line.startswith("1 repos: 1 changed, 0 unchanged, 0 failed; sites migrated 1, left 0, errors 0")
               for line in run.stderr.splitlines())


def test_dry_run_after_a_real_run_writes_the_branch_content_as_a_patch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "a", {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("a\n")
    real = cli("run", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path)
    assert real.returncode == 0, real.stderr
    dry = cli("run", "--repos", "repos.txt", "--report-dir", "dry", "--no-progress", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    [patch] = sorted((tmp_path / "dry" / "patches").iterdir())
    record = json.loads((tmp_path / "dry" / "run.json").read_text())["repos"][0]
    assert record["status"] == "unchanged"
    assert record["notes"] == ["dry run: the branch already holds this change"]
    copy = tmp_path / "copy"
    git(tmp_path, "clone", "-q", str(repo), str(copy))
    git(copy, "apply", str(patch))
    assert (copy / "train.py").read_bytes() == show(repo, BRANCH, "train.py")


def test_the_default_workspace_is_the_per_user_cache(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "src", {"train.py": TRAIN})
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "repos.txt").write_text(f"{bare.as_uri()}\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = cli("scan", "--repos", "repos.txt", "--report-dir", "rep", "--no-progress", cwd=tmp_path / "here",
                 env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == ["rep", "repos.txt"]
    clones = [p.name for p in (tmp_path / "cache" / "npu-codemod" / "clones").iterdir() if p.is_dir()]
    assert len(clones) == 1 and clones[0].startswith("remote.git-")
    without = {k: v for k, v in env.items() if k != "XDG_CACHE_HOME"}
    help_text = cli("run", "--help", cwd=tmp_path, env=without).stdout
    assert "$XDG_CACHE_HOME/npu-codemod, else" in help_text.replace("\n", " ").replace("  ", " ")


@pytest.mark.parametrize("command, words", [
    (["run"], "Migrate each repository of the list"),
    (["scan"], "change nothing anywhere"),
    (["rules"], "List the available rules"),
    (["report"], "Re-render every report"),
    (["status"], "Ask the forge where each pull request"),
    (["prs"], "Act on the pull requests a run opened"),
    (["prs", "merge"], "Merge the open PRs that are approved"),
    (["prs", "close-stale"], "Close, with a comment saying why"),
    (["prs", "rebase"], "Rebuild the branch of each open PR that has conflicts"),
    (["check"], "Lint files and folders"),
    (["demo"], "Build sample TensorFlow 1.x and 2.x repositories"),
])
def test_every_help_page_says_what_the_command_does(tmp_path: Path, command, words) -> None:
    result = cli(*command, "--help", cwd=tmp_path)
    assert result.returncode == 0
    assert words in " ".join(result.stdout.split())


def test_progress_text_has_a_fixed_width_and_names_the_repositories_in_flight() -> None:
    counts = Counter(changed=3, unchanged=1)
    assert progress_text(counts, 120, ["alpha", "beta", "gamma"]) == \
        "changed 3 unchanged 1 failed 0 files 120 | alpha, beta, gamma".ljust(TEXT_WIDTH)
    long = "models/" + "x" * 80
    text = progress_text(counts, 7, [long, "beta"])
    assert len(text) == TEXT_WIDTH
    assert text.startswith("changed 3 unchanged 1 failed 0 files 7 | models/xxx")  # the start kept
    assert text.endswith("… (+1)")
    assert len(progress_text(Counter(), 0, [])) == TEXT_WIDTH


def test_the_bar_shows_no_second_files_line(tmp_path: Path) -> None:
    for name in ("a", "b"):
        make_repo(tmp_path / name, {"train.py": TRAIN})
    (tmp_path / "repos.txt").write_text("a\nb\n")
    result = subprocess.run(
        [os.sys.executable, "-m", "npu_codemod", "scan", "--repos", "repos.txt", "--report-dir", "rep",
         "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    frames = [frame for frame in result.stderr.replace("\r", "\n").splitlines() if frame.startswith("repos ")]
    assert frames and "files:" not in result.stderr
    assert len({len(frame) for frame in frames if "|" in frame[20:]}) == 1  # one width throughout
    assert any(frame.rstrip().endswith("files 0 | a") for frame in frames)  # a in flight
    assert any(frame.rstrip().endswith("| b") for frame in frames)
