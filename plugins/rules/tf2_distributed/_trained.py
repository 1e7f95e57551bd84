"""Which Keras models the program trains: NPU067 broadcasts (or reports) only those, so that a
model-definition file's sub-models (``self.block = tf.keras.Sequential()``) are no sites.

A model is trained where it is the receiver of ``fit``/``fit_generator``/``compile``/
``train_on_batch`` or its ``trainable_variables``/``trainable_weights`` are read (a
``GradientTape`` loop, ``apply_gradients``, ``minimize``) in the scope that binds it (a
``self.<attr>``: in its class), or in a function of the file it is passed to
(``train(epoch, model, optimizer)``, :func:`passed_to_trainer`); or when a function returns it
whose result the program trains
(``model = build_model(10)``, then ``model.fit(...)``), in this file or in any file of the
repository: the ``trained-model-maker:`` facts of :func:`maker_facts`, each the function as the
training file names it (module-qualified through its imports).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import AbstractSet, Optional

from npu_codemod.api import Base, symbols, tokens
from npu_codemod.api._toolkit import (
    AnyOf,
    ast_dotted_name,
    model_facts,
    module_ast,
    module_index,
    module_parts,
    pre_order,
    tree_text,
)

TRAINED_MAKER = "trained-model-maker:"
#: A function whose returned model NPU067 handles where the function binds it (``builder_facts``).
BUILDER = "npu067-builder:"
MODEL_FUNCTION = "model-function:"
_TRAINING = r"\s*\.\s*(?:fit|fit_generator|compile|train_on_batch)\s*\("
_VARIABLES = r"\s*\.\s*trainable_(?:variables|weights)\b"
#: A call that takes the variables to train: ``tape.gradient(loss, <m>.trainable_variables)``,
#: ``apply_gradients(zip(grads, <m>...))``, ``minimize(loss, var_list=<m>...)`` (one level of
#: parentheses in the arguments before them).
_TAKES_VARIABLES = r"\b(?:gradient|apply_gradients|minimize|zip)\s*\((?:[^()]|\([^()]*\))*?"
#: Or kept for them: ``variables = conv_net.trainable_variables + fc_net.trainable_variables``,
#: also on the continuation lines of a parenthesised value (``variables = (enc.trainable_variables +``
#: / ``dec.trainable_variables)``: one level of parentheses inside, as :data:`_TAKES_VARIABLES`).
_ASSIGNED = r"(?m)^[^#\n]*?[^=!<>]=(?!=)(?:[^\n]*?|[^\n(]*\((?:[^()]|\([^()]*\))*?)"
#: ``re.compile(_TRAINING + "|" + _VARIABLES).search(text)``, asked fast: each branch's leading
#: ``\s*`` can match nothing, so a text has a match exactly when it has one that starts at the dot.
_MAY_TRAIN = AnyOf(_TRAINING[len(r"\s*"):], _VARIABLES[len(r"\s*"):])


#: A name followed by a training call or its variables: every name :func:`trains` may say yes
#: to is one (a set lookup spares its three searches of the whole text for every other name).
_CANDIDATE = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*?)" + r"(?:" + _TRAINING + "|" + _VARIABLES + ")")


#: The dot each match of :data:`_CANDIDATE` has after its name (no match has another dot after
#: its name, so none hides one from ``finditer``); opens with a literal: looked for in C.
_AFTER_NAME = re.compile(r"\.\s*(?:fit|fit_generator|compile|train_on_batch)\s*\(|\.\s*trainable_(?:variables|weights)\b")


@lru_cache(maxsize=64)
def _candidates(text: str) -> frozenset[str]:
    """``frozenset(_CANDIDATE.findall(text))``, tried only where a match can start: at the
    name before a dot :data:`_AFTER_NAME` finds (a match starts where no word character or
    dot is before it, so its name is the whole dotted name there), in order, each after the
    last match's end as ``findall`` goes (the regular expression opens with a look-behind:
    tried at every position of a file, 40 ms over six repositories' 28 training files)."""
    found: set[str] = set()
    end = 0
    for start in sorted({_name_start(text, dot.start()) for dot in _AFTER_NAME.finditer(text)}):
        match = _CANDIDATE.match(text, start) if start >= end else None
        if match is not None:
            found.add(match.group(1))
            end = match.end()
    return frozenset(found)


