"""NPU041 keras-session: a file that trains a Keras model runs it in the NPU's Keras session.

A file that trains (``fit``, ``fit_generator``, ``train_on_batch``, ``evaluate``, ``predict``) a
Keras model it builds (``BuiltModels``) and sets no Keras session itself gets, in its
``if __name__ == "__main__":`` block, ``npu_keras_sess = set_keras_session_npu_config()`` first
and ``close_session(npu_keras_sess)`` last. A file that sets its own session
(``K.set_session(...)``) is NPU007's: it configures that session. A script that imports no
TensorFlow but trains a ``tf.keras`` model of the repository's (``from lib.models import Net``;
the analysis names it: ``tf_model_idioms.KERAS_SCRIPT_FACT``) runs on that session under TF 1.x
all the same and gets the same treatment (the spec's "trains a Keras model ... it builds").

``K.get_session()`` makes the Keras session itself when none is set, without the NPU config:
keras-yolo3's ``YOLO.__init__`` runs its graph in ``self.sess = K.get_session()``. Where the
file trains no model this rule configures and no file of the repository sets a Keras session
(``set_session``, ``set_keras_session_npu_config``: the ``npu041-sets-session`` fact), each such
call is reported with the lines to add.
"""

from __future__ import annotations

from typing import Optional, Union

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    Node,
    Reference,
    Rule,
    Status,
    hookimpl,
    insert_after,
    insert_before,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    KERAS,
    KERAS_SCRIPT_FACT,
    NPU_INIT_IMPORT,
    TF2_COMPAT,
    BuiltModels,
    block_statements,
    called_method,
    compound_body,
    free_name,
    main_block,
    memo,
    model_facts,
    open_block,
    position,
    small_statement,
)

from .npu042_keras_clear_session import GUIDE, PACK

TRAINING = frozenset({"fit", "fit_generator", "train_on_batch", "evaluate", "predict"})
SET_SESSION = ("tensorflow.keras.backend.set_session", "keras.backend.set_session")
GET_SESSION = ("tensorflow.keras.backend.get_session", "keras.backend.get_session")
#: A repository fact: some file sets the Keras session (or calls NPU's configuring function).
SETS_SESSION = "npu041-sets-session"
_SETTERS = ("set_session(", "set_keras_session_npu_config(")
CONFIGURE = "set_keras_session_npu_config"
NPU_CONFIGURE = f"npu_bridge.npu_init.{CONFIGURE}"
#: Calls that end the process: a ``close_session`` after them never runs.
EXITS = frozenset({"tensorflow.app.run", "absl.app.run", "sys.exit", "os._exit"})
BUILTIN_EXITS = frozenset({"exit", "quit"})
BY_HAND = (f"configure the Keras session: npu_keras_sess = {CONFIGURE}() before training, "
           "close_session(npu_keras_sess) after")
#: The TF 2.x compat.v1 guide's warning for Keras in session mode (Porting with Keras).
COMPAT_WARNING = ("; on TensorFlow 2.x through compat.v1, some Keras features (such as a dynamic "
                  "learning rate) are limited on the NPU: check the guide's Keras restrictions")
SITES = "npu041.sites"
SESSIONS = "npu041.sessions"
GOTTEN = "npu041.gotten"
UNSET = (f"Keras makes this session without the NPU config: no file of the repository sets one; "
         f"before it, npu_keras_sess = {CONFIGURE}() (close_session(npu_keras_sess) when done), or "
         "K.set_session(tf.Session(config=...)) with the NPU config NPU007 writes")


