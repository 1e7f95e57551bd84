"""The public API for migration rules: everything a rule imports comes from here.

A rule is a :class:`Rule` subclass registered by a plugin's :func:`hookimpl`-decorated
``npu_codemod_rules()`` hook. It declares what it looks for (qualified names in
:attr:`Rule.calls`/:attr:`Rule.uses`, or a lib2to3 :attr:`Rule.pattern`), edits the syntax tree
with the helpers below and reports through :class:`FileContext`. The engine owns parsing,
Bowler, import placement (:meth:`FileContext.add_import`), crash isolation and the compile check.

The names are grouped by question; ``docs/api.md`` is generated from their docstrings. The
built-in rules use nothing else (a test checks that no rule module imports
``npu_codemod.codemods``, ``fissix`` or ``bowler``), so a third-party rule can do whatever they
do. Names not listed in ``__all__`` are internal and may change.
"""

from __future__ import annotations

from fissix import pytree as _pytree
from fissix.fixer_util import (
    #: A ``,`` leaf, for building argument lists: ``Comma()`` (fissix ``fixer_util.Comma``).
    Comma,
    #: A ``.`` leaf, for building attribute trailers: ``Dot()`` (fissix ``fixer_util.Dot``).
    Dot,
    #: A NAME leaf: ``Name("npu_ops", prefix=" ")`` (fissix ``fixer_util.Name``).
    Name,
)
from fissix.pgen2 import (
    #: The token types of leaves (fissix ``pgen2.token``): ``leaf.type == tokens.NAME``,
    #: ``tokens.STRING``, ``tokens.COMMA``, ``tokens.LPAR``...
    token as tokens,
)
from fissix.pygram import (
    #: The grammar's node types (fissix ``pygram.python_symbols``): ``node.type ==
    #: symbols.power``, ``symbols.trailer``, ``symbols.arglist``, ``symbols.expr_stmt``...
    python_symbols as symbols,
)

