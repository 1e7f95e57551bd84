"""NPU068 tf2-gradient-allreduce: a TF 2.x custom loop aggregates its gradients across NPUs.

When a script computes and applies gradients in separate steps, ``npu.distribute.all_reduce(
grads, "mean")`` goes between them (TF 2.6 guide, "Distributed training script adaptation");
it returns the gradients unchanged on one worker. When one API computes and applies them
(Keras ``compile`` + ``fit``, ``<optimizer>.minimize``), the optimizer goes through
``npu.distribute.npu_distributed_keras_optimizer_wrapper``: the ``compile(optimizer=...)`` of a
model the file builds, and the Keras optimizer constructor a ``minimize`` uses in the same scope.
A model class that overrides ``train_step`` and applies gradients itself is a custom loop (its
gradients are all-reduced there), never both: in whichever file of the repository the class is
(``_own_steps``). The gradients are followed to ``apply_gradients`` through unscaling and
clipping (``_gradient_flow``).
"""

from __future__ import annotations

import re
from typing import Optional

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    Rule,
    find_argument,
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
    attribute_name,
    called_method,
    enclosing_scope,
    pre_order,
    tree_text,
    wrap_expression,
)

from ._device import device_name, uses_horovod
from ._gradient_flow import gradient_flow
from ._library import LIBRARY, in_library
from ._own_steps import builds_own_step_model, in_own_step_class, own_step_facts
from ._recompiled import recompiled

ADDED = "added {name} = {npu}.distribute.all_reduce({name}, \"mean\") before the gradients are applied"
IN_PLACE = "the gradients are all-reduced"
INLINE = ("the gradients are computed inside apply_gradients: bind them first (grads = "
          "tape.gradient(...)), then add grads = npu.distribute.all_reduce(grads, \"mean\") "
          "before apply_gradients")
NESTED = ("the gradients are computed inside {inside}: bind them first (grads = "
          "tape.gradient(...)), then add grads = npu.distribute.all_reduce(grads, \"mean\") right "
          "after, before {before}")
RETURNED = ("the gradients are returned: if the caller applies them, add grads = npu.distribute."
            "all_reduce(grads, \"mean\") where it binds them, before they are applied")
NOT_A_NAME = ("the gradients go to a tuple: all-reduce them before they are applied "
              "(grads = npu.distribute.all_reduce(grads, \"mean\"))")
ELSEWHERE = ("{name} is applied in another block or function: add {name} = "
             "npu.distribute.all_reduce({name}, \"mean\") before apply_gradients")
NOWHERE = ("{name} is applied nowhere in this file: if it updates trained variables (apply_gradients "
           "or assign_sub in another file), add {name} = npu.distribute.all_reduce({name}, \"mean\") "
           "before they are applied")
THROUGH = ("{name} reaches apply_gradients through `{step}`, a step NPU068 does not follow (it "
           "follows get_unscaled_gradients and clipping): add {name} = npu.distribute.all_reduce("
           "{name}, \"mean\") right after the gradient statement")
KERAS_UNKNOWN = ("wrap the optimizer for distributed training if this is a Keras model: optimizer="
                 "npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>)")
KERAS_UNKNOWN_LOOP = ("wrap the optimizer for distributed training if this is a Keras model that trains "
                      "with fit: optimizer=npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>); "
                      "not if its gradients are applied in the repository's custom loop or its own "
                      "train_step, where NPU068 all-reduces them (never both: gradients would be "
                      "all-reduced twice)")
#: Said of an optimizer passed by name to a compile NPU068 does not wrap: another compile (a
#: model-building helper's, which NPU068 may have wrapped) may have patched the object already.
ONCE = ("; once per optimizer object: the wrapper patches {name} in place, so if another compile "
        "wrapped it already (a model-building helper's), wrapping it again all-reduces twice")
WRAPPER = "npu_distributed_keras_optimizer_wrapper"
WRAPPED = "added {npu}.distribute.npu_distributed_keras_optimizer_wrapper(...) around the optimizer"
WRAPPED_ALREADY = "the optimizer aggregates gradients across NPUs (npu_distributed_keras_optimizer_wrapper)"
TWICE = "optimizer wrapped twice: gradients are all-reduced twice; remove one npu_distributed_keras_optimizer_wrapper"
OWN_STEP = ("the model's class overrides train_step and applies gradients itself: its gradients "
            "are all-reduced there (custom loop), not by wrapping the optimizer")
