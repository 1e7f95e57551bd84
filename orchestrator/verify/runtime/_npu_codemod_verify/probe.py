"""The watch over TensorFlow once it is imported: determinism, sessions, training steps.

* Determinism: graph-level and op seeds (an op without a seed gets the number of random ops
  before it, so code that adds other ops still draws the same numbers), numpy's and Python's
  seeds, deterministic kernels, one intra-/inter-op thread.
* Every ``Session`` (also inside ``MonitoredTrainingSession`` and Estimators): its config is
  checked against the NPU's constraints, then replaced by one this machine runs identically
  for both sides (:func:`constraints.runnable_config`).
* Every ``Session.run`` of the repository's code (a ``MonitoredSession``'s: the caller's
  fetches; not a library's own, a ``Saver``'s or a hook's, whose calls depend on settings
  the migration changes): the float scalars fetched, every other fetched value (described by
  :mod:`.evidence`) and the shapes of fetched arrays are recorded; a run that executes an
  optimizer's update is a training step, after which the trainable variables are recorded.
* The end of training: once ``steps`` training steps ran, the input ends: a further training
  step raises ``OutOfRangeError`` as a ``tf.data`` iterator at its end does (a
  ``MonitoredSession``, an Estimator's ``train`` end there), or, in a plain loop that does not
  handle it, returns its last result without training (:func:`_after_the_end`), so the
  script's evaluation, save and close run; evaluation runs (no optimizer update) go on to the
  end of their input.
"""

import os
import random
import sys
import weakref
from collections.abc import Mapping

from . import constraints, evidence, keras_watch
from .record import END_OF_INPUT

_STATE = "_npu_codemod_verify"  # attribute of a session: its site and what was checked
_DYNAMIC_FETCHED: dict = {}  # id(array) -> (array, op): fetched pipeline elements, dynamic batch
_GRAPHS: dict = {}  # id(graph) -> (graph, what is known of it): devices, train ops, analyses
_SESSION_FILE = ""  # TensorFlow's session.py: the frames of Session.run itself
#: Training steps past the limit answered with their last result, at most (then the input ends).
MAX_REPLAYS = 100000


def _graph_state(graph) -> dict:
    """What the watch knows of ``graph`` (graphs take no attributes of their own)."""
    held = _GRAPHS.get(id(graph))
    if held is None or held[0] is not graph:
        held = _GRAPHS[id(graph)] = (graph, {"random": 0, "devices": False, "train": set(),
                                             "upstream": {}})
    return held[1]


def install(tf, recorder, seed: int) -> None:
    import numpy as np
    from tensorflow.python.client import session
    from tensorflow.python.framework import config, ops, random_seed
    from tensorflow.python.training import optimizer

    recorder.tensorflow = getattr(tf, "__version__", "")
    np.random.seed(seed)
    random.seed(seed)
    config.enable_op_determinism()
    _seed_graphs(ops, random_seed, seed)
    _mark_devices(ops)
    _mark_training(optimizer)
    sessions: "weakref.WeakSet" = weakref.WeakSet()
    collected: list = []
    _watch_sessions(session.BaseSession, recorder, sessions, collected)
    keras_watch.install(recorder)
    recorder.at_exit.append(lambda: _unclosed(recorder, sessions, collected))


def _seed_graphs(ops, random_seed, seed: int) -> None:
    original_init, original_get_seed = ops.Graph.__init__, random_seed.get_seed

    def graph_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.seed = seed

    def get_seed(op_seed):
        if op_seed is None and not ops.executing_eagerly_outside_functions():
            state = _graph_state(ops.get_default_graph())
            state["random"] += 1
            op_seed = state["random"]
        return original_get_seed(op_seed)

    ops.Graph.__init__ = graph_init
    random_seed.get_seed = get_seed
    ops.get_default_graph().seed = seed


def _mark_devices(ops) -> None:
    original, wrappers = ops.Graph.device, os.path.abspath(ops.__file__)

    def device(self, device_name_or_function):
        if device_name_or_function and constraints.called_by_user(wrappers):
            _graph_state(self)["devices"] = True
        return original(self, device_name_or_function)

    ops.Graph.device = device


