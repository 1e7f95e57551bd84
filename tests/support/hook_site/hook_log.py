"""Recording each call of an npu-codemod hook, with the plugins implementing it, into a log.

Hooks are called two ways: :meth:`Plugins.call_each` (each implementation on its own) and
pluggy's ``pm.hook.<name>(...)`` (``npu_codemod_forge``); :func:`install` wraps both. A line
of the log is ``{"hook": name, "plugins": [names of the implementing plugins], "pid": pid}``.
Imported by the tests' process (``support.hook_site.hook_log``) and, via ``sitecustomize``,
by the processes they start (``hook_log``): stdlib only, and nothing imported before needed.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from types import ModuleType
from typing import Any, Callable, Optional, Sequence

LOG_ENV = "NPU_CODEMOD_TEST_HOOK_LOG"
MANAGER = "npu_codemod.plugins.manager"
PREFIX = "npu_codemod_"


def record(log: str, hook: str, caller: Any) -> None:
    """Append one call of ``hook`` to ``log``; ``caller`` is its pluggy ``HookCaller``."""
    plugins = [impl.plugin_name for impl in caller.get_hookimpls()]
    with open(log, "a", encoding="utf-8") as stream:  # opened per call: no descriptor stays open
        stream.write(json.dumps({"hook": hook, "plugins": plugins, "pid": os.getpid()}) + "\n")


def install(manager: ModuleType, log: str) -> Callable[[], None]:
    """Record every hook call made after this in this process; returns the function undoing it."""
    import pluggy

    plugins_class, hook_caller = manager.Plugins, pluggy.HookCaller
    call_each, call = plugins_class.call_each, hook_caller.__call__

    def recorded_call_each(self: Any, hook: str, **kwargs: Any) -> Any:
        record(log, hook, getattr(self.pm.hook, hook))
        return call_each(self, hook, **kwargs)

    def recorded_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.name.startswith(PREFIX) and not args:  # pluggy refuses positional arguments
            record(log, self.name, self)
        return call(self, *args, **kwargs)

    plugins_class.call_each, hook_caller.__call__ = recorded_call_each, recorded_call

    def undo() -> None:
        plugins_class.call_each, hook_caller.__call__ = call_each, call

    return undo


class _InstallAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when the plugin manager is first imported, installs the recorder
    on it once its code has run."""

    def __init__(self, log: str) -> None:
        self.log = log

    def find_spec(self, name: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if name != MANAGER:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module, log = spec.loader.exec_module, self.log

        def exec_and_install(module: ModuleType) -> None:
            exec_module(module)
            install(module, log)

        spec.loader.exec_module = exec_and_install  # type: ignore[method-assign]
        return spec


def install_on_import(log: str) -> None:
    """Record the hook calls of this process from the import of the plugin manager on."""
    if MANAGER in sys.modules:
        install(sys.modules[MANAGER], log)
    else:
        sys.meta_path.insert(0, _InstallAfterImport(log))


def read(log: str) -> list[dict[str, Any]]:
    """The calls recorded in ``log``, in order (none when nothing was called)."""
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream]
