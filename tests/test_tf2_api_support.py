"""NPU071 tf2-api-support: TF 2.x files against Ascend's TF 2.6 list (``spec/rules-tf2.md``);
NPU100 (the TF 1.15 list) never runs on them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from npu_codemod import testing
from npu_codemod.codemods import regenerate_support_list as regenerate
from npu_codemod.codemods.api_sites import ApiStatus
from npu_codemod.codemods.support_list import support_list_tf2
from npu_codemod.plugins.rules.tf2._migrated_advice import migrated_advice

from support.cli import cli
from support.csvfiles import read_csv
from support.git import make_repo
from support.rules import assert_unchanged, process, run_rules, sites
from support.tf2_scripts import COMPAT_SESSION, KERAS_FIT

TF2_RUNTIME = {"tf-runtime:2"}
SOURCE = Path(__file__).parent / "data" / "ascend-tf2.6-api-support.csv"

AUGMENT = '''\
"""Data augmentation helpers of the detection model (TF 2.x)."""
import numpy as np
import tensorflow as tf


class RandomJitter(tf.keras.layers.Layer):
    def call(self, boxes):
        noise = tf.numpy_function(lambda b: np.random.normal(0, 0.01, b.shape), [boxes], tf.float64)
        return boxes + tf.cast(noise, boxes.dtype)


def area(boxes):
    boxes = tf.ensure_shape(boxes, [None, 4])
    widths = tf.maximum(boxes[:, 2] - boxes[:, 0], 0.0)
    return widths * tf.maximum(boxes[:, 3] - boxes[:, 1], 0.0)


def iou_matrix(a, b):
    return tf.einsum("ij,kj->ik", a, b, dtype="float64")
'''


def test_the_shipped_tf26_list_is_what_the_script_makes_of_the_published_csv() -> None:
    assert hashlib.sha256(SOURCE.read_bytes()).hexdigest() == (
        "1909b83220cd3408e8a28559f1a3be6fc1726403211f57d049bdb314df85a8ec")  # CRLF bytes
    shipped = regenerate.TF26_DATA_FILE.read_text(encoding="utf-8")
    assert shipped == regenerate.render(SOURCE.read_text(encoding="utf-8"), SOURCE.name,
                                        regenerate.TF26_PROVENANCE)
    assert "v2/TF2.6_api_support_list.xlsx in Huawei's Ascend/tensorflow repository" in shipped
    assert regenerate.main(["--list", "tf2.6", "--check", str(SOURCE)]) == 0
    assert support_list_tf2().lookup("tf.numpy_function") == ("tf.numpy_function", "unsupported")


def test_unsupported_calls_and_float64_are_reported_a_custom_layer_is_not() -> None:
    findings = assert_unchanged(AUGMENT, {"NPU071", "NPU100"}, facts=TF2_RUNTIME)
    assert sites(findings) == [
        ("NPU071", 8, 16, "unmigrated"), ("NPU071", 8, 89, "unmigrated"),
        ("NPU071", 13, 12, "unmigrated"), ("NPU071", 19, 11, "unmigrated"),
        ("NPU071", 19, 40, "unmigrated")]
    messages = [f.message.split(" (guide")[0] for f in findings]
    assert messages[0] == "not supported on Ascend and no migration path: replace tf.numpy_function"
    assert messages[1] == "float64/complex dtypes are not supported on the NPU: tf.float64"
    assert messages[4] == 'float64/complex dtypes are not supported on the NPU: dtype="float64"'


def test_every_site_counts_towards_api_readiness() -> None:
    outcome = process(AUGMENT, {"NPU071"}, facts=TF2_RUNTIME)
    counted = {(row.api, row.status): row.sites for row in outcome.api_sites}
    assert counted[("tf.numpy_function", "unsupported")] == 1
    assert counted[("tf.keras.layers.Layer", "unsupported")] == 1  # the base class: counted only
    [layer] = [row for row in outcome.api_sites if row.api == "tf.keras.layers.Layer"]
    assert layer.ready and not layer.blocking  # needs nothing: it must not block the repository
    assert sum(row.sites for row in outcome.api_sites if row.status == "supported") >= 3


def test_under_analysis_apis_are_noted_once_per_file_in_compat_code() -> None:
    twice = COMPAT_SESSION.replace("    return sess.run(w)\n", "    return sess.run(w)\n") + \
        "\n\ndef norm(v):\n    return tf.reduce_mean(tf.square(v))\n"
    findings = [f for f in process(twice, {"NPU071"}, facts=TF2_RUNTIME).findings]
    means = [f for f in findings if "tf.compat.v1.reduce_mean" in f.message]
    assert [(f.line, f.level) for f in means] == [(12, "note")]


def test_the_keras_fit_script_reports_what_the_tf26_list_marks_unsupported() -> None:
    findings = [f for f in process(KERAS_FIT, {"NPU071"}, facts=TF2_RUNTIME).findings
                if f.rule_id == "NPU071"]
    assert [f.message.split(" (guide")[0] for f in findings] == [
        "not supported on Ascend and no migration path: replace tf.keras.layers.Bidirectional"]


GPU_SETUP = '''\
"""Device setup of the trainer (TF 2.x): memory growth on every GPU, then the model."""
import tensorflow as tf


def setup_devices():
    gpus = tf.config.experimental.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    return tf.distribute.OneDeviceStrategy("/gpu:0")


def build(width):
    return tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
'''


def test_the_sites_are_those_of_the_file_as_written_so_a_rerun_counts_the_same() -> None:
    """NPU052 removes set_memory_growth: that use is no API site (NPU052's finding is), so the
    migrated file counts what the first run counted."""
    rules = {"NPU052", "NPU071"}
    first = process(GPU_SETUP, rules, facts=TF2_RUNTIME)
    assert first.new_data is not None and b"set_memory_growth" not in first.new_data
    rerun = process(first.new_data.decode(), rules, facts=TF2_RUNTIME)
    assert rerun.new_data is None
    assert first.api_sites == rerun.api_sites
    assert "tf.config.experimental.set_memory_growth" not in {row.api for row in first.api_sites}


def test_tf2_code_written_through_compat_v2_is_looked_up_as_tf() -> None:
    """Google's TF 2.x code imports ``tensorflow.compat.v2 as tf`` (simclr's ``tf2/``): the TF 2.6
    list names no ``compat.v2``, so each use is its ``tf.`` API, not an API of unknown support."""
    through_v2 = AUGMENT.replace("import tensorflow as tf\n", "import tensorflow.compat.v2 as tf\n")
    plain, folded = (process(source, {"NPU071"}, facts=TF2_RUNTIME) for source in (AUGMENT, through_v2))
    assert [site for site in sites(folded.findings) if site[0] == "NPU071"] == sites(plain.findings)
    assert sorted(folded.api_sites) == sorted(plain.api_sites)
    assert not any("compat.v2" in row.api for row in folded.api_sites)


HOROVOD_STEP = '''\
"""One training step of a regression model, averaged over Horovod workers (TF 2.x)."""
import horovod.tensorflow as hvd
import tensorflow as tf

hvd.init()
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
optimizer = tf.keras.optimizers.SGD(0.01 * hvd.size())


@tf.function
def step(x, y, first):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    tape = hvd.DistributedGradientTape(tape)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if first:
        hvd.broadcast_variables(model.variables, root_rank=0)
    return hvd.allgather(loss)
'''
HOROVOD_SITES = [(5, 0), (7, 43), (14, 11), (18, 8), (19, 11)]


def horovod_findings(source: str, rule_ids: set[str], facts: set[str] = TF2_RUNTIME) -> list:
    return [f for f in assert_unchanged(source, rule_ids, facts=facts) if "Horovod" in f.message]


def test_with_tf2_distributed_off_each_horovod_use_is_left_naming_the_pack() -> None:
    """TF Adapter 2.x supports Horovod only in compat.v1 scripts: with NPU070's pack off (the
    default), NPU071 reports each use with NPU070's instruction, as NPU100 does for the
    ``distributed`` pack in TF 1.x code. Before, nothing did: the file counted as ready."""
    findings = horovod_findings(HOROVOD_STEP, {"NPU071"})
    assert [(f.rule_id, f.line, f.column, f.status) for f in findings] == [
        ("NPU071", line, column, "unmigrated") for line, column in HOROVOD_SITES]
    said = [f.message.split(" (guide")[0] for f in findings]
    assert said[0] == ("Horovod in TF 2.x code: TF Adapter 2.x supports it only in tf.compat.v1 "
                       "scripts; replace hvd.init by nothing: npu.open() reads the rank table and "
                       "rank id when RANK_SIZE > 1; npu-codemod's tf2-distributed pack (`--rules "
                       "default,tf2-distributed`) reports the rest of the distributed port "
                       "(NPU067-NPU070)")
    assert "replace hvd.DistributedGradientTape by npu.distribute.all_reduce(grads, \"mean\")" in said[2]
    assert "replace hvd.allgather with npu.distribute (broadcast, all_reduce)" in said[4]
    assert all(message.endswith("(NPU067-NPU070)") for message in said)


def test_with_tf2_distributed_on_npu070_reports_its_sites_and_npu071_only_the_rest() -> None:
    """One finding per site: NPU070's where it knows the API, NPU071's for the others
    (``hvd.allgather``), without naming the pack that is on."""
    findings = horovod_findings(HOROVOD_STEP, {"NPU070", "NPU071"})
    assert [(f.rule_id, f.line, f.column) for f in findings] == [
        ("NPU070", 5, 0), ("NPU070", 7, 43), ("NPU070", 14, 11), ("NPU070", 18, 8), ("NPU071", 19, 11)]
    assert not any("tf2-distributed" in f.message for f in findings)


MIRRORED_STEP = '''\
"""Trains a regression model on every local GPU with MirroredStrategy (TF 2.x)."""
import tensorflow as tf
from tensorflow.distribute import MirroredStrategy


def make_model(strategy):
    with strategy.scope():
        return tf.keras.Sequential([tf.keras.layers.Dense(1)])


one = tf.distribute.MirroredStrategy()
two = MirroredStrategy(devices=["/gpu:0", "/gpu:1"])
model = make_model(one)
'''
STRATEGY_WORDS = ("training runs after porting with npu.distribute: broadcast after model creation, "
                  "all_reduce or the Keras wrapper for gradients, shard_and_rebatch_dataset for data "
                  "(NPU067-NPU069); then remove the strategy and its scope(): each NPU process "
                  "drives one device, and the strategy's own aggregation would run on top of "
                  "npu.distribute's")


def test_with_tf2_distributed_off_each_mirrored_strategy_is_left_naming_the_pack() -> None:
    """The TF 2.6 list has MirroredStrategy ``trains-after-migration``, NPU070's to report: with
    its pack off (the default), NPU071 reports each call with NPU070's words and the pack.
    Before, nothing did: the repository was ``needs-work`` with no finding naming the site."""
    findings = [f for f in assert_unchanged(MIRRORED_STEP, {"NPU071"}, facts=TF2_RUNTIME)
                if f.rule_id == "NPU071"]
    assert sites(findings) == [("NPU071", 11, 6, "unmigrated"), ("NPU071", 12, 6, "unmigrated")]
    assert {f.message.split(" (guide")[0] for f in findings} == {
        f"{STRATEGY_WORDS}; npu-codemod's tf2-distributed pack (`--rules default,tf2-distributed`) "
        "reports the rest of the distributed port (NPU067-NPU070)"}
    on = assert_unchanged(MIRRORED_STEP, {"NPU070", "NPU071"}, facts=TF2_RUNTIME)
    assert [(f.rule_id, f.line, f.message.split(" (guide")[0]) for f in on] == [
        ("NPU070", 11, STRATEGY_WORDS), ("NPU070", 12, STRATEGY_WORDS)]


def test_a_tf2_compat_file_s_horovod_is_left_to_the_tf1_rules_or_names_their_pack() -> None:
    """Horovod in compat.v1 code is supported (NPU021-NPU025 migrate it): no NPU071 finding
    while that pack is on; while it is off each use is left, naming it (NPU100 says so in TF 1.x
    code, and does not read compat files): a file still using Horovod is never ``ready``."""
    source = COMPAT_SESSION.replace("import tensorflow.compat.v1 as tf\n",
                                    "import horovod.tensorflow as hvd\nimport tensorflow.compat.v1 as tf\n"
                                    "\nhvd.init()\n", 1)
    assert "hvd.init()" in source
    on = run_rules(source, {"NPU071", "NPU021"}, facts=TF2_RUNTIME)[1]
    assert [f.rule_id for f in on if f.rule_id == "NPU071" and "Horovod" in f.message] == []
    assert "NPU021" in {f.rule_id for f in on}  # the pack ported it (removed hvd.init())
    line = source.splitlines().index("hvd.init()") + 1
    assert [(f.rule_id, f.line, f.column, f.status, f.message.split(" (guide")[0])
            for f in horovod_findings(source, {"NPU071"})] == [
        ("NPU071", line, 0, "unmigrated", "Horovod in tf.compat.v1 code (hvd.init): TF Adapter 2.x "
         "supports it there; npu-codemod migrates it with `--rules default,distributed`")]


LAUNCHER = '''\
"""Starts the Horovod workers of the TF 2.x data-service example."""
import sys

from horovod import run
from horovod.tensorflow.compute_service import TfDataServiceConfig

from workers import train_fn

if __name__ == "__main__":
    config = TfDataServiceConfig.read(sys.argv[1])
    run(train_fn, args=(config,), np=config.dispatchers)
'''


def test_a_launcher_importing_only_horovod_is_no_tf1_code_in_a_tf2_repository() -> None:
    """A file that imports Horovod and no TensorFlow is ``non-tf``: in a TF 2.x repository no
    TF 1.x rule audits it (NPU100 read ``TfDataServiceConfig.read`` against the TF 1.15 list
    and named the TF 1.x ``distributed`` pack); in a TF 1.x one it keeps NPU100."""
    assert process(LAUNCHER, {"NPU100", "NPU071"}, facts=TF2_RUNTIME).findings == ()
    (tf1,) = process(LAUNCHER, {"NPU100", "NPU071"}, facts={"tf-runtime:1"}).findings
    assert (tf1.rule_id, tf1.line) == ("NPU100", 10)


def run_repos(tmp_path: Path, report: str, *rules: str) -> dict[str, tuple[dict, dict]]:
    """``npu-codemod run`` over ``repos.txt``: each repository's record in ``run.json`` and row
    of ``repos.csv``, by name."""
    cli("run", "--dry-run", "--repos", "repos.txt", "--report-dir", report, "--no-progress",
        *rules, cwd=tmp_path, expect=0)
    records = json.loads((tmp_path / report / "run.json").read_text())["repos"]
    rows = {row["repo"]: row for row in read_csv(tmp_path / report / "repos.csv")}
    return {record["repo"]: (record, rows[record["repo"]]) for record in records}


def left(record: dict) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["rule_id"]) for f in record["findings"] if f["status"] == "unmigrated"]


def test_a_tf2_repository_training_with_horovod_is_never_ready(tmp_path: Path) -> None:
    """End to end: a TF 2.x script training with Horovod. With the default packs its Horovod
    uses are left (NPU071; before, the repository was ``ready``, 0 left), with
    ``tf2-distributed`` on too, each is counted once. The launcher of a repository whose version
    is undetermined that imports only Horovod gets no NPU100 finding (the TF 1.15 list)."""
    script = HOROVOD_STEP + "\n\nfor i in range(10):\n    step(tf.zeros([8, 4]), tf.zeros([8, 1]), i == 0)\n"
    make_repo(tmp_path / "regression", {"train.py": script, "requirements.txt": "tensorflow==2.6.5\n"})
    workers = HOROVOD_STEP.replace("hvd.init()\n", "") + \
        "\n\ndef train_fn(config):\n    hvd.init()\n    for i in range(10):\n" \
        "        step(tf.zeros([8, 4]), tf.zeros([8, 1]), i == 0)\n"
    make_repo(tmp_path / "dataservice", {"workers.py": workers, "launch.py": LAUNCHER})
    (tmp_path / "repos.txt").write_text("regression\ndataservice\n")
    repos = run_repos(tmp_path, "default")
    record, row = repos["regression"]
    assert left(record) == [("train.py", line, "NPU071") for line, _ in HOROVOD_SITES]
    assert (row["verdict"], row["left"], row["verdict_reason"]) == (
        "needs-work", "5", "5 site(s) left: 5 to change (NPU071 5)")
    record, row = repos["dataservice"]
    assert left(record) == [("", 1, "NPU000"), *(("workers.py", line, "NPU071") for line in (6, 13, 17, 18, 22))]
    assert row["left"] == "6"  # the version undetermined (NPU000), and Horovod; no NPU100 in launch.py
    repos = run_repos(tmp_path, "distributed", "--rules", "default,tf2-distributed")
    record, row = repos["regression"]
    assert left(record) == [("train.py", 5, "NPU070"), ("train.py", 7, "NPU070"), ("train.py", 14, "NPU070"),
                            ("train.py", 18, "NPU070"), ("train.py", 19, "NPU071")]
    assert (row["verdict"], row["left"]) == ("needs-work", "5")
    assert [rule for _, _, rule in left(repos["dataservice"][0])].count("NPU100") == 0


TYPE_CHECKS = '''\
"""Keras helpers that check and annotate the layers they are handed (TF 2.x)."""
from typing import Optional

import tensorflow as tf
from tensorflow.keras.layers import Layer


def frozen(layer: tf.keras.layers.Layer, head: Optional[Layer] = None) -> tf.keras.layers.Layer:
    if not isinstance(layer, tf.keras.layers.Layer) or issubclass(type(head), (Layer, tf.Module)):
        raise TypeError(layer)
    layer.trainable = False
    return layer


model: tf.keras.layers.Layer = frozen(tf.keras.layers.Dense(1))
'''


def test_a_name_used_only_in_isinstance_or_an_annotation_is_counted_as_needing_nothing() -> None:
    """The list marks ``tf.keras.layers.Layer`` unsupported; in ``isinstance``/``issubclass``
    and in annotations, like a base class, it is counted, not reported (spec rules-tf2.md,
    NPU071), and needs nothing: no block. Before: counted unsupported, not ready, no finding
    (the repository was ``blocked`` with nothing to say where)."""
    findings = testing.assert_reports({"NPU071"}, TYPE_CHECKS, findings=[], facts=TF2_RUNTIME)
    assert findings == []
    outcome = process(TYPE_CHECKS, {"NPU071"}, facts=TF2_RUNTIME)
    [layer] = [row for row in outcome.api_sites if row.api == "tf.keras.layers.Layer"]
    assert (layer.sites, layer.ready, layer.blocking) == (6, True, False)
    assert all(row.ready for row in outcome.api_sites if row.known)



DOC_GENERATOR = '''\
"""Lists what Keras layers and compat.v1 optimizers define, for the API pages."""
import inspect

import tensorflow as tf


def hidden_names():
    layer = [name for name, _ in tf.keras.layers.Layer.__dict__.items()]
    optimizer = [name for name, _ in inspect.getmembers(tf.compat.v1.train.Optimizer)]
    return layer + optimizer + dir(tf.keras.layers.Layer) + [tf.keras.layers.Layer.__name__]
'''


def test_a_class_only_looked_at_is_counted_as_needing_nothing() -> None:
    """Regression (tensorflow/similarity ``scripts/gen_api_doc.py:120``): the read of
    ``tf.keras.layers.Layer.__dict__`` was reported "not supported ... no migration path:
    replace tf.keras.layers.Layer.__dict__.items" and blocked the repository. A name followed by
    an introspection attribute or handed to ``dir``/``inspect.getmembers`` is only looked at:
    a type use, counted under its own name, needing nothing (as in ``isinstance``)."""
    findings = testing.assert_reports({"NPU071"}, DOC_GENERATOR, findings=[], facts=TF2_RUNTIME)
    assert findings == []
    outcome = process(DOC_GENERATOR, {"NPU071"}, facts=TF2_RUNTIME)
    [layer] = [row for row in outcome.api_sites if row.api == "tf.keras.layers.Layer"]
    assert (layer.sites, layer.ready, layer.blocking) == (3, True, False)
    assert not [row.api for row in outcome.api_sites if "__" in row.api]


MIGRATED_BY_HAND = '''\
"""Picks the device strategy of a TF 2.x training script."""
import tensorflow as tf

tf.config.set_soft_device_placement(True)
tf.config.optimizer.set_experimental_options({"layout_optimizer": False})
strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
kinds = {"one": tf.distribute.OneDeviceStrategy, "mirrored": tf.distribute.MirroredStrategy}
mode = tf.estimator.ModeKeys.TRAIN
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
'''
#: [L26 r3163]: trains-after-migration, no note: nothing says to drop the strategy.
ONE_DEVICE_WORDS = ("tf.distribute.OneDeviceStrategy: Ascend's TF 2.6 list has training work with it once the "
                    "script opens the NPU (npu.open().as_default(), NPU061) and asks for no change of its own; "
                    "check on the NPU that the device it names does not take the ops off the NPU")


def test_every_site_not_ready_gets_a_finding_that_names_it() -> None:
    """The TF 2.6 list has ``OneDeviceStrategy``, ``set_soft_device_placement`` and
    ``set_experimental_options`` ``trains-after-migration``, and no TF 2.x rule migrates them:
    NPU071 says at each use, called or not, what to do with that API in eager code (before:
    NPU100's "migrate it as the guide says", which no TF 2.x guide step answers); an uncalled MirroredStrategy gets NPU070's words; a value use of an unsupported
    API (``tf.estimator.ModeKeys``) is reported like a call. Before: each was counted not
    ready with no finding (``needs-work``, "4 API site(s) not ready"; ``ModeKeys``:
    ``blocked``)."""
    findings = testing.assert_reports({"NPU071"}, MIGRATED_BY_HAND, facts=TF2_RUNTIME, findings=[
        ("NPU071", 4, 0, "unmigrated"), ("NPU071", 5, 0, "unmigrated"), ("NPU071", 6, 11, "unmigrated"),
        ("NPU071", 7, 16, "unmigrated"), ("NPU071", 7, 61, "unmigrated"), ("NPU071", 8, 7, "unmigrated")])
    said = [f.message.split(" (guide")[0] for f in findings]
    assert said[:4] == [
        "keep soft placement on for the NPU: call tf.config.set_soft_device_placement(True), so that ops "
        "the NPU has no kernel for run on the CPU",
        # [L26 r2994]: keep grappler's defaults (memory_optimization and layout_optimizer on)
        "tf.config.optimizer.set_experimental_options: Ascend's TF 2.6 list has training work with grappler's "
        "defaults: keep disable_model_pruning off and function_optimization, constant_folding, "
        "shape_optimization, arithmetic_optimization, loop_optimization, dependency_optimization, "
        "layout_optimizer and memory_optimization on; remove each of those this call sets otherwise",
        ONE_DEVICE_WORDS, ONE_DEVICE_WORDS]
    assert said[4] == (f"{STRATEGY_WORDS}; npu-codemod's tf2-distributed pack (`--rules "
                       "default,tf2-distributed`) reports the rest of the distributed port (NPU067-NPU070)")
    assert said[5] == "not supported on Ascend and no migration path: replace tf.estimator.ModeKeys.TRAIN"
    outcome = process(MIGRATED_BY_HAND, {"NPU071"}, facts=TF2_RUNTIME)
    waiting = sum(row.sites for row in outcome.api_sites if row.known and not row.ready)
    assert waiting == len(findings)
    on = testing.assert_reports({"NPU070", "NPU071"}, MIGRATED_BY_HAND, facts=TF2_RUNTIME)
    assert [f.message.split(" (guide")[0] for f in on if f.line == 7][1] == STRATEGY_WORDS


def test_in_compat_code_the_tf1_owners_migrate_what_ascend_migrates() -> None:
    """In a ``tf2-compat`` file the TF1 rules own what Ascend migrates, some away from the site
    (``tf.compat.v1.ConfigProto`` through its session, NPU007; ``Dataset`` at its batch calls,
    NPU002): NPU071 reports no miss there."""
    source = COMPAT_SESSION + "\n\ncfg = tf.ConfigProto()\nds = tf.data.Dataset.range(8).batch(4)\n"
    outcome = testing.run_rules({"NPU002", "NPU007", "NPU071"}, source, facts=TF2_RUNTIME)
    assert outcome.new is not None
    assert [f for f in outcome.findings if f.message.startswith("Ascend migrates")] == []


TYPE_ALIASES = '''\
"""Type aliases of a graph library (TF 2.x), and the strategies it knows."""
from typing import Mapping, TypeVar, Union, cast

import tensorflow as tf

FieldSpec = Union[tf.TensorSpec, tf.RaggedTensorSpec]
FeaturesSpec = Mapping[str, tf.RaggedTensorSpec]
NextState = tf.keras.layers.Layer
Exported = tf.keras.layers.Layer
L = TypeVar("L", bound=tf.keras.layers.Layer)
_SUPPORTED = (tf.distribute.OneDeviceStrategy, tf.RaggedTensorSpec)


def rank(spec: FieldSpec, layer: L, strategy) -> NextState:
    if not isinstance(strategy, _SUPPORTED):
        raise ValueError(", ".join(kind.__name__ for kind in _SUPPORTED))
    return cast(tf.RaggedTensorSpec, spec).ragged_rank
'''

VALUE_ALIASES = '''\
"""The same names, used as values: built, iterated, exported."""
import tensorflow as tf

Base = tf.keras.layers.Layer
SPECS = (tf.RaggedTensorSpec, tf.TensorSpec)
UNREAD = (tf.RaggedTensorSpec,)


def build():
    return [Base(), [spec([1]) for spec in SPECS if spec.__name__]]
'''


def test_type_aliases_cast_typevar_and_isinstance_tuples_are_type_uses() -> None:
    """Regression (tensorflow/gnn ``graph_constants.py:76``, ``keras/layers/next_state.py:104``,
    sonnet ``optimizers/optimizer_utils.py:32``): a typing alias (``Union[...]``,
    ``Mapping[str, ...]``), a class bound to a name only read as a type (or not read: a name for
    other modules' annotations), ``cast``'s and ``TypeVar``'s types and a tuple of classes read
    by ``isinstance`` were reported "not supported ... replace" (or an owner miss) and blocked
    the repository. They are type uses: counted as needing nothing, not reported (spec
    rules-tf2.md NPU071)."""
    findings = testing.assert_reports({"NPU071"}, TYPE_ALIASES, findings=[], facts=TF2_RUNTIME)
    assert findings == []
    outcome = process(TYPE_ALIASES, {"NPU071"}, facts=TF2_RUNTIME)
    assert all(row.ready for row in outcome.api_sites if row.known)
    [spec] = [row for row in outcome.api_sites if row.api == "tf.RaggedTensorSpec"]
    assert (spec.sites, spec.blocking) == (4, False)


def test_names_bound_to_classes_and_used_as_values_stay_uses() -> None:
    """A class bound to a name that is then called, a tuple of classes iterated, or a tuple
    no read shows to be types: the binding is a use of the classes, reported as before."""
    findings = testing.assert_reports({"NPU071"}, VALUE_ALIASES, findings=None, facts=TF2_RUNTIME)
    assert sorted((f.line, f.column) for f in findings) == [(4, 7), (5, 9), (6, 10)]


def test_a_class_alias_bound_in_a_try_and_its_except_is_one_type_alias() -> None:
    """Regression (sonnet ``replicator.py:92-94``): ``try: S = tf.distribute.TPUStrategy``
    ``except AttributeError: S = tf.distribute.experimental.TPUStrategy``, then ``S`` used
    only as a base class: the first binding counted as a type use, the second was reported as
    blocking. Both branches bind the one alias: both are type uses, or neither."""
    from npu_codemod.codemods.type_aliases import type_alias_spans

    text = ("import tensorflow as tf\n\ntry:\n    S = tf.distribute.TPUStrategy\n"
            "except AttributeError:\n    S = tf.distribute.experimental.TPUStrategy\n\n\n"
            "class Replicator(S):\n    pass\n")
    assert [span[0] for span, _ in type_alias_spans(text)] == [4, 6]
    assert type_alias_spans(text + "\nstrategy = S()\n") == []


CPU_PINNED = '''\
"""Augmentations and a cross-batch memory, kept on the host (TF 2.x)."""
import tensorflow as tf


def augment(images):
    with tf.device("/cpu:0"):
        images = tf.image.random_flip_left_right(images)
    with tf.device("CPU"):
        return tf.image.random_brightness(images, 0.2)


def memory(embeddings, device):
    with tf.device('/job:localhost/replica:0/task:0/device:CPU:0'):
        bank = tf.Variable(tf.zeros_like(embeddings))
    with tf.device("/gpu:1"):
        other = tf.identity(embeddings)
    with tf.device(device):
        return bank, other
'''


def test_a_device_pinned_to_the_cpu_is_what_the_list_suggests_and_blocks_nothing() -> None:
    """tensorflow/similarity keeps augmentations and its memory bank on the CPU with
    ``tf.device("/cpu:0")``, as the TF 2.6 list suggests for ``tf.device`` [L26 r3116]: each was
    reported "no migration path: replace tf.device" and blocked the repository. Only the
    devices that are not the CPU are reported, with the list's suggestion."""
    findings = assert_unchanged(CPU_PINNED, {"NPU071"}, facts=TF2_RUNTIME)
    assert sites(findings) == [("NPU071", 15, 9, "unmigrated"), ("NPU071", 17, 9, "unmigrated")]
    assert [f.message.split(" (guide")[0] for f in findings] == [
        "tf.device is not supported on Ascend: pin the ops to the CPU (tf.device(\"/cpu:0\")), as "
        "Ascend's TF 2.6 list suggests, or remove tf.device and let the NPU place them"] * 2
    rows = [row for row in process(CPU_PINNED, {"NPU071"}, facts=TF2_RUNTIME).api_sites
            if row.api == "tf.device"]
    assert sorted((row.sites, row.status, row.ready, row.blocking) for row in rows) == [
        (2, "unsupported", False, True), (3, "unsupported", True, False)]


VERSION_CHECKS = '''\
"""Prints the versions the training script runs with (TF 2.x)."""
import tensorflow as tf
import tensorflow.compat.v1 as tf1

print(tf.__version__, tf1.__version__, tf.keras.__version__)
if tf1.__version__.startswith("2"):
    tf1.logging.set_verbosity(tf1.logging.ERROR)
'''


def test_a_module_s_version_string_is_no_api_to_test_on_the_npu() -> None:
    """keras-YOLOv3-model-set's tools check ``tf.__version__.startswith('2')`` with ``tf`` also
    bound to ``tensorflow.compat.v1``: NPU071 noted "test tf.compat.v1.__version__.startswith on
    the NPU" (the list's ``tf.compat.v1`` entry is under analysis). A dunder attribute of a
    module is no API: no site, no finding; the APIs the file calls still are."""
    findings = [f for f in run_rules(VERSION_CHECKS, {"NPU071"}, facts=TF2_RUNTIME)[1] if f.rule_id == "NPU071"]
    assert len(findings) == 1 and findings[0].line == 7  # tf.compat.v1.logging, under analysis
    assert "__version__" not in findings[0].message
    counted = process(VERSION_CHECKS, {"NPU071"}, facts=TF2_RUNTIME).api_sites
    assert not [row for row in counted if row.api == "tf.compat.v1"]


FEATURES = '''\
"""Feature tables for the ranking model (TF 2.x): numpy and pandas prepare them."""
import numpy as np
import pandas as pd
import tensorflow as tf


def table(frame: pd.DataFrame):
    values = np.asarray(frame.values, dtype="float64")  # dtype="float64" in numpy is host memory
    frame = frame.astype(dtype="float64")
    tf.keras.backend.set_floatx("float64")
    return tf.constant(values, dtype="float64"), tf.cast(values, 'complex64')
'''


def test_float64_strings_count_where_tensorflow_takes_them_not_numpy_or_pandas() -> None:
    """``np.asarray(..., dtype="float64")`` and pandas' ``astype`` make host arrays: no NPU
    finding (a comment neither); ``set_floatx("float64")`` and ``tf.cast(x, 'complex64')``
    pass the dtype positionally to TensorFlow: reported, as ``dtype="float64"`` is."""
    findings = assert_unchanged(FEATURES, {"NPU071"}, facts=TF2_RUNTIME)
    assert sites(findings) == [
        ("NPU071", 10, 32, "unmigrated"), ("NPU071", 11, 31, "unmigrated"),
        ("NPU071", 11, 65, "unmigrated")]
    assert [f.message.split(" (guide")[0].rpartition(": ")[2] for f in findings] == [
        '"float64"', 'dtype="float64"', "'complex64'"]


def test_every_api_ascend_migrates_gets_advice_that_names_it() -> None:
    """Each API the TF 2.6 list marks ``supported-after-migration`` or ``trains-after-migration``
    (``shared/data``), but the two with a TF 2.x rule's words (NPU070's MirroredStrategy,
    NPU064's compat ``Dataset``): NPU071's message in eager code names the API and says what to
    do, never the generic owner-miss words."""
    migrated = [api for api, status in support_list_tf2().statuses.items() if status in ApiStatus.MIGRATED
                and api not in ("tf.distribute.MirroredStrategy", "tf.compat.v1.data.Dataset")]
    assert len(migrated) == 39
    for api in migrated:
        advice = migrated_advice(api, api)
        assert advice is not None and api in advice and "as the guide says" not in advice, api


DEVICE_NAMES = '''\
"""Places the input pipeline of a TF 2.x training script."""
import tensorflow as tf

host = tf.DeviceSpec(job="localhost", device_type="GPU", device_index=0)
spec = tf.compat.v1.DeviceSpec.from_string("/device:GPU:0")
with tf.compat.v1.device(host.to_string()):
    ds = tf.data.Dataset.range(8)
'''


def test_device_names_get_what_the_tf26_list_says_of_each() -> None:
    """[L26 r3117, r446, r445]: ``tf.DeviceSpec`` and ``tf.compat.v1.device`` work once they name
    the host CPU, ``tf.compat.v1.DeviceSpec`` with soft placement on. Before, all three were
    told to "remove it and let the NPU place the ops", which the list does not say."""
    findings = testing.assert_reports({"NPU071"}, DEVICE_NAMES, facts=TF2_RUNTIME, findings=[
        ("NPU071", 4, 7, "unmigrated"), ("NPU071", 5, 7, "unmigrated"), ("NPU071", 6, 5, "unmigrated")])
    assert [f.message.split(" (guide")[0] for f in findings] == [
        "tf.DeviceSpec: Ascend's TF 2.6 list has training work once the device it names is the host CPU "
        "(tf.DeviceSpec.from_string('/job:localhost/replica:0/task:0/device:CPU:0')); ops placed on no device "
        "run on the NPU that npu.open().as_default() opens",
        "tf.compat.v1.DeviceSpec.from_string: Ascend's TF 2.6 list has it work with soft placement on and "
        "device placement logging off (allow_soft_placement=True, log_device_placement=False)",
        "tf.compat.v1.device: Ascend's TF 2.6 list has it work once it pins the ops to the host CPU "
        "(tf.compat.v1.device('/cpu:0')); ops placed on no device run on the NPU that npu.open().as_default() "
        "opens"]
