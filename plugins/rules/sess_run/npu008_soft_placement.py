"""NPU008 soft-placement: when the repository uses ``tf.device``, sessions allow soft placement.

``tf.device`` may sit in a model file while the session is created in the training script, so
the trigger is the repository-wide fact :data:`FACT` from :func:`npu_codemod_analyze_file`.
Explicit settings are checked where they are written (``visit``); the config objects NPU007
wrote or completed get the setting in ``finish``, which runs after NPU007's edits. In a
``tf2-compat`` file (TF 1.x code on TensorFlow 2.x) the compat guide deletes ``tf.device``
instead: each call is reported, nothing is rewritten.
"""

from __future__ import annotations

import ast
import re
from typing import FrozenSet, Iterable, Iterator, Optional, Union

from npu_codemod.api import (
    Base,
    Capture,
    FileContext,
    ImportNames,
    Name,
    Node,
    Reference,
    Rule,
    add_keyword,
    enclosing_statement,
    find_argument,
    hookimpl,
    is_true,
    symbols,
    tokens,
)
from npu_codemod.api._toolkit import (
    TF1,
    TF2_COMPAT,
    AnyOf,
    LineStarts,
    ast_import_names,
    ast_references,
    enclosing_scope,
    fact_names,
    first_call,
    insert_above_comments,
    is_false,
    memo,
    module_ast,
    module_index,
    module_parses,
    own_nodes,
    parse_module,
    position,
    runs_tf2_somewhere,
    unlink,
)

from ._bound_attributes import bound_attribute_marks
from ._config_flow import Flow, config_flow, target_flow
from ._config_functions import parse
from ._session_config import (
    SESSION_NAMES,
    SLIM_NAMES,
    ConfigTarget,
    argument_callee,
    callee_last_name,
    deep_copied,
    targets,
)
from ._spelled_words import SpelledWords

FACT = "uses-tf-device"
#: ``passes-soft-placement:<function>:<parameter or position>``, see :func:`passed_soft_placement`.
PASSED = "passes-soft-placement:"
SETTING = "allow_soft_placement"
WHY = "tf.device is used in this repository"
NONE_PATH = ("set {config}.allow_soft_placement = True once '{config}' is a ConfigProto on every "
             "path (tf.device is used in this repository): it may be None at this session (see NPU007), where the line would "
             "raise AttributeError")
BUILT_ELSEWHERE = ("set {config}.allow_soft_placement = True where it is built, with NPU007's lines "
                   "(tf.device is used in this repository): it outlives this function, and "
                   "may be None here")
COMPAT_DEVICE = ("remove tf.device(...) for the NPU: the TF 2.x compat.v1 guide deletes device "
                 "placement (the adapter places ops itself)")
_ALIAS = LineStarts(r"[ \t]*import[ \t]+tensorflow(?:\.compat\.v1)?(?:[ \t]+as[ \t]+(\w+))?")
#: Where internal modules (``tensorflow.python.framework.ops.device``) come from.
_INTERNAL = AnyOf(r"\btensorflow\.python\b")
DEVICE = frozenset({"tensorflow.device"})
DEVICE_NAMES = tuple(sorted({name.rpartition(".")[2] for name in DEVICE}))  # their site names
#: The word ``device`` on its own (not ``devices``, ``_device``): an identifier ``device``.
_DEVICE_WORD = re.compile(r"(?<!\w)device(?!\w)")
#: ``from tensorflow import device as d`` (also ``compat.v1``, several names, parentheses).
_FROM = LineStarts(r"[ \t]*from[ \t]+tensorflow(?:\.compat\.v1)?[ \t]+import[ \t]+(\([^)]*\)|[^#\n]*)")


def uses_tf_device(text: str) -> bool:
    """Does ``text`` call ``<tf alias>.device(``, or a name imported as ``device`` from
    TensorFlow, outside a comment? (from the text; a file that imports internal modules is
    parsed)"""
    if "device" not in text:
        return False  # every spelling below has it (the line scan is the costly part)
    aliases = {match.group(1) or "tensorflow" for match in _ALIAS.finditer(text)}
    calls = [(r"\b", rf"{re.escape(alias)}(?:\.compat\.v1)?\.device[ \t]*\(") for alias in sorted(aliases)]
    calls += [(r"(?<![\w.])", rf"{re.escape(name)}[ \t]*\(") for name in sorted(_device_names(text))]
    if any(_on_a_code_line(text, before, call) for before, call in calls):
        return True
    return _device_through_internal_modules(text)


