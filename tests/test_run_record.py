"""The typed run record every report reads (``orchestrator/run_record.py``): built from what a
run writes to ``run.json`` it holds exactly that, and an older ``run.json`` without the fields
added since still reads, each such field at its default."""

from __future__ import annotations

import json
from typing import Any

from npu_codemod.codemods.api_sites import ApiSites
from npu_codemod.codemods.findings import Finding
from npu_codemod.orchestrator.results import ChangeGroup, PullRequestRecord, RepoResult
from npu_codemod.orchestrator.run_record import RunRecord, build_run_record
from npu_codemod.orchestrator.verify.records import VerifyRecord
from npu_codemod.plugins.manager import load_plugins
from npu_codemod.reports.summary import run_packs

FINDINGS = (
    Finding("vision", "train.py", 3, 5, "NPU002", "dataset-batch-drop-remainder", "migrated",
            "added drop_remainder=True"),
    Finding("vision", "serve/infer.py", 9, 0, "NPU100", "api-support", "unmigrated",
            "support on Ascend is not established", snippet="  9 > x = tf.foo()", level="note"),
)
SPLIT = RepoResult(
    repo="vision", status="changed", location="https://***@git.example.com/org/vision.git",
    branch="npu/sess", base="a" * 40, commit="b" * 40, files_changed=("train.py",),
    files_scanned=4, files_skipped=1, files_cached=2, notes=("a note",), uncommitted=1, pushed=True,
    pr_url="https://git.example.com/org/vision/pull/7",
    groups=(ChangeGroup("org-vision", ("@org/vision",), ("train.py",), ("train.py", "serve/infer.py"),
                        "npu/sess/org-vision", "c" * 40),),
    pull_requests=(PullRequestRecord("npu/sess/org-vision", "org-vision", "created",
                                     "https://git.example.com/org/vision/pull/7", 7, forge="github",
                                     remote_url="https://git.example.com/org/vision.git",
                                     slug="org/vision", reviewers=("@org/vision",)),),
    verify=VerifyRecord("violations", "1 NPU constraint broken", "python train.py",
                        violations=("no NpuOptimizer",), details=("line 1", "line 2")),
    findings=FINDINGS,
    api_sites=(ApiSites("tf.foo", "under-analysis", False, 1),),
    file_kinds={"tf1": 3, "non-tf": 1},
)


def as_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def test_a_repository_record_reads_back_as_it_was_written() -> None:
    written = as_json(SPLIT.to_dict())
    typed = RepoResult.from_dict(written)
    assert as_json(typed.to_dict()) == written
    assert typed.findings[1].level == "note" and typed.findings[1].snippet == "  9 > x = tf.foo()"
    assert typed.merge == SPLIT.merge and typed.sites == SPLIT.sites


def test_the_run_reads_back_with_its_rules_and_packs() -> None:
    plugins = load_plugins()
    rules = [rule for rule in plugins.rules() if rule.id in {"NPU002", "NPU100"}]
    run = as_json(build_run_record("run", {"verify": True}, rules, [SPLIT.to_dict()], "t0", plugins))
    record = RunRecord.of(run)
    assert [rule.to_dict() for rule in record.rules] == run["rules"]
    assert [pack.to_dict() for pack in record.packs or ()] == run["packs"]
    assert (record.id, record.command, record.started, record.option("verify")) == (run["id"], "run", "t0", True)
    assert [repo.repo for repo in record.repos] == ["vision"] and len(record.repos) == 1
    assert RunRecord.of(record) is record


def test_a_record_older_than_packs_kinds_audit_and_verify_still_reads() -> None:
    old = {"started": "t0", "finished": "t1", "command": "scan",
           "rules": [{"id": "NPU002", "name": "dataset-batch-drop-remainder"}],
           "repos": [{"repo": "alexnet", "status": "unchanged",
                      "findings": [{key: value for key, value in FINDINGS[0].to_dict().items()
                                    if key not in ("snippet", "trace", "level")}]}]}
    record = RunRecord.of(old)
    repo = record.repos[0]
    assert (record.id, record.packs, record.interrupted) == ("", None, False)
    assert (repo.files_skipped, repo.api_sites, repo.verify, repo.file_kinds) == (0, (), None, {})
    assert repo.api_readiness is None and repo.sites.migrated == 1
    assert [(pack.name, pack.on, pack.rules) for pack in run_packs(record)] == [("-", True, ("NPU002",))]
