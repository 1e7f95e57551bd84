"""Run a function on a module once it is imported (Keras' training modules, say): modules
the watch needs that TensorFlow only loads when the script first uses them."""

import importlib.abc
import importlib.machinery
import sys
from typing import Callable

_WAITING: dict = {}  # module name -> functions to run on it once it is loaded


def when_imported(name: str, then: Callable) -> None:
    """``then(module)`` now if ``name`` is loaded, else right after its import."""
    if name in sys.modules:
        then(sys.modules[name])
        return
    if not _WAITING:
        sys.meta_path.insert(0, _Finder())
    _WAITING.setdefault(name, []).append(then)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in _WAITING:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Then(spec.loader, _WAITING.pop(fullname))
                return spec
        return None


class _Then(importlib.abc.Loader):
    def __init__(self, real, functions) -> None:
        self.real, self.functions = real, functions

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module) -> None:
        self.real.exec_module(module)
        for function in self.functions:
            function(module)
