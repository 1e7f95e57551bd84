"""Reports that cannot be written (the disk is full: here, a file-size limit makes every write
past it fail as a full disk would): the run says which branches it already committed, exits
with the "some repository failed" code, not a usage error, and leaves no temporary file."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

from support.git import git, make_repo

BRANCH = "npu-codemod/sess-run-to-npu"
LIMIT = 48 * 1024  # bytes: the repositories' git objects fit, report.html does not


def limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_reports_that_cannot_be_written_leave_the_work_and_no_tmp(tmp_path: Path):
    for name in ("alpha", "beta"):
        make_repo(tmp_path / name)
    (tmp_path / "repos.txt").write_text("alpha\nbeta\n")

    done = subprocess.run([sys.executable, "-m", "npu_codemod", "run", "--repos", "repos.txt",
                           "--report-dir", "rep", "--no-progress", "--no-cache"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, preexec_fn=limited)

    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("npu-codemod: cannot write reports in 'rep': File too large")
    assert last.endswith(f"the repositories' work stands, branches committed by this run: alpha ({BRANCH}), "
                         f"beta ({BRANCH}); free space and rerun to write the reports")
    assert "Traceback" not in done.stderr
    assert [p.name for p in (tmp_path / "rep").rglob("*") if p.name.endswith(".tmp")] == []
    for name in ("alpha", "beta"):
        assert git(tmp_path / name, "rev-list", "--count", BRANCH) == "2"
