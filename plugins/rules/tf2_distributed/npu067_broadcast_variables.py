"""NPU067 tf2-broadcast-variables: every NPU worker starts from the same initial variables.

In TF 2.x eager mode a model's variables get their values as soon as they exist, so after the
model is built every worker must receive the same ones: ``npu.distribute.broadcast(
model.trainable_variables)`` (TF 2.6 guide, "Distributed training script adaptation"; a no-op on
one device). The call goes after the statement (or the ``with <strategy>.scope():`` block) where
the variables provably exist: a functional ``tf.keras.Model(inputs, outputs)``,
``tf.keras.models.load_model(...)``, a ``Sequential`` given its input shape, or an explicit
``<model>.build(...)``, or (ours, beside the spec's build) the model's first call on a dummy batch
(``_ = model(tf.zeros([1, 2]))``) when it is the first statement of the block to name the model. A model whose variables appear later (subclassed, built by its first call
or by ``fit``) is reported at its construction. Only the models the program trains are sites
(``_trained``; handed to a trainer of the repository: ``_trainers``): in a TF 2.x repository the rule runs on ``tf-neutral`` model-definition files
too, whose sub-models (``Sequential`` blocks, layer stacks) no worker trains by themselves.
A model a registry or factory makes (``MODELS[name](...)``, ``registry.get(name)(cfg)``, a factory
the function is given as a parameter, a builder returning such a call) is a note where it is made: which model it is is known at run time only.
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    arguments,
    hookimpl,
    insert_after,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    KERAS,
    TF2,
    TF_NEUTRAL,
    BuiltModels,
    assigned_values,
    enclosing_scope,
    function_returns,
    is_call_trailer,
    module_parts,
    pre_order,
    returned_values,
    spelled_name,
    subclass_calls,
    tree_text,
)

from ._device import device_name, uses_horovod
from ._library import LIBRARY, in_library
from ._trained import (
    aliases,
    builder_facts,
    called_builder,
    is_trained_maker,
    maker_facts,
    parameters,
    passed_to_trainer,
    trains,
)
from ._trainers import Trainer, handed_to_trainer, parameter_facts

ADDED = "added {npu}.distribute.broadcast({model}.trainable_variables) after the model is built"
IN_PLACE = "the model's initial variables are broadcast to every worker"
IN_METHOD = "the model's initial variables are broadcast in {method}, which builds and trains it"
SCOPE_WRAPPER = "built in npu_broadcast_scope_wrapper(...).scope(): its variables are broadcast on exit"
LAZY = ("variables are created lazily: call npu.distribute.broadcast({model}.trainable_variables) "
        "once they exist, e.g. after {model}.build(...) or the first step")
UNKNOWN = ("the variables may not exist yet here: call npu.distribute.broadcast("
           "{model}.trainable_variables) once the model is built")
MODULE = ("{cls} is a tf.Module model: its variables exist once it is built (by its constructor or "
          "its first call), not as a Keras model's: call npu.distribute.broadcast({model}.trainable_variables) "
          "once they exist, e.g. after calling it on one batch, before the first training step")
HANDED = ("handed to {callee}, which may train it (nothing in the repository shows it does): if it "
          "does, call npu.distribute.broadcast({model}.trainable_variables) after the model is built")
FACTORY = ("{model} is built by {factory}, a registry or factory lookup: which model it is, and whether "
           "its variables exist yet, is decided at run time: call npu.distribute.broadcast("
           "{model}.trainable_variables) once they exist (right after this line for a functional or "
           "loaded Keras model, else after {model}.build(...) or the first training step)")
PASSED_FACTORY = ("{model} is built by {factory}(), a model factory the caller gives {function}(): which "
                  "model it is, and whether its variables exist yet, is decided at run time: call "
                  "npu.distribute.broadcast({model}.trainable_variables) once they exist (right after this "
                  "line for a functional or loaded Keras model, else after {model}.build(...) or the first "
                  "training step)")
FACTORY_RETURNED = ("{function} returns a model built by {factory}, a registry or factory lookup, and the "
                    "program trains it: which model it is, and whether its variables exist yet, is "
                    "decided at run time: call npu.distribute.broadcast(<model>.trainable_variables) "
                    "where the caller has the model, once they exist (right after the call for a "
                    "functional or loaded Keras model, else after <model>.build(...) or the first "
                    "training step)")
CALLBACKS = ("npu_callbacks_append drops non-list callbacks and its broadcast callback never runs "
             "(npu_callbacks.py:69-89): remove it and broadcast with npu.distribute.broadcast")
#: Keras makers whose result has its variables when the call returns.
LOADERS = frozenset({"tensorflow.keras.models.load_model", "tensorflow.keras.models.clone_model",
                     "tensorflow.keras.models.model_from_json"})
FUNCTIONAL = frozenset({"tensorflow.keras.Model", "tensorflow.keras.models.Model"})
SEQUENTIAL = frozenset({"tensorflow.keras.Sequential", "tensorflow.keras.models.Sequential"})
#: Bases of the models trained in custom loops that are no Keras models (``tf.Module``, a Keras
#: layer trained alone, Sonnet's modules): a class of the repository that derives from one.
MODULE_BASES = frozenset({"tensorflow.Module", "tensorflow.keras.layers.Layer", "sonnet.Module",
                          "sonnet.AbstractModule", "sonnet.Sequential", "sonnet.nets.MLP"})
#: Sonnet's classes that are no models (an optimizer passed to the training step with the model).
_SONNET_NO_MODELS = tuple(f"sonnet.{part}." for part in ("optimizers", "initializers", "regularizers",
                                                        "distribute", "mixed_precision"))
_INPUT_SHAPE = re.compile(r"\b(?:input_shape|batch_input_shape|input_dim)\s*=|\bInput(?:Layer)?\s*\(")


class BroadcastVariables(Rule):
    id = "NPU067"
    name = "tf2-broadcast-variables"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2, TF_NEUTRAL})  # tf-neutral: only in a TF 2.x repository
    description = "Broadcast a TF 2.x model's initial variables to every NPU worker once they exist."
    guide_section = "分布式训练脚本适配: 变量广播"
    guide_section_en = "Distributed Training Script Adaptation: initial-value broadcast"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("After the statement that provably creates a Keras model's variables (a functional "
                "`tf.keras.Model(inputs, outputs)`, `tf.keras.models.load_model(...)`, a "
                "`Sequential` given its input shape, an explicit `<m>.build(...)` or first call `<m>(x)` "
                "before anything else names the model), or after the "
                "`with <strategy>.scope():` block holding it (after the statement, inside the block, "
                "when the block returns or raises: a line after it would not run): "
                "`npu.distribute.broadcast(<m>.trainable_variables)`; already broadcast later in the scope: left alone. A model "
                "a function of the file or of the repository binds and returns (`model = ...; "
                "return model`) is broadcast there: its callers have no site.")
    reports = ("Only models the program trains (fitted, compiled, their `trainable_variables` read "
               "after the binding, not a model reloaded after training to evaluate it; "
               "passed to a function, class or method of the repository that trains that parameter "
               "(`trainer = Trainer(model)`, `trainer.compile(model=model)`: rewritten as the file's own), "
               "or returned by a function whose result a file of the repository trains): "
               "a model with its variables handed to a trainer that the repository does not show "
               "training it (`trainer.fit(...)` after `trainer.compile(model=model)`, the method passing "
               "it on through `super()`), with the broadcast line to add; "
               "a model whose variables are created lazily (subclassed, `Sequential` without an "
               "input shape, built by a function of the repository or by `fit`); a model a registry "
               "or factory makes (a call of a registry entry, `MODELS[name]`, or of what a "
               "registry gives, `registry.get(name)(cfg)`, of a factory the function is given, "
               "`backbone_retinanet(num_classes)` in `create_models(backbone_retinanet, ...)`, or a "
               "function whose result the program trains returning such a call), as a note: which model, and "
               "whether its variables exist, is decided at run time; a `tf.Module` model "
               "trained in a custom loop (a class of the repository deriving from `tf.Module`, a "
               "Keras layer or a Sonnet module, or a Sonnet class such as `snt.nets.MLP`); the anchor's "
               "`npu_callbacks_append(...)` (its broadcast callback never runs). A file that "
               "imports Horovod (itself, or `from common import hvd` of a repository module that "
               "does), or belongs to a program one of whose modules imports it (a script training "
               "through a repository's Horovod helpers), is left to NPU070, one that imports "
               "BytePS to NPU071 (each broadcasts itself: never both). "
               "Library code (a module no entry script of the repository reaches): each site "
               "reported with the line to add, nothing rewritten or imported.")
    example = """
        import tensorflow as tf


        def build(num_classes):
            inputs = tf.keras.Input(shape=(28, 28))
            x = tf.keras.layers.Flatten()(inputs)
            outputs = tf.keras.layers.Dense(num_classes)(x)
            model = tf.keras.Model(inputs, outputs)
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            return model


        def build_lazy(num_classes):
            model = tf.keras.Sequential([tf.keras.layers.Dense(num_classes)])
            model.compile(optimizer="sgd", loss="mse")
            return model
    """
    # A model class or maker of the repository (``from model import Net; model = Net(3)``)
    # spells none of the Keras names: the words of a training (``_trained``) or of a returned
    # model bring the file in.
    _tokens = ("Model", "Sequential", "load_model", "clone_model", "model_from_", ".build(",
              "npu_callbacks_append", "fit", "compile", "train_on_batch", "trainable_", "return")
    reads_programs = True  # library code (no entry reaches it): reported, never rewritten

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if uses_horovod(ctx):
            return  # Horovod broadcasts itself: NPU070 reports each use
        for node in list(pre_order(tree)):
            if node.type == symbols.expr_stmt and len(node.children) == 3 \
                    and node.children[1].type == tokens.EQUAL:
                self._assignment(node, ctx)
            elif node.type == tokens.NAME and node.value == "npu_callbacks_append" \
                    and _is_called(node):
                ctx.report(node, "unmigrated", CALLBACKS)
            elif node.type == symbols.return_stmt and len(node.children) == 2:
                _returned_factory(node, ctx)

    def _assignment(self, statement: Node, ctx: FileContext) -> None:
        target, _, value = statement.children
        model = _target(target)
        if model is None:
            return
        models = ctx.analysis(BuiltModels)
        if models.value_kind(value) != KERAS and models.value_kind(value, reexported=True) != KERAS:
            self._module_model(statement, model, value, ctx)
            return
        trainer = None if _trained(statement, model, ctx) else _handed(statement, model, ctx)
        if trainer is False:
            return  # a sub-model, or a model the program does not train: no site
        line = statement.parent
        if line is None or line.type != symbols.simple_stmt:
            return
        if _in_scope_wrapper(line):
            ctx.report(statement, "migrated", SCOPE_WRAPPER)
            return
        build = _build_statement(line, model)
        anchor = build if build is not None else _scope_block(line)
        if _broadcast_after(anchor, model):
            ctx.report(statement, "migrated", IN_PLACE)
            return
        if build is None and not _has_variables(value, ctx):
            if _from_builder(value, ctx):
                return  # ``model = build_model(...)``: broadcast (or reported) in build_model
            method = _own_method(value)
            if method is not None and _broadcast_inside(method, ctx):
                ctx.report(statement, "migrated", IN_METHOD.format(method=method.children[1].value))
                return
            ctx.report(statement, "unmigrated", (LAZY if _lazy(value, ctx) else UNKNOWN).format(model=model))
            return
        if isinstance(trainer, Trainer) and not trainer.proven:
            ctx.report(statement, "unmigrated", HANDED.format(callee=trainer.callee, model=model))
            return
        if in_library(ctx):
            ctx.report(statement, "unmigrated", LIBRARY.format(
                line=f"call npu.distribute.broadcast({model}.trainable_variables) after the model is built"))
            return
        npu = device_name(ctx, anchor)
        insert_after(anchor, f"{npu}.distribute.broadcast({model}.trainable_variables)", ctx.newline)
        ctx.report(statement, "migrated", ADDED.format(npu=npu, model=model))


    def _module_model(self, statement: Node, model: str, value: Base, ctx: FileContext) -> None:
        """A ``tf.Module`` or Sonnet model the program trains (in a custom loop): reported at its
        construction, as a subclassed model is (its variables appear in its constructor or its
        first call: the spec's "unmigrated at the construction"); already broadcast: migrated."""
        cls = _module_class(value, ctx)
        factory = _factory(value) if cls is None else None
        passed = _parameter_factory(value, statement) if cls is None and factory is None else None
        line = statement.parent
        if (cls is None and factory is None and passed is None) or line is None or line.type != symbols.simple_stmt \
                or not (_trained(statement, model, ctx) or _proven(_handed(statement, model, ctx))):
            return  # a layer handed to a trainer not shown to train it: a helper (TensorFlowTTS's PQMF)
        if _broadcast_after(line, model) or ((factory or passed) is not None and _in_scope_wrapper(line)):
            ctx.report(statement, "migrated", IN_PLACE if _broadcast_after(line, model) else SCOPE_WRAPPER)
        elif cls is not None:
            ctx.report(statement, "unmigrated", MODULE.format(cls=cls, model=model))
        elif passed is not None:
            ctx.report(statement, "unmigrated", PASSED_FACTORY.format(model=model, factory=passed[0],
                                                                      function=passed[1]), level="note")
        else:
            ctx.report(statement, "unmigrated", FACTORY.format(model=model, factory=factory), level="note")


def _parameter_factory(value: Base, statement: Base) -> Optional[tuple[str, str]]:
    """``(factory, function)`` when ``value`` calls a parameter of the function ``statement`` is
    in, or a call wrapping such a call as its first argument (keras-retinanet's ``create_models(
    backbone_retinanet, ...)``: ``model = model_with_weights(backbone_retinanet(num_classes),
    weights=weights)``): the caller chooses the model, at run time."""
    scope = enclosing_scope(statement)
    names = parameters(scope) if scope.type == symbols.funcdef else []
    for _ in range(2):  # the call, or the call of its first argument
        children = value.children if value.type == symbols.power else []
        if len(children) != 2 or children[0].type != tokens.NAME or not is_call_trailer(children[1]):
            return None
        if children[0].value in names:
            return str(children[0].value), str(scope.children[1].value)
        given = arguments(children[1])
        if not given or given[0].keyword is not None or given[0].star:
            return None
        value = given[0].value
    return None


def _factory(value: Base) -> Optional[str]:
    """``MODELS[name]`` of ``MODELS[name](...)``, ``registry.get(name)`` of
    ``registry.get(name)(cfg)``: the lookup (shortened) when ``value`` calls what a subscript
    or another call gives, else None. Which model such a call makes is known at run time only."""
    children = value.children if value.type == symbols.power else []
    if len(children) < 3 or not is_call_trailer(children[-1]) or children[0].type != tokens.NAME:
        return None
    lookup = children[-2]
    if lookup.type != symbols.trailer or lookup.children[0].type not in (tokens.LSQB, tokens.LPAR):
        return None
    text = " ".join("".join(tree_text(part).strip() for part in children[:-1]).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _returned_factory(statement: Base, ctx: FileContext) -> None:
    """``return MODELS[cfg.name](cfg)`` in a module-level function whose result the program
    trains (``_trained.maker_facts``): its callers bind a model of no kind the rule knows, so
    the site is here, reported with the line to add where the caller has the model."""
    factory = _factory(statement.children[1])
    function = enclosing_scope(statement) if factory is not None else None
    if function is None or function.type != symbols.funcdef or _class_of(function) is not None \
            or enclosing_scope(function).type != symbols.file_input:
        return
    name = str(function.children[1].value)
    if is_trained_maker(".".join([*module_parts(ctx.path), name]), ctx.facts | maker_facts(ctx.path, ctx.original)):
        ctx.report(statement, "unmigrated", FACTORY_RETURNED.format(function=f"{name}()", factory=factory),
                   level="note")


def _from_builder(value: Base, ctx: FileContext) -> bool:
    """Is ``value`` a call of a function of the file or of the repository that binds the model
    it returns (``_trained.builder_facts``)? Its binding there is the site (the broadcast goes
    after it), so the caller has none: a finding here would ask for a second broadcast."""
    children = value.children if value.type == symbols.power else []
    callee = spelled_name(children[:-1]) if len(children) >= 2 and is_call_trailer(children[-1]) else None
    return callee is not None and called_builder(ctx.path, ctx.original, callee, ctx.facts)


def _module_class(value: Base, ctx: FileContext) -> Optional[str]:
    """The class, as spelled, when ``value`` calls a ``tf.Module`` model class: ``tf.Module``
    itself, a class of Sonnet (``snt.Linear``, ``snt.nets.MLP``), or a class of the repository
    whose bases reach one of :data:`MODULE_BASES` (``class Net(tf.Module)``, the ``class:``
    facts), else None."""
    children = value.children if value.type == symbols.power else []
    if len(children) < 2 or not is_call_trailer(children[-1]):
        return None
    spelled = spelled_name(children[:-1])
    if spelled is None:
        return None
    sonnet = ctx.names("sonnet").resolve(spelled) if "sonnet" in ctx.original else None
    if ctx.tf.qualify(spelled) == "tensorflow.Module" \
            or (sonnet and sonnet.startswith("sonnet.") and sonnet.rpartition(".")[2][:1].isupper()
                and not sonnet.startswith(_SONNET_NO_MODELS)):
        return spelled
    calls = subclass_calls(ctx, MODULE_BASES)
    return spelled if any(call.reference.node is value and call.reference.call is children[-1]
                          for call in calls) else None


def _target(target: Base) -> Optional[str]:
    """``model``, ``self.model`` or another name's attribute (DeepLearningZeroToAll's
    ``tf.model = tf.keras.Sequential()``, trained as ``tf.model.fit(...)``): the spelling of an
    assignment target the rule follows."""
    if target.type == tokens.NAME:
        return str(target.value)
    children = target.children if target.type == symbols.power else []
    if len(children) == 2 and children[0].type == tokens.NAME \
            and children[1].type == symbols.trailer and children[1].children[0].type == tokens.DOT:
        return f"{children[0].value}.{children[1].children[1].value}"
    return None


def _trained(statement: Base, model: str, ctx: FileContext) -> bool:
    """Does the program train the model ``model`` that ``statement`` binds (``_trained``)?"""
    scope = enclosing_scope(statement)
    owner = _class_of(scope) if model.startswith("self.") else None
    if "." not in model and _reloaded_after_training(statement, model, scope):
        return False
    text = tree_text(owner or scope)
    if trains(model, text) or ("." not in model and passed_to_trainer(scope, model)):
        return True
    if "." not in model and any(trains(alias, text) for alias in aliases(model, text)):
        return True  # ``training_model = model`` then ``training_model.compile(...)``
    returned = [node for node in function_returns(scope) if tree_text(node).strip() == f"return {model}"] \
        if scope.type == symbols.funcdef else []
    if not returned:
        return False
    outer = _class_of(scope)
    names = [*module_parts(ctx.path), *([str(outer.children[1].value)] if outer is not None else []),
             str(scope.children[1].value)]
    facts = ctx.facts | maker_facts(ctx.path, ctx.original)
    return is_trained_maker(".".join(names), facts) \
        or (outer is None and _returned_by_trained_maker(scope, ctx.path, facts))


def _reloaded_after_training(statement: Base, model: str, scope: Base) -> bool:
    """Does ``statement`` bind ``model`` again after the scope trained an earlier binding of it,
    and nothing after it trains it (tf2-transformer-chatbot: ``chatbot.fit(...)``, then ``chatbot =
    tf.keras.models.load_model(path)`` to evaluate)? That model is no training's."""
    leaves = list(scope.leaves())
    first = next(statement.leaves(), None)
    at = next((index for index, leaf in enumerate(leaves) if leaf is first), None)
    if at is None:
        return False
    before = "".join(str(leaf) for leaf in leaves[:at])
    after = "".join(str(leaf) for leaf in leaves[at:])
    bound = re.search(rf"(?<![\w.]){re.escape(model)}\s*=(?!=)", before) is not None
    return bound and trains(model, before) and not trains(model, after)


def _returned_by_trained_maker(function: Base, path: str, facts: frozenset[str], depth: int = 3) -> bool:
    """Does a module-level function of the file that the program trains the result of return
    a call of ``function`` as it is (keras-YOLOv3's ``MobileViT_S`` returns ``MobileViT(...)``),
    through at most ``depth`` such functions? Its model is then trained too."""
    name = str(function.children[1].value)
    module = function
    while module.parent is not None:
        module = module.parent
    for caller in module.children if depth > 0 else ():
        caller = caller.children[-1] if caller.type == symbols.decorated else caller
        if caller.type != symbols.funcdef or caller is function or not any(
                _returns_call_of(statement, name) for statement in function_returns(caller)):
            continue
        qualified = ".".join([*module_parts(path), str(caller.children[1].value)])
        if is_trained_maker(qualified, facts) or _returned_by_trained_maker(caller, path, facts, depth - 1):
            return True
    return False


def _returns_call_of(statement: Base, name: str) -> bool:
    """Is ``statement`` ``return name(...)``?"""
    value = statement.children[1] if statement.type == symbols.return_stmt else None
    return value is not None and value.type == symbols.power and len(value.children) == 2 \
        and value.children[0].type == tokens.NAME and value.children[0].value == name \
        and is_call_trailer(value.children[1])


def _handed(statement: Base, model: str, ctx: FileContext) -> "Trainer | bool":
    """The trainer a model the file does not train itself is handed to (``_trainers``), or
    False: a repository class that trains it (a fact says so) makes it trained; one that may
    (``trainer = Trainer(model)``, then ``trainer.fit(...)``) makes it a site reported, never
    rewritten, and never silent."""
    if "." in model:
        return False
    trainer = handed_to_trainer(enclosing_scope(statement), model, ctx.path, ctx.original, ctx.facts)
    return trainer if trainer is not None else False


def _proven(trainer: "Trainer | bool") -> bool:
    return isinstance(trainer, Trainer) and trainer.proven


def _class_of(scope: Base) -> Optional[Base]:
    """The class whose method ``scope`` is, or None."""
    parent = scope.parent if scope.type == symbols.funcdef else None
    while parent is not None and parent.type not in (symbols.classdef, symbols.funcdef, symbols.file_input):
        parent = parent.parent
    return parent if parent is not None and parent.type == symbols.classdef else None


def _qualified_callee(value: Base, ctx: FileContext) -> str:
    children = value.children if value.type == symbols.power else []
    if len(children) < 2 or children[0].type != tokens.NAME:
        return ""
    names = [children[0].value]
    for part in children[1:-1]:
        if part.type != symbols.trailer or part.children[0].type != tokens.DOT:
            return ""
        names.append(part.children[1].value)
    return ctx.tf.qualify(".".join(names)) or ""


def _has_variables(value: Base, ctx: FileContext, depth: int = 1) -> bool:
    """Does the model call ``value`` return a model whose variables exist?"""
    callee = _qualified_callee(value, ctx)
    call = value.children[-1] if value.type == symbols.power else value
    if callee in LOADERS:
        return True
    if callee in FUNCTIONAL:
        given = arguments(call)
        keywords = {argument.keyword for argument in given}
        positional = [argument for argument in given if argument.keyword is None and not argument.star]
        return len(positional) >= 2 or {"inputs", "outputs"} <= keywords \
            or (len(positional) == 1 and "outputs" in keywords)
    if callee in SEQUENTIAL:
        return bool(_INPUT_SHAPE.search(" ".join(leaf.value for leaf in call.leaves())))  # no comments
    method = _own_method(value) if depth > 0 else None
    values = returned_values(method) if method is not None else None
    return bool(values) and all(_made_with_variables(returned, ctx, depth - 1) for returned in values or ())


def _own_method(value: Base) -> Optional[Base]:
    """The method of the enclosing class that ``self.<m>()`` calls (DeepRL's
    ``self.model = self.create_model()``), or None."""
    children = value.children if value.type == symbols.power else []
    if len(children) != 3 or children[0].type != tokens.NAME or children[0].value != "self" \
            or children[1].children[0].type != tokens.DOT:
        return None
    owner = _class_of(enclosing_scope(value))
    name = str(children[1].children[1].value)
    suite = owner.children[-1] if owner is not None else None
    found = [node for node in (suite.children if suite is not None else ())
             if node.type == symbols.funcdef and str(node.children[1].value) == name]
    return found[0] if len(found) == 1 else None


def _broadcast_inside(method: Base, ctx: FileContext) -> bool:
    """Does ``method`` return only names it binds to a model that has its variables and that
    it trains, so that this rule broadcasts it there (DeepRL's DQN ``create_model`` compiles the
    functional model it returns)?"""
    values = returned_values(method) or []
    text = tree_text(method)
    return bool(values) and all(
        value.type == tokens.NAME and trains(str(value.value), text)
        and all(_has_variables(bound, ctx, 0) for bound in assigned_values(value, str(value.value)) or [value])
        for value in values)


def _made_with_variables(value: Base, ctx: FileContext, depth: int) -> bool:
    """Does the returned ``value``, a call, make a model whose variables exist? (A name the
    method binds is a site of its own there: broadcast once, where the method builds it.)"""
    return value.type == symbols.power and _has_variables(value, ctx, depth)


def _lazy(value: Base, ctx: FileContext) -> bool:
    """A ``Sequential`` or model class call: variables made by the first call or ``build``."""
    callee = _qualified_callee(value, ctx)
    return callee in SEQUENTIAL or callee in FUNCTIONAL or not callee.startswith("tensorflow.") \
        and value.type == symbols.power and len(value.children) == 2 \
        and str(value.children[0].value)[:1].isupper() and not _repository_function(value, ctx)


def _repository_function(value: Base, ctx: FileContext) -> bool:
    """Is ``value``, a call of a bare name, one of a function of the repository that returns a
    model (yolov3-tf2's ``YoloV3(...)``, named like a class), not of a class?"""
    models = ctx.analysis(BuiltModels)
    name = str(value.children[0].value)
    return models.imports.get(name, f"{models.module}.{name}") in models.facts.functions


def _build_statement(line: Base, model: str) -> Optional[Base]:
    """A later ``<model>.build(...)`` statement of the same block, or the model's first call
    there when it is the block's first statement that names the model (tf_SIREN's ``_ =
    model(tf.zeros([1, 2]))``, "instantiate model", before ``model.compile``): Keras builds a
    model's variables on its first call. A later call (``preds = model(x_test)`` after ``fit``)
    is none: the broadcast would follow the training."""
    sibling = line.next_sibling
    first = True
    called = re.compile(rf"^(?:[\w\s,()\[\]]+=(?!=)\s*)?{re.escape(model)}\s*\(")
    named = re.compile(rf"(?<![\w.]){re.escape(model)}\b")
    while sibling is not None:
        text = tree_text(sibling)[len(sibling.prefix):].strip()  # not the comments before it
        if text.startswith(f"{model}.build(") or (first and called.match(text)):
            return sibling
        first = first and not named.search(text)
        sibling = sibling.next_sibling
    return None


def _scope_block(line: Base) -> Base:
    """The ``with <x>.scope():`` statement of the same function that holds ``line`` (in
    nested blocks too), else ``line``; ``line`` too when the block returns or raises (``return
    model`` in the scope): a statement after the block would not run there."""
    node = line.parent
    while node is not None and node.type not in (symbols.funcdef, symbols.classdef, symbols.file_input):
        if node.type == symbols.with_stmt and ".scope()" in tree_text(node.children[1]):
            return line if _leaves_early(node) else node
        node = node.parent
    return line


def _leaves_early(block: Base) -> bool:
    """Does the compound statement ``block`` hold a ``return`` or ``raise`` of its own (not
    of a function or class defined in it)?"""
    stack = list(block.children)
    while stack:
        node = stack.pop()
        if node.type in (symbols.return_stmt, symbols.raise_stmt):
            return True
        if node.type not in (symbols.funcdef, symbols.classdef, symbols.lambdef):
            stack.extend(node.children)
    return False


def _in_scope_wrapper(line: Base) -> bool:
    node: Optional[Base] = line
    while node is not None:
        if node.type == symbols.with_stmt and "npu_broadcast_scope_wrapper(" in tree_text(node.children[1]):
            return True
        node = node.parent
    return False


def _broadcast_after(anchor: Base, model: str) -> bool:
    """Is ``<model>``'s variables broadcast after ``anchor`` in its scope?"""
    scope = enclosing_scope(anchor)
    text = tree_text(scope)
    start = text.find(tree_text(anchor))
    later = text[start:] if start >= 0 else text
    return bool(re.search(r"\bbroadcast\(\s*" + re.escape(model) + r"\.(?:trainable_)?(?:variables|weights)\b",
                          later))


def _is_called(name: Base) -> bool:
    following = name.next_sibling
    return following is not None and following.type == symbols.trailer \
        and following.children[0].type == tokens.LPAR


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    """The functions whose result the file trains (``_trained.maker_facts``), those that
    bind the model they return (``_trained.builder_facts``), and the parameters its functions
    and methods train (``_trainers.parameter_facts``)."""
    return maker_facts(path, text) | builder_facts(path, text) | parameter_facts(path, text) or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [BroadcastVariables()]
