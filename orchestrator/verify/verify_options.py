"""The command-line options of ``verify`` and ``run --verify``, checked before anything runs."""

from __future__ import annotations

import argparse
from typing import Optional

from npu_codemod.orchestrator.verify.records import ALLOWABLE
from npu_codemod.orchestrator.verify.settings import VerifyOptions

#: What ``--help`` says of running the repositories' code.
SAFETY = ("verify EXECUTES EACH REPOSITORY'S CODE (its verify command, before and after the "
          "migration): only verify repositories you trust. Each run happens in a scratch folder "
          "under --workspace (git archive of the commit, never your checkout), with an environment "
          "built from an allow-list (no token or credential), under the timeout and a memory "
          "limit; where unshare can make namespaces (Linux as root) without network, with every "
          "file system read-only but the scratch folder and every process it started killed at "
          "its end, elsewhere only in its own process group.")


def add_verify_options(parser: argparse.ArgumentParser, flag: bool) -> None:
    """The verify settings; ``flag``: also ``--verify`` (for ``run``)."""
    if flag:
        parser.add_argument("--verify", action="store_true",
                            help="after committing, run each repository's verify command before "
                                 "and after the migration on CPU TensorFlow and record a verdict "
                                 "(needs the [verify] extra). " + SAFETY)
    parser.add_argument("--verify-command", metavar="COMMAND",
                        help="the command to run in each repository (default: its pyproject.toml "
                             "[tool.npu-codemod.verify] command, or verify=\"...\" on its "
                             "repo-list line); 'python' is this interpreter")
    parser.add_argument("--verify-steps", type=int, metavar="N",
                        help="training steps to compare, then the run is stopped (default: the "
                             "repository's steps, else 10)")
    parser.add_argument("--verify-timeout", type=float, metavar="SECONDS",
                        help="seconds each run may take (default: the repository's timeout, else 300)")
    parser.add_argument("--verify-rtol", type=float, metavar="RTOL",
                        help="relative tolerance of the compared values (default: the "
                             "repository's rtol, else 1e-5)")
    parser.add_argument("--allow", metavar="VERDICTS",
                        help="verdicts that do not fail the exit code besides equivalent, comma-"
                             f"separated, of: {', '.join(ALLOWABLE)} (default: none: exit 1 "
                             "unless every repository is equivalent)")
    parser.add_argument("--verify-requirements", action="store_true",
                        help="install each repository's requirements.txt (else its setup.py "
                             "install_requires; less TensorFlow and Keras) into a cached environment that also sees this interpreter's "
                             "packages, and run its command there (needs the network to install)")
    parser.add_argument("--verify-memory", type=int, metavar="MIB",
                        help="address-space limit of each run in MiB (default: the repository's "
                             "memory, else 8192)")


def verify_options(args: argparse.Namespace) -> Optional[VerifyOptions]:
    """The options of a verifying command (None when it does not verify); ValueError names
    a bad one."""
    if args.command != "verify" and not getattr(args, "verify", False):
        given = [f"--verify-{name}" for name in ("command", "steps", "timeout", "rtol", "memory")
                 if getattr(args, f"verify_{name}", None) is not None]
        given += ["--allow"] if getattr(args, "allow", None) is not None else []
        given += ["--verify-requirements"] if getattr(args, "verify_requirements", False) else []
        if given:
            raise ValueError(f"{given[0]} needs --verify")
        return None
    if getattr(args, "dry_run", False):
        raise ValueError("--verify runs the committed migration: it cannot be used with --dry-run")
    if getattr(args, "split_by", None):
        raise ValueError("--verify verifies one migration branch: it cannot be used with --split-by")
    for name in ("steps", "timeout", "rtol", "memory"):
        value = getattr(args, f"verify_{name}", None)
        if value is not None and value <= 0:
            raise ValueError(f"--verify-{name} must be a positive number")
    command = getattr(args, "verify_command", None)
    if command is not None and not command.strip():
        raise ValueError("--verify-command must not be empty")
    return VerifyOptions(command=command, steps=args.verify_steps, timeout=args.verify_timeout,
                         rtol=args.verify_rtol, memory=args.verify_memory, allow=_allowed(args.allow),
                         requirements=args.verify_requirements)


def _allowed(value: Optional[str]) -> tuple[str, ...]:
    """The verdicts of ``--allow``; ValueError names one that cannot be allowed."""
    names = tuple(name.strip() for name in (value or "").split(",") if name.strip())
    for name in names:
        if name not in ALLOWABLE:
            raise ValueError(f"--allow {name}: only {', '.join(ALLOWABLE)} can be allowed")
    return names


def tensorflow_problem() -> Optional[str]:
    """Why this interpreter cannot verify (no TensorFlow), or None; asked without importing
    TensorFlow (seconds) in this process."""
    from importlib.util import find_spec

    missing = [name for name in ("tensorflow", "tf_keras") if find_spec(name) is None]
    if missing:
        return (f"verify needs {' and '.join(missing)} in this interpreter: "
                "pip install 'npu-codemod[verify]'")
    return None