from npu_codemod.codemods.accessors import accessor_facts, unresolved_accesses
from npu_codemod.codemods.api_sites import ApiStatus
from npu_codemod.codemods.api_sites import advice as api_advice
from npu_codemod.codemods.ast_references import ast_references
from npu_codemod.codemods.blocks import open_block
from npu_codemod.codemods.built_models import (
    #: The kind of an Estimator, as :meth:`BuiltModels.receiver_kind` answers it.
    ESTIMATOR,
    #: The kind of a ``tf.keras`` model, as :meth:`BuiltModels.receiver_kind` answers it.
    KERAS,
    KERAS_MODELS,
    BuiltModels,
    bound_values,
    model_facts,
)
from npu_codemod.codemods.calls import (
    Argument,
    add_argument,
    add_keyword,
    arguments,
    called_method,
    find_argument,
    has_unpacking,
    #: Whether an expression node is the literal ``False``: ``is_false(argument.value)``.
    is_false,
    #: Whether an expression node is the literal ``None``: ``is_none(argument.value)``.
    is_none,
    #: Whether an expression node is the literal ``True``: ``is_true(argument.value)``.
    is_true,
    needs_parentheses,
    remove_argument,
    unparenthesised,
)
from npu_codemod.codemods.classes import (
    RepositoryClass,
    SubclassCall,
    class_facts,
    subclass_calls,
)
from npu_codemod.codemods.distribution import (
    HOROVOD_MODULES,
    MIRRORED_STRATEGIES,
    NPU_STRATEGY,
    Distribution,
    distribution,
    distribution_facts,
)
from npu_codemod.codemods.edits import (
    insert_after,
    insert_before,
    remove_small_statement,
    remove_statement,
    rename_argument,
    replace_callee,
    set_keyword,
    set_positional,
    wrap_argument,
    wrap_expression,
)
from npu_codemod.codemods.engine import parse_module
from npu_codemod.codemods.estimators import (
    #: Every Estimator class of TensorFlow 1.15 (``tf.estimator.Estimator``, the premade ones,
    #: both TPUEstimators; canonical names) -> the position of ``config`` among its
    #: ``__init__`` parameters (v1 signatures).
    ESTIMATOR_CLASSES,
    ESTIMATOR_MODULES,
    #: Every class whose instances are Estimators: :data:`ESTIMATOR_CLASSES` and the NPU's
    #: own ``NPUEstimator`` (canonical names).
    ESTIMATORS,
    #: ``tf.contrib.tpu.TPUEstimator``, ``tf.compat.v1.estimator.tpu.TPUEstimator`` (and the
    #: internal module of ``tf.contrib.tpu``), canonical.
    TPU_ESTIMATORS,
    estimator_subclass_calls,
    estimator_subclass_names,
)
from npu_codemod.codemods.findings import (
    Finding,
    #: What a finding says of its site: ``"migrated"`` (done: rewritten, or already in NPU
    #: form), ``"unmigrated"`` (a person must act: the message says what to do) or
    #: ``"error"`` (the rule or the file could not be handled).
    Status,
)
from npu_codemod.codemods.imports import NPU_INIT_IMPORT, find_import, header_index
from npu_codemod.codemods.modules import (
    ModuleIndex,
    ast_dotted_name,
    imported_names,
    module_ast,
    module_index,
    module_parts,
    nearest_name,
    own_nodes,
)
from npu_codemod.codemods.qualified import (
    Reference,
    ReferenceSite,
    StringReference,
    fstring_references,
    name_reference,
    references_under,
)
from npu_codemod.codemods.rule import (
    #: The named parts of a :attr:`Rule.pattern` match, as :meth:`Rule.visit` gets them:
    #: ``call=trailer< ... >`` gives ``capture["call"]`` (a list for ``name=any*``), and
    #: ``capture["node"]`` is the matched node itself.
    Capture,
    FileContext,
    Rule,
    fact_names,
)
from npu_codemod.codemods.rule_settings import SettingsError
from npu_codemod.codemods.scopes import (
    Flow,
    Names,
    Use,
    assigned_values,
    binding,
    bound_names,
    called_function,
    classify,
    flow,
    function_returns,
    is_return,
    is_terminal,
    returned_values,
    uses,
)
from npu_codemod.codemods.snippets import parse_expression, parse_statements
from npu_codemod.codemods.statements import (
    #: The node types of a block, whose children are statements: ``symbols.suite`` (an
    #: indented body) and ``symbols.file_input`` (the module). A one-line body after ``:``
    #: (``if done: return``) is a ``simple_stmt`` of its compound statement instead.
    BLOCKS,
    block_child,
    child_index,
    enclosing_scope,
    enclosing_statement,
    free_name,
    indentation,
    is_docstring,
    last_leaf,
    main_block,
    used_names,
    why_not,
)
from npu_codemod.codemods.support_list import SupportList, list_name, support_list, support_list_tf2
from npu_codemod.codemods.tf_versions import (
    #: Kind of file: imports no TensorFlow (a rule listing it runs on scripts: an entry script).
    NON_TF,
    #: Kind of file: TF 1.x code (and a TF-neutral file of a repository not on TF 2.x).
    TF1,
    #: The kinds the TF 1.x rules run on by default (:attr:`Rule.file_kinds`): tf1, tf2-compat.
    TF1_CODE,
    #: Kind of file: TF 2.x code (eager, tf.function, Keras fit; ``spec/rules-tf2.md``).
    TF2,
    #: Kind of file: TF 1.x code run on TF 2.x through tf.compat.v1 with disable_v2_behavior().
    TF2_COMPAT,
    #: Kind of file: imports TensorFlow, no sign of either version, in a TF 2.x repository.
    TF_NEUTRAL,
)
from npu_codemod.codemods.tfnames import (
    NPU_INIT_NAMES,
    ImportNames,
    #: The former name of :class:`ImportNames`, kept for plugins written against it.
    TfNames,
    call_of,
    canonical,
    dotted_name,
    first_call,
    #: Whether a node is a ``.name`` trailer (``.estimator`` in ``tf.estimator.RunConfig``).
    is_attribute_trailer,
    #: Whether a node is a ``(...)`` call trailer (None is not).
    is_call_trailer,
    prefix_name,
)
from npu_codemod.codemods.walk import (
    node_pre_order,
    position,
    pre_order,
    scope_statements,
    scoped_statements,
    small_statements,
    tree_text,
)
from npu_codemod.plugins.hookspecs import (
    #: The decorator of a plugin's hook implementations (pluggy's marker for ``npu_codemod``):
    #: ``@hookimpl`` over ``def npu_codemod_rules(): return [MyRule()]``; every hook is
    #: described in ``npu_codemod/plugins/hookspecs.py``.
    hookimpl,
)

