"""NPU055 gpu-towers: hand-written multi-GPU towers, and the GPU counts sizing them.

On Ascend one process drives one NPU; a loop building one model copy per ``/gpu:k`` (bilm-tf's
``training.py``, youtube-8m's ``train.py`` with ``device_lib.list_local_devices()``) ran in
silence and the repository was ``ready``. NPU008 owns ``tf.device`` for NPU100, so the audit
said nothing of the loop either."""

from __future__ import annotations

import ast
import json

import pytest

from npu_codemod.plugins.rules.xla_gpu.npu055_gpu_towers import _enters_a_device
from npu_codemod.testing import assert_reports

from support.cli import cli
from support.git import make_repo
from support.rules import messages

RULES = {"NPU055"}

TOWERS = '''\
import tensorflow as tf


def average(tower_grads):
    return [(tf.reduce_mean(tf.stack([g for g, _ in gv]), 0), gv[0][1]) for gv in zip(*tower_grads)]


def train(x, n_gpus=4):
    opt = tf.train.AdagradOptimizer(0.1)
    tower_grads = []
    with tf.variable_scope("m", reuse=tf.AUTO_REUSE):
        for k in range(n_gpus):
            with tf.device("/gpu:%d" % k):
                w = tf.get_variable("w", [4, 1])
                loss = tf.reduce_mean(tf.matmul(x[k], w))
                tower_grads.append(opt.compute_gradients(loss))
    return opt.apply_gradients(average(tower_grads))
'''

PROBED = '''\
import tensorflow as tf
from tensorflow.python.client import device_lib


def build(model, batch):
    local_device_protos = device_lib.list_local_devices()
    gpus = [x.name for x in local_device_protos if x.device_type == "GPU"]
    num_gpus = len(gpus)
    if num_gpus > 0:
        num_towers = num_gpus
        device_string = "/gpu:%d"
    else:
        num_towers = 1
        device_string = "/cpu:%d"
    inputs = tf.split(batch, num_towers)
    outputs = []
    for i in range(num_towers):
        with tf.device(device_string % i):
            outputs.append(model(inputs[i]))
    return outputs
'''


def test_a_tower_loop_is_reported_once_at_the_loop() -> None:
    findings = assert_reports(RULES, TOWERS, findings=[("NPU055", 12, 8, "unmigrated")])
    message = messages(findings, "NPU055")[0]
    assert message.startswith('this loop builds one model copy per GPU (tf.device("/gpu:%d" % k)): '
                              "on Ascend one process drives one NPU: build one tower")
    assert "HCCL" in message and "distributed pack" in message


def test_a_gpu_count_sizing_the_towers_is_reported_with_the_loop() -> None:
    assert_reports(RULES, PROBED, findings=[("NPU055", 6, 26, "unmigrated"), ("NPU055", 17, 4, "unmigrated")])


@pytest.mark.parametrize("device", [
    "'/gpu:{}'.format(k)", "f'/gpu:{k}'", "'/device:GPU:' + str(k)", "'/GPU:%d' % (k,)",
    "tf.DeviceSpec.from_string('/gpu:%d' % k).to_string()",
])
def test_every_spelling_of_a_gpu_index(device: str) -> None:
    source = f"import tensorflow as tf\n\nfor k in range(4):\n    with tf.device({device}):\n        pass\n"
    assert_reports(RULES, source, findings=[("NPU055", 3, 0, "unmigrated")])


def test_a_device_variable_built_in_the_loop() -> None:
    source = ("import tensorflow as tf\n\n\ndef f(n):\n    for k in range(n):\n        dev = '/gpu:%d' % k\n"
              "        with tf.device(dev), tf.name_scope('tower_%d' % k):\n            pass\n")
    assert_reports(RULES, source, findings=[("NPU055", 5, 4, "unmigrated")])


def test_a_loop_over_the_gpus_a_probe_found() -> None:
    source = ("import tensorflow as tf\n\n\ndef f():\n"
              "    gpus = tf.config.experimental.list_physical_devices('GPU')\n"
              "    names = [g.name for g in gpus]\n"
              "    for name in names:\n        with tf.device(name):\n            pass\n")
    assert_reports(RULES, source, findings=[("NPU055", 5, 11, "unmigrated"), ("NPU055", 7, 4, "unmigrated")])


def test_nested_device_scopes_in_one_loop_are_one_site() -> None:
    source = ("import tensorflow as tf\n\nfor k in range(2):\n    with tf.device('/gpu:%d' % k):\n        pass\n"
              "    with tf.device('/gpu:%d' % k):\n        pass\n")
    assert_reports(RULES, source, findings=[("NPU055", 3, 0, "unmigrated")])


DEVICE_FUNCTION = '''\
import tensorflow as tf
from gpu_utils import assign_to_gpu, average_grads_and_vars


def train(inputs, ps_device, num_core_per_host):
  tower_grads_and_vars = []
  for i in range(num_core_per_host):
    reuse = True if i > 0 else None
    with tf.device(assign_to_gpu(i, ps_device)), \\
        tf.variable_scope(tf.get_variable_scope(), reuse=reuse):
      tower_grads_and_vars.append(single_core_graph(inputs[i]))
  return average_grads_and_vars(tower_grads_and_vars)
'''


