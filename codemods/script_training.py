"""Does a script train, read from what it runs and what it fits (NPU061, ``codemods/tf_programs``).

Two readings sharper than the training text (``tf_programs.TRAINING_TEXT``):

- A TensorFlow Lite conversion script (it builds a ``tf.lite.TFLiteConverter``) with a ``__main__``
  block is decided from what it runs (``module_training.trains_when_run``: its module-level code
  and ``__main__`` block, through the functions of the file they call; a ``compile`` alone readies
  a model for ``evaluate`` and trains nothing there), not from the text it holds:
  the TFLite model-personalization example defines a ``train`` step with a ``GradientTape`` that
  it exports as an on-device training signature and never runs. Such a script converts, exports or
  evaluates a model; it trains nothing (``spec/rules-tf2.md`` NPU061: reported, no init).
- A file whose only training text is ``.fit(`` trains when one ``fit`` call's receiver may be a
  Keras model (:func:`fits_a_model`), in the repository's analysis as in a file checked alone
  (``npu-codemod check FILE`` analyses the files it is given: the file cannot see the rest of its
  repository, and a receiver in the file reads the same either way). The decision is
  conservative (a script that trains keeps its init; a finding is the worst a wrong guess gives a
  tool): a receiver is no Keras model only when every value the file gives it is provably
  something else (a call of another library's name, ``StandardScaler()``; of a class of the file
  that derives from no imported class, ``class Normalizer: def fit(...)``; Keras'
  ``ImageDataGenerator``, whose ``fit`` computes statistics). A receiver built by
  ``tf.keras.Model``/``Sequential``/``load_model``, by a subclass of an imported class, by a
  function of the file or of an import the file cannot see, or that the file never assigns (a
  parameter, an imported name, ``self.model`` set elsewhere) may be one.
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Iterator, Mapping, Optional

from .module_training import TRAINING_METHODS, trains_when_run
from .modules import module_index
from .text_search import AnyOf

#: A TensorFlow Lite conversion (``tf.lite.TFLiteConverter.from_keras_model``, ``TFLiteConverterV2``).
CONVERTS = AnyOf(r"\bTFLiteConverter")
#: What trains in a conversion script: a ``compile`` alone readies a model for ``evaluate`` or
#: quantization, the training calls follow it (quantization-aware training ``fit``s).
_CONVERSION_TRAINING = TRAINING_METHODS - {"compile"}
#: Keras' own values whose ``fit`` trains no model (it computes the statistics of the data).
_KERAS_STATISTICS = frozenset({"ImageDataGenerator"})


def converts_without_training(text: str, tree: Optional[ast.Module]) -> bool:
    """Is the ``__main__`` script ``text`` (its ``tree``) a TFLite conversion that runs no training?"""
    return tree is not None and CONVERTS.found(text) and not trains_when_run(tree, _CONVERSION_TRAINING)


def fits_a_model(tree: ast.Module, imported: Mapping[str, str], others: AbstractSet[str]) -> bool:
    """May one ``<receiver>.fit(...)`` call of ``tree`` train a Keras model (see the module's
    docstring)? ``imported``: the file's import bindings; ``others``: the names of them bound to
    another library. A file whose ``.fit(`` text is in no call (a comment, a string): yes, as the
    text alone read it."""
    index = module_index(tree)
    receivers = [call.func.value for call in index.nodes(ast.Call)
                 if isinstance(call.func, ast.Attribute) and call.func.attr == "fit"]
    if not receivers:
        return True
    classes = {node.name: node for node in index.nodes(ast.ClassDef)}
    reader = _Values(index.nodes(ast.Assign), index.nodes(ast.AnnAssign), classes, imported, others)
    return any(reader.may_be_model(receiver) for receiver in receivers)


class _Values:
    """The values the file assigns to each name and attribute name, and what they may be."""

    def __init__(self, assigns: list[ast.Assign], annotated: list[ast.AnnAssign],
                 classes: Mapping[str, ast.ClassDef], imported: Mapping[str, str], others: AbstractSet[str]) -> None:
        self.names: dict[str, list[ast.expr]] = {}
        self.attributes: dict[str, list[ast.expr]] = {}
        for target, value in _assignments(assigns, annotated):
            if isinstance(target, ast.Name):
                self.names.setdefault(target.id, []).append(value)
            elif isinstance(target, ast.Attribute):
                self.attributes.setdefault(target.attr, []).append(value)
        self.classes = classes
        self.imported = imported
        self.others = others

    def may_be_model(self, receiver: ast.expr) -> bool:
        if isinstance(receiver, ast.Name) and receiver.id in self.others:
            return False  # another library's module or class (``KMeans.fit``)
        if isinstance(receiver, ast.Call):
            return self._call_may_be_model(receiver)
        if isinstance(receiver, ast.Name):
            values = self.names.get(receiver.id)
        elif isinstance(receiver, ast.Attribute):
            values = self.attributes.get(receiver.attr)
        else:
            return True
        # never assigned here (a parameter, an import): the file cannot tell
        return not values or any(not isinstance(value, ast.Call) or self._call_may_be_model(value)
                                 for value in values)

    def _call_may_be_model(self, call: ast.Call) -> bool:
        callee = call.func
        while isinstance(callee, ast.Attribute):
            if callee.attr in _KERAS_STATISTICS:
                return False
            callee = callee.value
        if not isinstance(callee, ast.Name):
            return True
        if callee.id in self.others or callee.id in _KERAS_STATISTICS:
            return False
        if callee is call.func and callee.id in self.classes and callee.id not in self.imported:
            return self._class_may_be_model(self.classes[callee.id], set())
        return True

    def _class_may_be_model(self, node: ast.ClassDef, seen: set[str]) -> bool:
        """Does the class of the file derive from a class it does not define (``tf.keras.Model``,
        an import's ``BaseModel``: maybe a Keras model), other than ``object`` and another
        library's? Its own classes are followed (``seen``: a cycle is no model)."""
        seen.add(node.name)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            if isinstance(base, ast.Name) and base.id in self.classes and base.id not in self.imported:
                if base.id not in seen and self._class_may_be_model(self.classes[base.id], seen):
                    return True
                continue
            root = base
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in self.others):
                return True
        return False


def _assignments(assigns: list[ast.Assign], annotated: list[ast.AnnAssign]) -> Iterator[tuple[ast.expr, ast.expr]]:
    """``(target, value)`` of each assignment of one value (``a = b = v`` gives both)."""
    for node in assigns:
        for target in node.targets:
            yield target, node.value
    for item in annotated:
        if item.value is not None:
            yield item.target, item.value