MINIMIZE_UNKNOWN = ("{spelled}.minimize computes and applies gradients: build the optimizer as "
                    "npu.distribute.npu_distributed_keras_optimizer_wrapper(<Keras optimizer>) "
                    "(it is not made in this scope from a tf.keras.optimizers class)")
COMPILED_MINIMIZE = ("self.optimizer.minimize in train_step applies gradients with the optimizer the model "
                     "is compiled with: it aggregates once that optimizer is wrapped at compile(optimizer="
                     "npu.distribute.npu_distributed_keras_optimizer_wrapper(<optimizer>)), which NPU068 "
                     "does where the file builds the model")
BOTH = ("{spelled} also applies gradients of a custom loop here: all-reduce them there "
        "instead of wrapping the optimizer (never both: gradients would be all-reduced twice)")
#: The optimizer compiled is the one a loop of the file applies gradients with: the wrapper
#: patches the object in place (``hccl.py``: ``optimizer.apply_gradients = ...``).
COMPILED_AND_APPLIED = ("{spelled} also applies the gradients of a custom loop in this file "
                        "({spelled}.apply_gradients, all-reduced there): "
                        "npu_distributed_keras_optimizer_wrapper patches the optimizer object in "
                        "place, so wrapping it here would all-reduce that loop's gradients twice: "
                        "compile with a separate optimizer wrapped by "
                        "npu.distribute.npu_distributed_keras_optimizer_wrapper(...)")
#: The same optimizer object compiled twice (``_recompiled``): wrapped at each compile, the
#: in-place patch would nest.
COMPILED_AGAIN = ("{name} is compiled more than once with the same optimizer object ({where}): "
                  "npu_distributed_keras_optimizer_wrapper patches the object in place, so "
                  "wrapping it at each compile would all-reduce its gradients twice once a second "
                  "compile runs: wrap it once where it is made ({name} = npu.distribute."
                  "npu_distributed_keras_optimizer_wrapper(...)) and compile with it as it is, "
                  "unless a custom loop also applies its gradients (that loop all-reduces them)")
#: Fact: a file of the repository applies the gradients of a custom loop (all-reduced there).
CUSTOM_LOOP = "npu068-custom-loop"
LOOP_ELSEWHERE = ("the repository applies gradients in a custom loop (all-reduced there): wrap "
                  "this optimizer with npu.distribute.npu_distributed_keras_optimizer_wrapper only "
                  "if this model trains with fit (never both: gradients would be all-reduced twice)")
EXPORTED = ("{function}() is exported (its concrete function is saved or converted, e.g. as a TFLite "
            "on-device training signature), not run by this script: an all_reduce here would go into the "
            "exported model, which runs where no NPU collective exists; if a script trains with it on NPUs, "
            "add {name} = npu.distribute.all_reduce({name}, \"mean\") in that script's own step")
#: What a script that exports a traced function (rather than running it) spells.
_EXPORTS = re.compile(r"\bsaved_model\.save\(|\bTFLiteConverter\b|\bsignatures\s*=")
HOROVOD_OPTIMIZER = "Horovod's DistributedOptimizer: NPU070 reports it; not wrapped twice"


