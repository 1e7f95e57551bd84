"""One repository, start to end: read files at the base, rewrite, commit. Never raises.

Runs inside worker processes; it returns a :class:`RepoResult` record for every outcome,
including failures, so one bad repository never stops the batch.
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Literal, Optional

from npu_codemod.codemods.excerpts import with_snippets
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.source import UndecodableSource, decode_source

from . import gitrepo
from .gitrepo import GitError, PyFile
from .redact import mask_secrets
from .repolist import RepoEntry
from .results import RepoResult, failed
from .toolkit import RuleSelection, Toolkit, build_toolkit
from .workspace import Workspace

Mode = Literal["run", "scan"]
DEFAULT_BRANCH = "npu-codemod/sess-run-to-npu"


@dataclass(frozen=True)
class RepoJob:
    """Everything a worker needs to process one repository (picklable)."""

    entry: RepoEntry
    mode: Mode = "run"
    branch: str = DEFAULT_BRANCH
    dry_run: bool = False
    workspace: str = ".npu-codemod"
    selection: RuleSelection = RuleSelection()


def process_repo(job: RepoJob) -> RepoResult:
    """Process one repository; every failure becomes a ``failed`` result with its reason."""
    entry = job.entry
    if entry.error:
        return failed(entry.name, entry.error, entry.location)
    try:
        return _process(job, build_toolkit(job.selection))
    except GitError as exc:
        return failed(entry.name, str(exc), mask_secrets(entry.location))
    except Exception as exc:  # a bug must cost one repo, not the batch
        return failed(entry.name, f"internal error: {type(exc).__name__}: {mask_secrets(str(exc))}",
                      mask_secrets(entry.location))


def _process(job: RepoJob, toolkit: Toolkit) -> RepoResult:
    entry = job.entry
    repo = Workspace(job.workspace).open(entry)
    gitrepo.check_branch_name(repo, job.branch)
    base = gitrepo.resolve_commit(repo, entry.base_ref)
    tip = gitrepo.branch_tip(repo, job.branch) if job.mode == "run" else None
    source = tip or base
    contents = dict(gitrepo.read_blobs(repo, gitrepo.python_files(repo, source)))
    analysis = toolkit.analyze(((file.path, data) for file, data in contents.items()), entry.name)
    facts = analysis.facts
    findings: list[Finding] = list(analysis.findings)
    changes: dict[PyFile, bytes] = {}
    for file, data in contents.items():
        outcome = toolkit.engine.process(data, file.path, repo=entry.name, facts=facts)
        findings.extend(with_snippets(outcome.findings, data))
        if outcome.new_data is not None:
            changes[file] = outcome.new_data
    result = RepoResult(
        repo=entry.name,
        status="unchanged",
        location=mask_secrets(entry.location),
        branch=job.branch if tip else None,
        base=base,
        commit=tip,
        files_changed=tuple(sorted(file.path for file in changes)),
        files_scanned=len(contents),
        findings=tuple(sorted(findings, key=lambda f: (f.path, f.line, f.column, f.rule_id))),
    )
    if not changes:
        return result
    if job.mode == "scan":
        return result.with_changes(notes=("scan: nothing was written",))
    if job.dry_run:
        return result.with_changes(status="changed", patch=make_patch(contents, changes),
                                   notes=("dry run: nothing was committed",))
    message = commit_message(findings)
    commit = gitrepo.commit_files(repo, source, changes, message)
    gitrepo.update_branch(repo, job.branch, commit, tip)
    return result.with_changes(status="changed", branch=job.branch, commit=commit)


def commit_message(findings: list[Finding]) -> str:
    """Subject plus the rules applied with their counts, and what is left for a person."""
    migrated = Counter((f.rule_id, f.rule_name) for f in findings if f.status == "migrated")
    left = sum(1 for f in findings if f.status == "unmigrated")
    lines = ["Migrate TensorFlow sess.run training code to Ascend NPU", "",
             "Applied by npu-codemod (sites per rule):"]
    lines += [f"- {rule_id} {name}: {count}" for (rule_id, name), count in sorted(migrated.items())]
    if left:
        lines += ["", f"{left} site(s) still need a person: see the npu-codemod report."]
    return "\n".join(lines) + "\n"


def make_patch(contents: dict[PyFile, bytes], changes: dict[PyFile, bytes]) -> str:
    """A ``git apply``-able unified diff of the changes (text decoded with each file's codec)."""
    parts = []
    for file, new in sorted(changes.items(), key=lambda item: item[0].path):
        old_text, new_text = _text(contents[file]), _text(new)
        parts.extend(difflib.unified_diff(
            old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
            f"a/{file.path}", f"b/{file.path}",
        ))
    return "".join(parts)


def _text(data: bytes) -> str:
    try:
        return decode_source(data).text
    except UndecodableSource:
        return data.decode("latin-1")
