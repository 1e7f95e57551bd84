"""``import tensorflow`` answering TF 1.x names on TensorFlow 2.

The first import of ``tensorflow`` is caught by a finder placed first on ``sys.meta_path``:
the real package is loaded, switched to graph behaviour (``disable_v2_behavior``) and its
module made to answer every public name from ``tf.compat.v1`` (``tf.placeholder``,
``tf.Session``, ``tf.train.GradientDescentOptimizer``...). ``import tensorflow.data`` and
``from tensorflow.nn import dropout`` give the ``compat.v1`` modules too; the real
subpackages (``tensorflow.python``, ``tensorflow.core``...) load as usual. ``tf.contrib``
and ``import tensorflow.contrib.<name>`` give the emulation of :mod:`.contrib`.
"""

import importlib.abc
import importlib.machinery
import os
import sys
import types
from typing import Callable, Optional

from . import contrib

_V1: Optional[types.ModuleType] = None


class _TF1Module(types.ModuleType):
    """The ``tensorflow`` module's class once loaded: public names come from ``compat.v1``."""

    def __getattribute__(self, name: str):
        if _V1 is not None and name == "contrib":
            return contrib.contrib()
        if _V1 is not None and name[:1] != "_" and name != "compat":
            try:
                return getattr(_V1, name)
            except AttributeError:
                pass
        return types.ModuleType.__getattribute__(self, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, on_load: Callable[[types.ModuleType], None], switch: bool = True) -> None:
        self.on_load, self.switch = on_load, switch

    def find_spec(self, fullname, path, target=None):
        if fullname == "tensorflow":
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _RealLoader(spec.loader, self.on_load, self.switch)
            return spec
        if _V1 is None or not fullname.startswith("tensorflow."):
            return None
        module = _v1_module(fullname.split(".")[1:])
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=True)


class _RealLoader(importlib.abc.Loader):
    """The real package's loader, then the switch to TF 1.x."""

    def __init__(self, real, on_load, switch: bool = True) -> None:
        self.real, self.on_load, self.switch = real, on_load, switch

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module) -> None:
        self.real.exec_module(module)
        if self.switch:
            _switch_to_tf1(module)
        self.on_load(module)


class _AliasLoader(importlib.abc.Loader):
    """``tensorflow.<name>``: the ``compat.v1`` module of that name, as it is."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module, self.spec = module, getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # the import system set ours; the module keeps its own


def _v1_module(parts) -> Optional[types.ModuleType]:
    """The ``compat.v1`` module at ``parts`` (``["data", "experimental"]``), unless the first
    part is a real subpackage of ``tensorflow`` on disk."""
    if parts[0] == "contrib":
        return _contrib_module(parts[1:])
    real = sys.modules.get("tensorflow")
    home = os.path.dirname(getattr(real, "__file__", None) or "")
    if not home or os.path.isdir(os.path.join(home, parts[0])):  # not the API's folders
        return None
    value = _V1
    for part in parts:
        value = getattr(value, part, None)
    return value if isinstance(value, types.ModuleType) else None


def _contrib_module(parts) -> Optional[types.ModuleType]:
    """``tensorflow.contrib`` (``parts`` empty) or one of its modules' (sub)modules."""
    if not parts:
        return contrib.contrib()
    value = contrib.module(parts[0])
    for part in parts[1:]:
        value = getattr(value, part, None)
    return value if isinstance(value, types.ModuleType) else None


def _switch_to_tf1(tf: types.ModuleType) -> None:
    global _V1
    v1 = tf.compat.v1
    v1.disable_v2_behavior()
    _V1 = v1
    tf.__class__ = _TF1Module


def install_import_hook(on_load: Callable[[types.ModuleType], None], switch: bool = True) -> None:
    """Catch the first ``import tensorflow``; ``on_load(tf)`` runs once it is TF 1.x (with
    ``switch``; without it, a TF 2.x repository's code, TensorFlow stays as it is)."""
    if "tensorflow" in sys.modules:  # imported before the launcher ran: only watch it
        if switch:
            _switch_to_tf1(sys.modules["tensorflow"])
        on_load(sys.modules["tensorflow"])
        return
    sys.meta_path.insert(0, _Finder(on_load, switch))
