"""``npu-codemod demo``: sample repositories in a temp dir, through the whole batch."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from npu_codemod.orchestrator.batch.batch_options import BatchOptions, OptionError
from npu_codemod.orchestrator.commands.common import loaded_rules_of
from npu_codemod.orchestrator.commands.run import read_entries, run_batch
from npu_codemod.orchestrator.demo import build_sample_repos
from npu_codemod.orchestrator.verify.settings import VerifyOptions
from npu_codemod.orchestrator.verify.verify_options import tensorflow_problem


def add_to(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo")
    demo.add_argument("--report-dir", default="npu-codemod-report", metavar="DIR",
                      help="where the reports go (default: %(default)s)")
    demo.add_argument("--keep", action="store_true", help="keep the sample repos (path is printed)")
    demo.add_argument("--verify", action="store_true",
                      help="also run each sample before and after its migration on CPU TensorFlow "
                           "and show the verdicts (needs the [verify] extra)")
    demo.set_defaults(handler=demo_command)


#: Samples without a verify command (plain Python, Horovod) are not a failure of the demo.
DEMO_ALLOWS = ("no-command",)


def demo_command(args: argparse.Namespace) -> int:
    problem = tensorflow_problem() if args.verify else None
    if problem:
        raise OptionError(problem)
    root = Path(tempfile.mkdtemp(prefix="npu-codemod-demo-"))
    try:
        repo_list = build_sample_repos(root)
        kept = "kept" if args.keep else "removed at the end; --keep keeps them"
        print(f"npu-codemod demo: sample repos in {root} ({kept})", file=sys.stderr)
        options = BatchOptions(repos=str(repo_list), report_dir=Path(args.report_dir),
                               workspace=root / ".workspace",
                               verify=VerifyOptions(allow=DEMO_ALLOWS) if args.verify else None)
        code = run_batch(options, loaded_rules_of(options.selection), read_entries(str(repo_list)))
        report = Path(args.report_dir, "report.html").resolve()
        print(f"npu-codemod demo: open {report}", file=sys.stderr)
        return code
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
