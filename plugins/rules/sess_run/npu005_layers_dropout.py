"""NPU005 layers-dropout: importing ``npu_convert_dropout`` swaps the Keras/tf.layers dropouts.

The calls stay as they are: the import patches ``tf.layers.dropout``, ``tf.layers.Dropout``,
``tf.keras.layers.Dropout`` and ``SpatialDropout1D/2D/3D`` to the CANN implementation.
"""

from __future__ import annotations

from typing import Optional

from npu_codemod.api import Base, Capture, FileContext, Leaf, Node, Rule, hookimpl, symbols, tokens
from npu_codemod.api._toolkit import TF1, child_index, classify, find_import, prefix_name

from .npu004_nn_dropout import ACCURACY, DROPOUT_MARKS

CONVERT_IMPORT = "from npu_bridge.estimator.npu import npu_convert_dropout"
DROPOUTS = frozenset({
    "tensorflow.layers.dropout",
    "tensorflow.layers.Dropout",
    "tensorflow.keras.layers.Dropout",
    "tensorflow.keras.layers.SpatialDropout1D",
    "tensorflow.keras.layers.SpatialDropout2D",
    "tensorflow.keras.layers.SpatialDropout3D",
})
#: TF-Slim's dropout (``tf.contrib.layers.dropout``): in TF 1.15 it applies a
#: ``tf.layers.Dropout`` (``core_layers.Dropout(rate=1 - keep_prob, ...).apply(inputs,
#: training=is_training)``), whose ``call`` is the Keras ``Dropout.call`` that
#: npu_convert_dropout replaces: the import covers it as it covers ``tf.layers.Dropout``.
SLIM_DROPOUTS = frozenset({"tensorflow.contrib.slim.dropout", "tensorflow.contrib.layers.dropout"})
DROPOUTS |= SLIM_DROPOUTS
_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in DROPOUTS)
_NAMES = " | ".join(sorted(f"'{name}'" for name in _LAST_NAMES))


class LayersDropout(Rule):
    id = "NPU005"
    name = "layers-dropout"
    pack = "sess-run"
    file_kinds = frozenset({TF1})  # TF 2.6 supports dropout as it is
    description = "Import npu_convert_dropout in files using tf.layers/tf.keras dropout layers."
    guide_section = "模型搭建/计算Loss/梯度更新: tf.layers/keras Dropout"
    guide_section_en = ("Model building, loss computation and gradient update: tf.layers/keras "
                        "Dropout")
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("A file that uses `tf.layers.dropout`, `tf.layers.Dropout`, "
                "`tf.keras.layers.Dropout` or `SpatialDropout1D/2D/3D`, or TF-Slim's "
                "`slim.dropout` (`tf.contrib.layers.dropout`, which applies a `tf.layers.Dropout`), "
                "in any spelling "
                "(`from tensorflow.keras import layers`, `keras = tf.keras`, ...), gets `from "
                "npu_bridge.estimator.npu import npu_convert_dropout` once, next to the NPU001 "
                "import: it makes those layers use the CANN dropout. The calls stay as they are.")
    example = """
        import tensorflow as tf


        def encoder(inputs, training):
            hidden = tf.layers.dense(inputs, 512, activation=tf.nn.relu)
            return tf.layers.dropout(hidden, rate=0.1, training=training)
    """
    _scope = "site"
    # ``x.dropout`` where the file binds ``x`` (``tf.layers.dropout``; NPU004's mark, which
    # also gives ``npu_ops.dropout`` its word), or a name the file binds to one of them (a
    # site name through the word's attribute name); the other names, rare words, as spelled.
    _site_names = ("@dropout", *sorted(_LAST_NAMES - {"dropout"}))
    _ast_sites = DROPOUT_MARKS
    _tokens = ("ropout",)
    _bare_calls_of_tf_names = True  # visit() qualifies the name with ctx.tf, or ignores it
    # The names themselves, and calls through an alias (``from ... import Dropout as D``).
    pattern = f"( name=({_NAMES}) | power< alias=NAME trailer< '(' [any] ')' > any* > )"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if "alias" in capture:
            alias = capture["alias"]
            named = alias.value in _LAST_NAMES
            site = None if named or ctx.tf.qualify(alias.value) not in DROPOUTS else alias
        else:
            site = _reference(node, ctx)
        if site is None:
            return
        if CONVERT_IMPORT in ctx.imports or find_import(ctx.tree, CONVERT_IMPORT) is None:
            ctx.add_import(CONVERT_IMPORT)
            done = "imported npu_convert_dropout"
        else:
            done = "npu_convert_dropout is imported"
        inside = " (a tf.layers.Dropout inside)" if _qualified(site, ctx) in SLIM_DROPOUTS else ""
        ctx.report(site, "migrated", f"{done}, so {site_text(site)}{inside} runs the NPU dropout; {ACCURACY}")


def _reference(leaf: Leaf, ctx: FileContext):
    """The expression (``tf.layers.dropout``) that ``leaf`` ends, if it names a TF dropout."""
    parent = leaf.parent
    if parent is not None and parent.type == symbols.trailer and parent.children[0].type == tokens.DOT:
        power = parent.parent
        expression, spelled = power, prefix_name(power, child_index(parent) + 1)
    else:
        if leaf.prev_sibling is not None and leaf.prev_sibling.type == tokens.DOT:
            return None  # ``import tensorflow.keras.layers.Dropout`` and the like
        if classify(leaf).kind == "bind" or _in_import(leaf):
            return None
        expression, spelled = leaf, leaf.value
    if spelled is None or ctx.tf.qualify(spelled) not in DROPOUTS:
        return None
    if expression.type == symbols.power and _is_assigned(expression):
        return None
    return expression


def _qualified(site: Base, ctx: FileContext) -> Optional[str]:
    """The TF name the reported reference ``site`` (an alias, a name or an attribute chain) is."""
    return ctx.tf.qualify(site.value if site.type == tokens.NAME else site_text(site))


def _in_import(node: Base) -> bool:
    while node is not None:
        if node.type in (symbols.import_from, symbols.import_name):
            return True
        node = node.parent
    return False


def _is_assigned(power: Node) -> bool:
    """``layers.Dropout = ...`` rebinds, it does not use."""
    statement = power.parent
    return statement is not None and statement.type == symbols.expr_stmt and \
        statement.children[0] is power and len(statement.children) > 1 and \
        statement.children[1].type == tokens.EQUAL


def site_text(site: Base) -> str:
    """The reference as spelled, up to the dropout name (``tf.keras.layers.Dropout``)."""
    if site.type == tokens.NAME:
        return site.value
    parts = []
    for child in site.children:
        parts.append(str(child).strip())
        if child.type == symbols.trailer and child.children[-1].value in _LAST_NAMES:
            break
    return "".join(parts)


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [LayersDropout()]
