"""``npu-codemod report RUN_JSON``: render every report again from a run record."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from npu_codemod.codemods.sites import settle_record
from npu_codemod.orchestrator import arguments
from npu_codemod.orchestrator.commands.common import EXIT_OK, loaded_rules_of, read_run
from npu_codemod.orchestrator.plugin_hooks import write_reports


def add_to(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser("report")
    report.add_argument("run_json", metavar="RUN_JSON")
    report.add_argument("--report-dir", default=None,
                        help="where to write (default: the folder of RUN_JSON)")
    arguments.add_plugin_options(report)
    report.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> int:
    report_dir = Path(args.report_dir) if args.report_dir else Path(args.run_json).parent
    loaded_rules = loaded_rules_of(arguments.rule_selection(args))
    # a record written before sites were settled counts as a run counts now
    not_sites = {rule.id for rule in loaded_rules.plugins.rules() if not rule.counts_sites}
    run = settle_record(read_run(args.run_json), not_sites)
    written = write_reports(loaded_rules.plugins, run, report_dir)
    print(f"npu-codemod: wrote {len(written)} file(s) to {report_dir}", file=sys.stderr)
    return EXIT_OK