class GradientAllReduce(Rule):
    id = "NPU068"
    name = "tf2-gradient-allreduce"
    pack = "tf2-distributed"
    default_on = False
    file_kinds = frozenset({TF2, TF_NEUTRAL})  # tf-neutral: only in a TF 2.x repository
    description = "All-reduce a TF 2.x custom loop's gradients across NPUs before they are applied."
    guide_section = "分布式训练脚本适配: 梯度聚合"
    guide_section_en = "Distributed Training Script Adaptation: gradient aggregation"
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("`G = tape.gradient(...)` (G a name, `tape` a `tf.GradientTape`), or `G = "
                "tf.gradients(...)`, followed in the "
                "same block by an `apply_gradients` (Sonnet's `apply`, in a file that imports Sonnet) "
                "that uses `G`, directly or under the name "
                "`get_unscaled_gradients(G)`, `clip_by_global_norm(G, ...)` or a comprehension of "
                "`clip_by_norm`/`clip_by_value` over `G` binds: `G = npu.distribute.all_reduce("
                "G, \"mean\")` right after the gradient statement (before any unscaling or "
                "clipping). The `compile(optimizer=X)` of a Keras model the file builds, and the "
                "`tf.keras.optimizers` constructor an `<opt>.minimize(...)` uses in the same scope: "
                "wrapped in `npu.distribute.npu_distributed_keras_optimizer_wrapper(...)`. A model "
                "whose class (in any file of the repository, or a base of it there) overrides "
                "`train_step` is all-reduced in its step: neither its optimizer nor the class's "
                "own `super().compile(optimizer=...)` is wrapped. Already aggregated: left alone.")
    reports = ("Gradients of a step the script exports instead of running (its "
               "`get_concrete_function()` saved or converted: a TFLite on-device training signature, "
               "where an NPU collective cannot run); "
               "gradients bound to a tuple, applied in another block or function (or nowhere in "
               "the file: said so), or applied "
               "after another step makes a new value of them (the line to add); gradients "
               "computed inside the `apply_gradients` call (`zip(tape.gradient(...), variables)`: "
               "bind them, then all-reduce), or inside another call or expression of the "
               "statement computing them (`grads, _ = tf.clip_by_global_norm(tape.gradient(...), "
               "5.0)`: bind them, all-reduce, then clip), or returned (`return tape.gradient(...)`: "
               "all-reduce them where the caller binds them); a "
               "`compile(optimizer=...)` of a receiver not shown to be a Keras model; a "
               "`minimize` of an optimizer not made here from a Keras class, or whose optimizer "
               "also applies a custom loop's gradients (a `train_step`'s `self.optimizer.minimize`: "
               "the compiled optimizer, wrapped at the model's `compile`); a `compile(optimizer=<name>)` "
               "whose optimizer a custom loop of the file also applies gradients with "
               "(`<name>.apply_gradients`: the wrapper patches the object in place, so the loop "
               "would all-reduce twice); a `compile(optimizer=<name>)` whose object another "
               "compile of the same function passes again (a frozen stage, then an unfrozen one), "
               "or that runs in a loop, unless the branches of one `if` or a new binding between "
               "them keep them apart (wrapped at each compile, the in-place patch would nest); "
               "an optimizer wrapped twice. A file that "
               "imports Horovod (itself, or `from common import hvd` of a repository module that "
               "does), or belongs to a program one of whose modules imports it (a script training "
               "through a repository's Horovod helpers), is left to NPU070, one that imports "
               "BytePS to NPU071 (each aggregates itself: never both). "
               "Library code (a module no entry script of the repository reaches): each site "
               "reported with the line to add, nothing rewritten or imported.")
    example = """
        import tensorflow as tf


        @tf.function
        def train_step(model, optimizer, images, labels):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.mse(labels, model(images)))
            grads = tape.gradient(loss, model.trainable_variables)
            grads, _ = tf.clip_by_global_norm(grads, 5.0)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))


        def build(model):
            model.compile(optimizer="adam", loss="mse")
    """
    _tokens = (".gradient(", "gradients(", ".compile(", ".minimize(")
    after = ("NPU061",)
    reads_programs = True  # library code (no entry reaches it): reported, never rewritten

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if uses_horovod(ctx):
            return  # Horovod's tape or optimizer aggregates already: NPU070 reports each use
        tapes = _tapes(ctx.original)
        again = recompiled(tree) if ".compile(" in ctx.original else {}
        for node in list(pre_order(tree)):
            if node.type == symbols.expr_stmt and len(node.children) == 3:
                self._gradient_statement(node, tapes, ctx)
            elif node.type == symbols.return_stmt and len(node.children) == 2:
                self._returned_gradients(node, tapes, ctx)
            elif node.type == symbols.trailer and len(node.children) == 2 and node.children[0].type == tokens.DOT:
                method = node.children[1].value
                if method == "compile":
                    self._compile(node, ctx, again)
                elif method == "minimize":
                    self._minimize(node, ctx)
                elif method == "apply_gradients":
                    self._inline_gradients(node, tapes, ctx)

    def _compile(self, trailer: Node, ctx: FileContext, again: dict[int, str]) -> None:
        """``model.compile(optimizer=X)``: ``X`` wrapped when the file builds ``model``, unless
        the same optimizer object is compiled again (``again``: ``_recompiled``)."""
        index = called_method(trailer)
        power = trailer.parent
        if index is None or power is None:
            return
        argument = find_argument(power.children[index + 1], "optimizer", 0)
        if argument is None or argument.star:
            return
        keras = ctx.analysis(BuiltModels).receiver_kind(power.children[:index]) == KERAS
        if argument.keyword != "optimizer" and not keras:
            return  # re.compile(pattern), a compiler's compile(source): not a Keras optimizer
        value = argument.value
        if "DistributedOptimizer" in tree_text(value):
            ctx.report(value, "unmigrated", HOROVOD_OPTIMIZER, level="note")
        elif _wrapped(value, ctx):
            self._report_wrapped(value, ctx)
        elif builds_own_step_model(power.children[:index], ctx) \
                or in_own_step_class(power.children[:index], ctx):
            ctx.report(value, "migrated", OWN_STEP)
        elif not keras:
            advice = KERAS_UNKNOWN_LOOP if CUSTOM_LOOP in ctx.facts else KERAS_UNKNOWN
            once = ONCE.format(name=value.value) if value.type == tokens.NAME else ""
            ctx.report(value, "unmigrated", advice + once, level="note")
        elif CUSTOM_LOOP in ctx.facts and not _KERAS_TRAINING.search(ctx.original):
            ctx.report(value, "unmigrated", LOOP_ELSEWHERE)
        elif value.type == tokens.NAME and _applies_gradients(str(value.value), ctx.original):
            ctx.report(value, "unmigrated", COMPILED_AND_APPLIED.format(spelled=value.value))
        elif id(value) in again:
            ctx.report(value, "unmigrated", COMPILED_AGAIN.format(name=value.value, where=again[id(value)]))
        else:
            self._wrap(value, ctx)

    def _minimize(self, trailer: Node, ctx: FileContext) -> None:
        """``opt.minimize(...)``: the ``tf.keras.optimizers`` constructor ``opt`` is bound to in
        this scope gets wrapped; any other optimizer is reported."""
        index = called_method(trailer)
        power = trailer.parent
        if index is None or power is None:
            return
        receiver = power.children[:index]
        spelled = "".join(tree_text(part).strip() for part in receiver)
        if spelled == "self.optimizer" and _in_train_step(trailer):
            ctx.report(trailer, "unmigrated", COMPILED_MINIMIZE, level="note")
            return
        if len(receiver) != 1 or receiver[0].type != tokens.NAME:
            if _keras_optimizer(receiver[:-1], ctx) and is_call(receiver[-1]):
                self._wrap(_expression(power, index), ctx, at=trailer)  # SGD(0.1).minimize(...)
            else:
                ctx.report(trailer, "unmigrated", MINIMIZE_UNKNOWN.format(spelled=spelled))
            return
        values = assigned_values(trailer, receiver[0].value)
        if not values or len(values) != 1:
            ctx.report(trailer, "unmigrated", MINIMIZE_UNKNOWN.format(spelled=spelled))
            return
        value = values[0]
        if _wrapped(value, ctx):
            self._report_wrapped(value, ctx)
        elif re.search(r"(?<![\w.])" + re.escape(spelled) + r"\s*\.\s*apply_gradients\(",
                       tree_text(enclosing_scope(trailer))):
            ctx.report(trailer, "unmigrated", BOTH.format(spelled=spelled))
        elif value.type == symbols.power and _keras_optimizer(value.children[:-1], ctx) \
                and is_call(value.children[-1]):
            self._wrap(value, ctx, at=trailer)
        else:
            ctx.report(trailer, "unmigrated", MINIMIZE_UNKNOWN.format(spelled=spelled))

    def _inline_gradients(self, trailer: Node, tapes: set[str], ctx: FileContext) -> None:
        """``opt.apply_gradients(zip(tape.gradient(...), variables))``: gradients that no
        statement binds, so there is none to add the ``all_reduce`` after: reported (``migrated``
        when an ``all_reduce`` wraps them there already)."""
        index = called_method(trailer)
        power = trailer.parent
        if index is None or power is None:
            return
        call = power.children[index + 1]
        if not any(node.type == symbols.power and (_is_tape_gradient(node, tapes) or _is_tf_gradients(node, ctx))
                   for node in pre_order(call)):
            return
        if "all_reduce(" in tree_text(call):
            ctx.report(trailer, "migrated", IN_PLACE)
        else:
            ctx.report(trailer, "unmigrated", INLINE)

    def _wrap(self, value: Base, ctx: FileContext, at: Optional[Base] = None) -> None:
        where = at if at is not None else value
        if in_library(ctx):
            wrapped = f"npu.distribute.{WRAPPER}({' '.join(tree_text(value).split())})"
            ctx.report(where, "unmigrated", LIBRARY.format(line=f"build the optimizer as {wrapped}"))
            return
        npu = device_name(ctx, value)
        ctx.report(where, "migrated", WRAPPED.format(npu=npu))
        wrap_expression(value, f"{npu}.distribute.{WRAPPER}({{}})")

    def _report_wrapped(self, value: Base, ctx: FileContext) -> None:
        text = tree_text(value)
        ctx.report(value, "unmigrated" if text.count(WRAPPER) > 1 else "migrated",
                   TWICE if text.count(WRAPPER) > 1 else WRAPPED_ALREADY)

    def _gradient_statement(self, statement: Node, tapes: set[str], ctx: FileContext) -> None:
        target, op, value = statement.children
        if op.type != tokens.EQUAL:
            return
        if not (_is_tape_gradient(value, tapes) or _is_tf_gradients(value, ctx)):
            self._nested_gradients(statement, value, tapes, ctx)
            return
        if target.type != tokens.NAME:
            ctx.report(statement, "unmigrated", NOT_A_NAME)
            return
        name = target.value
        line = statement.parent
        if line is None:
            return
        flow = gradient_flow(line, name, sonnet=_SONNET.search(ctx.original) is not None)
        if flow.reduced:
            ctx.report(statement, "migrated", IN_PLACE)
        elif flow.applied and in_library(ctx):
            ctx.report(statement, "unmigrated", LIBRARY.format(
                line=f"add {name} = npu.distribute.all_reduce({name}, \"mean\") after this line"))
        elif flow.applied and _exported_step(statement, ctx) is not None:
            ctx.report(statement, "unmigrated", EXPORTED.format(
                function=_exported_step(statement, ctx), name=name))
        elif flow.applied:
            npu = device_name(ctx, line)
            insert_after(line, f"{name} = {npu}.distribute.all_reduce({name}, \"mean\")", ctx.newline)
            ctx.report(statement, "migrated", ADDED.format(name=name, npu=npu))
        elif not _gradients_of_variables(value, statement, tapes, ctx):
            return  # by an input tensor (a gradient penalty's slopes): part of a loss, never applied
        elif flow.through is not None:
            ctx.report(statement, "unmigrated", THROUGH.format(
                name=name, step=" ".join(tree_text(flow.through).split())))
        elif _APPLIES.search(ctx.original):
            ctx.report(statement, "unmigrated", ELSEWHERE.format(name=name))
        else:
            ctx.report(statement, "unmigrated", NOWHERE.format(name=name))

    def _returned_gradients(self, statement: Node, tapes: set[str], ctx: FileContext) -> None:
        """``return tape.gradient(loss, variables)``: the caller applies them, where no
        statement of this file binds them to all-reduce after: reported (``migrated`` when an
        ``all_reduce`` takes them here already)."""
        value = statement.children[1]
        if not any(_gradients_of_variables(node, value, tapes, ctx) for node in pre_order(value)):
            return
        if "all_reduce(" in tree_text(value):
            ctx.report(statement, "migrated", IN_PLACE)
        else:
            ctx.report(statement, "unmigrated", RETURNED)

    def _nested_gradients(self, statement: Node, value: Base, tapes: set[str], ctx: FileContext) -> None:
        """``grads, _ = tf.clip_by_global_norm(tape.gradient(...), 5.0)``: gradients computed
        inside the value of the statement, so no all_reduce can follow their own statement:
        reported (``migrated`` when an ``all_reduce`` takes them there already). Those inside
        ``apply_gradients`` are :meth:`_inline_gradients`'; those of a lambda are no step's."""
        if not tapes and "gradients" not in tree_text(value):
            return
        found = [node for node in pre_order(value) if _gradients_of_variables(node, value, tapes, ctx)]
        if not found:
            return
        if "all_reduce(" in tree_text(value):
            ctx.report(statement, "migrated", IN_PLACE)
            return
        callee = _callee_text(value)
        inside, before = (f"{callee}(...)", callee) if callee else ("this expression", "they are used")
        ctx.report(statement, "unmigrated", NESTED.format(inside=inside, before=before))


