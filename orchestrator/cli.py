"""``npu-codemod``: the command line, from which the whole data flow reads top-down.

repo list -> per-repo jobs -> runner (pool) -> results -> run record -> reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from tqdm import tqdm

from npu_codemod import __version__
from npu_codemod.codemods.rule_settings import SettingsError
from npu_codemod.plugins.discovery import missing_reference
from npu_codemod.plugins.manager import PluginError, Plugins, PluginSpec, load_plugins

from npu_codemod.orchestrator.batch.options import OptionError, add_executor_options, add_push_options, make_pool, only_failed
from npu_codemod.orchestrator.check import add_arguments as add_check_arguments
from npu_codemod.orchestrator.config import ConfigError, find_config, freeze_rule_settings, read_config
from npu_codemod.orchestrator.git.repository import GitError, check_branch_name
from npu_codemod.orchestrator.batch.interrupts import Terminated, interrupt_exit_code, sigterm_as_interrupt
from npu_codemod.orchestrator.batch.pipeline import DEFAULT_BRANCH, RepoJob
from npu_codemod.orchestrator.prs.options import add_pr_options, pr_settings
from npu_codemod.orchestrator.prs.publish import PrSettings, Publisher
from npu_codemod.orchestrator.redact import mask_record, mask_secrets
from npu_codemod.orchestrator.repolist import read_repo_list
from npu_codemod.orchestrator.batch.file_cache import cache_problem
from npu_codemod.orchestrator.batch.spool import ResultSpool
from npu_codemod.orchestrator.results import RepoResult, failed
from npu_codemod.orchestrator.run_record import build_run_record, now
from npu_codemod.orchestrator.batch.runner import run_jobs
from npu_codemod.orchestrator.summary_table import RepoLine, print_summary
from npu_codemod.orchestrator.toolkit import RuleSelection, Toolkit, build_toolkit

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: The error of a repository an interrupted run did not finish.
INTERRUPTED = "interrupted before it finished: rerun, or rerun with --only-failed RUN_JSON"


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit code 2."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    references = _plugin_references(argv)
    for reference in references:  # a typo on the command line is a usage error, not a warning
        problem = missing_reference(reference)
        if problem:
            print(f"npu-codemod: error: --plugin {reference}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    # Plugins may add options (npu_codemod_add_options), so they load before parsing.
    parser = build_parser(load_plugins(PluginSpec(extra=references)))
    args = parser.parse_args(argv)
    try:
        with sigterm_as_interrupt():
            return args.handler(args)
    except (UsageError, OptionError, PluginError, ConfigError, SettingsError) as exc:
        print(f"npu-codemod: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `npu-codemod rules | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt as exc:
        how = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"npu-codemod: {how}; rerun (or rerun with --only-failed RUN_JSON) to complete "
              "the remaining repositories", file=sys.stderr)
        return interrupt_exit_code(exc)


def _plugin_references(argv: Sequence[str]) -> tuple[str, ...]:
    """The ``--plugin`` values, read before the real parse (like pytest's ``-p``)."""
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--plugin", action="append", default=[])
    return tuple(early.parse_known_args(argv)[0].plugin)


def build_parser(plugins: Optional[Plugins] = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npu-codemod",
        description="Migrate TensorFlow 1.x sess.run training repositories to Ascend NPUs.",
    )
    parser.add_argument("--version", action="version", version=f"npu-codemod {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="rewrite each repo on a branch and report")
    _add_batch_options(run)
    run.add_argument("--branch", default=DEFAULT_BRANCH, help="branch to commit to (default: %(default)s)")
    run.add_argument("--dry-run", action="store_true",
                     help="commit nothing; write one .patch per repo into the report dir")
    add_push_options(run)
    add_pr_options(run)
    run.set_defaults(handler=_cmd_batch)

    scan = commands.add_parser("scan", help="report what would be migrated; change nothing")
    _add_batch_options(scan)
    scan.set_defaults(handler=_cmd_batch)

    rules = commands.add_parser("rules", help="list the available rules")
    _add_plugin_options(rules)
    _add_config_option(rules, "none: built-in defaults")
    rules.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                       help="a table for people, JSON for scripts, or the Markdown rule catalog "
                            "of docs/rules.md with every rule's example run (default: %(default)s)")
    rules.set_defaults(handler=_cmd_rules)

    report = commands.add_parser("report", help="re-render the reports from a run.json")
    report.add_argument("run_json", metavar="RUN_JSON")
    report.add_argument("--report-dir", default=None,
                        help="where to write (default: the folder of RUN_JSON)")
    _add_plugin_options(report)
    report.set_defaults(handler=_cmd_report)

    status = commands.add_parser("status", help="show the state and checks of a run's pull requests")
    status.add_argument("run_json", metavar="RUN_JSON")
    status.add_argument("--forge-url", default=None, metavar="URL", help="API root override")
    _add_plugin_options(status)
    status.set_defaults(handler=_cmd_status)

    check = commands.add_parser("check", help="lint files/folders: print sites still needing "
                                "migration, exit 1 if any (CI gate, pre-commit hook)")
    add_check_arguments(check)
    _add_include_tests_option(check)
    _add_plugin_options(check)
    _add_config_option(check, "pyproject.toml in the current folder")
    check.set_defaults(handler=_cmd_check)

    demo = commands.add_parser("demo", help="build sample TF 1.x repos in a temp dir and migrate them")
    demo.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                      help="where the reports go (default: %(default)s)")
    demo.add_argument("--keep", action="store_true", help="keep the sample repos (path is printed)")
    demo.set_defaults(handler=_cmd_demo)
    if plugins is not None:
        for name, command in commands.choices.items():
            for plugin, reason in plugins.call_each("npu_codemod_add_options",
                                                    parser=command, command=name)[1]:
                plugins.mark_broken(plugin, reason)
    return parser


