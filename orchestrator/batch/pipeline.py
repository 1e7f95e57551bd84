"""One repository, start to end: read files at the base, rewrite, commit, push. Never raises.

Runs inside worker processes; every step returns a record for every outcome, including
failures, so one bad repository never stops the batch. The steps (:func:`start_repo`,
:func:`shard_facts`, :func:`process_shard`, :func:`finish_repo`) let the runner spread a
large repository over several workers, its repository-wide analysis too; :func:`process_repo`
runs them one after the other, and gives the same result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable, Iterable, Iterator, Optional, Sequence, TypeVar, Union

import git

from npu_codemod.codemods.api_sites import merge_sites
from npu_codemod.codemods.engine import FILE_RULE, file_finding
from npu_codemod.codemods.excerpts import with_snippets
from npu_codemod.codemods.file_kinds import NOTEBOOK, SYMLINK, is_test_file, notebook_uses_tensorflow
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.sites import SiteCounts, rule_sites, settle
from npu_codemod.codemods.source import UndecodableSource, decode_source, source_text, user_code_warnings_off
from npu_codemod.codemods.standalone_keras import keras_findings
from npu_codemod.codemods.star_imports import star_findings
from npu_codemod.codemods.tf_scopes import code_folders, decided_facts
from npu_codemod.codemods.tf_versions import KINDS, NON_TF
from npu_codemod.codemods.tflearn_sessions import tflearn_findings
from npu_codemod.orchestrator.batch.analysis_cache import CachedAnalysis, cached_analysis
from npu_codemod.orchestrator.batch.file_cache import cached_engine
from npu_codemod.orchestrator.batch.group_branches import commit_groups
from npu_codemod.orchestrator.batch.jobs import (
    FileChange,
    RepoJob,
    RepoPlan,
    ShardedRepo,
    ShardOutput,
    new_blobs,
)
from npu_codemod.orchestrator.batch.repo_locks import lock_branch, unlock_branch
from npu_codemod.orchestrator.batch.shards import MIN_SHARD_FILES, split_files
from npu_codemod.orchestrator.git import repository as gitrepo
from npu_codemod.orchestrator.git.base_branch import Base, check_push_target, resolve_base
from npu_codemod.orchestrator.git.branch_reuse import (
    OWN_COMMIT_MARK,
    TipState,
    build_point,
    tip_state,
    undone_note,
    unexplained,
    unexplained_note,
)
from npu_codemod.orchestrator.git.credentials import split_credentials
from npu_codemod.orchestrator.git.file_patch import file_patch
from npu_codemod.orchestrator.git.repository import GitError, NoSuchRemote, PyFile
from npu_codemod.orchestrator.git.workspace import Workspace
from npu_codemod.orchestrator.loaded_rules import (
    LoadedRules,
    RepoAnalysis,
    RuleSelection,
    load_rules,
    may_give_file_facts,
)
from npu_codemod.orchestrator.redact import mask_secrets
from npu_codemod.orchestrator.results import RepoResult, failed
from npu_codemod.orchestrator.verify.records import VerifyRecord


def process_repo(job: RepoJob) -> RepoResult:
    """Process one repository in this process; every failure is a ``failed`` result."""
    result = start_repo(job, workers=1)
    assert isinstance(result, RepoResult)  # one worker: never split into shards
    return result


def start_repo(job: RepoJob, workers: int = 1, shard_analysis: bool = False
               ) -> Union[RepoResult, ShardedRepo]:
    """Open (or fetch) the repository and plan it; finish here unless it has more files than
    one worker should take, then hand back the shards for ``workers`` workers. With
    ``shard_analysis``, the shards of such a repository come back not analysed yet
    (``ShardedRepo.unanalysed``): the workers analyse them (:func:`shard_facts`) first."""
    entry = job.entry
    if entry.error:
        return failed(entry, entry.error)
    if job.mode == "verify":
        from npu_codemod.orchestrator.verify.verify_repository import verify_job  # see _verified

        return _guarded(job, lambda: verify_job(job))
    outcome = _guarded(job, lambda: _start(job, workers, shard_analysis))
    if isinstance(outcome, RepoResult):  # a large repository keeps the lock until its finish
        unlock_branch(job)
        return _verified(job, outcome)
    return outcome


def shard_facts(plan: RepoPlan, files: Sequence[PyFile]) -> Union[RepoAnalysis, RepoResult]:
    """The repository-wide analysis of one slice of a repository's files; :func:`with_shard_facts`
    joins the slices' into the plan."""
    def gather() -> RepoAnalysis:
        blobs = gitrepo.read_blobs(gitrepo.open_repo(plan.path), list(files))
        loaded_rules = load_rules(plan.job.selection)
        return loaded_rules.files_facts(((file.path, data) for file, data in blobs), plan.job.entry.name,
                                        _analysis(plan.job))

    return _guarded(plan.job, gather)


