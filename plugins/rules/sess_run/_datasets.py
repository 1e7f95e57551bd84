"""Is this receiver a ``tf.data`` dataset? A file-local, conservative answer.

Only receivers *shown* to be datasets are rewritten by NPU002: results of ``tf.data``
constructors or dataset methods (also through chains and assignments within the file), and
names or attributes named like a dataset. Anything else is only reported.

A name follows Python's scoping: a dataset assigned to ``data`` in one function says nothing
of the ``data`` another function binds (``data = MyLoader()``), while a function that does not
bind ``data`` reads the enclosing one's. Attributes (``self.data``) are tracked for the whole
file. Within one scope, a name assigned a dataset anywhere is one throughout.

Method names that other libraries share (``map``, ``batch``, ``repeat``...) only prove a
dataset when called on one: ``memory.batch(32)`` or ``df.apply(f)`` prove nothing. Names only
``tf.data`` uses (``prefetch``, ``padded_batch``...) prove it on any receiver.

A pipeline feeds inference or evaluation (:func:`inference_pipeline`) when the code around it
says so by its names (``get_infer_iterator``, ``eval_dataset``) or by the branch it sits in
(``else:`` of ``if is_training:``, ``if mode == ModeKeys.PREDICT:``), by what uses the function
that builds it (``estimator.predict(input_fn=input_fn)``, a call in ``decode_from_file``), or by
what it does with its inputs (``len(sentences)`` next to ``from_tensor_slices(sentences)``:
the results are counted against them); dropping its last batch then drops examples, unless the
dataset repeats for ever before it is batched (``repeat()``; ``repeat(count)`` ends).
"""

from __future__ import annotations

import re
from typing import Iterator, Mapping, Optional, Sequence

from npu_codemod.api import (
    Base,
    FileContext,
    Node,
    arguments,
    dotted_name,
    find_argument,
    has_unpacking,
    is_none,
    is_true,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    NameIndex,
    Use,
    attribute_name,
    block_child,
    bound_names,
    child_index,
    compound_body,
    definition_name,
    enclosing_scope,
    is_attribute_trailer,
    is_call_trailer,
    memo,
    node_pre_order,
    per_node,
    prefix_name,
    scoped_statements,
    spelled_name,
)

from ._functions import parameters
from ._words import node_words, words

#: Dataset methods whose names other libraries use too: evidence only on a dataset receiver.
SHARED_METHODS = frozenset(
    "map shuffle repeat apply filter zip batch cache take skip shard concatenate window "
    "range".split()
)
#: Names only ``tf.data`` uses: a call of one of them makes a dataset whatever the receiver.
TF_DATA_METHODS = frozenset(
    "prefetch interleave parallel_interleave padded_batch flat_map unbatch with_options "
    "map_with_legacy_function filter_with_legacy_function from_tensor_slices from_tensors "
    "from_generator list_files TFRecordDataset TextLineDataset FixedLengthRecordDataset "
    "shuffle_and_repeat".split()
)
DATASET_PACKAGES = ("tensorflow.data", "tensorflow.contrib.data")
#: Words that name evaluation or inference, and training (``get_infer_iterator``, ``train_ds``).
INFERENCE_WORDS = frozenset(
    "predict prediction predictions pred infer inference eval evaluate evaluation test testing "
    "valid validation val dev serving serve decode decoding decodes export exporting "
    "predictor transcribe transcribes transcription transcribing stream streams".split()
)
TRAINING_WORDS = frozenset("train training trainer".split())
#: Parameters that say which mode a function builds for (besides ``mode``, ``*_mode``).
_MODE_FLAGS = frozenset({"is_training", "training", "is_train", "train"})
#: Dataset methods and ``tf.data.experimental`` transformations that repeat a dataset.
REPEATS = frozenset({"repeat", "shuffle_and_repeat"})
_DATASET_NAME = re.compile(r"^(?:dataset|ds|\w+_dataset|\w+_ds)$", re.IGNORECASE)
#: ``tf.data`` constructors whose arguments are the pipeline's inputs.
_SOURCES = frozenset({"from_tensor_slices", "from_tensors", "from_generator", "TextLineDataset",
                      "TFRecordDataset", "FixedLengthRecordDataset"})
