"""Library code: a module no entry script of the repository reaches (``library_code``).

NPU067 and NPU068 change how a *program* trains (spec ``rules-tf2.md``: NPU061 gives the
program-level changes to entry scripts and their imports; library modules get none). A
package's ``train_step``, or a test helper's ``compile``, runs in whatever program imports the
library: rewriting it would make ``import <library>`` need ``npu_device`` on every machine and
aggregate the gradients of every user's program (twice where the user's script is migrated
too). There each site is reported with the line the rule would add, and nothing is imported.
"""

from __future__ import annotations

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import library_code

LIBRARY = ("library code (no entry script of the repository reaches this module): not rewritten, "
           "so that importing it needs no npu_device; for distributed training on NPUs: {line}")


def in_library(ctx: FileContext) -> bool:
    """Is the file library code (the repository's programs are known and reach it not)?"""
    return library_code(ctx.facts, ctx.path)