def with_shard_facts(sharded: ShardedRepo, parts: Sequence[RepoAnalysis]) -> ShardedRepo:
    """``sharded`` (not analysed yet) with the facts and findings of its shards' analyses
    ``parts`` (in shard order): the plan one pass over all its files gives."""
    joined = RepoAnalysis.joined(parts)
    plan = sharded.plan
    facts, found = runtime_facts(plan, joined.facts | plan.facts)  # plan.facts: files no rule acts on
    plan = replace(plan, facts=facts,
                   findings=plan.findings + joined.findings + found + (sharded.unanalysed or ()))
    return ShardedRepo(plan, sharded.shards)


def runtime_facts(plan: RepoPlan, facts: frozenset[str]) -> tuple[frozenset[str], tuple[Finding, ...]]:
    """``facts`` with the repository's TensorFlow runtime (``tf_runtime``), and its findings, with
    those of files that use TensorFlow only through a star import (``star_imports``) or train
    with standalone Keras (``standalone_keras``) or through tflearn (``tflearn_sessions``)."""
    decided, messages = decided_facts(plan.job.selection.tensorflow, dict(plan.manifests), facts,
                                      code=plan.code_folders)
    repo, enabled = plan.job.entry.name, load_rules(plan.job.selection).engine.enabled
    found = tuple(message.finding(repo, FILE_RULE) for message in messages
                  if message.rule is None or message.rule[0] in enabled)  # a program's: NPU061 runs
    found += tuple(file_finding(repo, path, "unmigrated", message, line)
                   for path, line, message in [*star_findings(facts, _blob_reader(plan)),
                                               *keras_findings(facts, decided),
                                               *tflearn_findings(facts, decided)])
    return decided, found


def _blob_reader(plan: RepoPlan) -> Callable[[str], Optional[str]]:
    """The text of a ``.py`` file of the planned commit by its path (None: none, or not
    decodable), read when asked: the analysis asks only for the modules a file that imports
    no TensorFlow star-imports, which few repositories have."""
    files: dict[str, PyFile] = {}

    def read(path: str) -> Optional[str]:
        repo = gitrepo.open_repo(plan.path)
        try:
            if not files:
                files.update({file.path: file for file in gitrepo.python_files(repo, plan.source)})
            file = files.get(path)
            if file is None:
                return None
            data = next(gitrepo.read_blobs(repo, [file]))[1]
        finally:
            repo.close()
        return source_text(data)
    return read


def manifest_texts(repo: git.Repo, listing: gitrepo.PythonListing) -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of the files that may pin TensorFlow (unreadable ones left out)."""
    texts = []
    for file, data in gitrepo.read_blobs(repo, listing.manifests):
        try:
            texts.append((file.path, decode_source(data).text))
        except UndecodableSource:
            continue
    return tuple(texts)


def process_shard(plan: RepoPlan, files: Sequence[PyFile]) -> Union[ShardOutput, RepoResult]:
    """Run the rules over one slice of a planned repository's files."""
    return _guarded(plan.job, lambda: _process_files(gitrepo.open_repo(plan.path), plan, files))