def _add_plugin_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_PATH",
                        help="load a rule plugin from a module or .py file (repeatable)")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of each rule that crashes on stderr")


def _add_config_option(parser: argparse.ArgumentParser,
                       default: str = "pyproject.toml next to the repo list") -> None:
    parser.add_argument("--config", metavar="FILE", default=None,
                        help=f"TOML file with a [tool.npu-codemod] table of rule settings "
                             f"(default: {default})")


def _add_batch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repos", required=True, metavar="FILE",
                        help="repo list: one PATH_OR_URL [BASE_REF] a line; '-' reads stdin")
    parser.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                        help="where the reports go (default: %(default)s)")
    parser.add_argument("--workspace", default=".npu-codemod",
                        help="clone cache and scratch space (default: %(default)s)")
    parser.add_argument("--rules", default=None, metavar="ID,...", help="run only these rules")
    parser.add_argument("--disable-rule", action="append", default=[], metavar="ID",
                        help="do not run this rule (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                        help="parallel worker processes (default: CPU count)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every file; do not read or write the workspace's result cache")
    _add_include_tests_option(parser)
    add_executor_options(parser)
    _add_plugin_options(parser)
    _add_config_option(parser)


def _config_path(args: argparse.Namespace) -> Optional[Path]:
    # check (a pre-commit hook, a CI step) runs at the top of the repository it checks
    return find_config(getattr(args, "config", None),
                       "-" if args.command == "check" else getattr(args, "repos", None))


def _selection(args: argparse.Namespace) -> RuleSelection:
    only = frozenset(r.strip() for r in args.rules.split(",") if r.strip()) if getattr(args, "rules", None) else None
    config = _config_path(args)
    rules = read_config(config, bool(getattr(args, "config", None))).rules if config else {}
    return RuleSelection(
        plugins=PluginSpec(extra=tuple(args.plugin)),
        only=only,
        disabled=frozenset(getattr(args, "disable_rule", ())),
        settings=freeze_rule_settings(config, rules) if config else (),
        settings_source=str(config or ""),
    )


def _include_tests(args: argparse.Namespace) -> bool:
    """``--include-tests``/``--no-include-tests``, else the config's ``include_tests``."""
    if args.include_tests is not None:
        return args.include_tests
    config = _config_path(args)
    return read_config(config, False).include_tests if config else False


def _add_include_tests_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--include-tests", action=argparse.BooleanOptionalAction, default=None,
                        help="also migrate test files (test_*.py, *_test.py, conftest.py, files "
                             "under test/ or tests/), which are skipped by default (config: "
                             "include_tests = true)")


def _toolkit(selection: RuleSelection) -> Toolkit:
    """The toolkit of a command; a broken plugin is one warning and the command goes on."""
    toolkit = build_toolkit(selection)
    for broken in toolkit.plugins.broken:
        print(f"npu-codemod: warning: plugin {broken.name} is broken: {broken.reason}", file=sys.stderr)
    return toolkit


