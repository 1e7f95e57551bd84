"""The verify launcher's runtime, inside the process of the repository's command.

It never imports TensorFlow itself: the first ``import tensorflow`` of the command is caught
(:mod:`.tf1`), finished, and then TensorFlow is switched to TF 1.x graph behaviour, made
deterministic and its sessions watched (:mod:`.probe`). What the process computed and which
NPU constraints it broke are written to ``$NPU_CODEMOD_VERIFY_RECORD/record-<pid>.json``
when it exits or when it has run ``$NPU_CODEMOD_VERIFY_STEPS`` training steps.

Only the standard library is imported here: this runs in every Python process of the run.
"""

import importlib.util
import os
import random
import sys

from . import record, tf1

#: Environment variables the launcher sets (the parent's ``sandbox`` module writes them).
RECORD_DIR = "NPU_CODEMOD_VERIFY_RECORD"
STEPS = "NPU_CODEMOD_VERIFY_STEPS"
SEED = "NPU_CODEMOD_VERIFY_SEED"


def install() -> None:
    """Watch this process, unless it runs outside a verify run."""
    folder = os.environ.get(RECORD_DIR)
    if not folder:
        return
    if record.stop_requested(folder):  # an earlier process of the command hit the step limit
        os._exit(0)
    seed = int(os.environ.get(SEED, "0"))
    random.seed(seed)
    steps = int(os.environ.get(STEPS, "0")) or None
    recorder = record.Recorder(folder, steps)
    tf1.install_import_hook(lambda tf: _on_tensorflow(tf, recorder, seed))


def _on_tensorflow(tf, recorder, seed: int) -> None:
    from . import probe

    probe.install(tf, recorder, seed)


def chain_sitecustomize(this_file: str) -> None:
    """Run the ``sitecustomize`` this one shadows (the next one on ``sys.path``)."""
    here = os.path.dirname(os.path.abspath(this_file))
    for folder in sys.path:
        if not folder or os.path.abspath(folder) == here:
            continue
        candidate = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_npu_codemod_next_sitecustomize", candidate)
            if spec and spec.loader:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return
