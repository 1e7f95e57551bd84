"""NPU007 settings: ``precision_mode`` and ``style = "inline" | "helper"`` (golden before/after)."""

from __future__ import annotations

import copy
from typing import Optional

from npu_codemod.codemods.engine import Engine
from npu_codemod.codemods.rule_settings import build_settings
from npu_codemod.plugins.manager import load_plugins


def engine(**section: object) -> Engine:
    """NPU001 + NPU007 configured with ``section``, as a config file would do it."""
    rules = {rule.id: rule for rule in load_plugins().rules()}
    npu007 = copy.copy(rules["NPU007"])
    npu007.settings = build_settings(npu007, section)
    return Engine([rules["NPU001"], npu007])


def migrate(source: str, **section: object) -> tuple[Optional[str], list[tuple[int, str]]]:
    outcome = engine(**section).process(source.encode(), "train.py", repo="repo")
    new = None if outcome.new_data is None else outcome.new_data.decode()
    return new, sorted((f.line, f.status) for f in outcome.findings if f.rule_id == "NPU007")


def assert_golden(before: str, after: str, **section: object) -> None:
    new, findings = migrate(before, **section)
    assert new == after
    assert findings and all(status == "migrated" for _, status in findings)
    compile(after, "train.py", "exec")
    assert migrate(after, **section)[0] is None  # idempotent


PRECISION = 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("allow_mix_precision")\n'


def test_precision_mode_is_written_with_the_custom_op() -> None:
    assert_golden(
        "import tensorflow as tf\nsess = tf.Session()\n",
        "from npu_bridge.npu_init import *\n"
        "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
        "import tensorflow as tf\n"
        "config = tf.ConfigProto()\n"
        "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        'custom_op.name = "NpuOptimizer"\n'
        + PRECISION +
        "config.graph_options.rewrite_options.remapping = RewriterConfig.OFF\n"
        "config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF\n"
        "sess = tf.Session(config=config)\n",
        precision_mode="allow_mix_precision",
    )


def test_precision_mode_value_is_as_configured_on_an_existing_config() -> None:
    new, _ = migrate("import tensorflow as tf\ncfg = tf.ConfigProto()\n"
                     "with tf.Session(config=cfg) as sess:\n    pass\n",
                     precision_mode="force_fp32")
    assert 'custom_op.parameter_map["precision_mode"].s = tf.compat.as_bytes("force_fp32")\n' \
        "cfg.graph_options.rewrite_options.remapping = RewriterConfig.OFF\n" in new


def test_without_precision_mode_nothing_changes_from_the_guide() -> None:
    new, _ = migrate("import tensorflow as tf\nsess = tf.Session()\n")
    assert "precision_mode" not in new


def test_helper_style_wraps_the_config() -> None:
    assert_golden(
        "import tensorflow as tf\n"
        "sess = tf.Session()\n"
        "with tf.Session(config=cfg) as s:  # keep me\n"
        "    pass\n"
        "other = tf.Session(config=tf.ConfigProto(log_device_placement=True))\n"
        "sv.managed_session(config=None)\n",
        "from npu_bridge.npu_init import *\n"
        "import tensorflow as tf\n"
        "sess = tf.Session(config=npu_config_proto(config_proto=tf.ConfigProto()))\n"
        "with tf.Session(config=npu_config_proto(config_proto=cfg)) as s:  # keep me\n"
        "    pass\n"
        "other = tf.Session(config=npu_config_proto(config_proto="
        "tf.ConfigProto(log_device_placement=True)))\n"
        "sv.managed_session(config=npu_config_proto(config_proto=tf.ConfigProto()))\n",
        style="helper",
    )


def test_helper_style_works_where_no_statement_can_be_inserted() -> None:
    assert_golden(
        "import tensorflow as tf\nmake = lambda: tf.Session()\n",
        "from npu_bridge.npu_init import *\nimport tensorflow as tf\n"
        "make = lambda: tf.Session(config=npu_config_proto(config_proto=tf.ConfigProto()))\n",
        style="helper",
    )