def _cmd_batch(args: argparse.Namespace) -> int:
    started = now()
    selection = _selection(args)
    toolkit = _toolkit(selection)  # validates plugins and rule ids before any work
    try:
        entries = read_repo_list(args.repos, sys.stdin.read() if args.repos == "-" else None)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read repo list {args.repos!r}: {getattr(exc, 'strerror', None) or exc}") from None
    if args.only_failed:
        entries = only_failed(entries, _read_run(args.only_failed))
    try:
        prs = pr_settings(args)
        if args.command == "run":
            check_branch_name(args.branch)
    except (ValueError, GitError) as exc:
        raise UsageError(str(exc)) from None
    cache = bool(entries) and _use_cache(args)
    include_tests = _include_tests(args)
    jobs = [
        RepoJob(entry=entry, mode=args.command, branch=getattr(args, "branch", DEFAULT_BRANCH),
                dry_run=getattr(args, "dry_run", False),
                workspace=str(Path(args.workspace).resolve()), selection=selection,
                push=getattr(args, "push", False), remote=getattr(args, "remote", "origin"),
                force_push=getattr(args, "force_push", False), split_by=getattr(args, "split_by", None),
                cache=cache, include_tests=include_tests)
        for entry in entries
    ]
    notify = _Notifier(toolkit.plugins)
    publisher = _publisher(prs, toolkit, getattr(args, "branch", DEFAULT_BRANCH))
    report_dir = _make_report_dir(Path(args.report_dir))  # before the batch: records spool there
    lines: list[Optional[RepoLine]] = [None] * len(jobs)  # by index, as repositories end

    def on_result(index: int, result: RepoResult) -> None:
        if result.status == "failed" and result.error != INTERRUPTED:  # those are in the summary
            tqdm.write(mask_secrets(f"npu-codemod: {result.repo}: {result.error}"), file=sys.stderr)
        if args.debug:
            for finding in result.findings:
                if finding.trace:
                    tqdm.write(mask_secrets(f"npu-codemod: {result.repo}: {finding.path}:"
                                            f"{finding.line}: {finding.rule_id} crashed:\n"
                                            f"{finding.trace}"), file=sys.stderr)
        if publisher is not None:
            result = publisher.publish(entries[index], result)
        record = mask_record(result.to_dict())
        try:
            spool.add(index, record)
        except OSError as exc:
            raise _cannot_write(report_dir, exc) from None
        lines[index] = RepoLine.of(result)
        if toolkit.plugins.implements("npu_codemod_repo_result"):
            notify("npu_codemod_repo_result", result=record, options=args)
        if toolkit.plugins.implements("npu_codemod_finding"):
            for finding in result.findings:
                notify("npu_codemod_finding", finding=finding)

    interrupted: Optional[KeyboardInterrupt] = None
    with _open_spool(report_dir, len(jobs)) as spool:
        try:
            with make_pool(args) as pool:
                run_jobs(jobs, pool, on_result, not args.no_progress, args.repo_timeout)
        except KeyboardInterrupt as exc:  # reports of what finished, so --only-failed resumes
            interrupted = exc
            for index, line in enumerate(lines):
                if line is None:
                    on_result(index, failed(entries[index], INTERRUPTED))
        options = {"repos": args.repos, "branch": getattr(args, "branch", None),
                   "dry_run": getattr(args, "dry_run", False), "include_tests": include_tests,
                   "rules": [r.id for r in toolkit.rules]}
        run = build_run_record(args.command, options, toolkit.rules, spool, started, toolkit.plugins)
        written = write_reports(toolkit, run, report_dir)
    print_summary(lines, sys.stderr)
    print(f"npu-codemod: reports in {report_dir} ({', '.join(p.name for p in written[:4])}, ...)",
          file=sys.stderr)
    if interrupted is not None:
        raise interrupted
    return EXIT_FAILED if any(line.status == "failed" or line.pr_failed for line in lines) else EXIT_OK


def _use_cache(args: argparse.Namespace) -> bool:
    """The workspace's result cache, unless ``--no-cache`` or Dask (SQLite's WAL needs every
    process on one host); one warning when it cannot be opened, and the run goes on without."""
    if args.no_cache or args.executor != "local":
        return False
    problem = cache_problem(str(Path(args.workspace).resolve()))
    if problem:
        print(f"npu-codemod: warning: {problem}", file=sys.stderr)
    return not problem