def finish_repo(plan: RepoPlan, outputs: Sequence[ShardOutput]) -> RepoResult:
    """Join the shards (in order) into one result: commit, move the branch, push."""
    try:
        result = _guarded(plan.job, lambda: _finish(gitrepo.open_repo(plan.path), plan, outputs))
    finally:
        unlock_branch(plan.job)
    return _verified(plan.job, result)


def _verified(job: RepoJob, result: RepoResult) -> RepoResult:
    """``run --verify``: the committed result with its verdict; a verification that cannot
    start is ``inconclusive``, naming why (the migration itself stands)."""
    if job.verify is None:
        return result
    # Imported by the runs that verify: the sandbox and comparison are not start-up's cost.
    from npu_codemod.orchestrator.verify.verify_repository import verify_result

    try:
        return verify_result(job, result)
    except Exception as exc:  # the export or the sandbox: one repository's problem
        reason = str(exc) if isinstance(exc, GitError) else f"{type(exc).__name__}: {exc}"
        return result.with_changes(verify=VerifyRecord("inconclusive", reason=mask_secrets(
            f"verify could not run: {reason}"), base=result.base, commit=result.commit))


T = TypeVar("T")


def _guarded(job: RepoJob, step: Callable[[], T]) -> Union[T, RepoResult]:
    """``step``'s value (Python's warnings about the user's code not printed), or the
    repository's failure if it raised."""
    entry = job.entry
    try:
        with user_code_warnings_off():
            return step()
    except GitError as exc:
        return failed(entry, str(exc))
    except Exception as exc:  # a bug must cost one repo, not the batch
        return failed(entry, f"internal error: {type(exc).__name__}: {mask_secrets(str(exc))}")


def _start(job: RepoJob, workers: int, shard_analysis: bool = False) -> Union[RepoResult, ShardedRepo]:
    entry = job.entry
    loaded_rules = load_rules(job.selection)
    repo, chosen = _open(job)
    base = chosen.commit
    # A split change is always built from the base: each group has its own branch.
    tip = gitrepo.branch_tip(repo, job.branch) if job.mode == "run" and not job.split_by else None
    point = build_point(repo, base, tip)
    if chosen.note:  # HEAD was the migration branch: say which base was taken
        point = replace(point, notes=(chosen.note, *point.notes))
    listing = gitrepo.python_listing(repo, point.source)
    files, skipped = without_tests(listing.files, job.include_tests)
    links, skipped_links = without_tests(listing.links, job.include_tests)
    notebooks, skipped_notebooks = without_tests(listing.notebooks, job.include_tests)
    not_followed = tuple(file_finding(entry.name, link.path, "unmigrated", SYMLINK) for link in links)
    not_followed += _notebook_findings(repo, entry.name, notebooks)
    manifests = manifest_texts(repo, listing)
    plan = RepoPlan(job=job, path=gitrepo.top_dir(repo), base=base, tip=tip,
                    source=point.source, parent=point.parent, files_scanned=len(files),
                    files_skipped=skipped + skipped_links + skipped_notebooks, facts=frozenset(),
                    notes=point.notes, uncommitted=_uncommitted(repo, job), manifests=manifests,
                    code_folders=code_folders(dict(manifests), (file.path for file in listing.files)))
    if shard_analysis and workers > 1 and len(files) > MIN_SHARD_FILES:
        candidates, other_facts = _split_wanted(repo, files, loaded_rules)
        shards = split_files(candidates, workers)
        if len(shards) > 1:  # the workers analyse the shards first, this process the other files
            plan = replace(plan, findings=loaded_rules.broken_findings(entry.name),
                           facts=other_facts)
            return ShardedRepo(plan, tuple(shards), unanalysed=not_followed)
        analysis = loaded_rules.repository_facts(((file.path, data) for file, data in
                                    gitrepo.read_blobs(repo, candidates)), entry.name, _analysis(job))
    else:
        candidates, other_facts = [], frozenset()
        analysis = loaded_rules.repository_facts(_wanted(repo, files, loaded_rules, candidates), entry.name,
                                                 _analysis(job))
        shards = split_files(candidates, workers)
    facts, found = runtime_facts(plan, analysis.facts | other_facts)
    plan = replace(plan, facts=facts, findings=analysis.findings + found + not_followed)
    if len(shards) > 1:
        return ShardedRepo(plan, tuple(shards))
    return _finish(repo, plan, [_process_files(repo, plan, shards[0])])