def test_helper_style_gives_a_monitored_session_without_creator_a_wrapped_one() -> None:
    """A MonitoredSession without a session creator makes ``ChiefSessionCreator()``; the
    helper style passes one whose config goes through npu_config_proto (a lambda too)."""
    assert_golden(
        "import tensorflow as tf\n"
        "with tf.train.MonitoredSession(hooks=hooks) as sess:\n"
        "    sess.run(step)\n"
        "make = lambda: tf.train.MonitoredSession()\n",
        "from npu_bridge.npu_init import *\nimport tensorflow as tf\n"
        "with tf.train.MonitoredSession(hooks=hooks, session_creator=tf.train.ChiefSessionCreator("
        "config=npu_config_proto(config_proto=tf.ConfigProto()))) as sess:\n"
        "    sess.run(step)\n"
        "make = lambda: tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator("
        "config=npu_config_proto(config_proto=tf.ConfigProto())))\n",
        style="helper",
    )


def test_helper_style_on_compat_v1() -> None:
    new, _ = migrate("import tensorflow.compat.v1 as tf\nsess = tf.Session()\n", style="helper")
    assert "sess = tf.Session(config=npu_config_proto(config_proto=tf.ConfigProto()))\n" in new


def test_helper_style_lets_npu008_set_soft_placement_when_the_repo_uses_tf_device() -> None:
    rules = {rule.id: rule for rule in load_plugins().rules()}
    npu007 = copy.copy(rules["NPU007"])
    npu007.settings = build_settings(npu007, {"style": "helper"})
    engine = Engine([rules["NPU001"], npu007, rules["NPU008"]])
    before = ("import tensorflow as tf\n"
              "sess = tf.Session()\n"
              "with tf.Session(config=cfg) as s:\n"
              "    pass\n")
    after = ("from npu_bridge.npu_init import *\n"
             "import tensorflow as tf\n"
             "sess = tf.Session(config=npu_config_proto(config_proto=tf.ConfigProto(allow_soft_placement=True)))\n"
             "cfg.allow_soft_placement = True\n"
             "with tf.Session(config=npu_config_proto(config_proto=cfg)) as s:\n"
             "    pass\n")
    facts = frozenset({"uses-tf-device"})
    outcome = engine.process(before.encode(), "train.py", repo="repo", facts=facts)
    assert outcome.new_data.decode() == after
    assert engine.process(after.encode(), "train.py", repo="repo", facts=facts).new_data is None


def test_precision_mode_line_uses_the_free_custom_op_name() -> None:
    assert_golden(
        "import tensorflow as tf\n"
        "from my_ops import custom_op\n"
        "sess = tf.Session()\n",
        "from npu_bridge.npu_init import *\n"
        "from tensorflow.core.protobuf.rewriter_config_pb2 import RewriterConfig\n"
        "import tensorflow as tf\n"
        "from my_ops import custom_op\n"
        "config = tf.ConfigProto()\n"
        "npu_custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n"
        'npu_custom_op.name = "NpuOptimizer"\n'
        + PRECISION.replace("custom_op.", "npu_custom_op.") +
        "config.graph_options.rewrite_options.remapping = RewriterConfig.OFF\n"
        "config.graph_options.rewrite_options.memory_optimization = RewriterConfig.OFF\n"
        "sess = tf.Session(config=config)\n",
        precision_mode="allow_mix_precision",
    )


def test_helper_style_writes_no_custom_op_so_the_users_stays() -> None:
    assert_golden(
        "import tensorflow as tf\n"
        "custom_op = tf.load_op_library('./ops.so')\n"
        "sess = tf.Session()\n",
        "from npu_bridge.npu_init import *\n"
        "import tensorflow as tf\n"
        "custom_op = tf.load_op_library('./ops.so')\n"
        "sess = tf.Session(config=npu_config_proto(config_proto=tf.ConfigProto()))\n",
        style="helper",
    )