def test_a_device_function_named_for_the_gpu_it_assigns() -> None:
    """transformer-xl's and xlnet's ``train_gpu.py``: ``assign_to_gpu(i, ps_device)`` returns a
    device function placing op ``i``'s tower on ``/gpu:i`` (variables on the ps device)."""
    findings = assert_reports(RULES, DEVICE_FUNCTION, findings=[("NPU055", 7, 2, "unmigrated")])
    assert messages(findings, "NPU055")[0].startswith(
        "this loop builds one model copy per GPU (tf.device(assign_to_gpu(i, ps_device))): ")


DEVICE_LIST = '''\
import tensorflow as tf
from ops import avg_grads


def build_model(self):
    all_d_grads = []
    d_opt = tf.train.AdamOptimizer(self.config.learning_rate)
    for idx, device in enumerate(self.devices):
        with tf.device("/%s" % device):
            with tf.name_scope("device_%s" % idx):
                self.build_model_single_gpu(idx)
                all_d_grads.append(d_opt.compute_gradients(self.d_losses[-1]))
                tf.get_variable_scope().reuse_variables()
    self.d_optim = d_opt.apply_gradients(avg_grads(all_d_grads))
'''


def test_a_loop_computing_gradients_on_each_device_of_a_list() -> None:
    """improved-gan's ``build_model.py``: the devices (``["gpu:0", ..., "gpu:3"]``) come from the
    caller; one gradient per device, averaged after the loop, is a tower loop."""
    assert_reports(RULES, DEVICE_LIST, findings=[("NPU055", 8, 4, "unmigrated")])


DEVICE_SPEC = '''\
import tensorflow as tf


def build(q_inp, args):
    q_inp_split = tf.split(q_inp, args.gpus)
    output_vectmap = []
    for gpu_id in range(args.gpus):
        with tf.device(tf.DeviceSpec(device_type="GPU", device_index=gpu_id)):
            with tf.variable_scope(tf.get_variable_scope(), reuse=(gpu_id > 0)):
                net, pretrain_path, last_layer = get_network(args.model, q_inp_split[gpu_id])
                output_vectmap.append(net.get_output())
    return output_vectmap
'''


@pytest.mark.parametrize("spec", ['tf.DeviceSpec(device_type="GPU", device_index=gpu_id)',
                                  "tf.DeviceSpec(None, None, None, 'gpu', gpu_id)",
                                  'tf.DeviceSpec(job="worker", device_type="GPU", device_index=gpu_id).to_string()'])
def test_a_device_spec_of_a_gpu_indexed_by_the_loop(spec: str) -> None:
    """tf-pose-estimation's ``train.py``: one tower per GPU placed by a ``tf.DeviceSpec`` of
    device type ``GPU`` and index ``gpu_id`` (the loss and its gradients are built after the
    loop): no '/gpu:%d' string, so the loop went unreported."""
    source = DEVICE_SPEC.replace('tf.DeviceSpec(device_type="GPU", device_index=gpu_id)', spec)
    findings = assert_reports(RULES, source, findings=[("NPU055", 7, 4, "unmigrated")])
    assert messages(findings, "NPU055")[0].startswith(f"this loop builds one model copy per GPU (tf.device({spec})): ")


def test_a_device_spec_of_a_cpu_is_no_tower() -> None:
    source = DEVICE_SPEC.replace('device_type="GPU"', 'device_type="CPU"')
    assert_reports(RULES, source, findings=[])


@pytest.mark.parametrize("source", [
    # gradients on each of a list of devices that are CPUs
    ("import tensorflow as tf\n\nfor k in range(4):\n    with tf.device('/cpu:%d' % k):\n"
     "        grads.append(opt.compute_gradients(loss[k]))\n"),
    # a device function that names no GPU, and no gradient in the loop
    "import tensorflow as tf\n\nfor i in range(4):\n    with tf.device(assign_to_worker(i)):\n        pass\n",
    # a device list entered without any gradient: a placement, not a tower
    "import tensorflow as tf\n\nfor d in self.devices:\n    with tf.device(d):\n        out.append(f(d))\n",
    # gradients on each device of a list of CPUs, or of worker tasks (in-graph replication):
    # no GPU in sight, the loop's devices are named
    ("import tensorflow as tf\n\nfor d in ['/cpu:0', '/cpu:1']:\n    with tf.device(d):\n"
     "        grads.append(opt.compute_gradients(loss))\n"),
    ("import tensorflow as tf\n\nfor task in range(n):\n    with tf.device(tf.train.replica_device_setter("
     "worker_device='/job:worker/task:%d' % task)):\n        grads.append(tf.gradients(loss, params))\n"),
])
def test_what_no_gpu_and_no_gradient_make_a_tower_of_is_left_alone(source: str) -> None:
    assert_reports(RULES, source, findings=[])


