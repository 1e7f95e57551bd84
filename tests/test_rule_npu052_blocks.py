"""NPU052 gpu-memory: the ``for``/``try``/``if`` a removed GPU memory setting leaves empty goes
with it when that is clearly safe; otherwise the setting stays and is reported (TF 2.x scripts
as TensorFlow's GPU guide and Horovod's examples write them)."""

from __future__ import annotations

import pytest

from npu_codemod.testing import assert_migrates, assert_reports

from support.rules import messages

RULES = {"NPU001", "NPU052"}  # NPU001 writes nothing into a TF 2.x file
TF2 = {"tf-runtime:2"}
#: Without the tf2 pack, a TF 2.x file gets one note saying so.
NOTE = ("NPU000", 1, 0, "unmigrated")

GUIDE = '''\
"""Train with the GPU memory recipe of TensorFlow's GPU guide."""
import tensorflow as tf

from trainer import train

gpus = tf.config.list_physical_devices("GPU")
if gpus:
    try:
        # Currently, memory growth needs to be the same across GPUs
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
    except RuntimeError as e:
        # Memory growth must be set before GPUs have been initialized
        print(e)


@tf.function
def step(model, x):
    return model(x)


if __name__ == "__main__":
    train(step)
'''
GUIDE_MIGRATED = '''\
"""Train with the GPU memory recipe of TensorFlow's GPU guide."""
import tensorflow as tf

from trainer import train

gpus = tf.config.list_physical_devices("GPU")


@tf.function
def step(model, x):
    return model(x)


if __name__ == "__main__":
    train(step)
'''


def test_the_guide_s_if_try_for_recipe_goes_whole() -> None:
    findings = assert_migrates(RULES, GUIDE, GUIDE_MIGRATED, facts=TF2,
                               findings=[NOTE, ("NPU052", 11, 12, "migrated")], removed=[("NPU052", 11, 12, "migrated")])
    assert messages(findings, "NPU052") == [
        "removed tf.config.experimental.set_memory_growth(...): the NPU has no GPU memory settings"]


def test_the_guide_s_recipe_that_also_lists_logical_devices_keeps_the_rest() -> None:
    before = GUIDE.replace('''            tf.config.experimental.set_memory_growth(gpu, True)
''', '''            tf.config.experimental.set_memory_growth(gpu, True)
        logical_gpus = tf.config.list_logical_devices("GPU")
        print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
''')
    after = GUIDE.replace('''        # Currently, memory growth needs to be the same across GPUs
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
''', '''        # Currently, memory growth needs to be the same across GPUs
        logical_gpus = tf.config.list_logical_devices("GPU")
        print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
''')
    assert_migrates(RULES, before, after, facts=TF2, findings=[NOTE, ("NPU052", 11, 12, "migrated")],
                    removed=[("NPU052", 11, 12, "migrated")])


HOROVOD = '''\
"""Horovod's way: pin each process to its GPU."""
import tensorflow as tf
import horovod.tensorflow as hvd

hvd.init()
gpus = tf.config.experimental.list_physical_devices("GPU")
for gpu in gpus: tf.config.experimental.set_memory_growth(gpu, True)
if gpus:
    tf.config.experimental.set_visible_devices(gpus[hvd.local_rank()], "GPU")
'''


def test_a_one_line_loop_goes_and_the_device_pinning_stays() -> None:
    after = HOROVOD.replace("for gpu in gpus: tf.config.experimental.set_memory_growth(gpu, True)\n", "")
    assert_migrates(RULES, HOROVOD, after, facts=TF2, findings=[("NPU052", 7, 17, "migrated")],
                    removed=[("NPU052", 7, 17, "migrated")])


def test_a_loop_that_also_does_other_things_keeps_them() -> None:
    before = '''\
"""Set up the devices."""
import logging

import tensorflow as tf


def setup(gpus, limit):
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
        tf.config.experimental.set_virtual_device_configuration(
            gpu, [tf.config.experimental.VirtualDeviceConfiguration(memory_limit=limit)])
        logging.info("configured %s", gpu.name)


def grow(gpu):
    tf.config.experimental.set_memory_growth(gpu, True)
'''
    after = '''\
"""Set up the devices."""
import logging

import tensorflow as tf


def setup(gpus, limit):
    for gpu in gpus:
        logging.info("configured %s", gpu.name)


def grow(gpu):
    pass
'''
    removed = [("NPU052", 9, 8, "migrated"), ("NPU052", 10, 8, "migrated"), ("NPU052", 16, 4, "migrated")]
    assert_migrates(RULES, before, after, facts=TF2, findings=removed, removed=removed)


