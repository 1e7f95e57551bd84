"""One run of the repository's command under the launcher, as safely as a process allows.

Verify executes the repository's code. Each run gets: the exported folder as its working
directory (``HOME`` inside the scratch space too), an environment without tokens or
credentials (:func:`clean_environment`), its own process group (stopped whole at the end),
the timeout, and a memory limit (``RLIMIT_AS``). ``python`` in the command is the
interpreter npu-codemod runs under (a ``python`` shim first on ``PATH``); the launcher's
``runtime/`` folder is first on ``PYTHONPATH``, so every Python process of the command starts
the watch (``sitecustomize``) and finds the ``npu_bridge`` emulation.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

from npu_codemod.orchestrator.redact import SECRET_ENV_VARS, mask_secrets

RUNTIME = Path(__file__).resolve().parent / "runtime"
#: Names of variables that hold credentials: never passed to the repository's code.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH(?!OR)|"
                          r"^AWS_|^AZURE_|^GOOGLE_|^GH_|^GITHUB_|^GITLAB_|^SSH_|ASKPASS|NETRC",
                          re.IGNORECASE)
#: Variables of the user's Python that would reach into their checkout or change the run.
_DROPPED = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "VIRTUAL_ENV",
                      "CUDA_VISIBLE_DEVICES", "TF_CONFIG"})
#: Lines of output kept to explain a failure.
TAIL_LINES = 12
STOP_GRACE = 3.0


@dataclass(frozen=True)
class SideRun:
    """How one run went: its exit, what the launcher recorded, the end of its output."""

    exit_code: Optional[int]  # None: timed out
    seconds: float
    stopped: bool = False  # the launcher ended it at the step limit
    calls: tuple = ()  # each Session.run: {"step", "names", "values", "shapes"}
    violations: tuple[str, ...] = ()
    training_steps: int = 0
    output_tail: tuple[str, ...] = ()
    tensorflow: str = ""
    records: int = 0  # processes that wrote a record

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    @property
    def failed(self) -> bool:
        """Ended with an error by itself (a stop at the step limit is a success)."""
        return not self.timed_out and not self.stopped and self.exit_code != 0


def clean_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` less every variable that may carry a credential or steer Python to
    other code (``PYTHONPATH``...)."""
    secret = set(SECRET_ENV_VARS)
    return {name: value for name, value in environ.items()
            if name not in secret and name not in _DROPPED and not _SECRET_NAME.search(name)}


def run_side(command: str, folder: Path, scratch: Path, steps: int, timeout: float,
             memory_mb: int) -> SideRun:
    """Run ``command`` in ``folder``; ``scratch`` (outside ``folder``) holds its record,
    output and home."""
    records, home, shim = scratch / "records", scratch / "home", scratch / "bin"
    for made in (records, home, shim):
        made.mkdir(parents=True, exist_ok=True)
    _write_shim(shim)
    env = _environment(records, home, shim, steps)
    output = scratch / "output.log"
    started = time.monotonic()
    with open(output, "wb") as log:
        process = subprocess.Popen(["/bin/sh", "-c", command], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=lambda: _limit_memory(memory_mb))
        try:
            code: Optional[int] = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _stop_group(process)
    return _side_run(code, time.monotonic() - started, records, output)


def _environment(records: Path, home: Path, shim: Path, steps: int) -> dict[str, str]:
    env = clean_environment(os.environ)
    env.update({
        "HOME": str(home), "PATH": f"{shim}{os.pathsep}{env.get('PATH', os.defpath)}",
        "PYTHONPATH": str(RUNTIME), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "NPU_CODEMOD_VERIFY_RECORD": str(records), "NPU_CODEMOD_VERIFY_STEPS": str(steps),
        "NPU_CODEMOD_VERIFY_SEED": "0",
        # TF 1.x layers (tf.layers, tf.keras in graph mode) need Keras 2: the tf-keras package.
        "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "TF_DETERMINISTIC_OPS": "1",
        "TF_ENABLE_ONEDNN_OPTS": "0", "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1",
    })
    return env


def _write_shim(folder: Path) -> None:
    """``python``/``python3`` on the run's ``PATH``: this interpreter (a script, not a
    symlink, so a virtualenv's interpreter keeps its packages)."""
    for name in ("python", "python3"):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)


def _limit_memory(memory_mb: int) -> None:
    limit = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM the run's process group, SIGKILL what is left after the grace."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            process.wait(STOP_GRACE)
            if sig == signal.SIGTERM:
                time.sleep(0.05)  # children of the group get the signal too
        except subprocess.TimeoutExpired:
            continue


def _side_run(code: Optional[int], seconds: float, records: Path, output: Path) -> SideRun:
    found = [_load(path) for path in sorted(records.glob("record-*.json"))]
    loaded = sorted((r for r in found if r is not None), key=lambda r: r.get("started", 0))
    violations: dict[str, None] = {}
    for record in loaded:
        violations.update((v["message"], None) for v in record.get("violations", ()))
    text = output.read_text(encoding="utf-8", errors="replace") if output.exists() else ""
    tail = tuple(mask_secrets(line) for line in text.splitlines()[-TAIL_LINES:])
    return SideRun(exit_code=code, seconds=round(seconds, 3),
                   stopped=any(r.get("ended") == "stopped" for r in loaded),
                   calls=tuple(call for r in loaded for call in r.get("calls", ())),
                   violations=tuple(violations), output_tail=tail,
                   training_steps=sum(r.get("training_steps", 0) for r in loaded),
                   tensorflow=next((r["tensorflow"] for r in loaded if r.get("tensorflow")), ""),
                   records=len(loaded))


def _load(path: Path) -> Optional[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