#: What other files use this file's module-level functions for: name -> "infer"/"train" ->
#: where the first such use is (``examples/run.py line 41``).
Remote = Mapping[str, Mapping[str, str]]
#: How many functions' uses (a function used in a function used in ...) are followed.
_DEPTH = 2
_NAMES = "datasets.names"
_BOUND = "datasets.bound"
_USES = "datasets.uses"
#: A key of :func:`dataset_names`: (id of the scope owning the name, name), or for an
#: attribute (None, dotted name).
Key = tuple[Optional[int], str]


def is_dataset(parts: Sequence[Base], ctx: FileContext,
               scope: Optional[Node] = None) -> bool:
    """True when the expression spelled by power children ``parts`` is a dataset; ``scope``
    is where it is evaluated (found from ``parts`` when not given)."""
    if not parts:
        return False
    if is_call_trailer(parts[-1]) and len(parts) >= 2:
        return _call_makes_dataset(parts[:-1], ctx, scope)
    name = spelled_name(parts)
    if name is None:
        return False
    if _DATASET_NAME.match(name.rsplit(".", 1)[-1]):
        return True
    names = dataset_names(ctx)
    return _key(name, scope or enclosing_scope(parts[0]), ctx) in names


def _call_makes_dataset(callee: Sequence[Base], ctx: FileContext,
                        scope: Optional[Node]) -> bool:
    """Does calling the expression spelled by ``callee`` return a dataset?"""
    qualified = ctx.tf.qualify(spelled_name(callee))
    if qualified:
        return any(qualified.startswith(package + ".") for package in DATASET_PACKAGES)
    name = attribute_name(callee[-1])
    if name is None:
        return False
    return name in TF_DATA_METHODS or (
        name in SHARED_METHODS and is_dataset(callee[:-1], ctx, scope))


def dataset_names(ctx: FileContext) -> frozenset[Key]:
    """:data:`Key` of every name (in its scope) and dotted attribute assigned a dataset
    anywhere in the file (to a fixpoint)."""
    if _NAMES in memo(ctx):
        return memo(ctx)[_NAMES]
    memo(ctx)[_NAMES] = names = set()
    assignments = [
        (_key(target, scope, ctx), value, scope)
        for scope, node in scoped_statements(ctx.tree)
        if node.type == symbols.expr_stmt
        for target, value in _assignment(node)
    ]
    while True:
        found = {key for key, value, scope in assignments
                 if key not in names and _value_is_dataset(value, scope, ctx)}
        if not found:
            break
        names.update(found)
    memo(ctx)[_NAMES] = frozenset(names)
    return memo(ctx)[_NAMES]


def _key(name: str, scope: Node, ctx: FileContext) -> Key:
    """Which variable ``name`` used in ``scope`` is: the innermost scope binding it (class
    bodies are not seen from their methods), else the module's."""
    if "." in name:
        return None, name
    seen_from = scope
    while scope.type != symbols.file_input:
        if scope is seen_from or scope.type != symbols.classdef:
            if name in per_node(ctx, _BOUND, scope, bound_names):
                break
        scope = enclosing_scope(scope)
    return id(scope), name


def _value_is_dataset(value: Base, scope: Node, ctx: FileContext) -> bool:
    if value.type == symbols.power:
        return is_dataset(value.children, ctx, scope)
    return value.type == tokens.NAME and is_dataset([value], ctx, scope)


def _assignment(node: Node):
    """(target name, value) pairs of a simple ``a = b = value`` assignment."""
    children = node.children
    if len(children) < 3 or any(c.type != tokens.EQUAL for c in children[1::2]):
        return []
    value = children[-1]
    targets = [dotted_name(target) for target in children[:-1:2]]
    return [(target, value) for target in targets if target]