def _mark_training(optimizer) -> None:
    original = optimizer.Optimizer.apply_gradients

    def apply_gradients(self, *args, **kwargs):
        update = original(self, *args, **kwargs)
        if update is not None and hasattr(update, "graph"):
            _graph_state(update.graph)["train"].add(update.name)
        return update

    optimizer.Optimizer.apply_gradients = apply_gradients


def _watch_sessions(base, recorder, sessions, collected) -> None:
    global _SESSION_FILE
    _SESSION_FILE = os.path.abspath(sys.modules[base.__module__].__file__)
    original_init, original_run = base.__init__, base.run
    original_close, original_del = base.close, base.__del__

    def init(self, target="", graph=None, config=None):
        site = constraints.user_site()
        for kind, message in constraints.config_violations(config):
            recorder.violation(kind, site, f"{message} (at {site})")
        soft = bool(config is not None and config.allow_soft_placement)
        self.__dict__[_STATE] = {"site": site, "soft": soft, "closed": False}
        sessions.add(self)
        original_init(self, target, graph, constraints.runnable_config(config))

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        return _run(self, original_run, recorder, (fetches, feed_dict, options, run_metadata))

    def close(self):
        self.__dict__.get(_STATE, {})["closed"] = True
        return original_close(self)

    def delete(self):
        state = self.__dict__.get(_STATE)
        if state is not None and not state["closed"]:
            collected.append(state["site"])
            state["closed"] = True  # the collector closes it: not counted twice at exit
        return original_del(self)

    base.__init__, base.run, base.close, base.__del__ = init, run, close, delete


def _run(session, original_run, recorder, arguments):
    if recorder.internal:
        return original_run(session, *arguments)
    fetches, feed_dict = arguments[0], arguments[1]
    elements = _elements(session.graph, fetches)
    trains, dynamic = _analysis(session.graph, elements)
    _check_run(session, recorder, dynamic + _fed_dynamic(feed_dict) if trains else [])
    caller, key = constraints.run_by(_SESSION_FILE), repr(fetches)
    if trains and recorder.input_ended:
        return _after_the_end(recorder, caller, key)
    result = original_run(session, *arguments)
    step = recorder.training_step() if trains else None
    _record_run(session, recorder, step, (fetches, elements, caller), result)
    if step is not None:
        _record_variables(session, original_run, recorder)
        recorder.input_ended = recorder.limit_reached()
        recorder.replays[key] = result
    return result


def _after_the_end(recorder, caller: str, key: str):
    """A training step past the step limit: the input has ended. Code that ends its loop
    there (a library's: ``MonitoredSession``, Estimator, slim; a file that handles
    ``OutOfRangeError``) gets ``OutOfRangeError``. A plain loop (``for step in range(n)``)
    gets the last result of the same fetches again, without training: it runs to its end,
    and what follows it runs (up to :data:`MAX_REPLAYS` such steps)."""
    if key not in recorder.replays or not caller or constraints.handles_end_of_input(caller) or \
            recorder.replayed >= MAX_REPLAYS:
        from tensorflow.python.framework import errors

        raise errors.OutOfRangeError(None, None, f"{END_OF_INPUT} ({recorder.training_steps} steps)")
    recorder.replayed += 1
    return recorder.replays[key]  # None for sess.run(train_op)


def _check_run(session, recorder, dynamic: list) -> None:
    """The constraints a ``Session.run`` breaks: on a closed session, devices without soft
    placement, a training step reading ``dynamic`` pipeline outputs."""
    state = session.__dict__.get(_STATE, {"site": "", "soft": True})
    site = state["site"]
    if session._closed:
        recorder.violation("closed-run", site, f"Session.run on a closed session (created at {site})")
    if not state["soft"] and _graph_state(session.graph)["devices"]:
        recorder.violation("soft-placement", site, "tf.device is used but the session's config "
                           f"does not set allow_soft_placement=True (session at {site})")
    for op_name, shape in dynamic:
        recorder.violation("dynamic-batch", op_name, constraints.dynamic_batch_message(op_name, shape))


