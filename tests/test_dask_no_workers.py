"""A Dask cluster whose workers all died: the batch ends with one line instead of waiting
forever, and every repository left fails with that reason (a real cluster, real repositories)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_codemod.orchestrator.batch.batch_options import BatchOptions
from npu_codemod.orchestrator.batch.run import make_jobs
from npu_codemod.orchestrator.batch.runner import run_jobs
from npu_codemod.orchestrator.repolist import parse_repo_list

from support.git import make_repo

distributed = pytest.importorskip("distributed")


def test_a_cluster_left_without_workers_fails_the_rest_with_one_line(tmp_path: Path, capsys, monkeypatch):
    for name in ("alpha", "beta", "gamma"):
        make_repo(tmp_path / name)
    entries = parse_repo_list("alpha\nbeta\ngamma\n", tmp_path)
    jobs = make_jobs(BatchOptions(workspace=tmp_path / "ws", cache=False, repo_timeout=600), entries)
    monkeypatch.chdir(tmp_path)
    from npu_codemod.orchestrator.batch.dask_pool import DaskPool

    ended: dict[int, str] = {}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        pool = DaskPool(cluster.scheduler_address, no_workers_grace=1.0)
        with pool, distributed.Client(cluster.scheduler_address) as admin:
            admin.retire_workers()  # the only worker goes away before any task ran
            run_jobs(jobs, pool, lambda index, result: ended.__setitem__(index, result.error or ""),
                     progress=False, repo_timeout=600)
    reason = (f"the Dask cluster at {cluster.scheduler_address} has had no worker for 1 s "
              "(all died, or none started): the batch stops")
    assert ended == {0: reason, 1: reason, 2: reason}
    assert capsys.readouterr().err.count(reason) == 1