def inference_pipeline(parts: Sequence[Base], site: Base, ctx: FileContext,
                       remote: Optional[Remote] = None) -> Optional[str]:
    """Why batching the dataset spelled by power children ``parts`` at ``site`` (a batching
    call's name) would drop examples of an inference/eval pipeline, or None: the code around
    says it feeds inference (:func:`inference_evidence`), or nothing says so but its inputs
    are counted (:func:`counted_inputs`), and the dataset is not shown to repeat before it is
    batched endlessly (:func:`repeats`; a finite ``repeat(count)`` still ends in a partial
    batch). ``remote``: what other files use this file's module-level
    functions for (:func:`._pipeline_uses.remote_uses`)."""
    said, why = _evidence(site, ctx, parts, remote=remote or {})
    if said is None:
        said, why = _made_for(parts, site)
    evidence = (counted_inputs(parts, site) or reduced_results(parts, site)) if said is None \
        else why if said == "infer" else None
    if evidence is None and said is None:
        evidence = shared_with_training(parts, site, ctx) or one_pass_by_default(parts, site)
    if evidence is None or repeats(parts, site):
        return None
    finite = finite_repeat(parts, site)
    if finite is not None:
        return f"{evidence}, {finite} before this batch is not shown to repeat for ever"
    branch = repeating_branch(parts, site)
    if branch is None:
        return f"{evidence}, no repeat() before this batch"
    where = f"under 'if {str(branch.children[1]).strip()}' (line {branch.get_lineno()})"
    return evidence if where in evidence else f"{evidence}, repeat() only {where} before this batch"


def inference_evidence(site: Base, ctx: FileContext, parts: Sequence[Base] = ()) -> Optional[str]:
    """What says that the pipeline at ``site`` feeds inference or evaluation, or None.

    The innermost telling name or branch decides: the receiver ``parts`` (``eval_ds``), the
    names the statement assigns to, then each enclosing ``if`` branch, function and class
    (``get_infer_iterator``). Training words there (``train_dataset``, ``if is_training:``)
    mean training.
    """
    said, why = _evidence(site, ctx, parts)
    return why if said == "infer" else None


def _evidence(site: Base, ctx: FileContext, parts: Sequence[Base] = (), depth: int = 0,
              remote: Optional[Remote] = None) -> tuple[Optional[str], str]:
    """("infer", why), ("train", "") or (None, ""): see :func:`inference_evidence`.
    ``depth``: how many functions' uses were followed to get here."""
    statement = site
    while statement.parent is not None and statement.parent.type != symbols.simple_stmt:
        statement = statement.parent
    names = [spelled_name(parts)] if parts else []
    if statement.type == symbols.expr_stmt:
        names += [dotted_name(target) for target in statement.children[:-1:2]]
    for name in filter(None, names):
        said = _name_says(name)
        if said:
            return said, f"named {name}" if said == "infer" else ""
    node = statement
    while node.parent is not None:
        said, why = _enclosing(node)
        if said:
            return said, why if said == "infer" else ""
        node = node.parent
    node = statement
    while depth < _DEPTH and node.parent is not None:  # no telling name: what uses it?
        node = node.parent
        said, why = _used_for(node, ctx, depth, remote or {}) if node.type == symbols.funcdef else (None, "")
        if said:
            return said, why
    return None, ""


def _uses(ctx: FileContext, scope: Node, name: str) -> list[Use]:
    """:func:`uses` of ``name`` in ``scope``, from the file's :class:`NameIndex` (made once):
    each batching site asks about the functions around it and those that use them, each
    otherwise a walk of the whole module."""
    return per_node(ctx, _USES, ctx.tree, NameIndex).uses(scope, name)


def _enclosing(node: Base) -> tuple[Optional[str], str]:
    """What ``node`` says as a function, class or branch of its parent ``if``: ("infer",
    why), ("train", ""), or (None, "")."""
    if node.type in (symbols.funcdef, symbols.classdef):
        name = node.children[1].value
        said = _name_says(name)
        if said == "train" and node.type == symbols.funcdef and _takes_mode(node):
            said = None
        return said, f"in {name}()" if node.type == symbols.funcdef else f"in class {name}"
    parent = node.parent
    if parent.type != symbols.if_stmt or child_index(node) < 3 \
            or parent.children[child_index(node) - 1].type != tokens.COLON:
        return None, ""
    index = child_index(node)
    earlier = [child for child in parent.children[1:index - 3] if _is_if_test(child)]
    own = parent.children[index - 2]
    said = _test_says(own) if _is_if_test(own) else None
    if said:
        return said, f"under 'if {str(own).strip()}'"
    trained = [test for test in earlier if _test_says(test) == "train"]
    if trained:
        return "infer", f"in the other branch of 'if {str(trained[0]).strip()}'"
    return ("train", "") if any(_test_says(test) == "infer" for test in earlier) else (None, "")