def _on_a_code_line(text: str, before: str, call: str) -> bool:
    """``re.search(f"^[^#\\n]*{before}{call}", text, re.M)``: the pattern ``call`` (which
    opens with a literal: looked for in C) where ``before`` matches (a look at the characters
    before it) with no ``#`` before it on its line, tried at every place ``call`` matches."""
    loose, exact = re.compile(call), re.compile(before + call)
    position = 0
    while True:
        found = loose.search(text, position)
        if found is None:
            return False
        start = found.start()
        if exact.match(text, start) is not None and "#" not in text[text.rfind("\n", 0, start) + 1:start]:
            return True
        position = start + 1


def _device_through_internal_modules(text: str) -> bool:
    """``ops.device(...)`` after ``from tensorflow.python.framework import ops``: such names
    resolve only through ``ImportNames``. Read from the file's ``ast`` (the analyses' shared
    tree), whose references are those of the fissix tree (``ast_references``); fissix decides
    where ``ast`` cannot read the file, and whether it can read one where ``ast`` finds a call
    (a file fissix cannot parse has no call: the engine reports it)."""
    if not _INTERNAL.found(text) or "device" not in text or not _may_name_device(text):
        return False
    names = ast_import_names(text)
    sites = ast_references(text, [names]) if names is not None else None
    if sites is None:
        return _device_call_in_tree(text)
    return any(site.called and site.name in DEVICE for site in sites) and parses(text)


def _may_name_device(text: str) -> bool:
    """May ``text`` spell a name ``device`` (an attribute, or an imported name's last part)?
    A call resolves to ``tensorflow.device`` only through one: :data:`PUBLIC_NAMES` maps
    modules, keeping the last part, and names bound otherwise (``d = ops.device``, a star
    import) are not followed or spell the attribute. Answered False only for an ASCII text
    without carriage returns, where ``ast`` and fissix read the same identifiers (no NFKC, one
    line count): the word alone nowhere in the text, or no such name in its ``ast``; a walk of
    every reference (``ast_references``) is what it spares (most files that import internal
    modules and say "device" call none)."""
    if not text.isascii() or "\r" in text:
        return True
    if _DEVICE_WORD.search(text) is None:
        return False
    tree = module_ast(text)
    if tree is None:
        return True
    index = module_index(tree)
    return any(node.attr == "device" for node in index.nodes(ast.Attribute)) \
        or any(alias.name.rpartition(".")[2] == "device" for alias in index.nodes(ast.alias))


def _device_call_in_tree(text: str) -> bool:
    """The fissix tree's answer: a call of a name of :data:`DEVICE` anywhere in ``text``."""
    tree = parse_module(text)
    if tree is None:
        return False
    found = first_call(tree, ImportNames(tree), DEVICE) is not None
    unlink(tree)
    return found


def parses(text: str) -> bool:
    """Can fissix parse ``text``? (no tree built: a large file's would be the worker's peak)"""
    return module_parses(text)


def _device_names(text: str) -> set[str]:
    names = set()
    for match in _FROM.finditer(text):
        for item in re.sub(r"#[^\n]*|[()\\]", " ", match.group(1)).split(","):
            words = item.split()
            if words and words[0] == "device":
                names.add(words[2] if len(words) == 3 and words[1] == "as" else "device")
    return names


def passed_soft_placement(tree: ast.AST, mentioned: bool, precise: bool = False,
                          spelled: Optional[SpelledWords] = None) -> set[str]:
    """``<function>:<parameter or position>`` for each argument of a call that may hand a
    function something else than ``True`` for a soft-placement flag: a keyword named like one
    (``soft`` in it), a positional ``False`` or one whose code mentions soft placement, and
    ``**kwargs`` (``<function>:**``) when the file ``mentioned`` it. ``precise``: every
    argument that is not literally ``True`` (for the calls of the file being rewritten).
    ``spelled``: where the module's text may spell soft placement (:func:`soft_spellings`):
    the code of an argument outside those places is not read; None: every argument's is.

    The hot loop of the analysis (every call of every file): a call whose code may not spell
    the words (``spelled``) has no argument that may, as each argument lies inside the call's
    parentheses, so one look at the call stands for one per argument; an f-string argument
    is read all the same (:class:`SpelledWords` reads each node inside an f-string)."""
    found = set()
    for call in module_index(tree).nodes(ast.Call):
        args, keywords = call.args, call.keywords
        if not args and not keywords:
            continue
        name = _callee(call)
        if name is None or name == "ConfigProto":
            continue
        for keyword in keywords:
            if keyword.arg is None and (mentioned or precise):
                found.add(f"{name}:**")
            elif keyword.arg and (precise or "soft" in keyword.arg.lower()) and not _true(keyword.value):
                found.add(f"{name}:{keyword.arg}")
        read = spelled is None or spelled.may_spell(call)
        for index, argument in enumerate(args):
            kind = type(argument)
            if kind is ast.Starred:
                found.add(f"{name}:*")
                break
            if kind is ast.Constant:
                value = argument.value  # type: ignore[attr-defined]
                if value is True:
                    continue
                if precise or value is False:
                    found.add(f"{name}:{index}")
                    continue
            elif precise:
                found.add(f"{name}:{index}")
                continue
            if (read or kind is ast.JoinedStr) and (spelled is None or spelled.may_spell(argument)) \
                    and _soft(argument):
                found.add(f"{name}:{index}")
    return found


