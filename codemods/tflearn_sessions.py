"""Training through tflearn, whose models create their own TensorFlow session.

``tflearn.DNN(net)`` (and ``tflearn.SequenceGenerator``) builds a ``Trainer`` that opens
``tf.Session(config=<tflearn's graph config>)`` unless it is given one (``session=sess``): no
``tf.Session(...)`` of the file's, so NPU007 has none to configure, and the training runs without
the NpuOptimizer config, on the host, while the repository is ``ready``. It is not migrated;
one finding at the file's first such call says what to add by hand: a session of the file's
own, configured as NPU007 configures one, passed as ``session=sess``. A call that passes a
session (``session=``, or ``**kwargs`` that may) is left alone, as is a folder that runs
TensorFlow 2 (tflearn runs on TensorFlow 1 only). Each file's analysis gives::

    tflearn-session:<path>|<line>|<class>   the first tflearn model made without a session
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from .modules import module_ast, module_index
from .names import ast_dotted_name
from .tf_versions import RUNTIME_TF2, runtime_of

FACT = "tflearn-session:"
#: tflearn's models that make a session of their own, by every name tflearn exports them as.
MODELS = {"tflearn.DNN": "DNN", "tflearn.models.DNN": "DNN", "tflearn.models.dnn.DNN": "DNN",
          "tflearn.SequenceGenerator": "SequenceGenerator",
          "tflearn.models.SequenceGenerator": "SequenceGenerator",
          "tflearn.models.generator.SequenceGenerator": "SequenceGenerator"}
_CONFIG = ("config = tf.ConfigProto()`, `custom_op = config.graph_options.rewrite_options."
           "custom_optimizers.add()`, `custom_op.name = \"NpuOptimizer\"`, `config.graph_options."
           "rewrite_options.remapping = RewriterConfig.OFF` and `...memory_optimization = "
           "RewriterConfig.OFF")


def message(model: str) -> str:
    """The finding of a file whose tflearn ``model`` class (``DNN``) makes its own session."""
    return (f"trains through tflearn (`tflearn.{model}`), which creates its own TensorFlow "
            "session without the NPU config: not migrated; by hand: create the session with "
            f"the NpuOptimizer config NPU007 writes (`{_CONFIG}`, `sess = tf.Session(config="
            f"config)`) and pass it as `tflearn.{model}(..., session=sess)`")


def may_use_tflearn(data: bytes) -> bool:
    """Does the file (its bytes) name tflearn?"""
    return b"tflearn" in data


def tflearn_fact(path: str, text: str) -> Optional[str]:
    """The ``tflearn-session:`` fact of a file, or None when it makes no tflearn model without
    a session (or is no Python 3)."""
    if "tflearn" not in text:
        return None
    tree = module_ast(text)
    if tree is None:
        return None
    index = module_index(tree)
    imports = index.imported_names(path)
    found = [(call.lineno, call.col_offset, model) for call in index.nodes(ast.Call)
             if not _passes_session(call) for model in [_model_of(call, imports)] if model]
    if not found:
        return None
    line, _, model = min(found)
    return f"{FACT}{path}|{line}|{model}"


def _model_of(call: ast.Call, imports: dict[str, str]) -> Optional[str]:
    """The tflearn model class ``call`` makes (``DNN``), as the file's ``imports`` spell it."""
    dotted = ast_dotted_name(call.func)
    if dotted is None:
        return None
    head, dot, rest = dotted.partition(".")
    return MODELS.get(imports.get(head, "") + dot + rest)


def _passes_session(call: ast.Call) -> bool:
    """Does ``call`` give a session (``session=sess``), or may it (``**kwargs``)?"""
    return any(keyword.arg in ("session", None) for keyword in call.keywords)


def tflearn_findings(facts: Iterable[str], decided: frozenset[str]) -> list[tuple[str, int, str]]:
    """``(path, line, message)`` of each file of a repository whose ``facts`` say it makes a
    tflearn model without a session, where its folder does not run TensorFlow 2 (``decided``:
    the facts with each scope's runtime)."""
    found = []
    for fact in facts:
        if fact.startswith(FACT):
            path, line, model = fact[len(FACT):].rsplit("|", 2)
            if runtime_of(decided, path) != RUNTIME_TF2:
                found.append((path, int(line), message(model)))
    return sorted(found)
