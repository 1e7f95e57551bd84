"""The NPU's constraints, checked on what the process builds and runs.

A session's config must carry the ``NpuOptimizer`` custom optimizer with ``remapping`` and
``memory_optimization`` off; a graph that uses ``tf.device`` needs ``allow_soft_placement``;
a training step's input pipeline must have a static batch dimension (``drop_remainder=True``).
Sessions themselves (closed at exit, not run once closed) are watched in :mod:`.probe`.
"""

import os
import sys
import sysconfig
from typing import Iterable

#: Ops that hand out a ``tf.data`` pipeline's elements.
ITERATOR_OPS = frozenset({"IteratorGetNext", "IteratorGetNextSync", "OptionalGetValue"})
_HERE = os.path.dirname(os.path.abspath(__file__))
_LIBRARIES = (os.sep + "tensorflow" + os.sep, os.sep + "tf_keras" + os.sep,
              os.sep + "tensorflow_estimator" + os.sep, os.sep + "tf_slim" + os.sep,
              os.sep + "keras" + os.sep, os.sep + "npu_bridge" + os.sep, _HERE,
              sysconfig.get_paths()["stdlib"] + os.sep)


def config_violations(config) -> list:
    """(kind, message) for what a session's ``config`` lacks on the NPU."""
    from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

    rewrite = config.graph_options.rewrite_options if config is not None else None
    if rewrite is None or not any(c.name == "NpuOptimizer" for c in rewrite.custom_optimizers):
        return [("npu-optimizer", "session created without the NpuOptimizer custom optimizer")]
    found = []
    if rewrite.remapping != RewriterConfig.OFF:
        found.append(("remapping", "session created with remapping on (the NPU needs it off)"))
    if rewrite.memory_optimization != RewriterConfig.OFF:
        found.append(("memory-optimization",
                      "session created with memory_optimization on (the NPU needs it off)"))
    return found


def runnable_config(config):
    """A copy of ``config`` this machine runs the same way for the original and the
    migrated code: no custom optimizers, one thread per pool, soft placement (a GPU pin runs
    on the CPU), remapping and XLA off."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig

    copy = config_pb2.ConfigProto()
    if config is not None:
        copy.CopyFrom(config)
    del copy.graph_options.rewrite_options.custom_optimizers[:]
    copy.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    copy.graph_options.optimizer_options.global_jit_level = config_pb2.OptimizerOptions.OFF
    copy.intra_op_parallelism_threads = copy.inter_op_parallelism_threads = 1
    copy.allow_soft_placement = True
    return copy


def upstream(ops: Iterable, train_ops: set) -> tuple:
    """Whether running ``ops`` runs a training op (an optimizer's update), and the
    pipeline outputs with a dynamic batch dimension they read: (trains, [(op, shape)])."""
    seen, stack = set(), list(ops)
    trains, dynamic = False, []
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        trains = trains or op.name in train_ops
        if op.type in ITERATOR_OPS:
            dynamic.extend((op.name, _shape(t)) for t in op.outputs if _dynamic_batch(t))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return trains, dynamic


def dynamic_batch_outputs(tensor) -> bool:
    """A pipeline element (``get_next()``) whose batch dimension is not static."""
    return getattr(getattr(tensor, "op", None), "type", None) in ITERATOR_OPS and _dynamic_batch(tensor)


def _dynamic_batch(tensor) -> bool:
    shape = tensor.shape
    return shape.rank is not None and shape.rank >= 1 and shape.as_list()[0] is None


def _shape(tensor) -> str:
    dims = tensor.shape.as_list() if tensor.shape.rank is not None else None
    return "unknown" if dims is None else "(" + ", ".join("?" if d is None else str(d) for d in dims) + ")"


def dynamic_batch_message(op_name: str, shape: str) -> str:
    return (f"a training step reads the input pipeline output {op_name} of shape {shape}: its "
            "batch dimension is not static (batch with drop_remainder=True)")


def called_by_user(wrappers: str) -> bool:
    """Whether the code calling this probe, past the frames of the file ``wrappers`` (the
    public function that forwards to it: ``tf.device`` -> ``Graph.device``), is the
    repository's own (TensorFlow places its own ops, a ``Saver``'s say, with the same call)."""
    frame = sys._getframe(2)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == wrappers:
        frame = frame.f_back
    if frame is None:
        return False
    path = os.path.abspath(frame.f_code.co_filename)
    return not any(part in path for part in _LIBRARIES) and not path.startswith("<")


def run_by(session_file: str) -> str:
    """The file of the repository's code that called the ``Session.run`` being watched, or ''
    when a library called it (a ``Saver``, a hook, a ``MonitoredSession``, Keras): the first
    frame past this runtime and ``session_file`` (TensorFlow's ``session.py``)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_HERE) and path != session_file:
            return "" if any(part in path for part in _LIBRARIES) or path.startswith("<") else path
        frame = frame.f_back
    return ""


def handles_end_of_input(path: str) -> bool:
    """Whether the code in ``path`` ends a loop at the end of its input: it names
    ``OutOfRangeError`` (or asks ``should_stop()``). Unreadable: assumed so."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except OSError:
        return True
    return "OutOfRangeError" in text or "should_stop" in text


def user_site() -> str:
    """``file:line`` of the innermost frame of the repository's own code (relative to the
    working folder), or '' when there is none."""
    frame = sys._getframe(1)
    cwd = os.getcwd() + os.sep
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not any(part in path for part in _LIBRARIES) and not path.startswith("<"):
            shown = path[len(cwd):] if path.startswith(cwd) else path
            return f"{shown}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
