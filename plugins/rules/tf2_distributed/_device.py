"""The name generated code spells ``npu_device`` with (as the ``tf2`` pack's header code), and
whether a file uses Horovod (its aggregation and broadcast are NPU070's to report)."""

from __future__ import annotations

import re

from npu_codemod.api import FileContext

DEVICE = "npu_device"
_BINDS_NPU = re.compile(r"^[ \t]*(?:import[ \t]+\S+[ \t]+as[ \t]+npu\b|from[ \t]+\S+[ \t]+import[ \t]+"
                        r"[^\n]*\bnpu\b|npu[ \t]*=|def[ \t]+npu\b|class[ \t]+npu\b)", re.MULTILINE)


def device_name(ctx: FileContext) -> str:
    """The file's binding of ``npu_device``; else ``npu`` (imported for the caller), or
    ``npu_device`` when the file binds ``npu`` to something else."""
    bound = next((name for name, target in sorted(ctx.names(DEVICE).bindings.items())
                  if target == DEVICE), None)
    if bound is not None:
        return bound
    name = DEVICE if _BINDS_NPU.search(ctx.original) else "npu"
    ctx.add_import(f"import {DEVICE}" if name == DEVICE else f"import {DEVICE} as {name}")
    return name


_HOROVOD = re.compile(r"^[ \t]*(?:import[ \t]+horovod\b|from[ \t]+horovod\b)", re.MULTILINE)


def uses_horovod(text: str) -> bool:
    """Does the module import Horovod? (It aggregates and broadcasts itself: NPU067 and NPU068
    leave such a file to NPU070, which names the NPU call for each Horovod use.)"""
    return _HOROVOD.search(text) is not None