def _analysis(job: RepoJob) -> CachedAnalysis:
    """The job's per-file analysis, behind the result cache unless ``--no-cache``."""
    return cached_analysis(job.selection, job.workspace if job.cache else None)


def _notebook_findings(repo: git.Repo, name: str, notebooks: list[PyFile]) -> tuple[Finding, ...]:
    """One file-level finding per notebook that uses TensorFlow: notebooks are not migrated."""
    return tuple(file_finding(name, file.path, "unmigrated", NOTEBOOK)
                 for file, data in gitrepo.read_blobs(repo, notebooks) if notebook_uses_tensorflow(data))


def _uncommitted(repo: git.Repo, job: RepoJob) -> int:
    """How many paths of a local repository's working tree are not committed (``run`` only:
    what ``scan`` reads is the same commit, and a cloned URL has no working tree)."""
    return 0 if job.entry.is_url or job.mode != "run" else gitrepo.uncommitted_paths(repo, gitrepo.resolve_commit(repo, None))


def _uncommitted_note(plan: RepoPlan) -> tuple[str, ...]:
    if not plan.uncommitted:
        return ()
    return (f"{plan.uncommitted} uncommitted change(s) in the working tree are not part of the "
            f"migration: the branch is built from the committed base {plan.base[:12]}",)


def _wanted(repo: git.Repo, files: list[PyFile], loaded_rules: LoadedRules,
            candidates: list[PyFile]) -> Iterator[tuple[str, bytes]]:
    """(path, data) of the ``files`` a rule could act on, each added to ``candidates`` as it
    goes: one blob in memory at a time; with NPU061 on, every other file too (for the import
    graph of the repository's programs), not added to ``candidates``."""
    graph = loaded_rules.engine.reads_programs
    for file, data in gitrepo.read_blobs(repo, files):
        if loaded_rules.engine.wants(data):
            candidates.append(file)
            yield file.path, data
        elif graph or may_give_file_facts(file.path, data):
            yield file.path, data


def _split_wanted(repo: git.Repo, files: list[PyFile], loaded_rules: LoadedRules
                  ) -> tuple[list[PyFile], frozenset[str]]:
    """The ``files`` a rule could act on, and (with NPU061 on) the facts of the others: links of
    the import graph that no worker reads (one blob in memory at a time)."""
    candidates: list[PyFile] = []

    def others() -> Iterator[tuple[str, bytes]]:
        for file, data in gitrepo.read_blobs(repo, files):
            if loaded_rules.engine.wants(data):
                candidates.append(file)
            elif loaded_rules.engine.reads_programs or may_give_file_facts(file.path, data):
                yield file.path, data

    facts = loaded_rules.files_facts(others()).facts
    return candidates, facts


def _open(job: RepoJob) -> tuple[git.Repo, Base]:
    """The repository and its base commit, the branch locked; a path or base ref the list
    gives that does not work is a GitError citing the list's file:line."""
    entry = job.entry
    if entry.is_url:  # before the fetch, which moves the clone's branches
        lock_branch(job)
        repo = Workspace(job.workspace).open(entry)
    else:
        try:
            repo = gitrepo.open_repo(entry.location)
        except GitError as exc:
            raise GitError(entry.cite(str(exc))) from None
        lock_branch(job, str(repo.common_dir))
    try:
        base = resolve_base(repo, entry.base_ref, job.branch, job.remote)
    except GitError as exc:
        raise GitError(entry.cite(str(exc)) if entry.base_ref else str(exc)) from None
    if job.push and job.mode == "run" and not job.dry_run:
        check_push_target(repo, job.branch, base, job.remote)
    return repo, base


