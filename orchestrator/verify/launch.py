"""``python -m npu_codemod.orchestrator.verify.launch [--steps N] -- COMMAND...``: one run of a
command under the verify launcher, in the current folder, for a person looking into a verdict.

The command runs as ``verify`` runs it (TF 1.x names, or TF 2.x with the ``npu_device``
emulation for a TF 2.x repository (``--tensorflow``), determinism, the ``npu_bridge`` emulation, the stripped environment, its own process group, the limits), but in the current
folder, not an export: it may write there. What the launcher recorded (the training steps,
each ``Session.run``'s and Keras result's values, the variables after the last training step,
the printed metrics, the NPU constraints broken, the end of the output) is printed as JSON;
the exit code is 1 when the run failed or timed out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from npu_codemod.orchestrator.verify.sandbox import run_side
from npu_codemod.orchestrator.verify.settings import DEFAULT_MEMORY_MB, DEFAULT_STEPS, DEFAULT_TIMEOUT
from npu_codemod.orchestrator.verify.verify_repository import repository_tensorflow


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m npu_codemod.orchestrator.verify.launch",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="training steps (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds (default: %(default)s)")
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY_MB, help="MiB (default: %(default)s)")
    parser.add_argument("--tensorflow", choices=("1", "2"),
                        help="the TensorFlow major version the code runs (default: as verify decides "
                        "it for the current folder)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: -- COMMAND [ARG...]")
    with tempfile.TemporaryDirectory(prefix="npu-codemod-launch-") as scratch:
        run = run_side(shlex.join(command), Path.cwd(), Path(scratch), args.steps, args.timeout,
                       args.memory, tensorflow=args.tensorflow or repository_tensorflow(Path.cwd()))
    json.dump(dataclasses.asdict(run), sys.stdout, indent=1)
    print()
    return 1 if run.failed or run.timed_out else 0


if __name__ == "__main__":
    sys.exit(main())
