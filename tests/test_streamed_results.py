"""Streamed results (issue 8): the parent's memory does not grow with the number of repos.

The built-in report writers read ``run["repos"]`` pass by pass and never hold it whole; a
batch's records come back in repo-list order whatever order the repositories end in; and the
parent's peak memory over 100 repositories is that over 20.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any, Iterator

import pytest

from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.batch.spool import ResultSpool
from npu_codemod.orchestrator.results import ChangeGroup, PullRequestRecord, RepoResult
from npu_codemod.reports.builtin import npu_codemod_write_report

from support.cli import cli
from support.csvfiles import read_csv
from support.git import git, make_repo


class _Record(dict):
    """A dict that a weak reference can follow, to count the records still alive."""


class OnlyIterable:
    """A run's repos that can be counted and iterated but not indexed; every pass decodes
    fresh records, as the batch's spool does, and notes the most that were alive at once."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.lines = [json.dumps(record) for record in records]
        self.alive = self.most_alive = 0

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for line in self.lines:
            yield json.loads(line, object_hook=self._track)
            self.most_alive = max(self.most_alive, self.alive)

    def _track(self, value: dict) -> _Record:
        record = _Record(value)
        self.alive += 1
        weakref.finalize(record, self._freed)
        return record

    def _freed(self) -> None:
        self.alive -= 1


def repo_record(number: int) -> dict[str, Any]:
    """One of three kinds of repo: changed with a patch, split with pull requests, failed."""
    name = f"repo{number:02d}"
    if number % 3 == 2:
        return RepoResult(repo=name, status="failed", location=f"/src/{name}", error="not a git repository").to_dict()
    findings = tuple(
        Finding(name, f"pkg/train_{n}.py", n + 3, 4, rule, "a-rule", status, f"message {n}",
                snippet=f"  {n + 2} | x\n> {n + 3} | y = tf.nn.dropout(x)\n" if status != "migrated" else "")
        for n, (rule, status) in enumerate([("NPU002", "migrated"), ("NPU004", "unmigrated"),
                                            ("NPU002", "unmigrated"), ("PLUGIN", "error")]))
    result = RepoResult(repo=name, status="changed", location=f"https://forge.example/org/{name}.git",
                        branch="npu", base="b" * 40, commit="c" * 40, files_changed=("pkg/train_0.py",),
                        files_scanned=7, notes=("a note",), findings=findings)
    if number % 3 == 1:
        group = ChangeGroup("pkg", ("@team",), ("pkg/train_0.py",), ("pkg/train_0.py",), "npu-pkg", "d" * 40)
        pr = PullRequestRecord("npu-pkg", "pkg", "created", f"https://forge.example/org/{name}/pull/1", 1)
        return result.with_changes(groups=(group,), pull_requests=(pr,), pr_url=pr.url).to_dict()
    return result.with_changes(patch=f"--- a/pkg/train_0.py\n+++ b/pkg/train_0.py\n@@ -1 +1 @@\n-{name}\n+x\n").to_dict()


def run_record(repos: Any) -> dict[str, Any]:
    return {"version": 1, "id": "0" * 32, "tool": "npu-codemod test", "command": "run",
            "started": "t0", "finished": "t1", "options": {"dry_run": True},
            "rules": [{"id": "NPU002", "name": "a-rule", "description": "d", "guide_section": "3.1"}],
            "plugins": [], "repos": repos}


def files_of(report_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(report_dir)): p.read_bytes() for p in sorted(report_dir.rglob("*")) if p.is_file()}