def _used_for(function: Node, ctx: FileContext, depth: int, remote: Remote) -> tuple[Optional[str], str]:
    """What the uses of ``function`` by name say it is for: ("infer", why) when one is for
    inference (``estimator.predict(input_fn=input_fn)``, a call in ``decode_from_file``; a
    pipeline shared with training is not dropped either), ("train", "") when the others are
    for training, else (None, ""). Methods are not followed."""
    name = function.children[1]
    scope = enclosing_scope(function)
    if scope.type == symbols.classdef:
        return None, ""
    verdicts = [_use_says(use.leaf, ctx, depth + 1) for use in _uses(ctx, scope, name.value)
                if use.leaf is not name and use.kind != "bind"]
    if function.parent.type == symbols.file_input:
        verdicts += [(said, "by another module of the repository" + (f": {where}" if where else ""))
                     for said, where in sorted(remote.get(name.value, {}).items())]
    inferred = [why for said, why in verdicts if said == "infer"]
    trained = any(said == "train" for said, _ in verdicts)
    if inferred:
        shared = " and for training" if trained else ""
        return "infer", f"{name.value}() is used for inference ({inferred[0]}){shared}"
    return ("train", "") if trained else (None, "")


def _use_says(leaf: Base, ctx: FileContext, depth: int) -> tuple[Optional[str], str]:
    """What one use of a function's name says: the innermost keyword argument or call around
    it that names training or inference (``validation_data=...``, ``estimator.predict(...)``,
    ``tf.estimator.TrainSpec(...)``), else the code around its statement (:func:`_evidence`),
    else the calls the names its statement binds are passed to (``first = make_input_fn(...)``
    then ``estimator.evaluate(input_fn=first)``), as another file's use says
    (:mod:`._pipeline_uses`)."""
    said, why = _passed_to(leaf)
    if said:
        return said, why
    said, why = _evidence(leaf, ctx, (), depth)
    if said:
        return said, f"{why}, line {leaf.lineno}" if said == "infer" else ""
    verdicts = [_passed_to(use.leaf) for use in _bound_name_uses(leaf, ctx)]
    inferred = [why for said, why in verdicts if said == "infer"]
    if inferred:
        return "infer", inferred[0]
    return ("train", "") if any(said == "train" for said, _ in verdicts) else (None, "")


def _bound_name_uses(leaf: Base, ctx: FileContext) -> list[Use]:
    """The later reads, in its scope, of each name the assignment statement holding ``leaf`` binds."""
    statement = leaf
    while statement.parent is not None and statement.parent.type != symbols.simple_stmt:
        statement = statement.parent
    if statement.type != symbols.expr_stmt or not _assignment(statement):
        return []
    names = [target.value for target in statement.children[:-1:2] if target.type == tokens.NAME]
    scope = enclosing_scope(statement)
    return [use for name in names for use in _uses(ctx, scope, name)
            if use.kind != "bind" and use.leaf.get_lineno() > statement.get_lineno()]


def _passed_to(leaf: Base) -> tuple[Optional[str], str]:
    """What the innermost keyword argument or call around ``leaf`` that names training or
    inference says: ("infer", why), ("train", "") or (None, "")."""
    node = leaf
    while node.parent is not None and node.parent.type not in (symbols.simple_stmt, symbols.suite):
        parent = node.parent
        if parent.type == symbols.argument and parent.children[0].type == tokens.NAME \
                and parent.children[1].type == tokens.EQUAL and parent.children[2] is node:
            said = _name_says(parent.children[0].value)
            if said:
                return said, (f"passed as {parent.children[0].value}= on line {leaf.lineno}"
                              if said == "infer" else "")
        elif is_call_trailer(parent):
            callee = prefix_name(parent.parent, child_index(parent))
            said = _name_says(callee) if callee else None
            if said:
                return said, f"passed to {callee}() on line {leaf.lineno}" if said == "infer" else ""
        node = parent
    return None, ""


