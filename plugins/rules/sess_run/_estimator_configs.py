"""Session configs that are an Estimator's own: its RunConfig's, configured where it is built.

A repository that vendors an Estimator (TensorFlow's TPUEstimator copied into its
``tpu_estimator.py``) opens sessions inside it, in hooks and scaffolds, with the session config
of the Estimator's RunConfig: ``self._session_config``, ``self._config.session_config``. NPU011
gives that RunConfig ``npu_run_config_init`` where the Estimator is built, which configures its
session config once; NPU007 must not give it the NpuOptimizer lines again (one more optimizer
entry per session created).
"""

from __future__ import annotations

import ast
from typing import Optional

from npu_codemod.api import FileContext
from npu_codemod.api._toolkit import (
    ast_dotted_name,
    class_facts,
    estimator_subclass_names,
    module_ast,
)

#: What an Estimator and a RunConfig call their session config.
_OWN = ("self._session_config", "self.session_config")
_ATTRIBUTE = ".session_config"
FROM_RUN_CONFIG = ("{config} is the session config of the Estimator's RunConfig, which "
                   "npu_run_config_init() configures where the Estimator is built: nothing to add here")


def run_config_session_config(expression: Optional[str], ctx: FileContext) -> bool:
    """Is the config ``expression`` (``self._config.session_config``) the session config of an
    Estimator's RunConfig, in a file that defines the repository's own Estimator (a vendored
    fork), and never bound in the file to anything but another name or attribute?"""
    if expression is None or not (expression in _OWN or (expression.endswith(_ATTRIBUTE)
                                                         and expression != "self" + _ATTRIBUTE)):
        return False
    return ctx.analysis(_defines_estimator) and expression not in ctx.analysis(_made_here)


def _defines_estimator(ctx: FileContext) -> bool:
    """Does the file define a class that derives from an Estimator (in any chain of the
    repository's classes)?"""
    own = class_facts(ctx.path, ctx.original)
    names = {fact.partition("=")[0].rpartition(".")[2] for fact in own}
    return bool(own) and not names.isdisjoint(estimator_subclass_names(frozenset(ctx.facts) | own))


def _made_here(ctx: FileContext) -> set[str]:
    """The attributes the file binds to something other than a name or an attribute (a new
    ``ConfigProto()``): those are not the RunConfig's."""
    tree = module_ast(ctx.original)
    made = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None \
                and not isinstance(node.value, (ast.Name, ast.Attribute)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            made |= {name for name in map(ast_dotted_name, targets) if name is not None}
    return made
