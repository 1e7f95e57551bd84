"""npu-codemod rules for the in-house ``mylib`` wrappers (the example of docs/writing-rules.md)."""

from __future__ import annotations

from dataclasses import dataclass

from npu_codemod.api import FileContext, Reference, Rule, find_argument, hookimpl, replace_callee

GUIDE = "https://wiki.example.com/npu-migration/mylib"
NPU_OPS = "from npu_bridge.estimator import npu_ops"


class MylibDropout(Rule):
    id = "MYL001"
    name = "mylib-dropout"
    description = "Replace mylib.dropout(x, keep_prob) with the NPU's npu_ops.dropout."
    guide_url = GUIDE + "#dropout"
    calls = ("mylib.dropout", "npu_bridge.estimator.npu_ops.dropout")

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.name.startswith("npu_bridge."):  # a second run: already migrated
            ctx.report(reference, "migrated", "uses npu_ops.dropout")
        elif find_argument(reference.call, "rate") is not None:
            ctx.report(reference, "unmigrated", "mylib.dropout(rate=...) has no NPU twin: "
                       "use npu_ops.dropout(x, keep_prob=1 - rate)")
        else:
            replace_callee(reference, "npu_ops.dropout")
            ctx.add_import(NPU_OPS)
            ctx.report(reference, "migrated", "replaced mylib.dropout with npu_ops.dropout")


@dataclass
class MakeSessionSettings:
    #: Report every call, not only those without config= (the wrapper may drop it).
    report_all: bool = False


class MylibMakeSession(Rule):
    id = "MYL002"
    name = "mylib-make-session"
    description = "Report mylib.make_session(): its tf.Session needs the NPU config."
    guide_url = GUIDE + "#make-session"
    calls = ("mylib.make_session",)
    Settings = MakeSessionSettings

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if self.settings.report_all or find_argument(reference.call, "config") is None:
            ctx.report(reference, "unmigrated", "mylib.make_session() creates its own "
                       "tf.Session: pass config=npu_config_proto()")


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [MylibDropout(), MylibMakeSession()]