def _name_start(text: str, dot: int) -> int:
    """Where the dotted name before ``dot`` (and the white space between) starts: ``\\s`` is
    ``str.isspace``, ``\\w`` is ``str.isalnum`` or ``_`` (``re``'s own definitions)."""
    at = dot
    while at > 0 and text[at - 1].isspace():
        at -= 1
    while at > 0 and (text[at - 1].isalnum() or text[at - 1] in "._"):
        at -= 1
    return at


def trains(model: str, text: str) -> bool:
    """Does the code ``text`` train the model ``model`` (``model``, ``self.model``)? (Printing
    its ``trainable_variables`` does not.)"""
    if model not in _candidates(text):
        return False
    name = rf"(?<![\w.]){re.escape(model)}"
    return re.search(name + _TRAINING, text) is not None \
        or re.search(_TAKES_VARIABLES + name + _VARIABLES, text) is not None \
        or re.search(_ASSIGNED + name + _VARIABLES, text) is not None


def aliases(model: str, text: str) -> list[str]:
    """The names the code ``text`` binds to the name ``model`` as it is (``training_model =
    model``, keras-retinanet's ``create_models``): what trains them trains ``model``."""
    return re.findall(rf"(?m)^[ \t]*(\w+)[ \t]*=[ \t]*{re.escape(model)}[ \t]*(?:#.*)?$", text)


@lru_cache(maxsize=64)
def maker_facts(path: str, text: str) -> frozenset[str]:
    """A :data:`TRAINED_MAKER` fact for each function whose result the file at ``path`` assigns
    to a name it trains (``model = build_model(10)``: ``trained-model-maker:train.build_model``
    for the file's own function, ``models.net.build`` for ``from models.net import build``)."""
    tree = module_ast(text) if _MAY_TRAIN.found(text) else None
    if tree is None:
        return frozenset()
    module = ".".join(module_parts(path))
    index = module_index(tree)  # the analysis hooks' shared index: no walk of our own
    imports = index.imported_names(path)
    found = set()
    assignments: list[ast.Assign] = index.nodes(ast.Assign)
    for node in assignments:
        if len(node.targets) == 1 and isinstance(node.value, ast.Call):
            target, callee = ast_dotted_name(node.targets[0]), ast_dotted_name(node.value.func)
            if target and callee and trains(target, text):
                maker = qualified(callee, module, imports)
                found |= {TRAINED_MAKER + maker} if maker else set()
    return frozenset(found)


@lru_cache(maxsize=64)
def builder_facts(path: str, text: str) -> frozenset[str]:
    """A :data:`BUILDER` fact for each module-level function of the file at ``path`` whose every
    ``return`` gives a name the function binds to a model (``model = tf.keras.Model(...)``, then
    ``return model``; the ``model-function:`` facts say each return is a model): NPU067's site
    for what it returns is that binding, in the function (broadcast or reported there), and a
    caller that trains its result has none of its own."""
    tree = module_ast(text) if "return" in text and "def " in text else None
    if tree is None:
        return frozenset()
    module = ".".join(module_parts(path))
    makes = {fact.partition("=")[0][len(MODEL_FUNCTION):] for fact in model_facts(path, text)
             if fact.startswith(MODEL_FUNCTION)}
    index = module_index(tree)
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and f"{module}.{node.name}" in makes:
            returns = index.returns(node)
            if returns and all(isinstance(found_return.value, ast.Name) for found_return in returns):
                found.add(f"{BUILDER}{module}.{node.name}")
    return frozenset(found)


def called_builder(path: str, text: str, callee: str, facts: AbstractSet[str]) -> bool:
    """Is ``callee`` (as the file at ``path`` spells it) a function of the repository whose
    result the program trains and whose model is bound in it (:func:`builder_facts`, this
    file's own or another's among ``facts``)? Then the function's binding is the site."""
    tree = module_ast(text)
    if tree is None:
        return False
    function = qualified(callee, ".".join(module_parts(path)), module_index(tree).imported_names(path))
    if function is None:
        return False
    # ``import model_utils`` in ``trainer/model_training.py``: the script's folder is on the path
    package = ".".join(module_parts(path)[:-1])
    trained = facts | maker_facts(path, text)
    builders = facts | builder_facts(path, text)
    return any(is_trained_maker(candidate, trained)
               and (_named(BUILDER, candidate, builders) or _reexported(BUILDER, candidate, builders))
               for candidate in dict.fromkeys([function, *([f"{package}.{function}"] if package else [])]))