def counted_inputs(parts: Sequence[Base], site: Base) -> Optional[str]:
    """Why the pipeline spelled by ``parts`` at ``site`` has its results counted against its
    inputs: a name it is made from (``from_tensor_slices(sentences)``) is also counted with
    ``len(...)`` in the function that builds it or one enclosing it; else None."""
    sources = _source_names(parts, site)
    scope = enclosing_scope(site)
    while sources and scope.type == symbols.funcdef:
        for power in _len_calls(scope):
            name = dotted_name(power.children[1].children[1])
            if name in sources:
                return (f"its input {name} is counted (len({name}) on line {power.children[0].lineno}), "
                        "so its results must match the inputs one to one")
        scope = enclosing_scope(scope)
    return None


def reduced_results(parts: Sequence[Base], site: Base) -> Optional[str]:
    """Why the batches of the pipeline spelled by ``parts`` at ``site`` are aggregated: a
    ``.reduce(...)`` later in its chain, or on the name it is assigned to (or made from) in the
    function that builds it (``dataset = dataset.batch(n)`` then ``dataset.reduce(0, count)``:
    a dataset's size counted batch by batch); else None. Dropping the last batch changes what
    is counted, whatever the code around says of training."""
    after = list(parts)[child_index(site.parent) + 1:] if site.parent in parts else []
    if any(attribute_name(part) == "reduce" for part in after):
        return "its batches are reduced (.reduce(...) in the same chain), so none may be dropped"
    statement = site
    while statement.parent is not None and statement.parent.type != symbols.simple_stmt:
        statement = statement.parent
    names = {spelled_name(parts[:1])} if parts and parts[0].type == tokens.NAME else set()
    if statement.type == symbols.expr_stmt:
        names |= {dotted_name(target) for target in statement.children[:-1:2]}
    names.discard(None)
    scope = enclosing_scope(site)
    if scope.type != symbols.funcdef or not names:
        return None
    for node in node_pre_order(scope):
        if node.type == symbols.power and len(node.children) >= 3 and node.children[0].type == tokens.NAME \
                and node.children[0].value in names and attribute_name(node.children[1]) == "reduce" \
                and is_call_trailer(node.children[2]):
            return (f"its batches are reduced ({node.children[0].value}.reduce(...) on line "
                    f"{node.children[0].lineno}), so none may be dropped")
    return None


def _len_calls(function: Node) -> list[Node]:
    """``len(<name>)`` calls in ``function``."""
    return [power for power in node_pre_order(function) if power.type == symbols.power
            and len(power.children) == 2 and power.children[0].type == tokens.NAME
            and power.children[0].value == "len" and is_call_trailer(power.children[1])
            and len(power.children[1].children) == 3 and dotted_name(power.children[1].children[1])]


def _source_names(parts: Sequence[Base], site: Base) -> set[str]:
    """The names a dataset is made from: the arguments of the ``tf.data`` constructors in its
    chain and in the chains last assigned to its head name (see :func:`repeats`)."""
    names: set[str] = set()
    for chain, at in _chains(parts, site):
        for before, part in zip(chain, chain[1:]):
            if is_call_trailer(part) and _name_of(before) in _SOURCES:
                names.update(filter(None, (dotted_name(argument.value) for argument in arguments(part)
                                           if argument.keyword is None)))
        site = at
    return names | {name for source in names for name in _made_from(source, site)}


def _chains(parts: Sequence[Base], site: Base) -> list[tuple[Sequence[Base], Base]]:
    """The dataset spelled by ``parts`` at ``site``, then the values last assigned to its head
    name in straight-line code before (``dataset = dataset.map(f)`` ...): (parts, site) each."""
    found = []
    for _ in range(20):
        found.append((parts, site))
        if not parts or parts[0].type != tokens.NAME:
            break
        value = last_assignment(parts[0].value, site)
        if value is None:
            break
        parts, site = (value.children if value.type == symbols.power else [value]), value
    return found


def _made_for(parts: Sequence[Base], site: Base) -> tuple[Optional[str], str]:
    """What a mode the dataset is made with says (``problem.dataset(ModeKeys.PREDICT)``):
    ("infer", why), ("train", "") or (None, "")."""
    for chain, _ in _chains(parts, site):
        for part in chain:
            for argument in arguments(part) if is_call_trailer(part) else []:
                name = dotted_name(argument.value) or ""
                said = _says(words(name)) if {"mode", "keys"} <= words(name) else None
                if said:
                    return said, f"made for {name}" if said == "infer" else ""
    return None, ""