def _exported_step(statement: Base, ctx: FileContext) -> Optional[str]:
    """The name of the function holding ``statement`` when the file exports it rather than
    running it: its ``get_concrete_function()`` is taken (``model.train.get_concrete_function()``
    as a signature of ``tf.saved_model.save``) in a file that saves or converts a model
    (TensorFlow Lite's model-personalization example), else None."""
    scope = enclosing_scope(statement)
    if scope.type != symbols.funcdef or not _EXPORTS.search(ctx.original):
        return None
    name = str(scope.children[1].value)
    concrete = re.search(r"(?<![\w])" + re.escape(name) + r"\s*\.\s*get_concrete_function\(", ctx.original)
    return name if concrete is not None else None


def _gradients_of_variables(node: Base, top: Base, tapes: set[str], ctx: FileContext) -> bool:
    """Is ``node``, below ``top``, a tape's or ``tf.gradients``' call by what looks like
    variables (``model.trainable_variables``, ``tvars``, ``params``; sources not given or not
    read: yes), not by an input tensor (a gradient penalty's ``gp_tape.gradient(score, mixed)``),
    outside a lambda and the arguments of ``apply_gradients``?"""
    if node.type != symbols.power or not (_is_tape_gradient(node, tapes) or _is_tf_gradients(node, ctx)) \
            or _inside(node, top, ("lambdef", "apply_gradients")):
        return False
    call = node.children[-1]
    sources = find_argument(call, "sources", 1) or find_argument(call, "xs", 1) if is_call(call) else None
    return sources is None or _VARIABLES_WORDS.search(tree_text(sources.value)) is not None


