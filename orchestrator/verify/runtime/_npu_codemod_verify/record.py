"""What one process of a verify run computed, written as ``record-<pid>.json``.

A record holds every ``Session.run`` call (its training step, numbered in the run's one
sequence of :mod:`.steps`, the float scalars it fetched,
every fetched value described by :mod:`.evidence`), the trainable variables after the last
training step, the NPU constraints broken, and how the process ended: by itself (``exit``)
or stopped by the launcher (``stopped``: the input ended at the step limit, and the script
did not end its loop there, so what follows did not run).
"""

import atexit
import json
import os
import sys
import time
from typing import Callable, Optional

from .steps import StepCount

#: Calls kept per process: a run that loops on ``Session.run`` without training still ends.
MAX_CALLS = 20000
#: The file whose presence stops every later process of the command at its start.
STOP_MARK = "stopped"
#: The message of the ``OutOfRangeError`` a training step raises once the steps are done.
END_OF_INPUT = "npu-codemod verify: the input ends after the step limit"


def stop_requested(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, STOP_MARK))


class Recorder:
    """The record of this process, written once: at the step limit or at exit."""

    def __init__(self, folder: str, steps: Optional[int]) -> None:
        self.folder, self.steps = folder, steps
        self.started = time.time()
        self.calls: list = []
        self.violations: dict = {}  # (kind, where) -> message, in the order found
        self.count = StepCount(folder)  # the run's training steps, every process's
        self.training_steps = 0  # this process's
        # the step limit is reached (by this process or an earlier one): no more training
        # (probe._after_the_end, keras_watch, tf2)
        self.input_ended = self.limit_reached()
        self.replays: dict = {}  # fetches -> the last result of a training step fetching them
        self.replayed = 0  # training steps past the limit answered with that result
        self.variables: list = []  # the trainable variables after the last training step
        self.internal = False  # the launcher's own Session.run calls: not recorded
        self.in_keras = False  # inside a watched Keras fit/evaluate/predict (keras_watch)
        self.batch_values: dict = {}  # name -> value the watch adds to a fit batch's logs (tf2)
        self.tensorflow = ""
        self.written = False
        self.at_exit: list[Callable[[], None]] = []  # checks of a process that ends by itself
        self.at_stop: list[Callable[[], None]] = []  # what to record before a stop (tf2's variables)
        atexit.register(self._exit)

    def violation(self, kind: str, where: str, message: str) -> None:
        self.violations.setdefault((kind, where), message)

    def call(self, step: Optional[int], names: list, values: list, shapes: list, arrays: list,
             kind: str = "run") -> None:
        """One ``Session.run`` (``kind`` ``run``) or Keras result (``fit``, ``evaluate``...)."""
        if len(self.calls) < MAX_CALLS:
            self.calls.append({"step": step, "kind": kind, "names": names, "values": values,
                               "shapes": shapes, "arrays": arrays})

    def training_step(self) -> int:
        """Count one training step; its number in the run."""
        self.training_steps += 1
        return self.count.next()

    def limit_reached(self) -> bool:
        """Whether the run has taken its ``steps`` training steps (in any of its processes)."""
        return self.steps is not None and self.count.current() >= self.steps

    def excepthook(self, previous: Callable) -> Callable:
        """``sys.excepthook``: the end of input at the step limit, uncaught (a loop that does
        not end when its input does), stops the process; any other error is the script's."""
        def hook(kind, error, trace):
            if self.input_ended and END_OF_INPUT in str(error):
                self.stop("the script does not end its training loop when the input ends")
            previous(kind, error, trace)
        return hook

    def stop(self, why: str) -> None:
        """Write the record, stop later processes, end this one now (no ``finally`` of the
        script runs: it might train on); ``why`` is printed."""
        print(f"npu-codemod verify: stopped after {self.count.current()} training steps: {why}",
              file=sys.stderr)
        self._run(self.at_stop)
        self._write("stopped")
        open(os.path.join(self.folder, STOP_MARK), "w").close()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)

    def _exit(self) -> None:
        self._run(self.at_exit)
        self._write("exit")

    def _run(self, checks: list) -> None:
        for check in checks:
            try:
                check()
            except Exception as exc:  # a check must not hide the record
                self.violation("launcher", "", f"launcher check failed: {exc!r}")

    def _write(self, ended: str) -> None:
        if self.written:
            return
        self.written = True
        data = {"pid": os.getpid(), "started": self.started, "argv": sys.argv, "ended": ended,
                "tensorflow": self.tensorflow, "training_steps": self.training_steps,
                "input_ended": self.input_ended, "replayed": self.replayed, "calls": self.calls,
                "variables": self.variables,
                "violations": [{"kind": kind, "where": where, "message": message}
                               for (kind, where), message in self.violations.items()]}
        path = os.path.join(self.folder, f"record-{os.getpid()}.json")
        with open(path + ".partial", "w", encoding="utf-8") as stream:
            json.dump(data, stream)
        os.replace(path + ".partial", path)
