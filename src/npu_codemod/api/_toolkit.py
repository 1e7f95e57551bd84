"""The built-in rule packs' shared toolkit: NOT a public API.

Third-party rules import :mod:`npu_codemod.api` only (``docs/writing-rules.md``). This module
holds what the built-in packs (``plugins/rules/<pack>/``) share beyond that: repository-wide
analyses (modules, the import graph, classes, Estimators, Horovod and strategies, built
models), scope and flow
analyses, statement navigation, the support lists and more call and edit helpers. Its names
follow the packs and may change or move in any release; ``tests/test_rule_imports.py`` lets
only the built-in rule modules import it. New code that one pack alone uses belongs in that pack's
``_``-prefixed modules instead.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, TypeVar

from fissix.fixer_util import Dot

from npu_codemod.api import Base, FileContext
from npu_codemod.codemods.accessors import accessor_facts, unresolved_accesses
from npu_codemod.codemods.api_owners import (
    HOROVOD_OPT_IN,
    OWNER_OFF,
    OWNERS,
    Owner,
    compat_owner,
    eager_owner,
    owner_of,
    owner_verdict,
)
from npu_codemod.codemods.api_sites import ApiStatus
from npu_codemod.codemods.api_sites import advice as api_advice
from npu_codemod.codemods.ast_handover import file_imported_names
from npu_codemod.codemods.ast_handover import statement_spans as ast_statement_spans
from npu_codemod.codemods.ast_names import ast_import_names
from npu_codemod.codemods.ast_references import ast_references, site_references
from npu_codemod.codemods.blocks import open_block
from npu_codemod.codemods.built_models import (
    ESTIMATOR,
    KERAS,
    KERAS_MODEL_CLASSES,
    BuiltModels,
    bound_values,
    model_facts,
)
from npu_codemod.codemods.byteps import report_byteps
from npu_codemod.codemods.calls import (
    add_argument,
    called_method,
    is_false,
    needs_parentheses,
    remove_argument,
    unparenthesised,
)
from npu_codemod.codemods.classes import RepositoryClass, class_facts, repository_classes, subclass_calls
from npu_codemod.codemods.distribution import (
    HOROVOD_RULES,
    MIRRORED_STRATEGIES,
    NPU_STRATEGY,
    distribution,
    distribution_facts,
)
from npu_codemod.codemods.edits import insert_above_comments, remove_small_statement, wrap_expression
from npu_codemod.codemods.engine import module_parses, parse_module, unlink
from npu_codemod.codemods.environment import (
    ENVIRONMENT_NAMES,
    ENVIRONMENT_PATTERN,
    ENVIRONMENT_UPDATE_PATTERN,
    environment_setting,
    environment_updates,
    string_value,
)
from npu_codemod.codemods.estimators import (
    ESTIMATOR_CLASSES,
    ESTIMATOR_MAKERS,
    ESTIMATOR_MODULES,
    TPU_ESTIMATORS,
    estimator_subclass_calls,
    estimator_subclass_names,
)
from npu_codemod.codemods.findings import Finding
from npu_codemod.codemods.function_tf import (
    Function,
    bind_in_function,
    device_function,
    function_names,
    opened_in,
    tf_import_functions,
    top_function,
)
from npu_codemod.codemods.horovod_holders import HOROVOD_MODULES
from npu_codemod.codemods.horovod_params import CONVENTIONAL as HOROVOD_CONVENTIONAL
from npu_codemod.codemods.horovod_params import (
    HOROVOD_PARAMETER_API,
    ParameterUse,
    parameter_uses,
    passed_facts,
    unfollowed_uses,
)
from npu_codemod.codemods.horovod_params import STAR_IMPORT as HOROVOD_STAR_IMPORT
from npu_codemod.codemods.horovod_params import star_imports as horovod_star_imports
from npu_codemod.codemods.imports import COMPAT_INIT_IMPORT, NPU_INIT_IMPORT, find_import, header_index
from npu_codemod.codemods.local_imports import (
    localize_imports,
    npu_init_imports,
    tf_imported_in_functions_only,
)
from npu_codemod.codemods.mode_checks import Span, tf1_only_spans, within
from npu_codemod.codemods.module_training import trains_when_run
from npu_codemod.codemods.modules import (
    KnownNames,
    ModuleIndex,
    child_fields,
    imported_names,
    module_ast,
    module_index,
    nearest_name,
    own_nodes,
)
from npu_codemod.codemods.modules import statements as ast_statements
from npu_codemod.codemods.names import (
    STAR,
    ast_dotted_name,
    ast_import_bindings,
    attribute_name,
    call_of,
    callee_name,
    canonical,
    first_call,
    import_bindings,
    is_attribute_trailer,
    is_call_trailer,
    leading_name,
    module_package,
    module_parts,
    prefix_name,
    spelled_name,
)
from npu_codemod.codemods.nodes import (
    BLOCKS,
    assignment,
    block_child,
    block_statements,
    child_index,
    compound_body,
    definition_name,
    enclosing_scope,
    free_name,
    indentation,
    is_docstring,
    is_inside,
    last_leaf,
    main_block,
    small_statement,
    used_names,
    why_not,
)
from npu_codemod.codemods.npu_device import device_binding, device_import, device_name, device_name_at
from npu_codemod.codemods.program_graph import imported_module, reached_from
from npu_codemod.codemods.qualified import ReferenceSite, StringReference, fstring_references, name_references
from npu_codemod.codemods.reexports import reexports
from npu_codemod.codemods.rule import fact_names
from npu_codemod.codemods.scopes import (
    Flow,
    NameIndex,
    Names,
    Use,
    assigned_values,
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
from npu_codemod.codemods.support_list import list_name, support_list, support_list_tf2
from npu_codemod.codemods.text_search import AnyOf, LineStarts
from npu_codemod.codemods.tf2_dataset_facts import dataset_function_facts, dataset_use_facts
from npu_codemod.codemods.tf2_dataset_sources import LIBRARY_BATCHERS
from npu_codemod.codemods.tf2_dataset_uses import DatasetUses
from npu_codemod.codemods.tf2_datasets import file_datasets
from npu_codemod.codemods.tf2_horovod import (
    COMPAT_SITE,
    HOROVOD_KERAS_MODULES,
    HOROVOD_TF2,
    HOROVOD_TF2_CALLBACKS,
    HOROVOD_TF2_OPT_IN,
    HOROVOD_TF2_RULE,
    MIRRORED_TF2,
    STRATEGIES_TF2,
    STRATEGY_TF2,
    horovod_tf2_advice,
    is_horovod_tf2_name,
)
from npu_codemod.codemods.tf_aliases import HOROVOD_LIKE, horovod_alias, may_bind_horovod
from npu_codemod.codemods.tf_model_idioms import KERAS_SCRIPT_FACT
from npu_codemod.codemods.tf_programs import (
    TRAINING,
    TRAINING_TEXT,
    horovod_program,
    library_code,
    trains_alone,
)
from npu_codemod.codemods.tf_versions import NON_TF, TF1, TF2, TF2_COMPAT, TF_NEUTRAL, runs_tf2_somewhere
from npu_codemod.codemods.value_aliases import AliasVerdict, alias_reads, alias_repeats, value_alias_lines
from npu_codemod.codemods.walk import (
    node_pre_order,
    position,
    post_order,
    pre_order,
    scope_statements,
    scoped_statements,
    small_statements,
    tree_text,
)
from npu_codemod.codemods.written import WrittenUse, in_npu_form, rewritten_away, written_uses

T = TypeVar("T")


def _store(ctx: FileContext) -> dict[str, Any]:
    return {}


def memo(ctx: FileContext) -> dict[str, Any]:
    """A per-file dict the packs' rules and analyses share by string key (kept in the context's
    one cache, :meth:`FileContext.analysis`)."""
    return ctx.analysis(_store)


def per_node(ctx: FileContext, key: str, node: Base, compute: Callable[[Any], T]) -> T:
    """``compute(node)``, worked out once per file and kept in ``memo(ctx)[key]`` (a dict of
    id -> (node, value): nodes are not hashable, so the id is checked against the node)."""
    kept = memo(ctx).setdefault(key, {})
    entry = kept.get(id(node))
    if entry is None or entry[0] is not node:
        entry = kept[id(node)] = (node, compute(node))
    value: T = entry[1]
    return value


def _dataset_uses(ctx: FileContext) -> Optional[DatasetUses]:
    datasets = file_datasets(ctx.original, ctx.path, ctx.facts)
    return DatasetUses(datasets, ctx.facts) if datasets is not None else None


def dataset_uses(ctx: FileContext) -> Optional[DatasetUses]:
    """The file's TF 2.x datasets and where they go (:mod:`npu_codemod.codemods.tf2_datasets`,
    :mod:`~npu_codemod.codemods.tf2_dataset_uses`), worked out once per file; None when the
    file is no Python 3."""
    return ctx.analysis(_dataset_uses)


def _graph_only_spans(ctx: FileContext) -> tuple[Span, ...]:
    tree = module_ast(ctx.original)
    return tf1_only_spans(module_index(tree)) if tree is not None else ()


def in_graph_only_code(ctx: FileContext, line: int, column: int) -> bool:
    """Is the position in the file's code (as written) that runs only when TensorFlow does not
    execute eagerly or is 1.x (``codemods/mode_checks``: the ``else`` of ``if
    tf.executing_eagerly():``, the code after its early ``return``, the ``else`` of ``if
    is_tfv2():``)? The spans are worked out once per file."""
    return within(ctx.analysis(_graph_only_spans), line, column)


def dataset_facts(path: str, text: str) -> set[str]:
    """The repository facts the TF 2.x dataset analysis reads: which functions return
    datasets, and what other files use the repository's functions for."""
    return dataset_function_facts(path, text) | dataset_use_facts(path, text)