def _inside(node: Base, top: Base, stops: tuple[str, ...]) -> bool:
    """Is ``node``, below ``top``, in a lambda (``"lambdef"``) or the arguments of a call of a
    method named in ``stops``?"""
    parent = node.parent
    while parent is not None and parent is not top:
        if parent.type == symbols.lambdef and "lambdef" in stops:
            return True
        if parent.type == symbols.trailer and is_call(parent) and _method(parent) in stops:
            return True
        parent = parent.parent
    return False


def _callee_text(value: Base) -> str:
    """The callee as spelled when ``value`` is one call (``tf.clip_by_global_norm``), else ""."""
    children = value.children if value.type == symbols.power else []
    if len(children) < 2 or not is_call(children[-1]):
        return ""
    return "".join(tree_text(part).strip() for part in children[:-1])


def _wrapped(value: Base, ctx: FileContext) -> bool:
    """Is ``value`` the NPU wrapper's call, or a name this scope binds to one?"""
    if WRAPPER in tree_text(value):
        return True
    if value.type == tokens.NAME:
        values = assigned_values(value, value.value)
        return bool(values) and all(WRAPPER in tree_text(bound) for bound in values or ())
    return False


def _keras_optimizer(callee: list[Base], ctx: FileContext) -> bool:
    """Does ``callee`` (power children) name a class of ``tf.keras.optimizers``?"""
    if not callee or callee[0].type != tokens.NAME:
        return False
    dotted = ".".join([callee[0].value] + [part.children[1].value for part in callee[1:]
                                           if part.type == symbols.trailer and len(part.children) == 2
                                           and part.children[0].type == tokens.DOT])
    if len(dotted.split(".")) != len(callee):
        return False
    qualified = ctx.tf.qualify(dotted) or ""
    return qualified.startswith(("tensorflow.keras.optimizers.", "tensorflow.optimizers.")) \
        and qualified.rpartition(".")[2][:1].isupper() and ".schedules." not in qualified