def _reexported(prefix: str, function: str, facts: AbstractSet[str]) -> bool:
    """Does a fact of ``prefix`` name a function of a module of the package that ``function``
    (``nets.build_model``, as a file imports it) is imported from, by that name: the package's
    ``__init__`` re-exports it (``from nets.factory import build_model``)?"""
    package, _, last = function.rpartition(".")
    return bool(package) and any(fact.startswith(prefix + package + ".") and fact.endswith("." + last)
                                 for fact in facts)


def qualified(callee: str, module: str, imports: dict[str, str]) -> Optional[str]:
    """``callee`` as the file of ``module`` spells it, module-qualified through its imports."""
    head, _, rest = callee.partition(".")
    if head in imports:
        return imports[head] + (f".{rest}" if rest else "")
    return f"{module}.{callee}" if head not in ("self", "cls") else None


def is_trained_maker(function: str, facts: AbstractSet[str]) -> bool:
    """Does the program train what the function ``function`` (module-qualified:
    ``models.net.build``) returns? A fact names it as a file imports it: the name itself, its
    end (``net.build``, a script's neighbour), or its package's (a re-export of ``models``)."""
    return _named(TRAINED_MAKER, function, facts)


def _named(prefix: str, function: str, facts: AbstractSet[str]) -> bool:
    """Does a fact of ``prefix`` name the function ``function`` (:func:`is_trained_maker`)?"""
    last = function.rpartition(".")[2]
    return any(fact.startswith(prefix) and fact.endswith(last) and names_function(fact[len(prefix):], function)
               for fact in facts)


def names_function(named: str, function: str) -> bool:
    """Does ``named``, a function as a fact names it, name ``function`` (module-qualified as a
    file imports it): the name itself, its end, or its package's re-export (:func:`_named`)?"""
    package, _, last = named.rpartition(".")
    return named == function or function.endswith("." + named) \
        or (last == function.rpartition(".")[2] and bool(package) and function.startswith(package + "."))


def passed_to_trainer(scope: Base, model: str, depth: int = 3) -> bool:
    """Is the plain name ``model`` an argument, in ``scope``, of a call of a function of the
    file that trains the parameter it gets (or passes it on so, ``depth`` calls deep)?"""
    root = scope
    while root.parent is not None:
        root = root.parent
    functions = {str(node.children[1].value): node for node in pre_order(root) if node.type == symbols.funcdef}
    for leaf in scope.leaves():
        function = functions.get(_callee(leaf)) if leaf.type == tokens.NAME and leaf.value == model else None
        if function is not None and any(
                trains(name, tree_text(function)) or (depth > 1 and passed_to_trainer(function, name, depth - 1))
                for name in parameters(function)):
            return True
    return False


def _callee(argument: Base) -> str:
    """The name of the function ``argument`` (a NAME leaf) is passed to, if it is a plain
    positional or keyword argument of ``f(...)``; else ``""``."""
    parent = argument.parent
    if parent is not None and parent.type == symbols.argument:
        parent = parent.parent if argument is parent.children[-1] else None
    if parent is not None and parent.type == symbols.arglist:
        parent = parent.parent
    if parent is None or parent.type != symbols.trailer or parent.children[0].type != tokens.LPAR:
        return ""
    name = parent.prev_sibling
    call = parent.parent
    first = call.children[0] if call is not None else None
    return str(name.value) if name is first and name is not None and name.type == tokens.NAME else ""


def parameters(function: Base) -> list[str]:
    """The names of a ``def``'s parameters (``self`` included; defaults left out)."""
    names = []
    for leaf in function.children[2].leaves():
        parent = leaf.parent
        if parent is not None and parent.type == symbols.tname:
            leaf, parent = (parent, parent.parent) if leaf is parent.children[0] else (leaf, None)
        before = leaf.prev_sibling
        if leaf.type in (tokens.NAME, symbols.tname) and parent is not None \
                and parent.type in (symbols.parameters, symbols.typedargslist) \
                and (before is None or before.type != tokens.EQUAL):
            names.append(str(leaf.children[0].value) if leaf.type == symbols.tname else str(leaf.value))
    return names
