"""NPU055 gpu-towers: hand-written multi-GPU towers become one tower on the NPU.

TF 1.x scripts train on several GPUs by building one model copy per GPU in a loop (``for k in
range(n_gpus): with tf.device('/gpu:%d' % k):``, gradients averaged by hand: allenai/bilm-tf,
youtube-8m's ``train.py``, TensorFlow's ``cifar10_multi_gpu_train``), often sized by counting
GPUs (``device_lib.list_local_devices()`` filtered on ``"GPU"``). On Ascend one process drives
one NPU: an NPU host has no GPU (the count is 0, so such code falls back to a CPU device or
builds no tower), and towers placed on ``/gpu:k`` all run on the one NPU. Data parallelism is
one process per NPU, its gradients summed with HCCL (the ``distributed`` pack). Ascend's list
marks ``tf.device`` migratable (NPU008's soft placement) and says nothing of the loop, so this
is reported, never rewritten: the towers and their averaging go, a design change. See
``_towers`` for what counts as a tower loop and a probe.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterable, Union

from npu_codemod.api import TF1_CODE, FileContext, Reference, Rule, hookimpl
from npu_codemod.api._toolkit import TF2, ast_statements

from ._towers import DEVICE, PROBES, file_towers

NPU_WAY = ("on Ascend one process drives one NPU: build one tower (no per-GPU loop, no "
           "gradient averaging across towers) and train data parallel with one process per NPU, "
           "gradients summed with HCCL (the distributed pack: --rules default,distributed, or "
           "npu_bridge's allreduce)")
LOOP = "this loop builds one model copy per GPU (tf.device({device})): " + NPU_WAY
PROBE = ("{spelled}(...) counts GPUs to size the towers: an NPU host has none (the count is 0: "
         "the towers fall back to the CPU or are not built): " + NPU_WAY)


#: The unit layout's word for a loop that enters a device (``_ast_sites``).
TOWER_LOOP = "tower_loop"


def _enters_a_device(node: Union[ast.For, ast.AsyncFor]) -> bool:
    """May the loop ``node`` be a tower loop: does its body enter ``<x>.device(...)`` or
    ``device(...)`` (read with ``ast``; ``file_towers`` decides)? Only its statements are
    read: no expression holds a ``with`` (asked of every loop of every file)."""
    for inner in ast_statements(node):
        if isinstance(inner, (ast.With, ast.AsyncWith)):
            for item in inner.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and (
                        (isinstance(call.func, ast.Attribute) and call.func.attr == "device")
                        or (isinstance(call.func, ast.Name) and call.func.id == "device")):
                    return True
    return False


class GpuTowers(Rule):
    id = "NPU055"
    name = "gpu-towers"
    pack = "xla-gpu"
    file_kinds = TF1_CODE | {TF2}
    description = "Report hand-written multi-GPU towers, which become one tower per NPU process."
    guide_section = "分布式训练脚本迁移"
    guide_section_en = "Migrating distributed training scripts"
    guide_url = Rule.catalog_url(id, name)
    reports = ("Multi-GPU tower loops (a `for` loop whose body enters `tf.device('/gpu:%d' % k)`, "
               "`'/gpu:{}'.format(k)`, `f'/gpu:{k}'` or a device string variable built so, a device "
               "function named for its GPU such as `assign_to_gpu(k, ps_device)`, a "
               "`tf.DeviceSpec(device_type=\"GPU\", device_index=k)`, or any device read "
               "from the loop's variable when the loop computes gradients) and the "
               "GPU counts sizing them (`device_lib.list_local_devices()` filtered on `\"GPU\"`, "
               "`tf.config.list_physical_devices('GPU')`): on Ascend one process drives one NPU; "
               "build one tower and train data parallel with HCCL (the `distributed` pack).")
    example = """
        import tensorflow as tf
        from tensorflow.python.client import device_lib


        def build(model_fn, opt, batches):
            gpus = [d.name for d in device_lib.list_local_devices() if d.device_type == "GPU"]
            tower_grads = []
            for k in range(len(gpus)):
                with tf.device("/gpu:%d" % k):
                    tower_grads.append(opt.compute_gradients(model_fn(batches[k])))
            return tower_grads
    """
    _tokens = ("device",)
    # The loops and probes come from the file's ``ast`` (``file_towers``): only units holding
    # a loop that enters a device, or a probe, are parsed (a lone ``with tf.device`` is
    # NPU008's, and no site of this rule).
    _scope = "site"
    _site_names = (TOWER_LOOP,)
    _ast_sites = ((ast.For, TOWER_LOOP, _enters_a_device), (ast.AsyncFor, TOWER_LOOP, _enters_a_device))
    calls = DEVICE + PROBES

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        return (TOWER_LOOP, *(probe.rpartition(".")[2] for probe in PROBES))

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        towers = ctx.analysis(file_towers)
        where = (reference.line, reference.column)
        if reference.name in DEVICE:
            loop = towers.loops.get(where)
            if loop is not None and loop not in towers.reported:
                towers.reported.add(loop)
                device = " ".join(str(reference.call).strip()[1:-1].split())
                ctx.report_at(*loop, "unmigrated", LOOP.format(device=device))
        elif where in towers.probes:
            ctx.report(reference, "unmigrated", PROBE.format(spelled=reference.spelled))


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [GpuTowers()]
