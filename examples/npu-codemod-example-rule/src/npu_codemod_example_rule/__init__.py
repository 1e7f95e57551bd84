"""npu-codemod rules for the in-house ``mylib`` wrappers (the example of docs/writing-rules.md)."""

from __future__ import annotations

from dataclasses import dataclass

from fissix import pytree

from npu_codemod.codemods.calls import find_argument
from npu_codemod.codemods.rule import Capture, FileContext, Rule
from npu_codemod.plugins.hookspecs import hookimpl

GUIDE = "https://wiki.example.com/npu-migration/mylib"


class MylibDropout(Rule):
    id = "MYL001"
    name = "mylib-dropout"
    description = "Replace mylib.dropout(x, keep_prob) with the NPU's npu_ops.dropout."
    guide_url = GUIDE + "#dropout"
    tokens = ("mylib",)
    pattern = "power< 'mylib' trailer< '.' 'dropout' > call=trailer< '(' [any] ')' > any* >"

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if find_argument(capture["call"], "rate") is not None:
            ctx.report(node, "unmigrated", "mylib.dropout(rate=...) has no NPU twin: "
                       "use npu_ops.dropout(x, keep_prob=1 - rate)")
            return
        node.children[0].value = "npu_ops"  # mylib.dropout(...) -> npu_ops.dropout(...)
        ctx.report(node, "migrated", "replaced mylib.dropout with npu_ops.dropout")


@dataclass
class MakeSessionSettings:
    #: Report every call, not only those without config= (the wrapper may drop it).
    report_all: bool = False


class MylibMakeSession(Rule):
    id = "MYL002"
    name = "mylib-make-session"
    description = "Report mylib.make_session(): its tf.Session needs the NPU config."
    guide_url = GUIDE + "#make-session"
    tokens = ("make_session",)
    pattern = "power< 'mylib' trailer< '.' 'make_session' > call=trailer< '(' [any] ')' > >"
    Settings = MakeSessionSettings

    def visit(self, node: pytree.Base, capture: Capture, ctx: FileContext) -> None:
        if self.settings.report_all or find_argument(capture["call"], "config") is None:
            ctx.report(node, "unmigrated", "mylib.make_session() creates its own tf.Session: "
                       "pass config=npu_config_proto()")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [MylibDropout(), MylibMakeSession()]
