"""The start of the watch: what ``sitecustomize`` calls in every Python process."""

import importlib.util
import os
import random
import sys

from . import record, tf1

#: Environment variables the launcher sets (the parent's ``sandbox`` module writes them).
RECORD_DIR = "NPU_CODEMOD_VERIFY_RECORD"
STEPS = "NPU_CODEMOD_VERIFY_STEPS"
SEED = "NPU_CODEMOD_VERIFY_SEED"
#: "2": the repository runs TensorFlow 2.x (eager code, Keras 2, ``npu_device``): TensorFlow is
#: not switched to TF 1.x behaviour, and custom training loops are watched too (:mod:`.tf2`).
TENSORFLOW = "NPU_CODEMOD_VERIFY_TF"


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
    sys.excepthook = recorder.excepthook(sys.excepthook)
    eager = os.environ.get(TENSORFLOW) == "2"
    tf1.install_import_hook(lambda tf: _on_tensorflow(tf, recorder, seed, eager), switch=not eager)


def _on_tensorflow(tf, recorder, seed: int, eager: bool) -> None:
    from . import probe

    probe.install(tf, recorder, seed)
    if eager:
        from . import tf2

        tf2.install(tf, recorder, seed)


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
