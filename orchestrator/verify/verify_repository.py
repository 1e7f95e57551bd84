"""One repository's verification: export both commits, run the command in each, judge.

Called in a worker: by ``verify`` for each repository of the list (the migration branch as
an earlier ``run`` left it), and by ``run --verify`` once a repository is committed.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Optional, Protocol

import git

from npu_codemod.codemods.built_models import model_facts
from npu_codemod.codemods.names import IMPORTS_TF
from npu_codemod.codemods.tf_model_idioms import pending_fact, trained_files
from npu_codemod.codemods.tf_runtime import decide, is_manifest
from npu_codemod.codemods.tf_versions import CODE_E_ONLY, RUNTIME_TF2, RUNTIME_UNKNOWN, signals_of
from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.workspace import Workspace
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.repolist import RepoEntry
from npu_codemod.orchestrator.results import RepoResult
from npu_codemod.orchestrator.verify.compare import judge
from npu_codemod.orchestrator.verify.export import export_commit
from npu_codemod.orchestrator.verify.records import VerifyRecord
from npu_codemod.orchestrator.verify.requirements import RequirementsError, requirements_python
from npu_codemod.orchestrator.verify.sandbox import SideRun, run_side
from npu_codemod.orchestrator.verify.settings import VerifyOptions, VerifySettings, resolve

#: Scratch folders of verify runs, under ``--workspace``.
SCRATCH = "verify"
NO_COMMAND = ("no verify command: set command in the repository's [tool.npu-codemod.verify] "
              "(pyproject.toml), verify=\"...\" on its repo-list line, or --verify-command")


class RepoJob(Protocol):
    """What verification reads of a batch job (``batch.jobs.RepoJob`` has it): the layer
    below the batch takes the values, not the batch's own type."""

    @property
    def entry(self) -> RepoEntry: ...
    @property
    def workspace(self) -> str: ...
    @property
    def branch(self) -> str: ...
    @property
    def verify(self) -> Optional[VerifyOptions]: ...
    @property
    def mode(self) -> str: ...
    @property
    def dry_run(self) -> bool: ...


def verify_job(job: RepoJob) -> RepoResult:
    """``npu-codemod verify``: the base against the tip of ``job.branch`` (the base itself,
    with a note, when there is no such branch)."""
    entry = job.entry
    repo = Workspace(job.workspace).open(entry)
    base = gitrepo.resolve_commit(repo, entry.base_ref)
    tip = gitrepo.branch_tip(repo, job.branch)
    notes = () if tip else (f"no branch {job.branch}: the base is verified as it is",)
    record = verify_commits(repo, job, base, tip or base)
    return RepoResult(repo=entry.name, status="unchanged", location=mask_secrets(entry.location),
                      branch=job.branch if tip else None, base=base, commit=tip, notes=notes,
                      verify=record)


def verify_result(job: RepoJob, result: RepoResult) -> RepoResult:
    """``run --verify``: the result of a committed repository, with its verification."""
    if job.verify is None or job.mode != "run" or job.dry_run or result.status == "failed" \
            or not result.base:
        return result
    repo = Workspace(job.workspace).open(job.entry)
    return result.with_changes(verify=verify_commits(repo, job, result.base, result.commit or result.base))


def verify_commits(repo: git.Repo, job: RepoJob, base: str, commit: str) -> VerifyRecord:
    """Run the command at ``base`` and at ``commit``, each in its own scratch folder (removed
    after), and judge."""
    root = Path(job.workspace, SCRATCH)
    root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="verify-", dir=root))
    try:
        original_dir = export_commit(repo, base, scratch / "original" / "repo")
        try:
            settings = resolve(job.verify or VerifyOptions(), job.entry.option("verify"), original_dir)
        except ValueError as exc:
            return VerifyRecord("inconclusive", reason=str(exc), base=base, commit=commit)
        if settings.command is None:
            return VerifyRecord("no-command", reason=NO_COMMAND, base=base, commit=commit)
        try:
            python = requirements_python(original_dir) if settings.requirements else None
        except RequirementsError as exc:
            return _masked(VerifyRecord("inconclusive", reason=str(exc), base=base, commit=commit))
        settings = replace(settings, tensorflow=repository_tensorflow(
            original_dir, getattr(getattr(job, "selection", None), "tensorflow", None)))
        original = _run(settings, original_dir, scratch / "original", python)
        migrated = _migrated(repo, settings, (base, commit), original, scratch, python)
        return _masked(replace(judge(settings, original, migrated), base=base, commit=commit))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _migrated(repo: git.Repo, settings: VerifySettings, commits: tuple[str, str], original: SideRun,
              scratch: Path, python: Optional[str]) -> SideRun:
    """The migrated run; the original's when nothing changed or the original settles the
    verdict (it fails, times out or computes nothing)."""
    base, commit = commits
    if commit == base or original.failed or original.timed_out or not original.calls:
        return original
    migrated_dir = export_commit(repo, commit, scratch / "migrated" / "repo")
    return _run(settings, migrated_dir, scratch / "migrated", python)


def _run(settings: VerifySettings, folder: Path, scratch: Path, python: Optional[str]) -> SideRun:
    return run_side(settings.command or "", folder, scratch, settings.steps, settings.timeout,
                    settings.memory, settings.env, python, settings.tensorflow)


def repository_tensorflow(folder: Path, configured: Optional[str] = None) -> str:
    """The TensorFlow major version the exported repository runs ("1" or "2"), as ``run``
    decides it (``tf_runtime``): configuration, pins, then the code; code with only TF 2.x
    idioms and no pin runs as TF 2.x."""
    manifests: dict[str, str] = {}
    facts: set[str] = set()
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        if is_manifest(path.name) or path.suffix == ".py":
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if is_manifest(path.name):
                manifests[relative.as_posix()] = text
            if path.suffix == ".py" and IMPORTS_TF.search(text):
                signals = signals_of(text, relative.as_posix())
                facts |= signals.facts() | model_facts(relative.as_posix(), text)
                facts |= set(filter(None, [pending_fact(relative.as_posix(), signals)]))
    if trained_files(frozenset(facts)):  # Keras training on a model of another file's function
        facts.add(CODE_E_ONLY)
    runtime = decide(configured, manifests, facts).value
    return "2" if runtime == RUNTIME_TF2 or (runtime == RUNTIME_UNKNOWN and CODE_E_ONLY in facts) else "1"


def _masked(record: VerifyRecord) -> VerifyRecord:
    """``record`` with every text through the secret masking: most of them come from the
    repository's processes (errors, output, paths), on their way to reports and PR bodies."""
    def texts(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(mask_secrets(value) for value in values)

    return replace(record, reason=mask_secrets(record.reason), evidence=mask_secrets(record.evidence),
                   command=mask_secrets(record.command) if record.command else record.command,
                   details=texts(record.details), violations=texts(record.violations),
                   original_violations=texts(record.original_violations))
