"""The name generated code spells ``npu_device`` with, imported for the caller, and whether a
file uses Horovod, or its program does (their aggregation and broadcast are NPU070's to report)."""

from __future__ import annotations

import re

from npu_codemod.api import Base, FileContext
from npu_codemod.api._toolkit import device_name_at, horovod_program, may_bind_horovod


def device_name(ctx: FileContext, site: Base) -> str:
    """The toolkit's ``device_name``, with ``import npu_device[ as npu]`` added when the file
    does not bind it yet: at the top, or first in the function holding ``site`` when the file
    imports TensorFlow only inside functions (``device_name_at``)."""
    return device_name_at(ctx, site)


_HOROVOD = re.compile(r"^[ \t]*(?:import|from)[ \t]+(?:horovod|byteps)\b", re.MULTILINE)


def uses_horovod(ctx: FileContext) -> bool:
    """Does the module import Horovod, itself or through a repository module (``from common
    import hvd``), or BytePS (Horovod's API), or is it part of a program one of whose modules
    does (a script that trains through ``from dist import wrap_tape, distributed_optimizer``)?
    (Horovod aggregates and broadcasts: NPU067 and NPU068 leave such a file to NPU070, or
    NPU071 for BytePS, which name the NPU call for each use; an NPU collective too would
    aggregate twice.)"""
    return _HOROVOD.search(ctx.original) is not None or horovod_program(ctx.facts, ctx.path) \
        or may_bind_horovod(ctx.original) and bool(ctx.names("horovod").bindings)