def test_spool_gives_records_back_by_list_index_whatever_order_they_came_in(tmp_path: Path) -> None:
    with ResultSpool(tmp_path, 3) as spool:
        for index in (2, 0, 1):
            spool.add(index, {"repo": f"r{index}", "note": "déjà vu\n", "files": ("a.py",)})
        assert [repo["repo"] for repo in spool] == ["r0", "r1", "r2"]
        assert [(a["repo"], b["repo"]) for a, b in zip(spool, spool)] == [("r0", "r0"), ("r1", "r1"), ("r2", "r2")]
        assert spool[2] == {"repo": "r2", "note": "déjà vu\n", "files": ["a.py"]}  # as run.json has it
        assert len(spool) == 3 and list(tmp_path.iterdir()) == []
    with ResultSpool(tmp_path, 2) as spool:
        spool.add(1, {"repo": "r1"})
        with pytest.raises(LookupError, match="repository 0 of the list has no result yet"):
            list(spool)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_spool_on_a_full_disk_fails_the_add_not_the_close(tmp_path: Path) -> None:
    """The batch turns the add's OSError into one line; closing must not raise it again."""
    with ResultSpool(tmp_path, 1) as spool:
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, spool._file.fileno())  # every write now fails as on a full disk
        os.close(full)
        with pytest.raises(OSError, match="No space left"):
            spool.add(0, {"repo": "r0"})


def test_writers_read_the_repos_pass_by_pass_and_write_what_a_list_gives(tmp_path: Path) -> None:
    records = [json.loads(json.dumps(repo_record(n))) for n in range(40)]
    repos = OnlyIterable(records)
    (tmp_path / "streamed").mkdir()
    (tmp_path / "listed").mkdir()

    streamed = npu_codemod_write_report(run=run_record(repos), report_dir=tmp_path / "streamed")
    listed = npu_codemod_write_report(run=run_record(records), report_dir=tmp_path / "listed")

    assert repos.alive == 0  # no writer kept a record
    objects_in_one_record = 1 + 4 + 1 + 1  # the repo, its findings, a group, a pull request
    assert repos.most_alive <= 3 * objects_in_one_record  # never the 40 records at once
    assert [p.name for p in streamed] == [p.name for p in listed]
    assert files_of(tmp_path / "streamed") == files_of(tmp_path / "listed")
    assert len(list((tmp_path / "streamed" / "patches").iterdir())) == 14


def test_a_small_spool_is_typed_once_for_every_report_pass(tmp_path: Path, monkeypatch) -> None:
    """Each report pass over a small spool gets the records the first pass typed (no JSON read
    again); over a spool larger than ``KEEP_TYPED_BYTES`` each pass reads its own."""
    from npu_codemod.orchestrator import run_record as run_record_module
    from npu_codemod.orchestrator.run_record import RepoRecords

    decoded = []
    real_from_dict = RepoResult.from_dict
    monkeypatch.setattr(RepoResult, "from_dict",
                        classmethod(lambda cls, data: decoded.append(data["repo"]) or real_from_dict(data)))
    with ResultSpool(tmp_path, 3) as spool:
        for index in (1, 2, 0):
            spool.add(index, repo_record(index))
        small = RepoRecords(spool)
        first, again = list(small), list(small)
        assert [repo.repo for repo in first] == ["repo00", "repo01", "repo02"]
        assert all(a is b for a, b in zip(first, again)) and small[1] is first[1]
        assert [repo.repo for repo in small[1:]] == ["repo01", "repo02"]
        assert decoded == ["repo00", "repo01", "repo02"]

        monkeypatch.setattr(run_record_module, "KEEP_TYPED_BYTES", spool.size - 1)
        decoded.clear()
        large = RepoRecords(spool)
        assert list(large) == list(large) == first
        assert decoded == ["repo00", "repo01", "repo02"] * 2
    listed = RepoRecords([repo_record(0)])  # a run.json's list: no size, read as before
    assert listed[0] is not listed[0]


ORDER_PLUGIN = '''
import os, pathlib, time
from npu_codemod.plugins.hookspecs import hookimpl

DONE = pathlib.Path(os.environ["NPU_TEST_DONE"])


@hookimpl
def npu_codemod_analyze_file(path, text):
    if "wait for b" in text:  # repo a ends only once the parent has b's result
        deadline = time.monotonic() + 60
        while not (DONE / "b").exists() and time.monotonic() < deadline:
            time.sleep(0.02)


@hookimpl
def npu_codemod_repo_result(result, options):
    (DONE / result["repo"]).write_text("")
    with open(DONE / "order", "a") as stream:
        stream.write(result["repo"] + "\\n")
'''
TRAIN = "import tensorflow as tf\nds = tf.data.TextLineDataset('t').batch(32)\ny = tf.nn.dropout(x, 0.5)\n"


