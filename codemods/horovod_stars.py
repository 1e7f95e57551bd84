"""What a star import of a repository module passes on of Horovod, as Python binds it.

``from common import *`` binds the names ``common`` lists in its ``__all__``, or without one
every name of it that does not start with ``_``: its variable ``hvd`` set to the Horovod module
(``horovod-held:common.hvd``), a name it imports from Horovod (``from horovod.tensorflow import
init``: ``horovod-name:``), every name of Horovod when it star-imports Horovod itself
(``horovod-held:common.*``), and what the modules it star-imports pass on in turn (``from
hvd_utils import *`` in ``common``, ``hvd_utils`` doing ``from horovod.tensorflow import *``).
Each file's analysis gives a Horovod module's ``__all__`` when it is a literal list
(``horovod-all:<module>=<name>,...``; ``?`` when it is something else: every public name is
then taken to pass), and every file its star imports (``star-imports:``, ``star_imports``).
A module the repository does not have passes nothing on; a chain is followed :data:`HOPS` deep.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import FrozenSet, Optional

from .modules import literal_names, module_level, nearest_name
from .names import module_package, module_parts
from .reexports import absolute

ALL_PREFIX = "horovod-all:"
#: An ``__all__`` that is no literal list of strings.
UNKNOWN = "?"
HELD, NAMED, STAR_IMPORTS = "horovod-held:", "horovod-name:", "star-imports:"
#: How many star imports a chain is followed through.
HOPS = 3
#: What a passed name is: the Horovod module itself (``hvd``), or any name of it (``*``).
MODULE, ANY = "", "*"


@dataclass(frozen=True)
class Passed:
    """A name a star import binds to Horovod: ``owner`` binds it (its module), ``member`` is
    what it is (:data:`MODULE`, a member of Horovod's: ``init``, ``callbacks``), ``any``: the
    owner star-imports Horovod (the name is Horovod's, whichever it is)."""

    owner: str
    member: str
    #: For :data:`ANY`: the names an ``__all__`` of the chain lets through (None: every one).
    only: Optional[frozenset[str]] = None

    def binds(self, name: str) -> bool:
        """Does the star import bind ``name`` to Horovod (for :data:`ANY`)?"""
        return self.only is None or name in self.only


def all_fact(tree: ast.Module, module: str) -> set[str]:
    """The ``horovod-all:`` fact of the module ``module`` (its tree ``tree``), if it has an
    ``__all__``."""
    listed: Optional[set[str]] = None
    found = False
    for node in module_level(tree.body):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            value = getattr(node, "value", None)
            names = literal_names(value) if value is not None and not found else None
            listed, found = names if not isinstance(node, ast.AugAssign) else None, True
    if not found:
        return set()
    return {f"{ALL_PREFIX}{module}={','.join(sorted(listed)) if listed is not None else UNKNOWN}"}


class StarPasses:
    """The repository's facts on what star imports pass on of Horovod."""

    def __init__(self, facts: FrozenSet[str]) -> None:
        self.held: set[str] = set()
        self.named: dict[str, str] = {}
        self.alls: dict[str, Optional[frozenset[str]]] = {}
        self.stars: dict[str, list[str]] = {}
        for fact in facts:
            if fact.startswith(HELD):
                self.held.add(fact[len(HELD):])
            elif fact.startswith(NAMED):
                name, _, member = fact[len(NAMED):].partition("=")
                self.named[name] = member
            elif fact.startswith(ALL_PREFIX):
                module, _, names = fact[len(ALL_PREFIX):].partition("=")
                self.alls[module] = None if names == UNKNOWN else frozenset(filter(None, names.split(",")))
            elif fact.startswith(STAR_IMPORTS):
                path, _, spelled = fact[len(STAR_IMPORTS):].split("|")[:3]
                target = absolute(spelled, path)
                if target is not None:
                    self.stars.setdefault(".".join(module_parts(path)), []).append(target)
        self.modules = {name.rpartition(".")[0] for name in (*self.held, *self.named)} | set(self.stars)

    def passed(self, imported: str, path: str) -> dict[str, Passed]:
        """What ``from <imported> import *`` in the file ``path`` binds to Horovod, by name
        (:data:`ANY` for every name, when a module of the chain star-imports Horovod)."""
        module = nearest_name(imported, module_package(path), self.modules)
        return self._passed(module, HOPS) if module is not None else {}

    def _passed(self, module: str, hops: int) -> dict[str, Passed]:
        found: dict[str, Passed] = {}
        for spelled in self.stars.get(module, []) if hops else []:
            inner = nearest_name(spelled, tuple(module.split("."))[:-1], self.modules)
            if inner is not None and inner != module:
                found.update(self._passed(inner, hops - 1))
        for name in self.held:
            owner, _, variable = name.rpartition(".")
            if owner == module:
                found[variable] = Passed(module, ANY if variable == ANY else MODULE)
        for name, member in self.named.items():
            owner, _, local = name.rpartition(".")
            if owner == module:
                found[local] = Passed(module, member)
        listed = self.alls.get(module)
        if listed is None:  # no ``__all__``, or not a literal one: the public names
            return {name: passed for name, passed in found.items() if name == ANY or not name.startswith("_")}
        kept = {name: passed for name, passed in found.items() if name in listed}
        if ANY in found:
            narrowed = found[ANY].only
            only = listed if narrowed is None else listed & narrowed
            kept[ANY] = Passed(found[ANY].owner, ANY, only)
        return kept


@lru_cache(maxsize=4)
def star_passes(facts: FrozenSet[str]) -> StarPasses:
    """The :class:`StarPasses` of a repository's facts (worked out once per facts)."""
    return StarPasses(facts)
