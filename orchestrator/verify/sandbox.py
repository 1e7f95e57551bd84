"""One run of the repository's command under the launcher, as safely as a process allows.

Verify executes the repository's code. Each run gets: the exported folder as its working
directory (``HOME`` and ``TMPDIR`` inside the scratch space too), an environment built from
an allow-list (:func:`clean_environment`), the timeout, and a memory limit (``RLIMIT_AS``).
Where ``unshare`` can make namespaces (root on Linux, :func:`isolation`), the command runs in
its own network namespace (no network: only a loopback that is down), PID namespace (every
process it starts, a detached one too, is killed when it ends or is stopped) and mount
namespace (every file system read-only but the run's scratch folder); elsewhere in its own
process group only, stopped whole at the end (and, on Linux, any process left that carries
the run's record folder in its environment: one started in a new session). ``python`` in the command is the
interpreter npu-codemod runs under (a ``python`` shim first on ``PATH``); the launcher's
``runtime/`` folder is first on ``PYTHONPATH``, so every Python process of the command starts
the watch (``sitecustomize``) and finds the ``npu_bridge`` emulation.
"""

from __future__ import annotations

import functools
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Optional, Sequence

from npu_codemod.orchestrator.redact import SECRET_ENV_VARS, mask_secrets

RUNTIME = Path(__file__).resolve().parent / "runtime"
#: Variables passed to the repository's code as they are, besides those the run sets and
#: those its settings name (``env``); never one named like a credential.
_PASSED = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM"})
_PASSED_PREFIXES = ("LC_",)
#: Names of variables that hold credentials: never passed to the repository's code.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|PWD$|CREDENTIAL|KEY|AUTH(?!OR)|JWT|DSN|WEBHOOK|COOKIE|"
                          r"SESSION|PROXY|KUBECONFIG|DATABASE_URL|^AWS_|^AZURE_|^GOOGLE_|^GH_|"
                          r"^GITHUB_|^GITLAB_|^SSH_|ASKPASS|NETRC", re.IGNORECASE)
#: Variables of the user's Python that would reach into their checkout or change the run.
_DROPPED = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT", "VIRTUAL_ENV",
                      "CUDA_VISIBLE_DEVICES", "TF_CONFIG"})