def repeating_branch(parts: Sequence[Base], site: Base) -> Optional[Node]:
    """The ``if`` right around the first repeat of the dataset spelled by ``parts`` before
    ``site`` in its function (``if is_training: dataset = dataset.repeat()``), when that ``if``
    is not around ``site`` too; else None."""
    head = parts[0].value if parts and parts[0].type == tokens.NAME else ""
    scope = enclosing_scope(site)
    for node in node_pre_order(scope) if head and scope.type == symbols.funcdef else []:
        if node.type == symbols.expr_stmt and node.get_lineno() < site.get_lineno() and _repeats_in(node, head):
            branch = node.parent
            while branch is not scope and branch.type != symbols.if_stmt:
                branch = branch.parent
            return branch if branch is not scope and block_child(site, branch) is None else None
    return None


def shared_with_training(parts: Sequence[Base], site: Base, ctx: FileContext) -> Optional[str]:
    """Why the dataset at ``site`` serves evaluation as well as training: an ``if`` before it
    that tests for training repeats it (``if is_training: dataset = dataset.repeat()``), so
    the same batch serves the other mode unrepeated; else None."""
    head = parts[0].value if parts and parts[0].type == tokens.NAME else ""
    scope = enclosing_scope(site)
    for node in node_pre_order(scope) if head and scope.type == symbols.funcdef else []:
        if node.type != symbols.if_stmt or node.get_lineno() >= site.get_lineno() \
                or block_child(site, node) is not None:
            continue
        test = node.children[1]
        trains = _test_says(test) == "train" or (
            test.type in (symbols.and_test, symbols.or_test) and _says(node_words(test)) == "train")
        flag = not trains and _repeat_flag(test)
        if (trains or flag) and _repeats_in(compound_body(node), head) and not _always_true(scope, test, ctx):
            why = ", so with that flag off it is read once, as evaluation and inference read it" if flag else ""
            return (f"shared by training and evaluation: it repeats only under 'if "
                    f"{str(test).strip()}' (line {node.get_lineno()}){why}")
    return None


def _repeat_flag(test: Base) -> bool:
    """Does the ``if`` test read a flag named for repeating (``if self.params['repeat']:``,
    ``if repeat:``)? Then the configurations that turn it off read the data once: OpenSeq2Seq's
    data layers serve training (``repeat: True``) and evaluation and inference (``False``)."""
    if test.type == symbols.not_test:
        return False
    names = [leaf.value.strip("'\"") if leaf.type == tokens.STRING else leaf.value for leaf in test.leaves()
             if leaf.type in (tokens.NAME, tokens.STRING)]
    return any("repeat" in words(name) for name in names)


def one_pass_by_default(parts: Sequence[Base], site: Base) -> Optional[str]:
    """Why the dataset at ``site``, which nothing in the repository shows to feed training or
    inference, may feed evaluation: it repeats ``repeat(num_epochs)`` by a parameter of a
    function around it whose default is 1 (``def input_fn_pandas(..., num_epochs=1)``), one
    pass over the data as evaluation reads it, the way a library's ``input_fn`` factory is
    written for callers outside the repository; else None."""
    for name, call in _repeat_calls(parts, site):
        count = find_argument(call, "count", 0) if name == "repeat" and call is not None else None
        if count is None or count.value.type != tokens.NAME:
            continue
        function, default = _parameter_default(count.value.value, site)
        if function is not None and default is not None and str(default).strip() == "1":
            return (f"nothing in the repository says whether {definition_name(function)}() feeds "
                    f"training or evaluation, and its {count.value.value}=1 by default reads the "
                    "data once, as evaluation does")
    return None


def _parameter_default(name: str, site: Base) -> tuple[Optional[Node], Optional[Base]]:
    """The innermost function around ``site`` with a parameter ``name``, and that
    parameter's default (None when it has none); (None, None) when no function has it."""
    node = site.parent
    while node is not None:
        if node.type == symbols.funcdef:
            for _, leaf in parameters(node):
                if leaf.value == name:
                    item = leaf.parent if leaf.parent is not None and leaf.parent.type == symbols.tname else leaf
                    equal = item.next_sibling
                    default = equal.next_sibling if equal is not None and equal.type == tokens.EQUAL else None
                    return node, default
        node = node.parent
    return None, None