#: A syntax tree node with children (fissix ``pytree.Node``).
Node = _pytree.Node
#: A token of the syntax tree (fissix ``pytree.Leaf``): ``.value``, ``.prefix`` (whitespace and
#: comments before it), ``.lineno``/``.column`` (0 for code a rule created).
Leaf = _pytree.Leaf
#: Either of the two (fissix ``pytree.Base``).
Base = _pytree.Base

__all__ = [
    # The rule and its context
    "Rule", "FileContext", "fact_names", "Capture", "hookimpl", "SettingsError",
    # Kinds of file (Rule.file_kinds, FileContext.file_kind)
    "TF1", "TF2", "TF2_COMPAT", "TF_NEUTRAL", "TF1_CODE", "NON_TF",
    # Findings
    "Finding", "Status", "position",
    # Qualified names
    "Reference", "ImportNames", "TfNames", "name_reference", "references_under", "canonical",
    "ReferenceSite", "ast_references",
    "dotted_name", "prefix_name", "is_attribute_trailer", "is_call_trailer", "call_of", "first_call",
    "StringReference", "fstring_references", "NPU_INIT_NAMES",
    # API support: Ascend's list, and the audit's counts for API readiness (FileContext.count_api)
    "ApiStatus", "api_advice", "support_list", "SupportList", "list_name", "support_list_tf2",
    # Repository-wide facts (for npu_codemod_analyze_file and ctx.facts)
    "module_ast", "module_index", "ModuleIndex", "own_nodes", "module_parts", "imported_names",
    "ast_dotted_name", "nearest_name",
    "class_facts", "subclass_calls", "RepositoryClass", "SubclassCall",
    "accessor_facts", "unresolved_accesses",
    "ESTIMATOR_CLASSES", "ESTIMATOR_MODULES", "TPU_ESTIMATORS", "estimator_subclass_calls",
    "estimator_subclass_names", "distribution_facts",
    "distribution", "Distribution", "HOROVOD_MODULES", "MIRRORED_STRATEGIES", "NPU_STRATEGY",
    "model_facts", "BuiltModels", "ESTIMATOR", "KERAS", "ESTIMATORS", "KERAS_MODELS",
    # Reading calls
    "Argument", "arguments", "find_argument", "has_unpacking", "is_true", "is_false",
    "is_none", "needs_parentheses", "unparenthesised", "called_method",
    # Edits
    "replace_callee", "set_keyword", "set_positional", "wrap_argument", "wrap_expression",
    "rename_argument", "add_keyword", "add_argument", "remove_argument",
    "insert_before", "insert_after", "remove_statement", "remove_small_statement", "open_block",
    "parse_expression",
    "parse_statements", "NPU_INIT_IMPORT", "find_import", "header_index",
    # Navigation and scopes
    "child_index", "block_child", "enclosing_scope", "enclosing_statement", "indentation",
    "is_docstring", "is_terminal", "last_leaf", "why_not", "free_name", "used_names", "BLOCKS",
    "Use", "uses", "classify", "bound_names", "assigned_values", "bound_values", "Names", "Flow",
    "flow", "main_block", "binding", "called_function", "function_returns", "is_return",
    "returned_values",
    # Walks
    "pre_order", "node_pre_order", "small_statements", "scope_statements",
    "scoped_statements", "tree_text",
    # Parsing other code of the repository
    "parse_module",
    # The syntax tree vocabulary
    "Node", "Leaf", "Base", "symbols", "tokens", "Name", "Dot", "Comma",
]