#: The namespaces of a run: no network, its own processes (``--kill-child``: stopping
#: ``unshare`` kills them all), its own mounts.
UNSHARE = ("unshare", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")
#: Run inside the namespaces by ``/bin/sh -c``, with $1 the scratch folder and $2 the
#: command: every mount read-only but the scratch and working folders (and /dev, /proc,
#: /sys), then the command in the working folder (entered again: through its own mount).
_CONFINE = ('mount --make-rprivate / && mount --bind "$1" "$1" && mount --bind "$PWD" "$PWD" && '
            'mount -o remount,bind,ro / && while read -r _ point _; do case "$point" in '
            '/|/proc*|/sys*|/dev*|"$1"|"$PWD") ;; *) mount -o remount,bind,ro "$point" 2>/dev/null ;; '
            'esac; done </proc/self/mounts; cd "$PWD" && exec /bin/sh -c "$2"')
#: Lines of output kept to explain a failure.
TAIL_LINES = 12
#: A metric the script prints: its name, then its value ("loss: 0.25", "eval accuracy = 0.9").
_METRIC = re.compile(r"\b((?:val_|eval_|test_|train_)?(?:loss|acc|accuracy|auc|precision|recall|mse|mae|"
                     r"rmse|error|perplexity|ppl|f1|top_?\d+|reward|score|cost))\b[ \t]*[:=]?[ \t]*"
                     r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE)
MAX_PRINTED = 2000
STOP_GRACE = 3.0
NAMESPACES = "namespaces: no network, its processes killed at the end, writes only in scratch"
GROUP_ONLY = ("process group only (unshare cannot make namespaces here): the network is reachable "
              "and files outside scratch are writable")


@dataclass(frozen=True)
class SideRun:
    """How one run went: its exit, what the launcher recorded, the end of its output."""

    exit_code: Optional[int]  # None: timed out
    seconds: float
    stopped: bool = False  # the launcher ended it at the step limit
    replayed: int = 0  # training steps past the limit skipped (their last results repeated)
    calls: tuple = ()  # each Session.run or Keras result: {"step", "kind", "names", "values", "shapes", "arrays"}
    variables: tuple = ()  # the trainable variables after the last training step, described
    printed: tuple = ()  # the metrics the command printed: (name, value as printed)
    violations: tuple[str, ...] = ()
    training_steps: int = 0
    output_tail: tuple[str, ...] = ()
    tensorflow: str = ""
    records: int = 0  # processes that wrote a record
    isolation: str = ""  # what confined the run (:func:`isolation`)

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    @property
    def failed(self) -> bool:
        """Ended with an error by itself (a stop at the step limit is a success)."""
        return not self.timed_out and not self.stopped and self.exit_code != 0


def clean_environment(environ: Mapping[str, str], named: Sequence[str] = ()) -> dict[str, str]:
    """The variables of ``environ`` on the allow-list (``PATH``, ``LANG``, ``LC_*``,
    ``TZ``...) or ``named`` by the repository's settings; never one named like a
    credential, one whose value holds one (a URL with a password...) or one that steers
    Python to other code (``PYTHONPATH``...)."""
    secret = set(SECRET_ENV_VARS)
    return {name: value for name, value in environ.items()
            if (name in _PASSED or name.startswith(_PASSED_PREFIXES) or name in named)
            and name not in secret and name not in _DROPPED and not _SECRET_NAME.search(name)
            and mask_secrets(value) == value}


@functools.lru_cache(maxsize=None)
def isolation() -> str:
    """What confines a run here: the namespaces when ``unshare`` can make them, else only a
    process group (not root, not Linux, no ``unshare``)."""
    if shutil.which("unshare") is None:
        return GROUP_ONLY
    try:
        done = subprocess.run([*UNSHARE, "/bin/sh", "-c", "mount --make-rprivate / && "
                               "mount -o remount,bind,ro /"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return GROUP_ONLY
    return NAMESPACES if done.returncode == 0 else GROUP_ONLY


def run_side(command: str, folder: Path, scratch: Path, steps: int, timeout: float,
             memory_mb: int, named: Sequence[str] = (), python: Optional[str] = None,
             tensorflow: str = "1") -> SideRun:
    """Run ``command`` in ``folder``; ``scratch`` holds its record,
    output, home and temporary files; ``named``: variables the repository's settings pass;
    ``python``: the interpreter ``python`` means (default: this one); ``tensorflow``: the
    major version the repository's code runs ("2": TensorFlow keeps its TF 2.x behaviour)."""
    records, home, shim, tmp = scratch / "records", scratch / "home", scratch / "bin", scratch / "tmp"
    for made in (records, home, shim, tmp):
        made.mkdir(parents=True, exist_ok=True)
    _write_shim(shim, python or sys.executable)
    env = _environment(records, home, shim, steps, named)
    env["NPU_CODEMOD_VERIFY_TF"] = tensorflow
    env["TMPDIR"] = str(tmp)
    output = scratch / "output.log"
    started = time.monotonic()
    with open(output, "wb") as log:
        process = subprocess.Popen(_argv(command, scratch), cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=lambda: _limit_memory(memory_mb))
        try:
            code: Optional[int] = process.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _stop_group(process)
            _stop_marked(f"NPU_CODEMOD_VERIFY_RECORD={records}")
    return replace(_side_run(code, time.monotonic() - started, records, output), isolation=isolation())


def _argv(command: str, scratch: Path) -> list[str]:
    if isolation() == NAMESPACES:
        return [*UNSHARE, "/bin/sh", "-c", _CONFINE, "npu-codemod-verify", str(scratch.resolve()), command]
    return ["/bin/sh", "-c", command]


def _environment(records: Path, home: Path, shim: Path, steps: int, named: Sequence[str]) -> dict[str, str]:
    env = clean_environment(os.environ, named)
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


def _write_shim(folder: Path, python: str) -> None:
    """``python``/``python3`` on the run's ``PATH``: ``python`` (a script, not a symlink, so
    a virtualenv's interpreter keeps its packages)."""
    for name in ("python", "python3"):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} "$@"\n', encoding="utf-8")
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


def _stop_marked(marker: str) -> None:
    """SIGKILL every process left whose environment holds ``marker`` (this run's record
    folder), and wait until they are dead: one that left the process group (a new session)
    where no PID namespace took it down. Linux only (``/proc``); a process that clears its
    environment escapes."""
    wanted, killed = marker.encode() + b"\0", []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if wanted in (entry / "environ").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(entry)
        except (OSError, ValueError):
            continue
    deadline = time.monotonic() + STOP_GRACE
    while killed and time.monotonic() < deadline:
        killed = [entry for entry in killed if _alive(entry)]
        time.sleep(0.01)


def _alive(entry: Path) -> bool:
    """Whether the process of ``/proc/<pid>`` still runs (a zombie does not)."""
    try:
        return (entry / "stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _side_run(code: Optional[int], seconds: float, records: Path, output: Path) -> SideRun:
    found = [_load(path) for path in sorted(records.glob("record-*.json"))]
    loaded = sorted((r for r in found if r is not None), key=lambda r: r.get("started", 0))
    violations: dict[str, None] = {}
    for record in loaded:
        violations.update((v["message"], None) for v in record.get("violations", ()))
    text = output.read_text(encoding="utf-8", errors="replace") if output.exists() else ""
    tail = tuple(mask_secrets(line) for line in text.splitlines()[-TAIL_LINES:])
    variables: list = next((r["variables"] for r in reversed(loaded) if r.get("variables")), [])
    return SideRun(exit_code=code, seconds=round(seconds, 3),
                   stopped=any(r.get("ended") == "stopped" for r in loaded),
                   replayed=sum(r.get("replayed", 0) for r in loaded),
                   calls=tuple(call for r in loaded for call in r.get("calls", ())),
                   variables=tuple(variables), printed=printed_metrics(text),
                   violations=tuple(violations), output_tail=tail,
                   training_steps=sum(r.get("training_steps", 0) for r in loaded),
                   tensorflow=next((r["tensorflow"] for r in loaded if r.get("tensorflow")), ""),
                   records=len(loaded))


def printed_metrics(text: str) -> tuple[tuple[str, str], ...]:
    """The metrics in the output: (name, value as printed), in order."""
    found = (match.groups() for match in _METRIC.finditer(text))
    return tuple((name.lower(), value) for name, value in found)[:MAX_PRINTED]


def _load(path: Path) -> Optional[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