def is_call(trailer: Base) -> bool:
    return trailer.type == symbols.trailer and trailer.children[0].type == tokens.LPAR


def _expression(power: Node, index: int) -> Base:
    """The constructor call that ends before the ``.minimize`` trailer at ``index``."""
    parts = list(power.children[:index])
    for part in parts:
        part.remove()
    new = Node(symbols.power, parts)
    power.insert_child(0, new)
    return new


def _tapes(text: str) -> set[str]:
    """The names the file binds a ``GradientTape`` to (``with tf.GradientTape() as tape``,
    ``tape = tf.GradientTape()``)."""
    return set(_WITH_TAPE.findall(text)) | set(_TAPE_ASSIGNED.findall(text))


#: The file imports Sonnet (its optimizers apply gradients with ``apply``: ``_gradient_flow``).
_SONNET = re.compile(r"^[ \t]*(?:import|from)[ \t]+sonnet\b", re.MULTILINE)
_WITH_TAPE = re.compile(r"GradientTape\([^\n]*?\)\s+as\s+(\w+)")
#: ``tf.gradients(`` (``gradients(`` after ``from tensorflow import gradients``), not ``tape.gradient(``
#: nor ``compute_gradients(``/``get_gradients(``.
_TF_GRADIENTS = re.compile(r"(?<![\w])gradients\s*\(")
#: Keras training with the compiled optimizer: ``fit``, ``fit_generator`` (not ``train_on_batch``,
#: which a model class overrides with its own custom step: MusicTransformer's).
_KERAS_TRAINING = re.compile(r"\.\s*(?:fit|fit_generator)\s*\(")
#: What applies gradients to variables: an optimizer's ``apply_gradients`` (Sonnet's ``apply``), a
#: hand-written update (``w.assign_sub(lr * dw)``).
_APPLIES = re.compile(r"\.\s*(?:apply_gradients|apply|assign_sub|assign_add|assign)\s*\(")
#: Words of what gradients are taken by when they update a model: its variables, weights, params.
_VARIABLES_WORDS = re.compile(r"var|weight|param", re.IGNORECASE)
_TAPE_ASSIGNED = re.compile(r"^\s*(\w+)\s*=\s*[\w.]*GradientTape\(", re.MULTILINE)