@pytest.mark.parametrize("source, why", [
    ('''\
import tensorflow as tf


def first_gpu(verbose):
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    if verbose:
        print("devices:", len(gpus))
    return gpu
''', "its loop variable is used outside the loop"),
    ('''\
import tensorflow as tf

gpus = tf.config.list_physical_devices("GPU")
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
print("last device:", gpu)
''', "its loop variable is used outside the loop"),
    ('''\
import tensorflow as tf

if tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("GPU")[0], True)
else:
    print("no GPU")
''', "the if statement has other branches"),
    ('''\
import tensorflow as tf

try:
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
finally:
    print("devices ready")
''', "the try statement has an else or finally clause"),
    ('''\
import tensorflow as tf

with tf.device("/cpu:0"):
    tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("GPU")[0], True)
''', "a with block may do more than hold it"),
    ('''\
import tensorflow as tf

for gpu in tf.config.list_physical_devices(input("device type: ")):
    tf.config.experimental.set_memory_growth(gpu, True)
''', "the loop iterates over a value that may have side effects"),
])
def test_a_setting_whose_removal_is_not_clearly_safe_stays_and_is_reported(source: str, why: str) -> None:
    line = next(number for number, text in enumerate(source.splitlines(), 1) if "set_memory_growth" in text)
    findings = assert_reports(RULES, source, facts=TF2)
    assert [(f.rule_id, f.line, f.status) for f in findings] == [(NOTE[0], NOTE[1], NOTE[3]), ("NPU052", line, "unmigrated")]
    assert [message.split(" (guide: ")[0] for message in messages(findings, "NPU052")] == [
        "remove tf.config.experimental.set_memory_growth(...) by hand with the statement around it, "
        f"which it would leave empty ({why}): the NPU has no GPU memory settings"]


#: TensorFlowTTS's training scripts: an index loop over the device list at module level, the
#: index's name reused as a local of the script's functions.
INDEXED = '''\
"""Train MelGAN."""

import tensorflow as tf

physical_devices = tf.config.list_physical_devices("GPU")
for i in range(len(physical_devices)):
    tf.config.experimental.set_memory_growth(physical_devices[i], True)

import sys


def collate(batch):
    return [batch[i] for i in range(len(batch))]


def main():
    for i, item in enumerate(sys.argv):
        print(i, item)


if __name__ == "__main__":
    main()
'''


def test_an_index_loop_over_the_devices_goes_when_its_index_is_read_nowhere_else() -> None:
    """Regression (TensorFlowTTS): ``range(len(devices))`` counted as a value that may have side
    effects, and ``i``, a local of other functions, as the loop variable used outside the loop."""
    after = INDEXED.replace('''for i in range(len(physical_devices)):
    tf.config.experimental.set_memory_growth(physical_devices[i], True)
''', "")
    assert_migrates(RULES, INDEXED, after, facts=TF2, findings=[NOTE, ("NPU052", 7, 4, "migrated")],
                    removed=[("NPU052", 7, 4, "migrated")])


@pytest.mark.parametrize("reader", ['''
def last_device():
    return physical_devices[i]
''', '''
class Devices:
    last = i
''', '''
print("devices:", i + 1)
'''], ids=["function", "class-body", "module"])
def test_an_index_loop_whose_index_is_read_later_stays(reader: str) -> None:
    source = INDEXED.replace("\n\ndef collate", reader + "\n\ndef collate")
    findings = assert_reports(RULES, source, facts=TF2)
    assert [message.split(" (guide: ")[0] for message in messages(findings, "NPU052")] == [
        "remove tf.config.experimental.set_memory_growth(...) by hand with the statement around it, "
        "which it would leave empty (its loop variable is used outside the loop): the NPU has no GPU "
        "memory settings"]
