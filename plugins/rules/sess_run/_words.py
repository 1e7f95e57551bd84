"""What names say: the lower-case words of identifiers, for rules that judge code by its names.

``num_written_lines`` says num, written, lines; ``get_infer_iterator`` says get, infer,
iterator; ``ModeKeys.TRAIN`` says mode, keys, train.
"""

from __future__ import annotations

import re

from npu_codemod.api import Base, tokens

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def words(name: str) -> frozenset[str]:
    """The lower-case words of the identifier (or dotted name) ``name``."""
    return frozenset(word.lower() for word in _WORD.findall(name))


def node_words(node: Base) -> frozenset[str]:
    """The words of every name in ``node`` (``num_written_lines == len(x)`` -> num, written,
    lines, len, x)."""
    return frozenset().union(*(words(leaf.value) for leaf in node.leaves() if leaf.type == tokens.NAME))