def _always_true(function: Node, test: Base, ctx: FileContext) -> bool:
    """True when ``test`` is a parameter of ``function`` that every call of it in the file
    passes as the literal ``True`` (``make_dataset(x, y, 100, True)``): only training uses it."""
    if test.type != tokens.NAME or enclosing_scope(function).type == symbols.classdef:
        return False
    names = [leaf.value for _, leaf in parameters(function)]
    kinds = dict((leaf.value, kind) for kind, leaf in parameters(function))
    if test.value not in names:
        return False
    position = names.index(test.value) if kinds[test.value] == "positional" else None
    leaves = [use.leaf for use in _uses(ctx, enclosing_scope(function), definition_name(function))
              if use.leaf is not function.children[1]]
    for leaf in leaves:
        power = leaf.parent
        if power.type != symbols.power or power.children[0] is not leaf or not is_call_trailer(power.children[1]):
            return False
        given = find_argument(power.children[1], test.value, position)
        if given is None or not is_true(given.value):
            return False
    return bool(leaves)


def _repeats_in(body: Base, head: str) -> bool:
    """Does ``body`` assign ``head`` a repeated dataset (``head = head.repeat()``)?"""
    for node in node_pre_order(body):
        if node.type == symbols.expr_stmt and len(node.children) == 3 \
                and dotted_name(node.children[0]) == head \
                and any(leaf.value in REPEATS for leaf in node.children[2].leaves()):
            return True
    return False


def _made_from(name: str, site: Base) -> set[str]:
    """The names passed to the call last assigned to ``name`` before ``site`` (``encoded =
    encode(sentences, vocabulary)``: sentences, vocabulary)."""
    value = last_assignment(name, site) if "." not in name else None
    if value is None or value.type != symbols.power or not is_call_trailer(value.children[-1]):
        return set()
    return set(filter(None, (dotted_name(argument.value) for argument in arguments(value.children[-1]))))


def _name_of(part: Base) -> Optional[str]:
    """``from_tensor_slices`` for the trailer ``.from_tensor_slices`` or that NAME."""
    if part.type == tokens.NAME:
        return part.value
    return attribute_name(part)


def _is_if_test(child: Base) -> bool:
    previous = child.prev_sibling
    return previous is not None and previous.type == tokens.NAME and previous.value in ("if", "elif")


def _test_says(test: Base) -> Optional[str]:
    """"train" or "infer" when an ``if`` test checks for training or for inference/eval:
    ``is_training``, ``not FLAGS.do_train``, ``mode == ModeKeys.PREDICT``, ``mode != TRAIN``."""
    if test.type == symbols.not_test:
        return "infer" if _test_says(test.children[1]) == "train" else None
    if test.type == symbols.comparison and len(test.children) == 3:
        operator = str(test.children[1]).split()
        said = _says(node_words(test))
        if operator in (["=="], ["is"]):
            return said
        if operator in (["!="], ["is", "not"]):
            return "infer" if said == "train" else None
        return None
    if test.type in (tokens.NAME, symbols.power) and dotted_name(test):
        return _says(node_words(test))
    return None


def _name_says(name: str) -> Optional[str]:
    """What the identifier ``name`` says: a name that says both training and evaluation
    (``_make_train_or_eval_input_fn``, ``train_and_eval_ds``) says neither: its uses decide."""
    found = words(name)
    if found & TRAINING_WORDS and found & INFERENCE_WORDS:
        return None
    return _says(found)


def _takes_mode(function: Node) -> bool:
    """Does ``function`` take the mode it builds for (``mode``, ``is_training``): then a
    training name (``train_input_fn(params, mode)``) is no evidence, what it is passed is."""
    return any("mode" in words(leaf.value) or leaf.value in _MODE_FLAGS
               for _, leaf in parameters(function))


def _says(found: frozenset[str]) -> Optional[str]:
    if found & TRAINING_WORDS:
        return "train"
    return "infer" if found & INFERENCE_WORDS else None


