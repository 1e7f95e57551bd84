"""The real command line in a subprocess (``python -m npu_codemod``), as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Optional


def cli(*args: str, cwd: Path, expect: Optional[int] = None, stdin: str = "",
        env: Optional[Mapping[str, str]] = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``npu-codemod args`` in ``cwd`` (``env``: the whole environment, default ours);
    with ``expect``, assert it exits with that code."""
    done = subprocess.run([sys.executable, "-m", "npu_codemod", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)
    if expect is not None:
        assert done.returncode == expect, (done.returncode, done.stdout, done.stderr)
    return done


def check_lines(cwd: Path, *args: str, expect: int) -> list[str]:
    """The lines ``npu-codemod check args`` prints, asserting it exits with ``expect``."""
    return cli("check", *args, cwd=cwd, expect=expect).stdout.splitlines()


def repo_record(report_dir: Path) -> dict:
    """The first repository's record in the ``run.json`` of ``report_dir``."""
    return json.loads((report_dir / "run.json").read_text())["repos"][0]