class KerasSession(Rule):
    id = "NPU041"
    name = "keras-session"
    description = ("Run a file's Keras training in the NPU's session: set_keras_session_npu_config() "
                   "first and close_session() last in its __main__ block.")
    pack = PACK
    guide_section, guide_section_en = GUIDE
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("A file that trains a Keras model it builds (`.fit`, `.fit_generator`, "
                "`.train_on_batch`, `.evaluate`, `.predict`: the model as NPU027 tells it) in "
                "graph mode and sets no Keras session itself gets, in its "
                f"`if __name__ == \"__main__\":` block, `npu_keras_sess = {CONFIGURE}()` as the "
                "first statement and `close_session(npu_keras_sess)` as the last. The finding "
                "sits at the first of those training calls. A script that imports no TensorFlow "
                "but trains a `tf.keras` model a function of the repository returns (`from "
                "lib.models import Net`) trains in that session too and gets the same lines "
                "(and the `npu_bridge` import, which imports TensorFlow).")
    reports = ("Such a file without a `__main__` block, or whose block ends with a call that "
               "exits (`tf.app.run()`, `sys.exit(...)`: the close would never run): configure "
               "the session by hand where training starts and ends; and training at module "
               "level, which runs on import, before the block. A file that calls "
               "`K.set_session(...)` is left to NPU007, which configures that session. A "
               "`K.get_session()` call (the session Keras makes without the NPU config) in a file "
               "that trains no model this rule configures, where no file of the repository sets "
               "a Keras session: add the lines by hand before it.")
    example = """
        import tensorflow as tf

        baseline = tf.keras.models.load_model("baseline.h5")
        print(baseline.evaluate(x_test, y_test))


        def main():
            model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
            model.fit(x_train, y_train, epochs=5)


        if __name__ == "__main__":
            main()
    """
    #: A script that imports no TensorFlow but trains a ``tf.keras`` model of the repository's
    #: (``from lib.models import Net``): under TF 1.x it trains in that Keras session too.
    script_fact = KERAS_SCRIPT_FACT
    _scope = "linked"
    _site_names = tuple(sorted(f".{name}" for name in TRAINING))  # x.fit(...): attributes
    _tokens = (*sorted(TRAINING), "get_session")
    calls = SET_SESSION + (NPU_CONFIGURE,) + GET_SESSION
    #: ``<receiver>.fit`` and the other training methods: called, see visit.
    pattern = "trailer< '.' ('fit' | 'fit_generator' | 'train_on_batch' | 'evaluate' | 'predict') >"

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        index = called_method(node)
        power = node.parent
        if index is not None and ctx.analysis(BuiltModels).receiver_kind(power.children[:index]) == KERAS:
            memo(ctx).setdefault(SITES, []).append((position(power), power))

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if reference.name in GET_SESSION:
            if reference.call is not None:
                memo(ctx).setdefault(GOTTEN, []).append(reference)
            return
        memo(ctx).setdefault(SESSIONS, set()).add(reference.name)

    def finish(self, tree: Node, ctx: FileContext) -> None:
        sites = [node for _, node in sorted(memo(ctx).get(SITES, ()), key=lambda item: item[0])]
        sessions = memo(ctx).get(SESSIONS, set())
        if not sites and not sessions and SETS_SESSION not in ctx.facts:
            for reference in memo(ctx).get(GOTTEN, ()):
                _report(ctx, reference, "unmigrated", UNSET)
        if not sites or sessions.intersection(SET_SESSION) and NPU_CONFIGURE not in sessions:
            return
        block = main_block(tree)
        if block is None:
            _report(ctx, sites[0], "unmigrated", f"no if __name__ == \"__main__\": block: {BY_HAND}")
            return
        covered = [node for node in sites if _after_main_starts(node, block)]
        for node in sites:
            if node not in covered:
                _report(ctx, node, "unmigrated", "this training runs when the module is imported, "
                           f"before the __main__ block configures the session: move it into a "
                           f"function the block calls, or {BY_HAND}")
        if covered:
            self._configure(tree, block, covered[0], sessions, ctx)

    def _configure(self, tree: Node, block: Node, site: Base, sessions: set[str],
                   ctx: FileContext) -> None:
        if NPU_CONFIGURE in sessions:
            _report(ctx, site, "migrated", f"{CONFIGURE}() configures the Keras session")
            return
        body = _statements(block, ctx)
        exits = _exits(body[-1], ctx)
        if exits:
            _report(ctx, site, "unmigrated", f"the __main__ block ends with {exits}, which exits "
                       f"(a close after it never runs): {BY_HAND}, in the function it runs")
            return
        name = free_name(tree, "npu_keras_sess", "npu_keras_sess")
        insert_before(body[0], f"{name} = {CONFIGURE}()", ctx.newline)
        insert_after(body[-1], f"close_session({name})", ctx.newline)
        ctx.add_import(NPU_INIT_IMPORT)
        _report(ctx, site, "migrated", f"added {name} = {CONFIGURE}() and close_session({name}) "
                   "to the __main__ block")


def _report(ctx: FileContext, node: Union[Base, Reference], status: Status, message: str) -> None:
    """A finding; in a ``tf2-compat`` file with the TF 2.x compat guide's Keras warning."""
    ctx.report(node, status, message + (COMPAT_WARNING if ctx.file_kind == TF2_COMPAT else ""))


def _after_main_starts(node: Base, block: Node) -> bool:
    """Does the training call ``node`` run once the ``__main__`` block has started: in a
    function or class (called from there), or in the block itself? (Not at module level.)"""
    parent = node.parent
    while parent is not None:
        if parent is block or parent.type in (symbols.funcdef, symbols.classdef):
            return True
        parent = parent.parent
    return False


def _statements(block: Node, ctx: FileContext) -> list[Base]:
    """The statements of the ``if``'s body (a one-line body opened into a block)."""
    body = compound_body(block)
    if body.type != symbols.suite:
        open_block(body, ctx.newline)
    return block_statements(compound_body(block))


def _exits(statement: Base, ctx: FileContext) -> Optional[str]:
    """The code of ``statement`` when it ends the process (``tf.app.run()``), else None."""
    if statement.type != symbols.simple_stmt:
        return None
    small = small_statement(statement)
    code = str(small).strip()
    if small.type == symbols.raise_stmt and "SystemExit" in code:
        return code
    if small.type != symbols.power or small.children[0].type != tokens.NAME:
        return None
    spelled = code.partition("(")[0].replace(" ", "")
    if spelled in BUILTIN_EXITS or any(ctx.names(module).qualify(spelled) in EXITS
                                       for module in ("tensorflow", "absl", "sys", "os")):
        return code
    return None


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[frozenset[str]]:
    """Which classes and functions of the repository build Keras models (``BuiltModels``), and
    whether the file sets the Keras session (``npu041-sets-session``, by its text)."""
    sets = frozenset({SETS_SESSION}) if any(setter in text for setter in _SETTERS) else frozenset()
    return (model_facts(path, text) | sets) or None


@hookimpl
def npu_codemod_rules() -> list:
    return [KerasSession()]
