"""The name generated code spells ``npu_device`` with, imported for the caller, and whether a
file uses Horovod (its aggregation and broadcast are NPU070's to report)."""

from __future__ import annotations

import re

from npu_codemod.api import Base, FileContext
from npu_codemod.api._toolkit import device_name_at


def device_name(ctx: FileContext, site: Base) -> str:
    """The toolkit's ``device_name``, with ``import npu_device[ as npu]`` added when the file
    does not bind it yet: at the top, or first in the function holding ``site`` when the file
    imports TensorFlow only inside functions (``device_name_at``)."""
    return device_name_at(ctx, site)


_HOROVOD = re.compile(r"^[ \t]*(?:import[ \t]+horovod\b|from[ \t]+horovod\b)", re.MULTILINE)


def uses_horovod(text: str) -> bool:
    """Does the module import Horovod? (It aggregates and broadcasts itself: NPU067 and NPU068
    leave such a file to NPU070, which names the NPU call for each Horovod use.)"""
    return _HOROVOD.search(text) is not None
