"""Ascend's API support list: the status of any TensorFlow or Horovod name, the one source.

``api_support.csv`` beside this module is the project's copy of Ascend's published list
(provenance in its header; ``python -m npu_codemod.codemods.regenerate_support_list`` rebuilds
it). The audit (NPU100) and the rules that report an API with its status in the list (NPU025)
read it through :func:`support_list` and :func:`list_name` (both in the packs' ``_toolkit``).

The list names APIs as ``tf.X`` and ``hvd.X``; the file's resolver gives full module names
(``tensorflow.contrib.slim.conv2d``, ``horovod.tensorflow.keras.callbacks.X``), which
:func:`list_name` spells the list's way. A name takes the status of its longest listed prefix
(members of a deprecated module are deprecated); ``compat-alias`` entries take the status of
the API they alias; a name with no listed prefix below ``tf`` or ``hvd`` is ``unknown``.
:data:`SUPPLEMENT` adds the few modules the list leaves out.
"""

from __future__ import annotations

import csv
import io
from functools import lru_cache
from importlib import resources
from typing import Iterator, Optional

from .api_sites import ApiStatus
from .names import TF, canonical

DATA_FILE = "api_support.csv"
#: Full module names -> how the list spells them, longest first.
SPELLINGS = (
    ("horovod.tensorflow.keras", "hvd"),
    ("horovod.tensorflow", "hvd"),
    ("horovod.keras", "hvd"),
    ("tensorflow", "tf"),
)
#: Modules Ascend's list leaves out, with the status TensorFlow 1.15 gives them (the project's
#: own entries, not the list's): the contrib estimators of ``tf.contrib.boosted_trees`` are
#: deprecated with the rest of ``tf.contrib`` (removed in TensorFlow 2.0). A listed name wins.
SUPPLEMENT = {"tf.contrib.boosted_trees": "deprecated"}


def list_name(qualified: str) -> Optional[str]:
    """``tensorflow.nn.relu`` -> ``tf.nn.relu``, ``horovod.tensorflow.rank`` -> ``hvd.rank``;
    None for the namespace itself and for names of other modules (``horovod.torch``)."""
    if any(qualified == module for module, _ in SPELLINGS):
        return None  # ``horovod.tensorflow.keras`` itself is no ``hvd.keras``
    for module, spelled in SPELLINGS:
        if qualified.startswith(module + "."):
            return spelled + qualified[len(module):]
    return None


class SupportList:
    """The list: ``statuses`` maps each listed name to its status."""

    def __init__(self, statuses: dict[str, str]) -> None:
        self.statuses = statuses
        self._found: dict[str, tuple[str, str]] = {}
        self._named: dict[str, Optional[tuple[str, str, str]]] = {}

    def named(self, qualified: str) -> Optional[tuple[str, str, str]]:
        """``(list_name(qualified), *lookup(...))`` of a full name (``tensorflow.nn.relu`` ->
        ``("tf.nn.relu", "tf.nn.relu", "supported")``), None when :func:`list_name` is; kept
        per name: an audit asks for the same few hundred names thousands of times."""
        if qualified in self._named:
            return self._named[qualified]
        api = list_name(qualified)
        found = None if api is None else (api, *self.lookup(api))
        self._named[qualified] = found
        return found

    @classmethod
    def from_text(cls, text: str) -> "SupportList":
        """From the text of ``api_support.csv`` (``#`` lines are its provenance)."""
        return cls(dict(support_rows(text)))

    def lookup(self, api: str) -> tuple[str, str]:
        """``(listed name, status)`` of ``api`` (``tf.contrib.slim.conv2d`` ->
        ``("tf.contrib.slim", "deprecated")``); ``("", "unknown")`` when nothing is listed."""
        found = self._found.get(api)
        if found is None:
            found = self._found[api] = self._longest_prefix(api)
        return found

    def _longest_prefix(self, api: str) -> tuple[str, str]:
        parts = api.split(".")
        for end in range(len(parts), 1, -1):
            prefix = ".".join(parts[:end])
            status = self.statuses.get(prefix)
            if status == ApiStatus.COMPAT_ALIAS:
                target = alias_target(prefix)
                if target is None:
                    return "", ApiStatus.UNKNOWN
                return self._longest_prefix(target + api[len(prefix):])
            if status is not None:
                return prefix, status
        return "", ApiStatus.UNKNOWN


def alias_target(alias: str) -> Optional[str]:
    """The API a ``compat-alias`` entry aliases: ``tf.compat.v1.layers.dense`` -> ``tf.layers.dense``
    (``compat.v1``/``compat.v2`` folded as :func:`~.names.canonical` folds them)."""
    full = TF + alias[len("tf"):] if alias.startswith("tf.") else None
    folded = canonical(full) if full is not None else None
    return "tf" + folded[len(TF):] if folded is not None and folded != full else None


@lru_cache(maxsize=1)
def support_list() -> SupportList:
    """The shipped list (``api_support.csv``), read once per process: ``support_list().lookup(
    list_name(reference.name))`` is a name's ``(listed entry, status)``."""
    text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    listed = SupportList.from_text(text)
    return SupportList({**SUPPLEMENT, **listed.statuses})


#: Ascend's TF 2.6 list (the ``tf2`` pack's audit, NPU071; ``regenerate_support_list --list tf2.6``).
TF2_DATA_FILE = "api_support_tf2.csv"


@lru_cache(maxsize=1)
def support_list_tf2() -> SupportList:
    """The shipped TF 2.6 list (``api_support_tf2.csv``), read once per process; it names
    ``tf.compat.v1.*`` APIs themselves (no compat-alias rows): look names up as spelled."""
    text = resources.files(__package__).joinpath(TF2_DATA_FILE).read_text(encoding="utf-8")
    return SupportList.from_text(text)


def support_rows(text: str) -> Iterator[tuple[str, str]]:
    """``(api, status)`` of each row of a support list's text (``#`` lines are its provenance;
    the header names the columns), as ``csv.DictReader`` reads them at a third of its cost
    (every worker reads both lists). A row without both cells (none is shipped) is left out."""
    rows = csv.reader(line for line in io.StringIO(text) if not line.startswith("#"))
    header = next(rows, [])
    if "api" not in header or "status" not in header:
        return
    api, status = header.index("api"), header.index("status")
    needed = max(api, status)
    for row in rows:
        if len(row) > needed:
            yield row[api], row[status]