def csv_repos(path: Path) -> list[str]:
    return list(dict.fromkeys(row["repo"] for row in read_csv(path)))


def test_reports_keep_the_repo_list_order_when_repos_end_out_of_order(tmp_path: Path, monkeypatch) -> None:
    names = ["a", "b", "c", "d"]
    for name in names:
        make_repo(tmp_path / name, {"train.py": TRAIN + ("# wait for b\n" if name == "a" else "")})
    (tmp_path / "repos.txt").write_text("".join(f"{name}\n" for name in names))
    (tmp_path / "order.py").write_text(ORDER_PLUGIN)
    (tmp_path / "done").mkdir()
    monkeypatch.setenv("NPU_TEST_DONE", str(tmp_path / "done"))

    done = cli("scan", "--repos", "repos.txt", "--jobs", "2", "--no-progress", "--no-cache",
               "--report-dir", "rep", "--plugin", "order.py", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    arrived = (tmp_path / "done" / "order").read_text().split()
    assert arrived.index("b") < arrived.index("a")  # the case under test: a ended after b
    report = tmp_path / "rep"
    assert [repo["repo"] for repo in json.loads((report / "run.json").read_text())["repos"]] == names
    for name in ("findings.csv", "summary.csv", "repos.csv"):
        assert csv_repos(report / name) == names, name
    sarif = json.loads((report / "findings.sarif").read_text())
    assert [run["properties"]["repo"] for run in sarif["runs"]] == names
    html = (report / "report.html").read_text()
    assert re.findall(r'<tr><td>(\w)</td><td class="unchanged">', html) == names
    lines = done.stderr.splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("repo "))
    assert [line.split()[0] for line in lines[header + 1:header + 5]] == names  # the summary table
    assert sorted(p.name for p in report.iterdir()) == sorted(
        ["run.json", "findings.csv", "summary.csv", "repos.csv", "pr-files.csv", "findings.sarif",
         "history.jsonl", "report.html"])  # and no spooled results left beside them


#: The CLI in a process that prints its own peak RSS (VmHWM, the kernel's high-water mark)
#: as it ends: exact, where sampling from outside could miss the last moments.
PEAK_OF_MAIN = """
import sys
from npu_codemod.orchestrator.cli import main
code = main(sys.argv[1:])
status = open("/proc/self/status").read()
print(int(status.split("VmHWM:")[1].split()[0]) // 1024)
sys.exit(code)
"""
#: Many sites that need a person: each brings a finding with a code snippet to the record.
MANY_SITES = "import tensorflow as tf\n" + "".join(
    f"y{n} = tf.nn.dropout(x{n}, 0.5, noise_shape=[1, {n}])  # site {n} of a long file\n" for n in range(60))


def parent_peak_mb(root: Path, repos: list[Path], label: str) -> int:
    (root / f"{label}.txt").write_text("".join(f"{repo}\n" for repo in repos))
    done = subprocess.run([sys.executable, "-c", PEAK_OF_MAIN, "scan", "--repos", f"{label}.txt",
                           "--jobs", "2", "--no-progress", "--no-cache", "--report-dir", label,
                           "--workspace", "ws"],
                          cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_parent_peak_memory_does_not_grow_with_the_number_of_repos(tmp_path: Path) -> None:
    first = make_repo(tmp_path / "repos" / "r000", {"train.py": MANY_SITES})
    repos = [first] + [tmp_path / "repos" / f"r{n:03d}" for n in range(1, 100)]
    for clone in repos[1:]:
        git(tmp_path, "clone", "-q", "--shared", str(first), str(clone))

    few, many = parent_peak_mb(tmp_path, repos[:20], "few"), parent_peak_mb(tmp_path, repos, "many")

    records = json.loads((tmp_path / "many" / "run.json").read_text())["repos"]
    assert len(records) == 100 and all(len(repo["findings"]) >= 60 for repo in records)
    # Held in memory, the records took ~0.6 MB a repo (48 -> 97 MB); spooled, 38 -> 38 MB.
    assert many - few <= 6, (few, many)