@pytest.mark.parametrize("source", [
    # one fixed device (NPU008 handles tf.device)
    "import tensorflow as tf\n\nwith tf.device('/gpu:0'):\n    pass\n",
    # a fixed device inside a loop: not one per iteration
    "import tensorflow as tf\n\nfor k in range(4):\n    with tf.device('/gpu:0'):\n        pass\n",
    # a loop over other devices
    "import tensorflow as tf\n\nfor k in range(4):\n    with tf.device('/cpu:%d' % k):\n        pass\n",
    "import tensorflow as tf\n\nfor d in ['/cpu:0', '/cpu:1']:\n    with tf.device(d):\n        pass\n",
    # a GPU string formatted with something else than the loop's variable
    "import tensorflow as tf\n\nfor step in range(9):\n    with tf.device('/gpu:%d' % FLAGS.gpu):\n        pass\n",
    # the device string is made in the body, not entered
    "import tensorflow as tf\n\nfor k in range(4):\n    names.append('/gpu:%d' % k)\n    tf.device\n",
    # not TensorFlow's device
    "import tensorflow as tf\n\nfor k in range(4):\n    with device('/gpu:%d' % k):\n        pass\n",
    # a GPU count that sizes no tower (memory growth, a log line)
    ("import tensorflow as tf\n\ngpus = tf.config.experimental.list_physical_devices('GPU')\n"
     "for gpu in gpus:\n    tf.config.experimental.set_memory_growth(gpu, True)\n"),
    ("import tensorflow as tf\nfrom tensorflow.python.client import device_lib\n\n"
     "print([d.name for d in device_lib.list_local_devices() if d.device_type == 'GPU'])\n"),
    # all local devices, not filtered on GPUs
    ("import tensorflow as tf\nfrom tensorflow.python.client import device_lib\n\n"
     "devices = [d.name for d in device_lib.list_local_devices()]\n"
     "for d in devices:\n    with tf.device(d):\n        pass\n"),
])
def test_what_is_no_gpu_tower_is_left_alone(source: str) -> None:
    assert_reports(RULES, source, findings=[])


@pytest.mark.parametrize("body, enters", [
    ("with tf.device(d):\n    pass", True),
    ("async with device(d):\n    pass", True),
    ("with a, tf.device(d) as scope:\n    pass", True),
    # in every kind of block below the loop, at any depth
    ("if x:\n    pass\nelse:\n    while y:\n        with tf.device(d):\n            pass", True),
    ("try:\n    pass\nexcept E:\n    with tf.device(d):\n        pass", True),
    ("try:\n    pass\nfinally:\n    with tf.device(d):\n        pass", True),
    ("def tower():\n    class T:\n        with tf.device(d):\n            pass", True),
    ("match x:\n    case 1:\n        with tf.device(d):\n            pass", True),
    ("for i in y:\n    pass\nelse:\n    with tf.device(d):\n        pass", True),
    # a device named, called or entered otherwise: no ``with`` of it
    ("tf.device(d)\nf(lambda: tf.device(d))\nx = [tf.device(d) for d in y]", False),
    ("with tf.variable_scope(d):\n    pass\nwith device:\n    pass", False),
    ("with tf.device(d).x:\n    pass", False),
])
def test_the_mark_finds_a_device_entered_anywhere_in_the_loop(body: str, enters: bool) -> None:
    indented = "".join(f"    {line}\n" for line in body.split("\n"))
    (loop,) = ast.parse(f"for k in range(4):\n{indented}").body
    assert isinstance(loop, ast.For)
    assert _enters_a_device(loop) is enters
    (outer,) = ast.parse("async def f():\n    async for k in y:\n        if z:\n"
                         + "".join(f"            {line}\n" for line in body.split("\n"))).body
    assert isinstance(outer, ast.AsyncFunctionDef) and isinstance(outer.body[0], ast.AsyncFor)
    assert _enters_a_device(outer.body[0]) is enters


def test_a_repository_with_gpu_towers_is_not_ready(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI with the default rules: the tower is left work, counted once, and NPU100
    reports no miss of its own at the ``tf.device`` inside it."""
    make_repo(tmp_path / "lm", {"lm/train.py": TOWERS, "lm/towers.py": PROBED})
    (tmp_path / "repos.txt").write_text("lm\n")
    cli("run", "--repos", "repos.txt", "--dry-run", "--report-dir", "out", "--no-progress", "--no-cache",
        cwd=tmp_path, expect=0)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    [repo] = record["repos"]
    ours = sorted((f["rule_id"], f["path"], f["line"]) for f in repo["findings"]
                  if f["rule_id"] in RULES | {"NPU100"})
    assert ours == [("NPU055", "lm/towers.py", 6), ("NPU055", "lm/towers.py", 17),
                    ("NPU055", "lm/train.py", 12)]
    assert repo["verdict"] != "ready"
    summary = (tmp_path / "out" / "summary.csv").read_text().splitlines()
    assert [line.rpartition(",NPU055,")[2] for line in summary if ",NPU055," in line] == ["0,3,0,0,0"]