def _publisher(prs: Optional[PrSettings], toolkit: Toolkit, branch: str) -> Optional[Publisher]:
    """What proposes each repository's branch as it ends (``--open-prs``), or None."""
    if prs is None:
        return None
    rules = {r.id: {"name": r.name, "description": r.description, "guide_section": r.guide_section,
                    "guide_section_en": r.guide_section_en, "guide_url": r.guide_url}
             for r in toolkit.rules}
    return Publisher(prs, toolkit.plugins.pm.hook, rules, branch,
                     log=lambda line: tqdm.write(line, file=sys.stderr))


def _open_spool(report_dir: Path, count: int) -> ResultSpool:
    try:
        return ResultSpool(report_dir, count)
    except OSError as exc:
        raise _cannot_write(report_dir, exc) from None


def _make_report_dir(report_dir: Path) -> Path:
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create report dir {str(report_dir)!r}: {exc.strerror}") from None
    return report_dir


def _cannot_write(report_dir: Path, exc: OSError) -> UsageError:
    """A full disk, or a folder where a report file goes: one line naming the place."""
    where = exc.filename2 or exc.filename
    return UsageError(f"cannot write reports in {str(report_dir)!r}: {exc.strerror}"
                      + (f": {where}" if where else ""))


def write_reports(toolkit, run: dict, report_dir: Path) -> list[Path]:
    """Every report format, from the run record with its secrets masked (the one way in).
    A batch's records were masked as they were spooled; ``mask_record`` passes the spool by."""
    run = mask_record(run)
    _make_report_dir(report_dir)
    written: list[Path] = []
    notify = _Notifier(toolkit.plugins)
    try:
        for paths in notify("npu_codemod_write_report", run=run, report_dir=report_dir):
            written.extend(paths or ())
    except OSError as exc:
        raise _cannot_write(report_dir, exc) from None
    return written


class _Notifier:
    """Calls a hook on every plugin; a third-party failure is one warning, not the end of a run."""

    def __init__(self, plugins: Plugins) -> None:
        self.plugins = plugins
        self.warned: set[tuple[str, str]] = set()

    def __call__(self, hook: str, **kwargs: object) -> list:
        results, errors = self.plugins.call_each(hook, **kwargs)
        for plugin, reason in errors:
            if (plugin, hook) not in self.warned:
                self.warned.add((plugin, hook))
                tqdm.write(f"npu-codemod: warning: plugin {plugin}: {reason}", file=sys.stderr)
        return [result for _, result in results]


def _cmd_rules(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.rules_listing import print_rules

    toolkit = build_toolkit(_selection(args))
    print_rules(toolkit, args.format, sys.stdout)
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    path = Path(args.run_json)
    run = _read_run(args.run_json)
    report_dir = Path(args.report_dir) if args.report_dir else path.parent
    written = write_reports(_toolkit(_selection(args)), run, report_dir)
    print(f"npu-codemod: wrote {len(written)} file(s) to {report_dir}", file=sys.stderr)
    return EXIT_OK


def _read_run(run_json: str) -> dict:
    """The run record at ``run_json`` (``report``, ``status``, ``--only-failed``); a UsageError
    naming the file when it cannot be read or is not a run record."""
    from npu_codemod.reports.json_report import read_run_json

    try:
        return read_run_json(Path(run_json))
    except OSError as exc:
        raise UsageError(f"cannot read {run_json!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{run_json}: not a run record (not UTF-8 text)") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _cmd_check(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.check import CheckInputError, run_check

    toolkit = _toolkit(_selection(args))
    try:
        code = run_check(args.paths, toolkit, sys.stdout, sys.stderr, args.debug,
                         include_tests=_include_tests(args))
    except CheckInputError as exc:
        raise UsageError(str(exc)) from None
    # A CI gate must not pass when some of the rules it was asked to apply did not run.
    return EXIT_USAGE if toolkit.plugins.broken else code


def _cmd_status(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.prs.status import print_status

    hook = _toolkit(_selection(args)).plugins.pm.hook
    return print_status(_read_run(args.run_json), hook, sys.stdout, args.forge_url)


def _cmd_demo(args: argparse.Namespace) -> int:
    from npu_codemod.orchestrator.demo import run_demo

    return run_demo(args.report_dir, keep=args.keep)