def _record_run(session, recorder, step, fetched: tuple, result) -> None:
    """Record what the repository's code fetched (a ``MonitoredSession``'s caller: its hooks'
    fetches depend on settings the migration changes; not a ``Saver``'s or a hook's own)."""
    fetches, elements, caller = fetched
    if _hooked(fetches):
        _record(recorder, step, _elements(session.graph, fetches["caller"]), result["caller"])
    elif step is not None or caller:
        _record(recorder, step, elements, result)


def _record_variables(session, original_run, recorder) -> None:
    """The trainable variables of ``session``'s graph, after a training step."""
    variables = session.graph.get_collection("trainable_variables")
    if not variables:
        return
    try:
        values = original_run(session, variables)
    except Exception:  # a variable this step does not reach: the last readable ones stay
        return
    recorder.variables = [evidence.describe(v.name, value) for v, value in zip(variables, values)]


def _hooked(fetches) -> bool:
    """Whether ``fetches`` are a ``MonitoredSession``'s: the caller's, and each hook's."""
    return isinstance(fetches, dict) and "caller" in fetches and \
        all(key == "caller" or not isinstance(key, str) for key in fetches)


def _flatten(value) -> list:
    """Fetches or results, in ``Session.run``'s order: lists, tuples and dicts (in their
    own order: a ``MonitoredSession`` fetches by hook and by name at once) opened."""
    if isinstance(value, Mapping):
        return [leaf for inner in value.values() for leaf in _flatten(inner)]
    if isinstance(value, (list, tuple)):
        return [leaf for inner in value for leaf in _flatten(inner)]
    return [value]


def _elements(graph, fetches) -> list:
    """The graph element of each fetch, flattened as ``Session.run`` flattens its result
    (None where one cannot be told)."""
    found = []
    for fetch in _flatten(fetches):
        try:
            found.append(graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True))
        except Exception:  # a SparseTensor, a callable...: nothing to name
            found.append(None)
    return found


def _analysis(graph, elements) -> tuple:
    """(trains, dynamic pipeline outputs read) of running ``elements``, cached per graph."""
    ops = [getattr(e, "op", e) for e in elements if e is not None]
    key = tuple(sorted(op.name for op in ops))
    state = _graph_state(graph)
    cache = state["upstream"]
    if key not in cache:
        cache[key] = constraints.upstream(ops, state["train"])
    return cache[key]


def _fed_dynamic(feed_dict) -> list:
    """Pipeline elements with a dynamic batch fetched earlier and fed to this step."""
    found = []
    for value in (feed_dict or {}).values():
        held = _DYNAMIC_FETCHED.get(id(value))
        if held is not None and held[0] is value:
            found.append(held[1])
    return found


def _record(recorder, step, elements, result) -> None:
    values = _flatten(result)
    names, scalars, shapes, arrays = [], [], [], []
    for index, value in enumerate(values):
        element = elements[index] if len(elements) == len(values) else None
        name = getattr(element, "name", "") or ""
        shape = getattr(value, "shape", None)
        if _is_float_scalar(value):
            names.append(name)
            scalars.append(float(value))
        elif value is not None:
            arrays.append(evidence.describe(name, value))
        if not _is_float_scalar(value) and shape is not None and len(shape) >= 1:
            shapes.append([name, list(shape)])
            if element is not None and constraints.dynamic_batch_outputs(element):
                _remember_dynamic(value, element)
    recorder.call(step, names, scalars, shapes, arrays)


def _is_float_scalar(value) -> bool:
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if isinstance(value, float):
        return True
    return kind == "f" and getattr(value, "shape", None) == ()


def _remember_dynamic(value, tensor) -> None:
    if len(_DYNAMIC_FETCHED) > 64:
        _DYNAMIC_FETCHED.clear()
    try:
        _DYNAMIC_FETCHED[id(value)] = (value, (tensor.op.name, constraints._shape(tensor)))
    except TypeError:
        pass


def _unclosed(recorder, sessions, collected) -> None:
    """At the end of a process that ended by itself: sessions never closed."""
    sites = [s.__dict__[_STATE]["site"] for s in list(sessions)
             if not s.__dict__.get(_STATE, {}).get("closed", True)] + collected
    for site in sites:
        recorder.violation("not-closed", site, f"session created at {site} was not closed when the "
                           "process ended (sess.close() releases the NPU's graph executor)")