__all__ = [
    "value_alias_lines",
    "horovod_program",
    "library_code",
    "accessor_facts",
    "alias_reads",
    "alias_repeats",
    "AliasVerdict",
    "add_argument",
    "AnyOf",
    "LineStarts",
    "api_advice",
    "ApiStatus",
    "assigned_values",
    "assignment",
    "ast_dotted_name",
    "ast_import_bindings",
    "ast_import_names",
    "ast_references",
    "ast_statement_spans",
    "ast_statements",
    "attribute_name",
    "block_child",
    "report_byteps",
    "block_statements",
    "BLOCKS",
    "bound_names",
    "bound_values",
    "BuiltModels",
    "call_of",
    "called_function",
    "called_method",
    "callee_name",
    "canonical",
    "child_index",
    "class_facts",
    "classify",
    "compat_owner",
    "eager_owner",
    "compound_body",
    "definition_name",
    "Function",
    "bind_in_function",
    "device_binding",
    "device_function",
    "device_import",
    "device_name",
    "device_name_at",
    "localize_imports",
    "npu_init_imports",
    "tf_imported_in_functions_only",
    "distribution",
    "distribution_facts",
    "dataset_facts",
    "dataset_uses",
    "DatasetUses",
    "Dot",
    "enclosing_scope",
    "ENVIRONMENT_NAMES",
    "ENVIRONMENT_PATTERN",
    "ENVIRONMENT_UPDATE_PATTERN",
    "environment_setting",
    "environment_updates",
    "indentation",
    "ESTIMATOR",
    "ESTIMATOR_CLASSES",
    "ESTIMATOR_MAKERS",
    "ESTIMATOR_MODULES",
    "estimator_subclass_calls",
    "estimator_subclass_names",
    "fact_names",
    "file_imported_names",
    "find_import",
    "Finding",
    "first_call",
    "flow",
    "Flow",
    "free_name",
    "fstring_references",
    "function_returns",
    "function_names",
    "header_index",
    "in_graph_only_code",
    "HOROVOD_KERAS_MODULES",
    "HOROVOD_MODULES",
    "HOROVOD_OPT_IN",
    "HOROVOD_RULES",
    "HOROVOD_CONVENTIONAL",
    "HOROVOD_PARAMETER_API",
    "HOROVOD_STAR_IMPORT",
    "ParameterUse",
    "parameter_uses",
    "horovod_star_imports",
    "passed_facts",
    "unfollowed_uses",
    "HOROVOD_TF2",
    "HOROVOD_TF2_CALLBACKS",
    "HOROVOD_TF2_OPT_IN",
    "COMPAT_SITE",
    "HOROVOD_TF2_RULE",
    "MIRRORED_TF2",
    "STRATEGIES_TF2",
    "STRATEGY_TF2",
    "horovod_tf2_advice",
    "is_horovod_tf2_name",
    "import_bindings",
    "imported_module",
    "imported_names",
    "in_npu_form",
    "is_attribute_trailer",
    "is_call_trailer",
    "is_docstring",
    "is_false",
    "insert_above_comments",
    "is_inside",
    "is_return",
    "is_terminal",
    "KERAS",
    "KERAS_MODEL_CLASSES",
    "KERAS_SCRIPT_FACT",
    "last_leaf",
    "leading_name",
    "LIBRARY_BATCHERS",
    "list_name",
    "may_bind_horovod",
    "horovod_alias",
    "HOROVOD_LIKE",
    "main_block",
    "memo",
    "MIRRORED_STRATEGIES",
    "model_facts",
    "module_ast",
    "module_index",
    "module_package",
    "module_parses",
    "module_parts",
    "ModuleIndex",
    "NameIndex",
    "Names",
    "nearest_name",
    "KnownNames",
    "opened_in",
    "needs_parentheses",
    "name_references",
    "node_pre_order",
    "post_order",
    "NPU_INIT_IMPORT",
    "COMPAT_INIT_IMPORT",
    "NPU_STRATEGY",
    "open_block",
    "Owner",
    "OWNER_OFF",
    "owner_of",
    "owner_verdict",
    "OWNERS",
    "own_nodes",
    "child_fields",
    "parse_module",
    "per_node",
    "position",
    "pre_order",
    "reached_from",
    "reexports",
    "prefix_name",
    "ReferenceSite",
    "remove_argument",
    "repository_classes",
    "remove_small_statement",
    "RepositoryClass",
    "returned_values",
    "runs_tf2_somewhere",
    "scope_statements",
    "scoped_statements",
    "site_references",
    "small_statement",
    "small_statements",
    "spelled_name",
    "string_value",
    "STAR",
    "StringReference",
    "subclass_calls",
    "support_list",
    "support_list_tf2",
    "TF1",
    "NON_TF",
    "TF2",
    "TF2_COMPAT",
    "TF_NEUTRAL",
    "TPU_ESTIMATORS",
    "trains_alone",
    "trains_when_run",
    "TRAINING",
    "TRAINING_TEXT",
    "tf_import_functions",
    "top_function",
    "tree_text",
    "unlink",
    "unparenthesised",
    "unresolved_accesses",
    "Use",
    "used_names",
    "uses",
    "why_not",
    "wrap_expression",
    "WrittenUse",
    "written_uses",
    "rewritten_away",
]
