"""NPU062 tf2-compat-header: TF 1.x code on TensorFlow 2.x gets TF Adapter 2.x's compat header.

A ``tf2-compat`` file (``tf.compat.v1`` with ``disable_v2_behavior()``, in a repository that runs
TF 2.x) ports like TF 1.x code, but the names the TF 1.x rules write (``npu_config_proto``,
``npu_run_config_init``...) come from ``npu_device.compat.v1.npu_init``, not from the TF 1.15
adapter's ``npu_bridge``: NPU001's header, for TF 2.x.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    hookimpl,
    insert_after,
    insert_before,
    parse_statements,
)
from npu_codemod.api._toolkit import (
    COMPAT_INIT_IMPORT,
    NPU_INIT_IMPORT,
    TF2_COMPAT,
    device_binding,
    find_import,
    header_index,
    position,
    tree_text,
)

from ._header import insert_at_header

COMPAT_STAR = COMPAT_INIT_IMPORT
HEADER = f"import npu_device\n{COMPAT_STAR}\nnpu_device.compat.enable_v1()\n"
#: ``<name>.compat.enable_v1()`` as a module-level statement.
_SWITCH = re.compile(r"^\s*(\w+)\.compat\.enable_v1\(\s*\)\s*$")

IN_PLACE = "the npu_device.compat.v1 header is in place"
ADDED = ("added the TF Adapter 2.x compat header (import npu_device; from "
         "npu_device.compat.v1.npu_init import *; npu_device.compat.enable_v1())")
REPLACED = ("replaced 'from npu_bridge.npu_init import *' by the TF Adapter 2.x compat header: "
            "npu_bridge is the TF 1.15 adapter; TF Adapter 2.x ships it as npu_device.compat.v1")
COMPLETED = "added the missing lines of the npu_device.compat.v1 header ({lines})"


class CompatHeader(Rule):
    id = "NPU062"
    name = "tf2-compat-header"
    pack = "tf2"
    file_kinds = frozenset({TF2_COMPAT})
    description = ("Add TF Adapter 2.x's compat.v1 header to every TF 1.x-on-TF 2.x file "
                   "another rule rewrote (NPU001's counterpart).")
    guide_section = "TF2 compat.v1 迁移: 头文件"
    guide_section_en = "Porting compat.v1 scripts: the header"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("In a `tf2-compat` file (TF 1.x code run on TensorFlow 2.x through `tf.compat.v1` "
                "with `disable_v2_behavior()`) that another rule rewrote: `import npu_device`, "
                f"`{COMPAT_STAR}`, `npu_device.compat.enable_v1()` at NPU001's position (the star "
                "import binds `tf`, so it goes before the file's own imports); a `from "
                "npu_bridge.npu_init import *` already there is replaced by them; a header with only some of "
                "its lines gets the missing ones next to them.")
    reports = ""
    example = """
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()


        def train(loss):
            with tf.Session() as sess:
                sess.run(loss)
    """
    example_with = ("NPU007",)
    _scope = "site"
    after = ("*",)  # it depends on whether the other rules changed the file

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if NPU_INIT_IMPORT in ctx.imports:
            ctx.imports.remove(NPU_INIT_IMPORT)  # the compat star import binds the same names
        bridge = find_import(tree, NPU_INIT_IMPORT)
        star, switch = find_import(tree, COMPAT_STAR), _switch(tree)
        if star is not None and switch is not None and device_binding(ctx) is not None:
            ctx.report(star, "migrated", IN_PLACE)
        elif bridge is not None:
            _replace(bridge, ctx.newline)
            ctx.report(bridge if bridge.parent is not None else tree, "migrated", REPLACED)
        elif star is not None or switch is not None:
            added = _complete(ctx, star, switch)
            ctx.report(star or switch or tree, "migrated", COMPLETED.format(lines="; ".join(added)))
        elif ctx.changed:
            index = header_index(tree)
            line, column = position(tree.children[index]) if index < len(tree.children) else (1, 0)
            insert_at_header(tree, HEADER, ctx.newline)
            ctx.report_at(line, column, "migrated", ADDED)


def _switch(tree: Node) -> Optional[Base]:
    """The module-level ``<name>.compat.enable_v1()`` statement, if any."""
    return next((child for child in tree.children if _SWITCH.match(tree_text(child).strip())), None)


def _complete(ctx: FileContext, star: Optional[Base], switch: Optional[Base]) -> list[str]:
    """Add the header lines missing next to those present (the star import, or the switch);
    the lines added."""
    binding = device_binding(ctx)
    added = [] if binding is not None else ["import npu_device"]
    name = binding or "npu_device"
    if star is None and switch is not None:
        added.append(COMPAT_STAR)
        insert_before(switch, "\n".join(added), ctx.newline)
    elif star is not None:
        added.append(f"{name}.compat.enable_v1()")
        insert_after(star, "\n".join(added[-1:]), ctx.newline)
        if binding is None:
            insert_before(star, "import npu_device", ctx.newline)
    return added


def _replace(statement: Base, newline: str) -> None:
    """The header in place of the module-level ``statement`` (the npu_bridge star import)."""
    new = parse_statements(HEADER, newline)
    new[0].prefix = statement.prefix
    parent, index = statement.parent, statement.remove()
    if parent is not None and index is not None:
        for offset, node in enumerate(new):
            parent.insert_child(index + offset, node)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [CompatHeader()]
