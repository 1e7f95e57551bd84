"""``npu-codemod demo``: sample repositories in a temp dir, through the whole batch."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from npu_codemod.orchestrator.batch.options import BatchOptions
from npu_codemod.orchestrator.commands.common import toolkit_of
from npu_codemod.orchestrator.commands.run import read_entries, run_batch
from npu_codemod.orchestrator.demo import build_sample_repos


def add_to(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo", help="build sample TF 1.x repos in a temp dir and migrate them")
    demo.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                      help="where the reports go (default: %(default)s)")
    demo.add_argument("--keep", action="store_true", help="keep the sample repos (path is printed)")
    demo.set_defaults(handler=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    root = Path(tempfile.mkdtemp(prefix="npu-codemod-demo-"))
    try:
        repo_list = build_sample_repos(root)
        kept = "kept" if args.keep else "removed at the end; --keep keeps them"
        print(f"npu-codemod demo: sample repos in {root} ({kept})", file=sys.stderr)
        options = BatchOptions(repos=str(repo_list), report_dir=Path(args.report_dir),
                               workspace=root / ".workspace")
        code = run_batch(options, toolkit_of(options.selection), read_entries(str(repo_list)))
        report = Path(args.report_dir, "report.html").resolve()
        print(f"npu-codemod demo: open {report}", file=sys.stderr)
        return code
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