def without_tests(files: Sequence[PyFile], include_tests: bool) -> tuple[list[PyFile], int]:
    """``files`` less the test files (unless ``include_tests``), and how many those were."""
    if include_tests:
        return list(files), 0
    kept = [file for file in files if not is_test_file(file.path)]
    return kept, len(files) - len(kept)


def _process_files(repo: git.Repo, plan: RepoPlan, files: Sequence[PyFile]) -> ShardOutput:
    job = plan.job
    engine = cached_engine(job.selection, job.workspace if job.cache else None)
    findings: list[Finding] = []
    changes: list[FileChange] = []
    api_sites = []
    kinds: list[str] = []
    for file, data in gitrepo.read_blobs(repo, list(files)):
        outcome = engine.process(data, file.path, repo=job.entry.name, facts=plan.facts)
        kinds.append(outcome.kind)
        findings.extend(with_snippets(outcome.findings, data))
        api_sites.append(outcome.api_sites)
        if outcome.new_data is None:
            continue
        if job.mode == "scan":
            changes.append(FileChange(file))
        elif job.dry_run:  # the blob's id only (nothing is stored), to compare with the tip
            changes.append(FileChange(file, blob=gitrepo.blob_id(outcome.new_data),
                                      patch=file_patch(file.path, file.mode, data, outcome.new_data)))
        else:
            changes.append(FileChange(file, blob=gitrepo.store_blob(repo, outcome.new_data)))
    return ShardOutput(tuple(findings), tuple(changes), files_cached=engine.hits,
                       api_sites=merge_sites(api_sites), kinds=tuple(kinds))


def _finish(repo: git.Repo, plan: RepoPlan, outputs: Sequence[ShardOutput]) -> RepoResult:
    job, entry = plan.job, plan.job.entry
    findings = settle(list(plan.findings) + [f for output in outputs for f in output.findings],
                      not_sites(job.selection))
    changes = sorted((c for output in outputs for c in output.changes), key=lambda c: c.file.path)
    # A rerun: the branch already holds every new content, and nothing else. The files stay
    # listed (as a split change's groups do): they are what the branch changes, for its PR and
    # pr-files.csv.
    state = tip_state(repo, plan.source, plan.tip, new_blobs(changes)) if job.mode == "run" \
        else TipState()
    held = state.held and plan.parent == plan.tip  # a branch to rebuild on a moved base is not
    undone = state.undone if plan.tip is not None and plan.parent == plan.tip != plan.source else ()
    result = RepoResult(
        repo=entry.name,
        status="unchanged",
        location=mask_secrets(entry.location),
        branch=job.branch if plan.tip else None,
        base=plan.base,
        commit=plan.tip,
        files_changed=tuple(change.file.path for change in changes),
        files_scanned=plan.files_scanned,
        files_skipped=plan.files_skipped,
        files_cached=sum(output.files_cached for output in outputs),
        notes=plan.notes + _branch_notes(repo, plan, findings, changes) + _uncommitted_note(plan),
        uncommitted=plan.uncommitted,
        findings=tuple(sorted(findings, key=lambda f: (f.path, f.line, f.column, f.rule_id))),
        api_sites=merge_sites(output.api_sites for output in outputs),
        file_kinds=kind_counts((kind for output in outputs for kind in output.kinds),
                               plan.files_scanned),
    )
    if job.dry_run and changes:  # after a real run too: the patch of the branch's content
        note = "dry run: the branch already holds this change" if held else \
            "dry run: nothing was committed"
        return result.with_changes(status="unchanged" if held else "changed",
                                   notes=result.notes + (note,),
                                   patch="".join(c.patch or "" for c in changes))
    if held or not (changes or undone) or job.dry_run:
        return _push(repo, plan, result)
    if job.mode == "scan":
        return result.with_changes(notes=result.notes + ("scan: nothing was written",))
    if job.split_by:
        return _push(repo, plan, commit_groups(repo, job, plan.base, result, changes, findings,
                                               commit_message))
    message = commit_message(findings)
    commit = gitrepo.commit_blobs(repo, plan.parent, new_blobs(changes), message, tree_of=plan.source)
    gitrepo.update_branch(repo, job.branch, commit, plan.tip)
    notes = result.notes + ((undone_note(undone),) if undone else ())
    return _push(repo, plan, result.with_changes(status="changed", branch=job.branch, commit=commit,
                                                 notes=notes))