def _is_tape_gradient(value: Base, tapes: set[str]) -> bool:
    """``<tape>.gradient(...)``: a tape's name, ``.gradient``, a call, nothing after; or
    that call unscaled by a loss-scale optimizer (``opt.get_unscaled_gradients(<it>)``)."""
    children = value.children if value.type == symbols.power else []
    if len(children) >= 3 and _method(children[-2]) == "get_unscaled_gradients" \
            and children[-1].type == symbols.trailer and len(children[-1].children) == 3:
        return _is_tape_gradient(children[-1].children[1], tapes)
    return len(children) == 3 and children[0].type == tokens.NAME and children[0].value in tapes \
        and _method(children[1]) == "gradient" and children[2].type == symbols.trailer \
        and children[2].children[0].type == tokens.LPAR


def _is_tf_gradients(value: Base, ctx: FileContext) -> bool:
    """``tf.gradients(loss, variables)``: the graph-mode gradient call, inside a
    ``tf.function`` in TF 2.x code; its result is applied like a tape's."""
    children = value.children if value.type == symbols.power else []
    if len(children) < 2 or children[0].type != tokens.NAME or not is_call(children[-1]):
        return False
    dotted = ".".join([children[0].value] + [_method(part) or "" for part in children[1:-1]])
    return ctx.tf.qualify(dotted) == "tensorflow.gradients"


def _method(trailer: Base) -> Optional[str]:
    name = attribute_name(trailer)
    if name is not None:
        return name
    next_one = trailer.prev_sibling
    if trailer.type == symbols.trailer and trailer.children[0].type == tokens.LPAR and next_one is not None:
        return _method(next_one)
    return None


def _in_train_step(node: Base) -> bool:
    """Is ``node`` in a method named ``train_step`` of a class with a base that may be a Keras
    model (its override; a ``class Trainer(object)``'s own step is none)?"""
    scope = enclosing_scope(node)
    if scope.type != symbols.funcdef or scope.children[1].value != "train_step":
        return False
    owner = enclosing_scope(scope)
    return owner.type == symbols.classdef and _has_base(owner)


def _has_base(cls: Base) -> bool:
    """Does the ``class`` statement ``cls`` name a base other than ``object`` (or keywords)?"""
    parts = cls.children
    if len(parts) < 4 or parts[2].type != tokens.LPAR or parts[3].type == tokens.RPAR:
        return False
    return tree_text(parts[3]).strip() != "object"


def _applies_gradients(name: str, text: str) -> bool:
    """Does the file's ``text`` call ``<name>.apply_gradients(...)``?"""
    return re.search(r"(?<![\w.])" + re.escape(name) + r"\s*\.\s*apply_gradients\s*\(", text) is not None


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    """:data:`CUSTOM_LOOP` for a file that computes gradients (with a tape, or
    ``tf.gradients``: TensorFlowTTS's trainers) and applies them, and the file's classes whose
    ``train_step`` does (``_own_steps.OWN_STEP``)."""
    facts = own_step_facts(path, text)
    if ".apply_gradients(" in text and (_WITH_TAPE.search(text) or _TF_GRADIENTS.search(text)):
        facts |= {CUSTOM_LOOP}
    return facts or None


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [GradientAllReduce()]