def _callee(call: ast.Call) -> Optional[str]:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def soft_spellings(tree: ast.AST, text: str) -> SpelledWords:
    """Where ``text`` (whose ``ast`` is ``tree``) may spell ``soft`` or ``placement`` as
    :func:`_soft` reads a node: in a name, in a string (escapes, ``"so" "ft"``: each string is
    read), in any node of a text whose names ``ast`` normalises (NFKC)."""
    return SpelledWords(text, module_index(tree), ("soft", "placement"), _spells)


def _true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _false(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _soft(node: ast.AST) -> bool:
    """Does the code of ``node`` spell ``soft`` or ``placement`` in a name or string? (A
    dotted name, a name or a constant is read without a walk: most arguments are one.)"""
    while type(node) is ast.Attribute:
        if _spells(node):
            return True
        node = node.value
    if type(node) is ast.Name or type(node) is ast.Constant:
        return _spells(node)
    return any(map(_spells, ast.walk(node)))


def _spells(part: ast.AST) -> bool:
    for field in _word_fields(type(part)):
        word = getattr(part, field, None)
        if isinstance(word, str) and ("soft" in word.lower() or "placement" in word.lower()):
            return True
    return False


def _word_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may spell a word: an ``id``, ``attr`` or ``arg`` (names,
    attributes, parameters, keywords), a constant's ``value``."""
    fields = _WORD_FIELDS.get(kind)
    if fields is None:
        words = ("id", "attr", "arg", "value") if issubclass(kind, ast.Constant) else ("id", "attr", "arg")
        fields = _WORD_FIELDS[kind] = tuple(field for field in words if field in kind._fields)
    return fields


_WORD_FIELDS: dict[type, tuple[str, ...]] = {}


@hookimpl
def npu_codemod_analyze_file(path: str, text: str) -> Optional[set[str]]:
    tree = parse(text)
    mentioned = "**" in text and _mentions_soft_placement(text)  # read only for a ``**`` argument
    facts = {PASSED + item for item in passed_soft_placement(tree, mentioned, spelled=soft_spellings(tree, text))} \
        if tree else set()
    if uses_tf_device(text):
        facts.add(FACT)
    return facts or None


def _mentions_soft_placement(text: str) -> bool:
    """``re.search("soft|placement", text, re.I)``: in an ASCII text, a look at its lower case
    (no other character matches either word case-blind)."""
    if text.isascii():
        lowered = text.lower()
        return "soft" in lowered or "placement" in lowered
    return _MENTIONED.search(text) is not None


_MENTIONED = re.compile("soft|placement", re.I)


#: ``memo`` key: (node, message, flipped) of the ``allow_soft_placement`` keywords and assignments
#: ``visit`` found True or made True.
SET_TRUE = "npu008.set_true"

class SoftPlacement(Rule):
    id = "NPU008"
    name = "soft-placement"
    pack = "sess-run"
    file_kinds = frozenset({TF1, TF2_COMPAT})  # compat: the guide deletes tf.device (reported)
    description = "When the repository uses tf.device, session configs set allow_soft_placement=True."
    guide_section = "创建session并初始化资源 (tf.device -> allow_soft_placement=True)"
    guide_section_en = ("Creating the session and initializing resources: tf.device -> "
                        "allow_soft_placement=True")
    guide_url = Rule.catalog_url(id, name)
    rewrites = ("When the repository calls `tf.device(...)` anywhere (the model file may place "
                "ops while the training script makes the session), every session config NPU007 "
                "writes or completes sets `allow_soft_placement=True`, and an explicit "
                "`allow_soft_placement=False` becomes `True`: it lets TensorFlow assign devices "
                "itself.")
    reports = ("A value that is not a literal (`allow_soft_placement=FLAGS.soft_placement`): it "
               "must be `True` when `tf.device` is used. A config NPU007 leaves to where it is "
               "built (one that outlives the function opening the session, such as "
               "`estimator.config.session_config`): set it there. In a `tf2-compat` file (TF 1.x "
               "code on TensorFlow 2.x) each `tf.device(...)` instead: the compat guide removes "
               "it; never rewritten, no soft-placement setting.")
    example = """
        import tensorflow as tf

        with tf.device("/cpu:0"):
            images, labels = build_input(FLAGS.data_dir)
        train_config = tf.ConfigProto(allow_soft_placement=False)
        eval_config = tf.ConfigProto(allow_soft_placement=FLAGS.soft_placement)
    """
    _scope = "linked"
    # ``train`` (TF-Slim's ``learning.train``) as NPU007 has it: only as ``x.train`` of a name
    # the file binds.
    _site_names = (*sorted(SESSION_NAMES | SLIM_NAMES - {"train"}), "ConfigProto", SETTING)
    _ast_sites = bound_attribute_marks(("train",))
    _tokens = ("Session", "managed_session", "prepare_or_wait_for_session", "slim", SETTING, "device(")
    calls = tuple(DEVICE)
    pattern = f"""(
        argument< '{SETTING}' '=' value=any >
      | expr_stmt< power< any* trailer< '.' '{SETTING}' > > '=' value=any >
    )"""
    after = ("NPU007",)  # it finishes after NPU007, whose edits record the config objects

    def _site_names_for(self, facts: FrozenSet[str]) -> Iterable[str]:
        # The settings only where the repository uses tf.device (with the functions of this
        # repository that make or configure sessions, by name); tf.device's own calls only
        # where a file may be tf2-compat: elsewhere the rule does nothing with them.
        settings = (*self._site_names, *fact_names(facts, ("npu007-config:",))) if FACT in facts else ()
        return (*settings, *DEVICE_NAMES) if runs_tf2_somewhere(facts) else settings

    def visit_reference(self, reference: Reference, ctx: FileContext) -> None:
        if ctx.file_kind == TF2_COMPAT:
            ctx.report(reference, "unmigrated", COMPAT_DEVICE)

    def visit(self, node: Base, capture: Capture, ctx: FileContext) -> None:
        if FACT not in ctx.facts or ctx.file_kind == TF2_COMPAT:
            return
        if node.type == symbols.argument and argument_callee(node) != "ConfigProto":
            return
        value = capture["value"]
        if is_true(value):  # reported in finish, at its site
            memo(ctx).setdefault(SET_TRUE, []).append((node, f"{SETTING}=True is set ({WHY})", False))
        elif is_false(value):
            value.replace(Name("True", prefix=value.prefix))
            memo(ctx).setdefault(SET_TRUE, []).append(
                (node, f"flipped {SETTING}=False to True: {WHY}", True))
        elif not _true_by_default(value, ctx):
            ctx.report(node, "unmigrated", f"{SETTING} must be True when tf.device is used: "
                       f"set it to True (now: {str(value).strip()})")

    def finish(self, tree: Node, ctx: FileContext) -> None:
        if FACT not in ctx.facts or ctx.file_kind == TF2_COMPAT:
            return
        reported: set[int] = set()  # the sessions given a finding: one each
        flows: dict[int, Optional[Flow]] = {}  # id of each target -> its flow, walked once
        for target in targets(ctx):
            flows[id(target)] = flow = target_flow(target, _keyword_setting, {SETTING})
            if _set_on_every_path(target, flow):
                continue
            reported.add(id(target))
            if target.may_be_none or target.built_elsewhere:
                message = NONE_PATH if target.may_be_none else BUILT_ELSEWHERE
                ctx.report_at(target.line, target.column, "unmigrated", message.format(
                    config=target.expression))
                continue
            if target.constructor is not None:
                add_keyword(target.constructor, SETTING, "True")
            else:
                insert_above_comments(target.anchor, f"{target.expression}.{SETTING} = True", ctx.newline)
            ctx.report_at(target.line, target.column, "migrated",
                          f"set {SETTING}=True on '{target.expression}': {WHY}")
        _report_set(ctx, reported, flows)


def _report_set(ctx: FileContext, reported: set[int], flows: dict[int, Optional[Flow]]) -> None:
    """``allow_soft_placement`` found True, or flipped to True, by ``visit``: reported on the
    line of the session its config reaches when NPU007 followed it there (where a first run,
    which adds the keyword, reports it: the same site either way), else on the keyword. A
    flip is a rewrite, always reported; "is set" once per session, and not beside the finding
    of a session that ``finish`` completed (``flows``: each target's, which it walked)."""
    found = memo(ctx).get(SET_TRUE, ())
    sessions = _sessions_of_configs(ctx, flows) if found else {}
    for node, message, flipped in found:
        target = next((sessions[id(up)] for up in _up(node) if id(up) in sessions), None) \
            or _session_of_assignment(node, ctx, flows)
        if target is None:
            ctx.report(node, "migrated", message)
        elif flipped or id(target) not in reported:
            reported.add(id(target))
            ctx.report_at(target.line, target.column, "migrated", message)


def _sessions_of_configs(ctx: FileContext, flows: dict[int, Optional[Flow]]) -> dict[int, ConfigTarget]:
    """id of each node that makes a config object NPU007 followed to a session (the
    ``ConfigProto(...)`` it wrote, the statements binding the name that reaches it) -> that
    session's target. ``flows``: the targets' flows, walked before ``finish`` added the
    setting (which binds nothing: the same bindings reach each session after it)."""
    found: dict[int, ConfigTarget] = {}
    for target in targets(ctx):
        if target.constructor is not None:
            found[id(target.constructor)] = target
        for binding in _reaching_bindings(flows[id(target)]):
            found.setdefault(id(binding), target)
            for copied in _copied_bindings(binding):  # NPU007's copy of a config parameter
                found.setdefault(id(copied), target)
    return found


def _reaching_bindings(flow: Optional[Flow]) -> Iterator[Base]:
    """The statements of ``flow`` whose objects reach its session (not a parameter's or an
    unbound entry)."""
    bindings = flow.bindings if flow is not None else []
    for index, _ in flow.reaching if flow is not None else ():
        if 0 <= index < len(bindings):
            yield bindings[index]


def _copied_bindings(binding: Base) -> list[Base]:
    """For ``<x> = copy.deepcopy(<name>)`` (maybe ``... if ... else ...``), the statements
    binding ``<name>`` that reach the copy: the config made there is the session's too."""
    copied = _deep_copy_of(binding)
    if copied is None or not copied.isidentifier() or copied == str(binding.children[0]).strip():
        return []  # ``x = copy.deepcopy(x)``: its own bindings are the flow's already
    flow = config_flow(enclosing_scope(binding), enclosing_statement(binding), copied, _keyword_setting, {SETTING})
    return list(_reaching_bindings(flow))


def _session_of_assignment(node: Base, ctx: FileContext,
                           flows: dict[int, Optional[Flow]]) -> Optional[ConfigTarget]:
    """The session whose config ``node`` (``config.allow_soft_placement = True``) sets: the
    target of the same expression in the same scope, or of a deep copy of it there (its
    ``flows`` tell), if NPU007 followed one there; of several (a session per branch), the
    first after ``node``."""
    if node.type != symbols.expr_stmt:
        return None
    expression = str(node.children[0]).strip().rpartition(".")[0]
    scope = enclosing_scope(node)
    same = [target for target in targets(ctx) if enclosing_scope(target.anchor) is scope
            and (target.expression == expression or _copies(flows[id(target)], expression))]
    line = position(node)[0]
    return next((target for target in sorted(same, key=lambda one: (one.line, one.column))
                 if target.line >= line), same[0] if same else None)


def _copies(flow: Optional[Flow], expression: str) -> bool:
    """Does an object reaching the session along ``flow`` come from ``<x> =
    copy.deepcopy(<expression>)`` (maybe ``... if ... else ...``)?"""
    bindings = flow.bindings if flow is not None else []
    return any(0 <= index < len(bindings) and _deep_copy_of(bindings[index]) == expression
               for index, _ in flow.reaching) if flow is not None else False


def _deep_copy_of(binding: Base) -> Optional[str]:
    assigned = binding.type == symbols.expr_stmt and binding.children[1].type == tokens.EQUAL
    return deep_copied(binding.children[-1]) if assigned else None


def _up(node: Base) -> Iterator[Base]:
    """``node``'s ancestors, nearest first, up to its statement."""
    parent = node.parent
    while parent is not None and parent.type not in (symbols.simple_stmt, symbols.file_input):
        yield parent
        parent = parent.parent


def _set_on_every_path(target: ConfigTarget, flow: Optional[Flow]) -> bool:
    """Does the object of ``target`` have ``allow_soft_placement`` set (to anything: ``visit``
    checks the value) on every path to its session (``flow``: its :func:`target_flow`)?"""
    if flow is None:
        return SETTING in target.settings()
    return all(SETTING in done for _, done in flow.reaching)


def _keyword_setting(value: Base) -> frozenset[str]:
    """``{SETTING}`` for ``ConfigProto(..., allow_soft_placement=v)``, and for a deep copy of
    a config set so on every path there (NPU007's copy of a config parameter,
    ``npu_config = copy.deepcopy(config)``: a line for the copy would say it again)."""
    given = callee_last_name(value) == "ConfigProto" and find_argument(value.children[-1], SETTING)
    return frozenset({SETTING}) if given or _copy_of_a_set_config(value) else frozenset()


def _copy_of_a_set_config(value: Base) -> bool:
    """Is ``value`` ``copy.deepcopy(<name>)`` (no ``... if ... else ConfigProto()``: that one
    has no setting) of a local whose object has the setting on every path to it?"""
    copied = deep_copied(value) if value.type == symbols.power else None
    statement = enclosing_statement(value) if copied is not None and copied.isidentifier() else None
    if statement is None or id(value) in _FOLLOWING:  # a copy of itself (in a loop): no
        return False
    _FOLLOWING.add(id(value))
    try:
        flow = config_flow(enclosing_scope(value), statement, str(copied), _keyword_setting, {SETTING})
    finally:
        _FOLLOWING.discard(id(value))
    return bool(flow.reaching) and all(SETTING in done for _, done in flow.reaching)


#: ids of the copies :func:`_copy_of_a_set_config` is following back (``x = copy.deepcopy(x)``
#: in a loop reaches itself).
_FOLLOWING: set[int] = set()


def _true_by_default(value: Base, ctx: FileContext) -> bool:
    """Is ``value`` a parameter of the enclosing function that defaults to ``True``, never
    rebound, and that no call in the repository may give another value? Calls are matched
    by the function's name; other files' calls are known from the :data:`PASSED` facts, so
    only for a parameter named like soft placement (those are the ones recorded)."""
    scope = enclosing_scope(value)
    tree = parse(ctx.original)
    if value.type != tokens.NAME or scope.type != symbols.funcdef or tree is None \
            or "soft" not in value.value.lower():
        return False
    line = position(scope)[0]
    function, names = _function_at(tree, line, scope.children[1].value)
    keys = _parameter_keys(function, value.value) if function is not None else None
    if keys is None:
        return False
    passed = {fact[len(PASSED):] for fact in ctx.facts if fact.startswith(PASSED)}
    passed |= memo(ctx).setdefault("npu008.passed", passed_soft_placement(tree, True, precise=True))
    return not passed & {f"{name}:{key}" for name in names for key in keys}


_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def _function_at(tree: ast.Module, line: int, name: str) -> tuple[Optional[_Function], set[str]]:
    """The function ``def name`` at ``line``, and the names its callers call it by (a class's
    name for its ``__init__``)."""
    for node in ast.walk(tree):
        body = node.body if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                              ast.AsyncFunctionDef)) else []
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and child.lineno == line and child.name == name:
                called = {name, node.name} if name == "__init__" and isinstance(node, ast.ClassDef) \
                    else {name}
                return child, called
    return None, set()


def _parameter_keys(function: _Function, name: str) -> Optional[set[str]]:
    """How a call can give ``function``'s parameter ``name`` a value (keyword, positions,
    unpacking), when it defaults to ``True`` and the body never rebinds it; else None."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(arguments.kwonlyargs, arguments.kw_defaults))
    found = [(index, default) for index, (argument, default) in enumerate(pairs) if argument.arg == name]
    if not found or not (isinstance(found[0][1], ast.Constant) and found[0][1].value is True):
        return None
    if any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
           for node in own_nodes(function)):
        return None
    keys = {name, "**"}
    index = found[0][0]
    if index < len(positional):
        keys |= {"*", str(index)}
        if index and positional[0].arg in ("self", "cls"):
            keys.add(str(index - 1))  # called as obj.method(...)
    return keys


@hookimpl
def npu_codemod_rules() -> list[Rule]:
    return [SoftPlacement()]