def _branch_notes(repo: git.Repo, plan: RepoPlan, findings: Sequence[Finding],
                  changes: Sequence[FileChange]) -> tuple[str, ...]:
    """The warning of a branch others committed to (built on as it is): the files it changes
    that this run's findings and changes do not explain."""
    if plan.job.mode != "run" or plan.tip is None or plan.source != plan.tip or plan.tip == plan.base:
        return ()
    explained = [f.path for f in findings] + [c.file.path for c in changes]
    paths = unexplained(repo, plan.base, plan.tip, explained)
    return (unexplained_note(paths),) if paths else ()


def kind_counts(kinds: Iterable[str], files: int) -> dict[str, int]:
    """Files per kind (``tf_versions.KINDS`` order): ``kinds`` of the files the engine looked
    at (""  for none), the rest of the ``files`` scanned ``non-tf``."""
    counts = Counter(kind for kind in kinds if kind)
    counts[NON_TF] = files - sum(counts.values())
    return {kind: counts[kind] for kind in KINDS if counts[kind] > 0}


def _push(repo: git.Repo, plan: RepoPlan, result: RepoResult) -> RepoResult:
    """With ``--push``, push the branch, or each group's (also when unchanged: a rerun pushes
    what an interrupted run committed); no such remote keeps them local, a rejection fails the
    repo, naming a group's branch."""
    job = plan.job
    branches = [g.branch for g in result.groups if g.branch] if job.split_by else \
        [result.branch] if result.branch else []
    if not job.push or job.mode != "run" or job.dry_run or not branches:
        return result
    # A cloned URL's cache knows its remote without the credentials the list gave.
    access = split_credentials(job.entry.location)[1] if job.entry.is_url else None
    for branch in branches:
        try:
            gitrepo.push_branch(repo, job.remote, branch, job.force_push, access)
        except NoSuchRemote as exc:
            return result.with_changes(notes=result.notes + (f"{exc}: nothing was pushed, the "
                                                             "branch is kept locally",))
        except GitError as exc:
            rebuilt = plan.tip is not None and plan.parent != plan.tip
            hint = "; the branch was rebuilt on a new base: rerun with --force-push" if rebuilt else ""
            where = f"{branch}: " if job.split_by else ""
            return result.with_changes(status="failed", error=f"{where}{exc}{hint}")
    return result.with_changes(pushed=True)


def not_sites(selection: RuleSelection) -> frozenset[str]:
    """Ids of the selected rules whose findings are no sites (``Rule.counts_sites``)."""
    return frozenset(rule.id for rule in load_rules(selection).rules if not rule.counts_sites)


def commit_message(findings: list[Finding]) -> str:
    """Subject plus the sites each rule rewrote (not those already in NPU form), and what is
    left for a person (the reports' "left")."""
    migrated = rule_sites(findings)
    left = SiteCounts.of_findings(findings).left
    lines = ["Migrate TensorFlow sess.run training code to Ascend NPU", "",
             f"{OWN_COMMIT_MARK} (sites per rule):"]
    lines += [f"- {rule_id} {name}: {count}" for (rule_id, name), count in sorted(migrated.items())]
    if left:
        lines += ["", f"{left} site(s) still need a person: see the npu-codemod report."]
    return "\n".join(lines) + "\n"
