"""TensorFlow module aliases of the repository: ``tfv1 = tf.compat.v1`` imported by name.

tensorpack binds ``tfv1 = tf.compat.v1`` in ``tensorpack/compat/__init__.py`` and writes
``from tensorpack.compat import tfv1 as tf`` in its modules; its training session is then
``tf.Session(...)`` in a file whose own imports bind no ``tf`` at all. The rules resolve names
through the file's imports, so such a file, which also imports TensorFlow elsewhere (a
function-local ``from tensorflow.python.ops... import``), was read but left alone with no word.
Each file's analysis gives its module-level TensorFlow-like names (:data:`TF_LIKE`) so bound
(:func:`alias_facts`), as the accessor functions are (``accessors``)::

    tf-alias:<module>.<name>=<full TensorFlow name>     ``tfv1 = tf.compat.v1``
    tf-alias:<module>.<name>=@<module>.<name>           ``from .compat import tfv1`` (a re-export)

and :func:`file_aliases` gives what each name the file imports from the repository is then
(``tf`` -> ``tensorflow.compat.v1``), which its :class:`~.names.ImportNames` binds as if the
file had imported it from TensorFlow. A file that imports no TensorFlow itself is not read by
the rules: it is reported at the import instead (``star_imports``).

Horovod is followed the same way: a module's import of it (``import horovod.tensorflow as
hvd`` in ``common.py``) is a fact (``tf-alias:common.hvd=horovod.tensorflow``), so that
``from common import hvd`` binds Horovod in the importer (``ctx.names("horovod")``) as its
own import would: its ``hvd.init()`` is the distributed pack's, and Horovod's aggregation is
seen by the TF 2.x rules (``spec/rules-beyond-sess-run.md`` NPU021-NPU025). Any module
variable set to Horovod, at module level or after ``global`` (NVIDIA's ``hvd_global_object``),
is a ``horovod-held:`` fact too (``horovod_holders``): its uses in an importer are reported;
so is a module that star-imports Horovod (``horovod-held:<module>.*``), and each name a module
imports from Horovod (``horovod-name:``).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import FrozenSet, Optional

from .horovod_holders import held_facts
from .modules import module_ast, module_level, nearest_name
from .names import (
    ESTIMATOR_PACKAGE,
    STAR,
    TF,
    absolute_module,
    ast_dotted_name,
    ast_import_bindings,
    module_package,
    module_parts,
)
from .reexports import TF_HOPS, Reexports, is_foreign
from .text_search import AnyOf

PREFIX = "tf-alias:"
HOROVOD = "horovod"
_ROOTS = (TF, ESTIMATOR_PACKAGE, HOROVOD)
#: A name that may stand for TensorFlow (``tf``, ``tfv1``, ``tf1``, ``tf_compat``): only such
#: names are followed, so that facts stay few and no function of TensorFlow is renamed.
TF_LIKE = re.compile(r"^(?:tf|tensorflow)(?:_?v?[12]|_?compat(?:_?v?[12])?)?$", re.IGNORECASE)
#: A name that may stand for Horovod, followed likewise: the two its users give it (and so
#: the words the distributed rules look for in a file, ``_tokens``).
HOROVOD_LIKE = re.compile(r"^(?:hvd|horovod)$")
#: The literal test first: a line that assigns a TensorFlow-like name, or imports one from a
#: module (``from .compat import tfv1``).
_GATE = AnyOf(r"^[ \t]*(?:(?:tf|tensorflow)\w*[ \t]*=[^=]|from[ \t]+\.*[\w.]*[ \t]+import[ \t][^\n#]*"
              r"(?<![\w.])(?:tf|tensorflow|hvd|horovod)\w*|import[ \t]+horovod\b"
              r"|from[ \t]+horovod[\w.]*[ \t]+import\b)",
              flags=re.MULTILINE | re.IGNORECASE)


def alias_facts(path: str, text: str) -> set[str]:
    """The ``tf-alias:`` and ``horovod-held:`` facts of one file (see the module's doc)."""
    if not _GATE.found(text):
        return set()
    tree = module_ast(text)
    if tree is None:
        return set()
    module = ".".join(module_parts(path))
    imports: dict[str, str] = {}
    facts: dict[str, str] = {}
    for node in module_level(tree.body):
        if isinstance(node, ast.ImportFrom) and (node.level or not is_foreign(node.module or "")):
            source = absolute_module(node, path)
            for alias in node.names:
                local = alias.asname or alias.name
                if source is not None and alias.name != STAR and _followed_name(local):
                    facts.setdefault(local, f"@{source}.{alias.name}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update((local, target) for local, target in ast_import_bindings(node)
                           if local != STAR and target.split(".")[0] in _ROOTS)
            for local, target in ast_import_bindings(node):  # ``import horovod.tensorflow as hvd``
                if target.split(".")[0] == HOROVOD and HOROVOD_LIKE.match(local):
                    facts.setdefault(local, target)
        elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and _followed_name(node.targets[0].id):
            head, _, rest = (ast_dotted_name(node.value) or "").partition(".")
            if head in imports:  # the first of several (``else: tfv1 = tf``)
                facts.setdefault(node.targets[0].id, imports[head] + (f".{rest}" if rest else ""))
    return {f"{PREFIX}{module}.{name}={target}" for name, target in facts.items()} \
        | (held_facts(tree, module) if HOROVOD in text else set())


def may_bind_horovod(text: str) -> bool:
    """Can the file ``text`` bind Horovod? Only an import that spells ``horovod`` does, or
    one of a name a repository module binds to it (:data:`HOROVOD_LIKE`: ``hvd``)."""
    return "horovod" in text or "hvd" in text


def horovod_alias(facts: FrozenSet[str], package: tuple[str, ...], bound: str) -> Optional[str]:
    """The Horovod module that ``bound`` (a name a file of ``package`` imports from a
    repository module, as imported: ``common.hvd``) is in that file's ``names("horovod")``
    (as :func:`file_aliases` finds it), or None: how another file knows whether the rules
    of the importer read its uses through that name."""
    aliases = {name: target for name, target in repository_aliases(facts).items()
               if target.split(".")[0] == HOROVOD}
    name = nearest_name(bound, package, aliases.keys()) if aliases else None
    return aliases[name] if name is not None else None


def _followed_name(name: str) -> bool:
    """Is ``name`` one a re-export of is followed (TensorFlow-like or Horovod-like)?"""
    return bool(TF_LIKE.match(name) or HOROVOD_LIKE.match(name))


@lru_cache(maxsize=4)
def repository_aliases(facts: FrozenSet[str]) -> dict[str, str]:
    """Module-qualified name -> the TensorFlow module it is, from the ``tf-alias:`` facts,
    re-exports followed (``reexports.resolve``, at most :data:`~.reexports.TF_HOPS`; worked out
    once per repository's facts: not to be edited)."""
    given = {}
    for fact in facts:
        if fact.startswith(PREFIX):
            name, _, target = fact[len(PREFIX):].partition("=")
            given[name] = target
    if not given:
        return {}
    direct = {name: target for name, target in given.items() if not target.startswith("@")}
    exports = Reexports((), [(name.rpartition(".")[0], name.rpartition(".")[2], target[1:])
                             for name, target in given.items() if target.startswith("@")])

    def find(target: str, package: tuple[str, ...]) -> Optional[str]:
        name = nearest_name(target, package, given.keys())
        return direct.get(name) if name is not None else None

    found = {}
    for name, target in given.items():
        followed = target if name in direct else \
            exports.resolve(target[1:], tuple(name.split(".")[:-2]), find, TF_HOPS - 1)
        if followed is not None:
            found[name] = followed
    return found


def file_aliases(path: str, aliases: dict[str, str], imported: dict[str, str]) -> dict[str, str]:
    """Each name the file ``path`` imports (``imported``: its :func:`~.modules.imported_names`)
    from a repository module that binds it to TensorFlow -> that TensorFlow name."""
    if not aliases:
        return {}
    package = module_package(path)
    found = {}
    for local, bound in imported.items():
        if bound.split(".")[0] in _ROOTS or not _followed_name(bound.rpartition(".")[2]):
            continue
        name = nearest_name(bound, package, aliases.keys())
        if name is not None:
            found[local] = aliases[name]
    return found
