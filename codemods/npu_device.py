"""The name generated TF 2.x code spells the ``npu_device`` module with, in one file.

Every rule that writes an ``npu.*`` call (NPU061, NPU065, NPU067, NPU068) spells it with the
file's own binding of ``npu_device`` (``npu`` after ``import npu_device as npu``, ``npu_device``
after ``import npu_device``); a file that binds neither gets ``import npu_device as npu``, or
``import npu_device`` when it binds ``npu`` to something else (``spec/rules-tf2.md``).
"""

from __future__ import annotations

import re
from typing import Optional

from fissix import pytree

from .function_tf import bind_in_function, top_function
from .local_imports import tf_imported_in_functions_only
from .rule import FileContext

DEVICE = "npu_device"
#: A module-level or nested binding of the name ``npu`` (import, assignment, def, class).
_BINDS_NPU = re.compile(r"^[ \t]*(?:import[ \t]+\S+[ \t]+as[ \t]+npu\b|from[ \t]+\S+[ \t]+import[ \t]+"
                        r"[^\n]*\bnpu\b|npu[ \t]*=|def[ \t]+npu\b|class[ \t]+npu\b)", re.MULTILINE)


def device_binding(ctx: FileContext) -> Optional[str]:
    """The file's name for the ``npu_device`` module itself (``npu``, ``npu_device``), or None."""
    names = ctx.names(DEVICE)
    return next((name for name, target in sorted(names.bindings.items()) if target == DEVICE), None)


def device_name(ctx: FileContext) -> str:
    """The name generated code spells ``npu_device`` with: the file's own binding, else
    ``npu`` (``import npu_device as npu``), else ``npu_device`` when the file binds ``npu`` to
    something else."""
    bound = device_binding(ctx)
    if bound is not None:
        return bound
    return DEVICE if _BINDS_NPU.search(ctx.original) else "npu"


def device_import(name: str) -> str:
    """The import that binds ``name`` (from :func:`device_name`) to ``npu_device``."""
    return f"import {DEVICE}" if name == DEVICE else f"import {DEVICE} as {name}"


def device_name_at(ctx: FileContext, site: pytree.Base) -> str:
    """:func:`device_name`, with ``import npu_device[ as npu]`` asked for when the file does
    not bind it yet: at the module's top, or, in a file that imports TensorFlow only inside
    functions (``function_tf``), first in the module-level function that holds ``site`` (code
    written there runs in the process that imports TensorFlow; the module's top runs in the one
    that launches it, e.g. a cluster driver, which should not need the adapter)."""
    name = device_name(ctx)
    if device_binding(ctx) is not None:
        return name
    function = top_function(site) if tf_imported_in_functions_only(ctx) else None
    if function is None:
        ctx.add_import(device_import(name))
    else:
        bind_in_function(function, device_import(name), ctx.newline)  # once: it looks first
    return name