def repeats(parts: Sequence[Base], site: Base) -> bool:
    """Is the dataset spelled by power children ``parts`` (used at ``site``) shown to repeat
    endlessly (:func:`_repeat_calls`): then no batch is partial and none is dropped."""
    return any(_endless(name, call) for name, call in _repeat_calls(parts, site))


def finite_repeat(parts: Sequence[Base], site: Base) -> Optional[str]:
    """The code of a repeat before ``site`` not shown to be endless (``repeat(count)``,
    ``repeat(3)``): the dataset still ends, and so may its last batch, partial; else None."""
    for name, call in _repeat_calls(parts, site):
        if not _endless(name, call):
            return name + (str(call).strip() if call is not None else "")
    return None


def _repeat_calls(parts: Sequence[Base], site: Base) -> Iterator[tuple[str, Optional[Node]]]:
    """Each repeat of the dataset spelled by power children ``parts`` (used at ``site``):
    a ``.repeat(...)`` or ``shuffle_and_repeat(...)`` in its chain, or in the chain last
    assigned to its head name in straight-line code before ``site``; as its name and its
    ``(...)`` trailer (None when it is not called there)."""
    while parts:
        for index in range(1, len(parts)):
            part, before = parts[index], parts[index - 1]
            following = parts[index + 1] if index + 1 < len(parts) else None
            name = attribute_name(part)
            if name in REPEATS:
                yield name, following if following is not None and is_call_trailer(following) else None
            elif is_call_trailer(part) and is_attribute_trailer(before) and before.children[1].value == "apply":
                # .apply(tf.data.experimental.shuffle_and_repeat(n))
                yield from ((leaf.value, _call_after(leaf)) for leaf in part.leaves() if leaf.value in REPEATS)
        if parts[0].type != tokens.NAME:
            return
        value = last_assignment(parts[0].value, site)
        if value is None:
            return
        parts, site = (value.children if value.type == symbols.power else [value]), value


def _call_after(leaf: Base) -> Optional[Node]:
    """The ``(...)`` right after the name ``leaf`` (bare, or the last part of a dotted name)."""
    node = leaf.parent if leaf.parent is not None and leaf.parent.type == symbols.trailer else leaf
    following = node.next_sibling
    return following if following is not None and is_call_trailer(following) else None


def _endless(name: str, call: Optional[Node]) -> bool:
    """Does the repeat ``name`` called with ``call`` repeat for ever: no count, or a count of
    None or -1 (``repeat()``, ``shuffle_and_repeat(n)``, ``repeat(count=None)``)?"""
    if call is None or has_unpacking(call):
        return False
    count = find_argument(call, "count", 0 if name == "repeat" else 1)
    return count is None or is_none(count.value) or str(count.value).strip() == "-1"


def last_assignment(name: str, site: Base) -> Optional[Base]:
    """The value that straight-line code before ``site`` last assigned to ``name`` in its
    scope (``name = value`` in the same block or before the blocks holding it), or None when
    there is none or another binding of ``name`` comes first (a loop, a branch, a tuple)."""
    child = site
    while child.parent is not None and child.type not in (symbols.funcdef, symbols.classdef):
        block = child.parent
        if block.type in (symbols.suite, symbols.file_input, symbols.simple_stmt):
            for sibling in reversed(block.children[:child_index(child)]):
                found, value = _assigns(sibling, name)
                if found:
                    return value
        child = block
    return None


def _assigns(statement: Base, name: str) -> tuple[bool, Optional[Base]]:
    """(True, value) when ``statement`` ends by assigning ``name = value``; (True, None) when it
    may bind ``name`` otherwise; (False, None) when it does not bind it."""
    if statement.type == symbols.simple_stmt:
        for small in reversed(statement.children):
            found, value = _assigns(small, name)
            if found:
                return found, value
        return False, None
    if statement.type == symbols.expr_stmt and any(
            target.type == tokens.NAME and target.value == name
            for target in statement.children[:-1:2]) and _assignment(statement):
        return True, statement.children[-1]
    if statement.type in (symbols.funcdef, symbols.classdef):
        return statement.children[1].value == name, None
    if not statement.children:
        return False, None
    return name in bound_names(statement), None
